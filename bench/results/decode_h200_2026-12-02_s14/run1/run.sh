#!/bin/bash
# Session 14, device call 1: in-kernel split-KV checks, sanitizer, contiguous decode sweep.
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $R/gpu.txt
timeout 200 python3 bench/check_kv_cache.py --kernels .dev/sk/plain --kernels .dev/sk/kv --splits 1,2,3,16,64 --out $R/check.json > $R/check.log 2>&1
echo "check rc $?"; tail -1 $R/check.log; grep -c FAIL $R/check.log; grep FAIL $R/check.log | head -5
timeout 120 compute-sanitizer --tool memcheck python3 bench/check_kv_cache.py --kernels .dev/sk/plain --kernels .dev/sk/kv --few --only sk_f16_d128_full_lse,sk_bf16_d256,kv_f16_d128_full_p64,kv_f16_d64_causal_lens --splits 1,3,16 > $R/memcheck.log 2>&1
echo "memcheck rc $?"; tail -3 $R/memcheck.log
timeout 60 compute-sanitizer --tool synccheck python3 bench/check_kv_cache.py --kernels .dev/sk/plain --few --only sk_f16_d128_full_lse --splits 3 > $R/synccheck.log 2>&1
echo "synccheck rc $?"; tail -2 $R/synccheck.log
timeout 60 compute-sanitizer --tool racecheck python3 bench/check_kv_cache.py --kernels .dev/sk/plain --few --only sk_f16_d128_full_lse --splits 3 > $R/racecheck.log 2>&1
echo "racecheck rc $?"; tail -2 $R/racecheck.log
timeout 280 python3 bench/bench_decode.py --bundle .dev/sk/dbundle --out $R/decode > $R/decode.log 2>&1
echo "decode rc $?"; tail -14 $R/decode.log
cd $OUT && tar czf results.tgz r && rm -rf r
