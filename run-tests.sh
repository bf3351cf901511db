#!/usr/bin/env bash
# Every test on a fresh Debian machine: set up (apt-get what is missing, configure,
# build), then run the whole Meson test suite (unit, CLI, validation against measured
# data, emulated-network calibration where the machine allows namespaces).
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
meson test -C build --print-errorlogs "$@"
