#!/usr/bin/env bash
# Prepares a fresh Debian machine and builds dtperf: installs the Debian packages that are
# missing (apt-get), configures the Meson build in ./build and compiles it. Safe to run
# again: installed packages are skipped and an existing build is reused.
#   scripts/setup.sh              build (the GPU calibration program too where CUDA is found)
#   DTPERF_MESON_ARGS=-Dcuda=disabled scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(meson ninja-build g++ pkg-config python3 libeigen3-dev libcli11-dev nlohmann-json3-dev
          libfmt-dev catch2)
# The emulated-network calibration test builds hosts with network namespaces.
packages+=(iproute2)
# ... and emulates their links in user space on an NFQUEUE (tests/calibration/linkemu.cpp).
packages+=(iptables libnetfilter-queue-dev)
# The PyTorch collector (collect/) and its tests: real training on the CPU.
packages+=(python3-torch)
# The chart tests render --plot's SVG to PNG.
packages+=(librsvg2-bin)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q >&2
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

if [ ! -f build/build.ninja ]; then
  # shellcheck disable=SC2086
  meson setup build ${DTPERF_MESON_ARGS:-} >&2
fi
ninja -C build >&2
