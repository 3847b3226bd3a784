#!/bin/bash
# Nsight Compute profiles of one forward (bench/profile_sm90.py) for ours (sm_90a) and cudnn,
# bf16, head dim D (default 128), seqlen N (default 8k), causal and not; prints the sections that
# say where the time goes.
# Usage (GPU machine): D=256 N=8192 CAUSAL="" bench/profile_sm90.sh K90_DIR OUT_DIR [extra profile_sm90.py args]
# ncu must be able to read the counters (Firecracker machines; see the device notes), and is
# given --clock-control none so that clocks are left as the benchmarks see them.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
K90=${1:?K90 dir}; OUT=${2:?out dir}; shift 2
mkdir -p "$OUT"
D=${D:-128}; N=${N:-8192}
if [ -n "${CAUSAL+set}" ]; then CASES=("$CAUSAL"); else CASES=("" "--causal"); fi
for causal in "${CASES[@]}"; do
  for which in ours cudnn; do
    tag=${which}_bf16_d${D}_n${N}${causal:+_causal}
    timeout 240 ncu --clock-control none --profile-from-start off --set full --import-source no \
      -f -o "/tmp/$tag" python3 "$HERE/profile_sm90.py" --which $which --k90 "$K90" \
      --dtype bf16 --d $D --seqlen $N $causal "$@" > "$OUT/$tag.log" 2>&1
    echo "$tag: ncu rc=$?"
    ncu --import "/tmp/$tag.ncu-rep" --page details > "$OUT/$tag.details.txt" 2>&1
    ncu --import "/tmp/$tag.ncu-rep" --page raw --csv > "$OUT/$tag.raw.csv" 2>&1
    ncu --import "/tmp/$tag.ncu-rep" --page source --csv --print-source sass > "$OUT/$tag.sass.csv" 2>&1
    grep -E "^  [a-zA-Z_0-9]+.*\(|Duration|Compute \(SM\) Throughput|Issue Slots Busy|Executed Ipc Active|No Eligible|Warp Cycles Per Issued|Registers Per Thread|Achieved Occupancy" \
      "$OUT/$tag.details.txt" | head -20
  done
done
