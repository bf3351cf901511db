#!/usr/bin/env bash
# The end-to-end validation harness (validation/harness.py) on its small grid: real PyTorch
# training over emulated links, every run predicted blind by dtperf. It prints each run's
# measured and predicted time and the median and max error (the accuracy targets belong to
# the full grid, run on demand), and fails if a run or a prediction fails or, with
# --check-picks, the faster scheme is not picked where the measured gap is over 5 %. Skips (77) without root,
# namespaces, NFQUEUE or PyTorch.
# usage: validation_small_grid.sh BUILD_DIR SOURCE_ROOT [--check-picks]
set -u
build=$1
root=$2
python=/usr/bin/python3
[ -x "$python" ] || python=python3
exec "$python" "$root/validation/harness.py" --grid small --build "$build" "${@:3}"
