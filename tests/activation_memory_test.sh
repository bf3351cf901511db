#!/usr/bin/env bash
# The zoo's activation memory against what PyTorch's autograd really keeps for backward
# (validation/activation_memory.py: GPT-2 small and ResNet-50, bound 25 %). Skips (exit 77)
# where PyTorch is not installed.
# usage: activation_memory_test.sh PATH/TO/dtperf SOURCE_ROOT
set -u
. "$(dirname "$0")/torch_python.sh"
export PYTHONPATH="$2/collect${PYTHONPATH:+:$PYTHONPATH}"  # the collector in the tree
exec "$python" "$2/validation/activation_memory.py" "$1"
