#!/usr/bin/env bash
# The main job on a fresh Debian machine: set up (apt-get what is missing, configure,
# build), then predict ResNet-50 on 8 x AWS p3dn.24xlarge with All-Reduce. Any arguments
# go to `dtperf predict` (e.g. ./run.sh --nic-gbps 25 --model bert-large --json).
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
exec build/src/dtperf predict "$@"
