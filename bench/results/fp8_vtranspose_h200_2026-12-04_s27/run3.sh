#!/bin/bash
# run3: the setmaxnreg split as a schedule switch (producer-registers): 24 / 240 (the default
# outside persistent kernels), 40 / 232, 56 / 224, for the 16-bit kernels (bench_sm90.py
# --variants, interleaved, against cudnn) and the fp8 kernels (cmp_var.py), D = 64 and 128
# (at D = 256 the consumers spill on 232). Kernel dirs: .dev/s27/{k90,r40,r56} from
# bench/kernels_sm90.mlir, .dev/s27/{f8,f8r40,f8r56} from bench/kernels_fp8.mlir, built with
# fa-to-ptx{chip=sm_90a[ producer-registers=N]}.
R=bench/results/fp8_vtranspose_h200_2026-12-04_s27
S=.dev/s27
python3 $R/cmp_var.py $OUT/cmp_regs_fp8.json base=$S/f8 r40=$S/f8r40 r56=$S/f8r56 -- \
  attn_fp8_f16_d128_causal attn_fp8_f16_d128_full attn_fp8_f16_d64_causal attn_fp8_f16_d64_full \
  attn_fp8_bf16_d128_causal attn_fp8_head_f16_d128_causal attn_fp8_head_f16_d64_causal \
  attn_fp8_block_f16_d128_causal attn_fp8_block_f16_d128_full attn_fp8_block_f16_d64_causal 2>&1 | tail -32
python3 bench/bench_sm90.py --k90 $S/k90 --variants r40=$S/r40,r56=$S/r56 --interleave --bench \
  --dims 64,128 --dtypes f16,bf16 --seqlens 1024,4096,16384 --iters 10 --out $OUT/bench_regs_16bit.json 2>&1 | grep "^bench" | tail -30
