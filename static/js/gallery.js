// Gallery page: filter the scenario cards by protocol.
const buttons = Array.from(document.querySelectorAll(".filter"));
const cards = Array.from(document.querySelectorAll(".card"));
for (const b of buttons) {
  b.addEventListener("click", () => {
    for (const x of buttons) x.classList.toggle("active", x === b);
    const p = b.dataset.protocol;
    for (const c of cards) c.hidden = !!p && c.dataset.protocol !== p;
  });
}
