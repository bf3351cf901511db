#!/usr/bin/env bash
# One-node GPU calibration on a machine that has CUDA, cuBLAS and NCCL but no package
# registry: configures and builds dtperf-calibrate (header-only dependencies from .devdeps/,
# made by scripts/pack_devdeps.sh on a Debian machine), runs the GPU backend's tests, then
# a full calibration.
#
#   scripts/gpu_calibrate.sh OUTDIR [BUDGET_S] [extra dtperf-calibrate options...]
#
# Writes into OUTDIR: gpu.txt (nvidia-smi), build.log, gpu-tests.log, calibrate.log and
# raw.json (the raw measurements, calibrate/FORMAT.md). NCCL comes from /usr/local/cuda,
# NCCL_ROOT, or the Python package nvidia-nccl (whose library has no unversioned name, so a
# folder with one is made under the build folder).
set -uo pipefail
out=${1:?usage: scripts/gpu_calibrate.sh OUTDIR [BUDGET_S] [options...]}
budget_s=${2:-120}
shift $(( $# >= 2 ? 2 : 1 ))
mkdir -p "$out"
build=${BUILD_DIR:-/tmp/dtperf-gpu-build}
toolkit=${CUDA_ROOT:-/usr/local/cuda}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit --format=csv \
  > "$out/gpu.txt" 2>&1
nvidia-smi >> "$out/gpu.txt" 2>&1

if [[ -f .devdeps/env.sh ]]; then  # scripts/pack_devdeps.sh
  # shellcheck disable=SC1091
  source .devdeps/env.sh
fi

nccl_root=${NCCL_ROOT:-}
if [[ -z $nccl_root && ! -e $toolkit/include/nccl.h ]]; then
  package=$(python3 -c "import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))" 2>/dev/null || true)
  if [[ -n $package ]]; then
    nccl_root=$build-nccl
    mkdir -p "$nccl_root/lib"
    ln -sfn "$package/include" "$nccl_root/include"
    for lib in "$package"/lib/libnccl.so*; do ln -sfn "$lib" "$nccl_root/lib/"; done
    [[ -e $nccl_root/lib/libnccl.so ]] || ln -sfn "$(ls "$package"/lib/libnccl.so.* | head -1)" "$nccl_root/lib/libnccl.so"
  fi
fi

{
  echo "toolkit: $toolkit  nccl: ${nccl_root:-inside the toolkit}"
  rm -rf "$build"
  meson setup "$build" -Dcuda=enabled -Dnccl=enabled -Dmpi=disabled -Dtoolkit_root="$toolkit" \
    ${nccl_root:+-Dnccl_root="$nccl_root"} &&
  ninja -C "$build" calibrate/dtperf-calibrate calibrate/calibrate_gpu_unit_tests
} > "$out/build.log" 2>&1
status=$?
tail -5 "$out/build.log"
if (( status != 0 )); then
  tail -40 "$out/build.log"
  exit "$status"
fi
export LD_LIBRARY_PATH=${nccl_root:+$nccl_root/lib:}${LD_LIBRARY_PATH:-}

"$build/calibrate/calibrate_gpu_unit_tests" > "$out/gpu-tests.log" 2>&1
echo "GPU helper tests (host side): exit $?"
"$build/calibrate/calibrate_gpu_unit_tests" '[.gpu]' >> "$out/gpu-tests.log" 2>&1
echo "GPU tests ([.gpu]): exit $?"
tail -3 "$out/gpu-tests.log"

"$build/calibrate/dtperf-calibrate" --backend nccl --budget-s "$budget_s" -o "$out/raw.json" "$@" \
  2>&1 | tee "$out/calibrate.log"
echo "dtperf-calibrate: exit ${PIPESTATUS[0]}"
