#!/usr/bin/env bash
# The libraries as others use them: `meson install` into a scratch folder, then the
# out-of-tree example (examples/engine/) configured with Meson, finding dtperf-engine by
# its pkg-config file, built, and run.
# usage: install_test.sh BUILD_DIR SOURCE_DIR
set -u
build=$1
source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

meson install -C "$build" --no-rebuild --quiet --destdir "$work/root" >"$work/install.log" 2>&1 \
  || fail "meson install: $(tail -5 "$work/install.log")"
prefix=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
root="$work/root$prefix"
[ -f "$root/include/dtperf/analysis/evaluator.hpp" ] || fail "the engine's headers are not installed under $root/include/dtperf"
[ -f "$root/include/dtperf/io/profile_json.hpp" ] || fail "the io headers are not installed"
pc_dir=$(dirname "$(find "$root" -name dtperf-engine.pc | head -1)")
[ -f "$pc_dir/dtperf-engine.pc" ] && [ -f "$pc_dir/dtperf-io.pc" ] || fail "no pkg-config files under $root"
ls "$pc_dir/.."/libdtperf_engine.a "$pc_dir/.."/libdtperf_analysis.a "$pc_dir/.."/libdtperf_io.a >/dev/null || fail "the libraries are not installed"
# The files name the configured prefix; point them at the scratch copy.
mkdir -p "$work/pc"
for pc in "$pc_dir"/dtperf-*.pc; do
  sed "s|^prefix=.*|prefix=$root|" "$pc" >"$work/pc/$(basename "$pc")"
done
export PKG_CONFIG_PATH="$work/pc"
pkg-config --exists dtperf-engine dtperf-io || fail "pkg-config does not find dtperf-engine and dtperf-io"

meson setup "$work/example" "$source/examples/engine" >"$work/setup.log" 2>&1 || fail "meson setup of the example: $(tail -5 "$work/setup.log")"
ninja -C "$work/example" >"$work/build.log" 2>&1 || fail "building the example: $(tail -20 "$work/build.log")"
# It compiled against the installed headers, not the source tree's.
grep -q -- "-I$root/include" "$work/example/compile_commands.json" || fail "the example did not use the installed headers"
"$work/example/engine_example" >"$work/out.txt" || fail "the example failed: $(cat "$work/out.txt")"
grep -Eq '^ +100 +alternating-exp-ring +[0-9]+\.[0-9]{2} +[0-9]+\.[0-9]$' "$work/out.txt" \
  || fail "the example's output is not a prediction: $(cat "$work/out.txt")"
[ "$(grep -c 'all-reduce' "$work/out.txt")" -eq 3 ] || fail "expected All-Reduce at three NIC rates: $(cat "$work/out.txt")"
echo "installed libraries, headers and pkg-config files build and run examples/engine"
