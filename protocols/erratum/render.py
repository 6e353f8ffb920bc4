"""Writes ``docs/protocols/<protocol>.md`` from the erratum file: ``python -m
protocols.erratum.render`` (``--check`` exits 1 when a doc differs from what it would write;
``--counts`` prints how many entries are replayable, not applicable, or missing either)."""

from __future__ import annotations

import sys
from pathlib import Path

from .model import Entry, Erratum, Section, coverage, load, protocols

DOCS = Path(__file__).resolve().parents[2] / "docs" / "protocols"
HEADER = ("<!-- Generated from protocols/erratum/files/{p}.json by `python -m "
          "protocols.erratum.render`; edit that file, not this one. -->")


def _cell(text: str) -> str:
    return text.replace("\n", " ")


def _claims(claims: list[str]) -> str:
    return f" (asserted: {', '.join(f'`{c}`' for c in claims)})" if claims else ""


def replay_line(e: Entry) -> str:
    """One sentence saying how we know, with the outcomes the test suite asserts."""
    r = e.replay
    if r is None:
        return f"*Nothing to run:* {e.no_replay}" if e.no_replay else ""
    sched = "its recorded schedule" if r.schedule is None else f"a {len(r.schedule)}-event schedule"
    if r.step is not None:
        sched += f", judged at step {r.step}"
    same = r.repair.claims == r.printed.claims and r.repair.claims
    out = (f"*Replay:* `{r.scenario}` ({sched}) under `{r.printed.variant}` → "
           f"{r.printed.outcome}{_claims(r.printed.claims)}; "
           f"{'its own recorded schedule' if r.repair.recorded else 'the same schedule'} under "
           f"`{r.repair.variant}` → {r.repair.outcome}"
           f"{' (the same claims asserted)' if same else _claims(r.repair.claims)}. {r.shows}")
    return out


def verification_line(e: Entry) -> str:
    v = e.verification
    if v is None:
        return ""
    return f"*Verified:* {v.status}" + (f" — {v.family}" if v.family else "")


def _table(s: Section) -> list[str]:
    assert s.table is not None
    cols = s.table.columns
    verified = any(e.verification for e in s.entries)
    heads = [h for h, _f in cols] + (["verified"] if verified else [])
    out = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for e in s.entries:
        cells = [_cell(getattr(e, f)) for _h, f in cols]
        if verified:
            mark = " ¹" if e.replay else (" ²" if e.no_replay else "")
            cells.append((e.verification.status if e.verification else "") + mark)
        out.append("| " + " | ".join(cells) + " |")
    replays = [(e.id, replay_line(e)) for e in s.entries if e.replay or e.no_replay]
    families: dict[str, list[str]] = {}
    for e in s.entries:
        if e.verification and e.verification.family:
            families.setdefault(e.verification.family, []).append(e.id)
    if replays or families:
        out.append("")
    for eid, line in replays:
        out.append(f"- {'²' if line.startswith('*Nothing') else '¹'} {eid}: {line}")
    for fam, ids in families.items():
        out.append(f"- Checked for {', '.join(ids)}: {fam}")
    return out


def _list(s: Section) -> list[str]:
    assert s.listing is not None
    out: list[str] = []
    last_family = ""
    for i, e in enumerate(s.entries, 1):
        marker = f"{i}." if s.listing.marker == "1." else s.listing.marker
        pad = " " * (len(marker) + 1)
        lines = list(e.text) or [""]
        ver = verification_line(e)
        if e.verification and e.verification.family and e.verification.family == last_family:
            ver = f"*Verified:* {e.verification.status} (same instances as above)"
        last_family = e.verification.family if e.verification else ""
        extra = [x for x in (replay_line(e), ver) if x]
        first = lines[0]
        out.append(f"{marker} {first}".rstrip())
        out += [f"{pad}{x}" if x else "" for x in lines[1:]]
        out += [f"{pad}{x}" for x in extra]
    return out


def render(er: Erratum) -> str:
    out: list[str] = []
    for i, s in enumerate(er.sections):
        if s.markdown is not None:
            lines = list(s.markdown)
            if i == 0 and lines and lines[0].startswith("# "):
                lines = [lines[0], "", HEADER.format(p=er.protocol), *lines[1:]]
            out += lines
        elif s.table is not None:
            out += _table(s)
        else:
            out += _list(s)
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    if "--counts" in argv:
        for key, ids in coverage().items():
            print(f"{key:15} {len(ids):3}  {' '.join(ids)}")
        return 0
    bad = []
    for p in protocols():
        text = render(load(p))
        path = DOCS / f"{p}.md"
        if check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                bad.append(str(path))
        else:
            path.write_text(text, encoding="utf-8")
    for b in bad:
        print(f"{b} differs from its erratum file: run python -m protocols.erratum.render",
              file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
