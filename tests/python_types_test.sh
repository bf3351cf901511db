#!/usr/bin/env bash
# The Python parts' type annotations (collect/ and validation/, as mypy.ini at the source
# root says): mypy must find no error. scripts/setup.sh installs mypy: without it the
# test fails rather than pass unchecked.
# usage: python_types_test.sh SOURCE_ROOT CACHE_DIR
set -u
mypy=/usr/bin/mypy  # Debian's mypy, run by the system interpreter that has python3-torch
[ -x "$mypy" ] || mypy=$(command -v mypy) || {
  echo "FAIL: mypy is not installed (Debian: apt-get install mypy; scripts/setup.sh does)"
  exit 1
}
cd "$1" || exit 1
exec "$mypy" --config-file mypy.ini --cache-dir "$2"
