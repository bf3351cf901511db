#!/usr/bin/env bash
# Prepares .devdeps/ for building dtperf-calibrate on a GPU machine that has a compiler,
# CUDA, NCCL, meson and ninja but no package registry: the header-only dependencies
# (Eigen, CLI11, nlohmann/json, fmt, Catch2) and pkg-config, unpacked from this Debian
# machine's packages. Copy the folder along with the tree; scripts/gpu_calibrate.sh sources
# .devdeps/env.sh when it is there.
#
#   scripts/pack_devdeps.sh        (in the project's root)
set -euo pipefail
root=$(pwd)/.devdeps
rm -rf "$root"
mkdir -p "$root/debs" "$root/sysroot"
(cd "$root/debs" && apt-get download libeigen3-dev libcli11-dev nlohmann-json3-dev libfmt-dev libfmt9 catch2 \
  pkgconf pkgconf-bin libpkgconf3 >/dev/null)
for deb in "$root"/debs/*.deb; do dpkg -x "$deb" "$root/sysroot"; done
rm -rf "$root/debs"
cat > "$root/env.sh" <<'ENV'
# Sourced from the project's root on the GPU machine.
export DEVDEPS=$(pwd)/.devdeps/sysroot
export PATH=$DEVDEPS/usr/bin:$PATH
export PKG_CONFIG_PATH=$DEVDEPS/usr/share/pkgconfig:$DEVDEPS/usr/lib/x86_64-linux-gnu/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=$DEVDEPS
export CMAKE_PREFIX_PATH=$DEVDEPS/usr
export LD_LIBRARY_PATH=$DEVDEPS/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
ENV
du -sh "$root"
