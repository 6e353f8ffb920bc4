#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh machine, then runs the whole suite.
# Python packages go into .venv; the browser tests use Debian's chromium (never a downloaded one).
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages the tests start themselves: chromium (browser tests) and redis-server (rooms
# across workers; the tests run their own on a free loopback port and stop it after).
MISSING=""
[ -x /usr/bin/chromium ] || MISSING="$MISSING chromium"
command -v redis-server >/dev/null 2>&1 || MISSING="$MISSING redis-server"
if [ -n "$MISSING" ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $MISSING >/dev/null
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'

# Two pytest workers (pytest-xdist), one per core of a CI machine: most tests keep one core
# busy, so one worker left the second idle. --dist loadfile sends each test file whole to one
# worker, so module fixtures and in-file order are as in a serial run; each worker has its own
# session fixtures (server, chromium, redis, Dask cluster) on free loopback ports and its own
# temporary folders. Extra arguments come after and win: `-n 0` runs serially.
# pytest exits 5 when it collected no test: that is a failure here, never masked.
exec .venv/bin/python -m pytest -q -p no:cacheprovider -n 2 --dist loadfile "$@"
