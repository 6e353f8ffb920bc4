// The lesson index: marks the lessons this browser has finished or started (localStorage only).

for (const mark of document.querySelectorAll("[data-done]")) {
  let p = null;
  try { p = JSON.parse(localStorage.getItem(`allocscope.lesson.${mark.dataset.done}`)); } catch { p = null; }
  if (!p) continue;
  mark.textContent = p.finished ? "✓ done" : "started";
  mark.classList.add(p.finished ? "done" : "started");
}
