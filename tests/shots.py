"""Screenshots of what the browser tests drew, for people to look at: taken only when asked.

``ALLOCSCOPE_SCREENSHOTS=1 bash scripts/test.sh tests/test_browser_lesson.py`` writes them to
``test-output/screenshots/``. Taking one costs about half a second of chromium's CPU, and the
browser tests take some two hundred, so a plain run (CI's) only checks and never draws them to
a file; every assertion beside a screenshot runs either way.

A screenshot waits for the page's next frame, and a check after it may rely on that (a label
laid out again after a viewport change): without the picture, ``shoot`` still waits for it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

# Two animation frames: the figure draws in the frame after its state arrives, so after two
# what is checked (or shot) is the drawn state, with no fixed pause.
SETTLED_JS = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"

WANTED = os.environ.get("ALLOCSCOPE_SCREENSHOTS", "") not in ("", "0")


def shoot(page: Any, path: Path | str, **options: Any) -> None:
    """``page.screenshot(path=path, **options)`` when screenshots were asked for; else only
    wait, as the screenshot would, until the page has drawn its next frames."""
    if WANTED:
        page.screenshot(path=str(path), **options)
    else:
        page.evaluate(SETTLED_JS)
