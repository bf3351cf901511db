#!/usr/bin/env bash
# The PyTorch collector (collect/) on real CPU training, checked against the module's own
# parameters and read back by dtperf, and its packaging (pip installs it with no package
# index into a virtual environment). Skips (exit 77) where PyTorch is not installed.
# usage: collector_test.sh PATH/TO/dtperf SOURCE_ROOT
set -u
dtperf=$1
root=$2
. "$(dirname "$0")/torch_python.sh"
export DTPERF="$dtperf"
export PYTHONPATH="$root/collect${PYTHONPATH:+:$PYTHONPATH}"  # the collector in the tree
exec "$python" -m unittest discover -s "$root/collect/tests" -v
