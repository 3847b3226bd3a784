#!/bin/bash
B=.dev/bw
python3 bench/check_backward_kernel.py --kernels $B/t5 --no-time --out $OUT/t5check > $OUT/t5check.log 2>&1; tail -3 $OUT/t5check.log
for t in racecheck synccheck memcheck; do echo "== $t"; compute-sanitizer --tool $t python3 bench/check_backward_kernel.py --kernels $B/t5 --few 2>&1 | tail -2; done
echo "== det memcheck"; compute-sanitizer --tool memcheck python3 bench/check_backward_kernel.py --kernels $B/t5det --few 2>&1 | tail -2
