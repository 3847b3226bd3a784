#!/bin/bash
# Session 25 run5 (run as this one command on the device, from the repository root): the variant
# kernels (issue 16; bf16 d128, B 1, H 16, 16k) with the landed defaults (v90: conditional
# rescaling, threshold 8) against the same kernels rescaled every step (v90m1 =
# fa-to-ptx{chip=sm_90a rescale-threshold=-1} of bench/kernels_variants.mlir), FlexAttention and
# our plain kernel, one process.
D=.dev/s25/sweep
timeout 540 python3 bench/bench_variants.py --k90 $D/v90 --bench --alt old=$D/v90m1 --out $OUT/run5_variants 2>&1 | tail -40
