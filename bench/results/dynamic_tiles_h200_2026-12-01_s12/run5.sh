#!/bin/bash
# Session 12, device call 5: fa.attention (public API, bundle .dev/bundle2) for causal prefill,
# dynamic tiles up to 2048 tokens vs the previous choice; checks; two streams at once.
set -x
R=$OUT/r; mkdir -p $R
python3 .dev/api.py .dev/bundle2 $R/api.json > $R/api.log 2>&1
tail -40 $R/api.log
cd $OUT && tar czf results.tgz r && rm -rf r
