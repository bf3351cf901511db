#!/usr/bin/env bash
# The end-to-end validation harness (validation/harness.py) on its small grid: real PyTorch
# training over emulated links, every run predicted blind by dtperf. It prints each run's
# measured and predicted time (each run timed three times and scored by its median timing,
# harness.REPEATS) and the median and max error, and fails if a run or a
# prediction fails; with --check-picks, if the faster scheme is not picked where the measured
# gap is over 5 %; with --check-bounds, if median |error| is over 5 % or any run's over 10 %
# (harness.BOUNDS: against the range dtperf states where it names a node link taken in
# turns). Skips (77) without root, namespaces, NFQUEUE or PyTorch.
# usage: validation_small_grid.sh BUILD_DIR SOURCE_ROOT [--check-picks] [--check-bounds] [harness options]
set -u
build=$1
root=$2
python=/usr/bin/python3
[ -x "$python" ] || python=python3
exec "$python" "$root/validation/harness.py" --grid small --build "$build" "${@:3}"
