#!/bin/bash
# run3: ncu of the new sm_80 backward (k80n), and of the sm_80 forward (ours vs flash), D128 4k.
K=.dev/s21
prof() { # who kernel-regex script args...
  who=$1; kn=$2; shift 2
  ncu --kernel-name "$kn" --launch-skip 2 --launch-count 1 --set full -o $OUT/$who python3 "$@" > $OUT/ncu_$who.log 2>&1; tail -1 $OUT/ncu_$who.log
  ncu -i $OUT/$who.ncu-rep --page details > $OUT/${who}_details.txt 2>&1
  ncu -i $OUT/$who.ncu-rep --page source --csv --print-source sass > $OUT/${who}_sass.csv 2>&1
  python3 $K/top.py $OUT/${who}_sass.csv > $OUT/${who}_top.txt 2>&1; sed -n 2,30p $OUT/${who}_top.txt
  grep -E "Duration|Registers Per|Dynamic Shared|highest-utilized" $OUT/${who}_details.txt | head -8
  ncu -i $OUT/$who.ncu-rep --page raw --csv > $OUT/${who}_raw.csv 2>&1
  gzip $OUT/${who}_sass.csv; rm -f $OUT/$who.ncu-rep
}
prof bwdnew "regex:bwd_f16_d128_full_kernel$" $K/prof80.py $K/k80n bwd_f16_d128_full 4096
prof fwdours "regex:attn_f16_d128_full_kernel$" $K/prof80f.py $K/f80 attn_f16_d128_full 4096
prof fwdflash "regex:flash_fwd_kernel" $K/prof80f.py $K/f80 attn_f16_d128_full 4096
