#!/usr/bin/env bash
# Prepares a fresh Debian machine and builds dtperf: installs the Debian packages that are
# missing (apt-get), configures the Meson build in ./build and compiles it. Safe to run
# again: installed packages are skipped and an existing build is reused.
#   scripts/setup.sh              build (the GPU calibration program too where CUDA is found)
#   scripts/setup.sh --with-mpi   also Open MPI (mpirun, and the library dtperf-calibrate
#                                 starts multi-node GPU runs with); an existing build is
#                                 reconfigured to find it
#   DTPERF_MESON_ARGS=-Dcuda=disabled scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

with_mpi=0
for arg in "$@"; do
  case "$arg" in
    --with-mpi) with_mpi=1 ;;
    *) echo "setup: unknown argument '$arg' (known: --with-mpi)" >&2; exit 2 ;;
  esac
done

packages=(meson ninja-build g++ pkg-config python3 libeigen3-dev libcli11-dev nlohmann-json3-dev
          libfmt-dev catch2)
# The emulated-network calibration test builds hosts with network namespaces.
packages+=(iproute2)
# ... and emulates their links in user space on an NFQUEUE (tests/calibration/linkemu.cpp).
packages+=(iptables libnetfilter-queue-dev)
# The PyTorch collector (collect/) and its tests: real training on the CPU.
packages+=(python3-torch)
# ... and its packaging test: pip installs it into a virtual environment.
packages+=(python3-venv)
# The Python parts' type check (meson test python-types, mypy.ini).
packages+=(mypy)
# The chart tests render --plot's SVG to PNG.
packages+=(librsvg2-bin)
# Multi-node GPU calibration, when asked: Meson finds Open MPI through its pkg-config files.
mpi_packages=(openmpi-bin libopenmpi-dev)
[ "$with_mpi" -eq 1 ] && packages+=("${mpi_packages[@]}")

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
elif [ "$with_mpi" -eq 1 ] && printf '%s\n' "${missing[@]}" | grep -qx libopenmpi-dev; then
  # The build was configured before MPI was there: look again.
  # shellcheck disable=SC2086
  meson setup --reconfigure build ${DTPERF_MESON_ARGS:-} >&2
fi
ninja -C build >&2
