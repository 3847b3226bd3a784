#!/bin/bash
# AOT executables of test/Integration/GPU on the GPU machine (no LLVM there):
# each run, its print compared with the CPU pipeline's (made on the build
# machine), then compute-sanitizer memcheck. One summary file comes back.
cd "$(dirname "$0")"
S=$OUT/summary.txt
{
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ls -la e2e_sm_80 e2e_sm_90a e2ev_sm_80 e2ev_sm_90a libfa_cuda_runtime.so | awk '{print $5, $9}'
echo "ldd e2e_sm_90a:"; ldd ./e2e_sm_90a
for exe in e2e_sm_80 e2e_sm_90a e2ev_sm_80 e2ev_sm_90a; do
  case $exe in e2ev*) ref=cpuv.out;; *) ref=cpu.out;; esac
  echo "== $exe"
  /usr/bin/time -f "%e s wall (process: module JIT load, copies, launches, prints)" ./$exe > /tmp/$exe.out 2> /tmp/$exe.err; echo "exit status $?"
  cat /tmp/$exe.err
  python3 compare_prints.py $ref /tmp/$exe.out
done
for exe in e2e_sm_90a e2ev_sm_90a e2e_sm_80 e2ev_sm_80; do
  echo "== compute-sanitizer memcheck $exe"
  compute-sanitizer --tool memcheck --log-file /tmp/cs.log ./$exe > /dev/null; echo "exit status $?"; tail -1 /tmp/cs.log
done
} > $S 2>&1
cat $S
