#!/usr/bin/env bash
# The whole test suite again under AddressSanitizer and UndefinedBehaviorSanitizer
# (float-cast-overflow included, every report fatal), plus a short libFuzzer pass per
# parser. Builds with clang in ./build-san (installs clang and its runtime if missing).
#   scripts/sanitize.sh                    configure, build, run every suite
#   scripts/sanitize.sh --suite fuzz       only the fuzz pass (any meson test arguments)
#   DTPERF_FUZZ_SECONDS=300 scripts/sanitize.sh --suite fuzz
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(clang libclang-rt-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "sanitize: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q >&2
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

flags="-fno-sanitize-recover=all -fsanitize=float-cast-overflow -fno-omit-frame-pointer"
if [ ! -f build-san/build.ninja ]; then
  CXX=clang++ CC=clang meson setup build-san -Dcuda=disabled -Db_sanitize=address,undefined -Db_lundef=false \
    -Doptimization=1 -Ddebug=true -Dfuzz=true -Dcpp_args="$flags" -Dcpp_link_args="$flags" >&2
fi
meson configure build-san -Dfuzz_seconds="${DTPERF_FUZZ_SECONDS:-30}" >&2
ninja -C build-san >&2
# Instrumented code runs several times slower (the CLI suite's 185 commands each start the
# ASan runtime), and CI machines share their cores: each suite gets three times its
# plain-build time limit here.
meson test -C build-san --print-errorlogs --timeout-multiplier 3 "$@"
