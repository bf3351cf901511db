#!/usr/bin/env bash
# Every test on a fresh Debian machine: set up (apt-get what is missing, configure,
# build), then run the whole Meson test suite (unit, CLI, validation against measured
# data, emulated-network calibration where the machine allows namespaces), then all of
# it again under ASan and UBSan with a fuzzing pass per parser (scripts/sanitize.sh;
# DTPERF_SANITIZE=0 skips that).
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
meson test -C build --print-errorlogs "$@"
# The whole suite again under ASan and UBSan, with a short fuzzing pass per parser.
if [ "${DTPERF_SANITIZE:-1}" != 0 ]; then
  scripts/sanitize.sh
fi
