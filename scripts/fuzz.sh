#!/usr/bin/env bash
# The fuzz step of CI: libFuzzer over parse, verify and each named pipeline
# (tools/fa-fuzz), for a fixed time budget. Fails on a crash, an LLVM ERROR,
# a hang (an input running over FA_FUZZ_TIMEOUT seconds) or a pipeline that
# succeeds with ops it should have lowered still in its output.
#
#   scripts/fuzz.sh                 build fa-fuzz, seed, run FA_FUZZ_RUNS inputs (6000; at most FA_FUZZ_SECONDS, 300),
#                                   then FA_RAISE_FUZZ_CASES (40) programs of scripts/raise-fuzz.py
#   FA_FUZZ_PRINT=1 build/bin/fa-fuzz build/fuzz/artifacts/crash-...
#                                   replay a finding, printing the module and pipeline
#   FA_BUILD_DIR=build-asan scripts/fuzz.sh
#                                   under ASan + UBSan (see scripts/sanitize.sh)
#   scripts/option-sweep.py OUT CASES SEED
#                                not part of this step: random fa-to-ptx /
#                                fa-to-gpu option combinations (the pipelines
#                                here use fixed options), ptxas on each success
#   FA_FUZZ_LAST=/tmp/inputs/ scripts/fuzz.sh
#                                   keep every input, numbered (a heap corruption
#                                   that glibc catches inside malloc aborts with no
#                                   artifact): replay them in order with
#                                   `build/bin/fa-fuzz /tmp/inputs/*`, bisect the
#                                   start, run the last few under valgrind
#                                   (libMLIR is not instrumented: ASan misses its writes)
#
# Seeds (regenerated each run, nothing committed): every `// -----` chunk of
# the .mlir tests that holds an fa op, each behind a selector byte that picks
# the pipeline (round robin: verify only, fa-to-cpu, fa-to-cpu{reference=1},
# fa-to-cpu{block-q, block-kv}, fa-to-ptx sm_80, sm_90a, fa-to-gpu sm_80, sm_90a,
# fa-raise-attention then fa-to-cpu),
# plus 48 inputs of the
# structured fa.attention / fa.attention_grad generator (selector bit 7). libFuzzer then mutates
# them with a fixed seed.
set -euo pipefail
FA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FA_BUILD_DIR:-$FA_ROOT/build}"
# A fixed number of inputs (FA_FUZZ_RUNS) from a fixed seed, so that a run
# is reproducible: the same tree runs the same inputs on any machine (a time
# budget alone would make CI's coverage depend on its speed). FA_FUZZ_SECONDS
# caps the time on a slow machine.
RUNS="${FA_FUZZ_RUNS:-6000}"
SECONDS_BUDGET="${FA_FUZZ_SECONDS:-300}"
TIMEOUT="${FA_FUZZ_TIMEOUT:-60}"
WORK="$BUILD_DIR/fuzz"

cmake --build "$BUILD_DIR" --target fa-fuzz
rm -rf "$WORK" && mkdir -p "$WORK/seeds" "$WORK/corpus" "$WORK/artifacts"

/usr/bin/python3 - "$FA_ROOT/test" "$WORK/seeds" <<'PY'
import hashlib, pathlib, sys
test, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
n = 0
for path in sorted(test.rglob("*.mlir")):
    for chunk in path.read_text().split("// -----"):
        if "fa." not in chunk:
            continue
        (out / f"t{n:04d}").write_bytes(bytes([n % 9]) + chunk.encode())
        n += 1
for i in range(48):
    entropy = hashlib.sha256(f"fa-fuzz generator seed {i}".encode()).digest() * 2
    (out / f"g{i:02d}").write_bytes(bytes([0x80 | (i % 9)]) + entropy)
print(f"fuzz: {n} test chunks + 48 generator seeds")
PY

echo "== fuzzing: ${RUNS} inputs, at most ${SECONDS_BUDGET}s (per-input timeout ${TIMEOUT}s)"
status=0
"$BUILD_DIR/bin/fa-fuzz" "$WORK/corpus" "$WORK/seeds" \
  -seed=1 -keep_seed=1 -runs="$RUNS" -max_total_time="$SECONDS_BUDGET" -timeout="$TIMEOUT" \
  -rss_limit_mb=6144 -max_len=16384 -print_final_stats=1 \
  -artifact_prefix="$WORK/artifacts/" > "$WORK/log" 2>&1 || status=$?
grep -E "stat::number_of_executed_units|stat::average_exec_per_sec|INITED|DONE|fa-fuzz stats" "$WORK/log" || true
if [ "$status" -ne 0 ]; then
  grep -E "fa-fuzz:|ERROR: libFuzzer|SUMMARY|Test unit written" "$WORK/log" | head -20
  echo "fuzz: FAILED (exit $status); full log: $WORK/log;"
  echo "replay: FA_FUZZ_PRINT=1 $BUILD_DIR/bin/fa-fuzz $WORK/artifacts/<file>"
  exit 1
fi
echo "fuzz: no finding"

# The differential check of fa-raise-attention (scripts/raise-fuzz.py): random
# attention programs in linalg, run raised and as written through fa-to-cpu,
# must agree. A fixed seed, FA_RAISE_FUZZ_CASES programs (40, about a minute).
RAISE_CASES="${FA_RAISE_FUZZ_CASES:-40}"
if [ "$RAISE_CASES" -gt 0 ]; then
  echo "== raise fuzzing: ${RAISE_CASES} programs"
  if ! /usr/bin/python3 "$FA_ROOT/scripts/raise-fuzz.py" "$WORK/raise" "$RAISE_CASES" 1 \
      > "$WORK/raise.log" 2>&1; then
    cat "$WORK/raise.log"
    grep FINDING "$WORK/raise/log.txt" || true
    echo "raise fuzz: FAILED; the programs are $WORK/raise/bad*.mlir"
    exit 1
  fi
  tail -1 "$WORK/raise.log"
  echo "raise fuzz: no finding"
fi
