"""The self-contained link: a link record as zlib-compressed, URL-safe base64 in the fragment.

``/sim/<gallery id>#s=<payload>`` (or ``/sim/-#s=<payload>`` when the scenario is a full object)
needs no server storage: the fragment never reaches the server, the viewer reads it
(``static/js/links.js``, whose ``CompressionStream('deflate')`` writes the same zlib format) and
asks ``POST /api/links/decode`` to check it. Decoding names what is wrong: not base64, truncated
or altered compressed data (zlib's own checksum catches most), not JSON, a field that does not
validate, or a replay that does not reach the recorded ``state_hash``.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from urllib.parse import quote

from .linkstate import MAX_LINK_BYTES, LinkError, LinkRecord, canonical, record_from

_B64 = re.compile(r"^[A-Za-z0-9_-]*$")
#: Compressed links are far smaller than their JSON; this only stops absurd inputs early.
MAX_PAYLOAD_CHARS = 4 * MAX_LINK_BYTES // 3 + 16


def encode(rec: LinkRecord) -> str:
    """The fragment payload of a link record."""
    raw = zlib.compress(canonical(rec.model_dump()), 9)
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(payload: str) -> LinkRecord:
    """A fragment payload back to a validated record (not yet replayed); LinkError says why."""
    if not isinstance(payload, str) or not payload:
        raise LinkError(400, "link fragment: empty (expected #s=<payload>)")
    payload = payload.removeprefix("#").removeprefix("s=")
    if len(payload) > MAX_PAYLOAD_CHARS:
        raise LinkError(413, f"link fragment: {len(payload)} characters, the limit is "
                             f"{MAX_PAYLOAD_CHARS}")
    if not _B64.match(payload):
        raise LinkError(400, "link fragment: not URL-safe base64 (only A–Z a–z 0–9 - _ allowed)")
    try:
        raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    except (binascii.Error, ValueError):
        raise LinkError(400, "link fragment: not valid base64 (truncated?)") from None
    d = zlib.decompressobj()
    try:
        text = d.decompress(raw, MAX_LINK_BYTES + 1)
    except zlib.error as exc:
        raise LinkError(400, f"link fragment: the compressed data is damaged ({exc})") from None
    if len(text) > MAX_LINK_BYTES or d.unconsumed_tail:
        raise LinkError(413, f"link fragment: expands beyond {MAX_LINK_BYTES} bytes")
    if not d.eof:
        raise LinkError(400, "link fragment: truncated (the compressed data ends early)")
    try:
        data = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise LinkError(400, "link fragment: the payload is not JSON") from None
    return record_from(data)


def url(rec: LinkRecord) -> str:
    """The viewer URL carrying ``rec`` in its fragment."""
    sid = rec.scenario if isinstance(rec.scenario, str) else "-"
    return f"/sim/{quote(sid, safe='')}#s={encode(rec)}"
