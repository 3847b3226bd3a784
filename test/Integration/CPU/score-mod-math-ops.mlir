// A score_mod with math.absi and math.rsqrt runs on the CPU pipeline (both
// lowerings): convert-math-to-libm alone rejected math.absi and turned
// math.rsqrt into a call of `rsqrtf`, which libm does not have;
// convert-math-to-llvm now lowers them first. Scores are 0 (q = 0), the
// score_mod makes them -|i - j| * rsqrt(4) and v's key j is j, so row i is
// sum_j j exp(-|i - j| / 2) / sum_j exp(-|i - j| / 2).
// RUN: fa-opt %s --fa-to-cpu | %mlir_runner | FileCheck %s
// RUN: fa-opt %s --fa-to-cpu=reference=1 | %mlir_runner | FileCheck %s
// RUN: fa-opt %s '--fa-to-cpu=block-q=2 block-kv=3' | %mlir_runner | FileCheck %s

// CHECK: [0.915424
// CHECK: [1.28507
// CHECK: [1.71493
// CHECK: [2.08458

func.func @main() {
  %q = arith.constant dense<0.0> : tensor<1x1x4x2xf32>
  %v = arith.constant dense<[[[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]]]> : tensor<1x1x4x2xf32>
  %o = fa.attention %q, %q, %v {} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %i, %j : index
    %di = arith.index_cast %d : index to i32
    %a = math.absi %di : i32
    %af = arith.sitofp %a : i32 to f32
    // 4 + b (b = 0 at run time: not folded away)
    %bi = arith.index_cast %b : index to i32
    %bf = arith.sitofp %bi : i32 to f32
    %c4 = arith.constant 4.0 : f32
    %four = arith.addf %bf, %c4 : f32
    %r = math.rsqrt %four : f32
    %m = arith.mulf %af, %r : f32
    %t = arith.subf %s, %m : f32
    fa.yield %t : f32
  } : tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32> -> tensor<1x1x4x2xf32>
  %u = tensor.cast %o : tensor<1x1x4x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
func.func private @printMemrefF32(tensor<*xf32>)
