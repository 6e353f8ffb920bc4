"""allocscope's web app, links store and command line.

Every ``ALLOCSCOPE_*`` variable is checked when this package is first imported (some modules
read theirs at import), so a malformed one stops whatever is starting — the server, the CLI —
with one sentence naming it and exit code 2, not a traceback.
"""

import sys

from .limits import SettingsError, current

try:
    current()
except SettingsError as _exc:
    sys.stderr.write(f"allocscope: cannot start: {_exc}\n")
    raise SystemExit(2) from None
