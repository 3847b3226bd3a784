#!/bin/bash
# usage: build_dirs.sh OUTROOT name "opts" [name "opts" ...]  (subset of bench/kernels_variants.mlir)
set -euo pipefail
ROOT=/work/main
OUT=$1; shift
KEEP=${KEEP:-"var_plain_full var_plain_causal var_softcap_full var_softcap_causal var_alibi_full var_alibi_causal"}
tmp=$(mktemp --suffix=.mlir)
awk -v keep="$KEEP" 'BEGIN{n=split(keep,a," "); for(i=1;i<=n;i++) k["@" a[i]]=1}
 /^func\.func @/ {name=$2; sub(/\(.*/,"",name); on=(name in k)} on {print} on && /^}/ {on=0; print ""}' \
  $ROOT/bench/kernels_variants.mlir > $tmp
while [ $# -gt 0 ]; do
  name=$1; opts=$2; shift 2
  rm -rf $OUT/$name; mkdir -p $OUT/$name
  $ROOT/build/bin/fa-opt $tmp "--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a $opts},fa-dump-kernel{dir=$OUT/$name})" -o /dev/null
  echo "$name: $(ls $OUT/$name/*.ptx | wc -l) kernels"
done
rm -f $tmp
