// Conditional rescaling (option rescale-threshold, Common/OnlineSoftmax.h): the
// measured defaults per chip and head dim, recorded in the manifest; where it
// is on, each step votes over the warp (vote.sync.any) whether a row's max grew
// by more than the threshold and branches around O's rescale; -1 rescales every
// step (no vote: the PTX of the kernels before the option, byte for byte,
// scripts/ptx-golden.sh with rescale-threshold=-1).
// sm_80 has no head dim 256: its runs leave those functions out.
// RUN: rm -rf %t && mkdir -p %t && sed '/^func.func @attn_d256/,/^}/d' %s > %t/no256.mlir
// RUN: fa-opt %t/no256.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=%t/s80})' -o /dev/null
// RUN: FileCheck %s --check-prefix=ON < %t/s80/attn_d64_kernel.ptx
// RUN: FileCheck %s --check-prefix=ON < %t/s80/attn_d128_causal_kernel.ptx
// RUN: FileCheck %s --check-prefix=T8 < %t/s80/attn_d64_kernel.json
// RUN: FileCheck %s --check-prefix=T8 < %t/s80/attn_d128_causal_kernel.json
// RUN: fa-opt %t/no256.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80 rescale-threshold=-1},fa-dump-kernel{dir=%t/s80off})' -o /dev/null
// RUN: FileCheck %s --check-prefix=OFF < %t/s80off/attn_d128_causal_kernel.ptx
// RUN: FileCheck %s --check-prefix=TM1 < %t/s80off/attn_d128_causal_kernel.json
// RUN: fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t/s90})' -o /dev/null
// RUN: FileCheck %s --check-prefix=OFF < %t/s90/attn_d64_kernel.ptx
// RUN: FileCheck %s --check-prefix=TM1 < %t/s90/attn_d64_kernel.json
// RUN: FileCheck %s --check-prefix=ON < %t/s90/attn_d128_causal_kernel.ptx
// RUN: FileCheck %s --check-prefix=T8 < %t/s90/attn_d128_causal_kernel.json
// RUN: FileCheck %s --check-prefix=ON < %t/s90/attn_d256_kernel.ptx
// RUN: FileCheck %s --check-prefix=T8 < %t/s90/attn_d256_kernel.json
// RUN: FileCheck %s --check-prefix=ON < %t/s90/attn_d256_causal_kernel.ptx
// RUN: FileCheck %s --check-prefix=T8 < %t/s90/attn_d256_causal_kernel.json
// RUN: FileCheck %s --check-prefix=OFF < %t/s90/attn_d256_window_kernel.ptx
// RUN: FileCheck %s --check-prefix=TM1 < %t/s90/attn_d256_window_kernel.json
// The function attribute sets it per kernel (-1 here), over the option (4):
// RUN: FileCheck %s --check-prefix=OFF < %t/s90/attn_d128_every_step_kernel.ptx
// RUN: FileCheck %s --check-prefix=TM1 < %t/s90/attn_d128_every_step_kernel.json
// RUN: fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a rescale-threshold=4},fa-dump-kernel{dir=%t/s90t4})' -o /dev/null
// RUN: FileCheck %s --check-prefix=ON < %t/s90t4/attn_d64_kernel.ptx
// RUN: FileCheck %s --check-prefix=T4 < %t/s90t4/attn_d64_kernel.json
// RUN: FileCheck %s --check-prefix=TM1 < %t/s90t4/attn_d128_every_step_kernel.json
// The kernels assemble; on sm_90a the default d128 and causal d256 (64-key
// tiles) consumers do not spill.
// RUN: %ptxas -arch=sm_90a -v %t/s90/attn_d128_causal_kernel.ptx -o %t/d128.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL
// RUN: %ptxas -arch=sm_90 -v %t/s80/attn_d128_causal_kernel.ptx -o %t/d128_80.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL
// RUN: %ptxas -arch=sm_90a -v %t/s90/attn_d256_causal_kernel.ptx -o %t/d256c.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL
// RUN: %ptxas -arch=sm_90a %t/s90t4/attn_d64_kernel.ptx -o %t/d64t4.cubin

// ON: vote.sync.any.pred
// ON: @{{%p[0-9]+}} bra
// OFF-NOT: vote.sync
// T8: "rescale_threshold": 8
// T4: "rescale_threshold": 4
// TM1: "rescale_threshold": -1
// NOSPILL: 0 bytes spill stores, 0 bytes spill loads

func.func @attn_d64(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

func.func @attn_d128_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @attn_d128_every_step(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> tensor<?x?x?x128xf16> attributes {fa.sm90.rescale_threshold = -1 : i64} {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

func.func @attn_d256(%q: tensor<?x?x?x256xf16>, %k: tensor<?x?x?x256xf16>, %v: tensor<?x?x?x256xf16>) -> tensor<?x?x?x256xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x256xf16>, tensor<?x?x?x256xf16>, tensor<?x?x?x256xf16> -> tensor<?x?x?x256xf16>
  return %o : tensor<?x?x?x256xf16>
}

func.func @attn_d256_causal(%q: tensor<?x?x?x256xf16>, %k: tensor<?x?x?x256xf16>, %v: tensor<?x?x?x256xf16>) -> tensor<?x?x?x256xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x256xf16>, tensor<?x?x?x256xf16>, tensor<?x?x?x256xf16> -> tensor<?x?x?x256xf16>
  return %o : tensor<?x?x?x256xf16>
}

func.func @attn_d256_window(%q: tensor<?x?x?x256xf16>, %k: tensor<?x?x?x256xf16>, %v: tensor<?x?x?x256xf16>) -> tensor<?x?x?x256xf16> {
  %o = fa.attention %q, %k, %v {window = array<i64: 256, 64>} : tensor<?x?x?x256xf16>, tensor<?x?x?x256xf16>, tensor<?x?x?x256xf16> -> tensor<?x?x?x256xf16>
  return %o : tensor<?x?x?x256xf16>
}
