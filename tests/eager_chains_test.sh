#!/usr/bin/env bash
# The zoo's kernel and access counts of the operator chains Hugging Face writes out in
# PyTorch, against a trace of PyTorch itself (validation/eager_chains.py). Skips (exit 77)
# where PyTorch is not installed.
# usage: eager_chains_test.sh SOURCE_ROOT
set -u
. "$(dirname "$0")/torch_python.sh"
exec "$python" "$1/validation/eager_chains.py"
