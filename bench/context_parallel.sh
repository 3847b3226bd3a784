#!/usr/bin/env bash
# Ring attention (fa.context_parallel) on the GPU machine, which has torch and no
# compiler: the kernels come from a bundle built here first.
#
# 1. On the build machine (needs build/lib/libFAPythonCAPI.so; 8 kernels, about 10 s):
#
#   PYTHONPATH=python FA_CAPI_LIBRARY=build/lib/libFAPythonCAPI.so FA_CACHE_DIR=build/python-cache \
#     /usr/bin/python3 -m fa.precompile --chip sm_90a --out .dev/ring-bundle \
#     f16,d128,full,lse f16,d128,full,grad f16,d128,causal,lse f16,d128,causal,grad \
#     bf16,d128,full,lse bf16,d128,full,grad bf16,d128,causal,lse bf16,d128,causal,grad
#   PYTHONPATH=python /usr/bin/python3 bench/bench_context_parallel.py \
#     --bundle .dev/ring-bundle --check-bundle-only
#
#   (the specs are `bench/bench_context_parallel.py --print-specs`: f16/bf16 x d128 x
#   causal or not, the forward with lse and the backward).
#   Checked on the build machine (2026-12-01): 8 kernels in 4.7 s, --check-bundle-only passes.
#
# 2. On the GPU machine, from the repository root, with .dev/ring-bundle carried
#    (kind nvidia-h200-x2 for both parts; nvidia-h200 runs part (a) only):
#
#   bash bench/context_parallel.sh .dev/ring-bundle $OUT
#
#   (carry .dev/ring-bundle if .dev/ is ignored; it travels anyway when it is not.)
#
# (a) always: W = 2, 3, 4 ranks in one process on one GPU (threads, LocalRing),
#     against fa.attention on the whole sequence and SDPA math in f32 -> OUT/local.{json,md}
# (b) when two GPUs are visible: torchrun, 2 processes, the NCCL ring: exactness,
#     then speed (32k-128k tokens, H 16 and 32) -> OUT/ring.{json,md}
# Logs: OUT/local.log, OUT/ring.log. Extra arguments go to both runs (e.g.
# --lengths 32768 --heads 16 for a short speed section).
set -uo pipefail
FA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUNDLE="$(cd "${1:?usage: context_parallel.sh BUNDLE OUT [args]}" && pwd)"
OUT="${2:?usage: context_parallel.sh BUNDLE OUT [args]}"
shift 2
mkdir -p "$OUT"
cd "$FA_ROOT"
# NVLink multicast stays off (the device machines' rule).
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \
  NVSHMEM_DISABLE_NVLS=1
PY=python3
rc=0
$PY bench/bench_context_parallel.py --bundle "$BUNDLE" --out "$OUT" "$@" 2>&1 \
  | tee "$OUT/local.log" || rc=1
gpus=$($PY -c 'import torch; print(torch.cuda.device_count())')
if [ "$gpus" -ge 2 ]; then
  $PY -m torch.distributed.run --standalone --nproc_per_node=2 \
    bench/bench_context_parallel.py --bundle "$BUNDLE" --out "$OUT" "$@" 2>&1 \
    | tee "$OUT/ring.log" || rc=1
else
  echo "one GPU visible: the NCCL ring (part b) needs two" | tee "$OUT/ring.log"
fi
exit $rc
