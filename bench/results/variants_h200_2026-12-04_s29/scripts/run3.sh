#!/bin/bash
# Session 29 run3: SASS of run1's softcap kernels (base: tanh.approx.f32; h2: tanh.approx.f16x2).
K=.dev/s29/k
TB=$(python3 -c "import triton,os;print(os.path.join(os.path.dirname(triton.__file__),'backends/nvidia/bin'))")
for b in base h2; do
  $TB/ptxas -arch=sm_90a $K/$b/var_softcap_full_kernel.ptx -o /tmp/$b.cubin && $TB/cuobjdump -sass /tmp/$b.cubin > $OUT/run3_sass_$b.txt 2>&1
  echo "$b: $(grep -c 'MUFU.TANH' $OUT/run3_sass_$b.txt) MUFU.TANH, $(grep -c 'MUFU.EX2' $OUT/run3_sass_$b.txt) MUFU.EX2, $(grep -c 'F2FP' $OUT/run3_sass_$b.txt) F2FP, $(grep -c -E 'HADD2.F32|F2F' $OUT/run3_sass_$b.txt) HADD2.F32/F2F, $(grep -c -E '^\s+/\*[0-9a-f]{4}\*/' $OUT/run3_sass_$b.txt) instructions"
  grep -m4 -E "MUFU.TANH" $OUT/run3_sass_$b.txt
done
