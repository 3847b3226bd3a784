#!/bin/bash
# run5: the issue-16 variant kernels (bench/kernels_variants.mlir) at the setmaxnreg splits 24
# (default; the plain full kernel is persistent: 40), 40 and 56: .dev/s27/{vk,vr40,vr56}.
R=bench/results/fp8_vtranspose_h200_2026-12-04_s27
python3 $R/cmp_variants_regs.py $OUT/cmp_variants_regs.json base=.dev/s27/vk r40=.dev/s27/vr40 r56=.dev/s27/vr56 2>&1 | tail -20
