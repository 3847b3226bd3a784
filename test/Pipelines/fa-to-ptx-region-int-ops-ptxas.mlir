// REQUIRES: ptxas
// Integer ops on the positions (index) inside score_mod / mask_mod lower on
// both chips: each is narrowed to i32 with its operands (math.absi was cloned
// with an index result and left an unrealized_conversion_cast that failed the
// LLVM translation; the bitwise ops, shifts and unsigned divisions the same
// way). fa.flex writes such regions from Python (abs, &, |, ^, <<, >>).
// RUN: rm -rf %t && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t/sm90})' -o /dev/null
// RUN: fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=%t/sm80})' -o /dev/null
// RUN: FileCheck %s < %t/sm90/int_ops_kernel.ptx
// RUN: FileCheck %s < %t/sm80/int_ops_kernel.ptx
// RUN: %ptxas -arch=sm_90a %t/sm90/int_ops_kernel.ptx -o %t/sm90.cubin
// RUN: %ptxas -arch=sm_80 %t/sm80/int_ops_kernel.ptx -o %t/sm80.cubin
// CHECK: abs.s32
// CHECK-NOT: unrealized_conversion_cast
// The CPU pipeline runs the same regions.
// RUN: fa-opt %s --fa-to-cpu -o /dev/null

func.func @int_ops(%q: tensor<1x2x256x64xf16>) -> tensor<1x2x256x64xf16> {
  %o = fa.attention %q, %q, %q {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %i, %j : index
    %a = math.absi %d : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %sh = arith.shli %a, %c1 : index
    %sr = arith.shrsi %sh, %c1 : index
    %su = arith.shrui %sr, %c1 : index
    %x = arith.xori %su, %h : index
    %y = arith.ori %x, %b : index
    %z = arith.andi %y, %c3 : index
    %dv = arith.divui %z, %c3 : index
    %rm = arith.remui %a, %c3 : index
    %mx = arith.maxui %dv, %rm : index
    %mn = arith.minui %mx, %c3 : index
    %cd = arith.ceildivui %mn, %c3 : index
    %ci = arith.index_cast %cd : index to i32
    %cf = arith.sitofp %ci : i32 to f32
    %t = arith.subf %s, %cf : f32
    fa.yield %t : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %i, %j : index
    %a = math.absi %d : index
    %c7 = arith.constant 7 : index
    %m = arith.andi %a, %c7 : index
    %c0 = arith.constant 0 : index
    %keep = arith.cmpi ne, %m, %c0 : index
    %near = arith.cmpi ult, %a, %c7 : index
    %k = arith.ori %keep, %near : i1
    fa.yield %k : i1
  } : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x2x256x64xf16>
  return %o : tensor<1x2x256x64xf16>
}
