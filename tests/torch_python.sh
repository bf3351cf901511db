# Sourced by the tests that run PyTorch: sets `python` to the interpreter that has it
# (Debian's python3-torch installs for the system one), or skips the test (exit 77).
python=/usr/bin/python3
[ -x "$python" ] || python=python3
if ! "$python" -c 'import torch' 2>/dev/null; then
  echo "skipped: PyTorch is not installed for $python (Debian: apt-get install python3-torch)"
  exit 77
fi
