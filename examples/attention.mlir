// The example attention of the README: causal grouped-query attention
// (4 query heads sharing 2 key/value heads), Nq = 10 queries attending
// Nk = 12 keys (bottom-right aligned: the last query sees every key), f16
// inputs, f32 output, and the log-sum-exp of each row.
//
//   fa-opt examples/attention.mlir --fa-to-cpu | mlir-runner -e main ...
//
// Inputs are deterministic functions of the element index, so no data file
// is needed: x[i] = sin(0.37 * i + phase).

func.func private @printMemrefF32(memref<*xf32>)

func.func @attention(%q: tensor<1x4x10x16xf16>, %k: tensor<1x2x12x16xf16>,
                     %v: tensor<1x2x12x16xf16>)
    -> (tensor<1x4x10x16xf32>, tensor<1x4x10xf32>) {
  %o, %lse = fa.attention %q, %k, %v {causal}
      : tensor<1x4x10x16xf16>, tensor<1x2x12x16xf16>, tensor<1x2x12x16xf16>
      -> (tensor<1x4x10x16xf32>, tensor<1x4x10xf32>)
  return %o, %lse : tensor<1x4x10x16xf32>, tensor<1x4x10xf32>
}

// Fills a [1, H, N, 16] f16 tensor with sin(0.37 * linear_index + phase).
func.func @wave(%init: tensor<1x?x?x16xf16>, %phase: f32) -> tensor<1x?x?x16xf16> {
  %r = linalg.generic {
      indexing_maps = [affine_map<(b, h, n, d) -> (b, h, n, d)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%init : tensor<1x?x?x16xf16>) {
  ^bb0(%out: f16):
    %h = linalg.index 1 : index
    %n = linalg.index 2 : index
    %d = linalg.index 3 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %hn = arith.muli %h, %c64 : index
    %nd = arith.muli %n, %c16 : index
    %i0 = arith.addi %hn, %nd : index
    %i = arith.addi %i0, %d : index
    %ii = arith.index_cast %i : index to i32
    %x = arith.sitofp %ii : i32 to f32
    %freq = arith.constant 0.37 : f32
    %fx = arith.mulf %x, %freq : f32
    %arg = arith.addf %fx, %phase : f32
    %s = math.sin %arg : f32
    %s16 = arith.truncf %s : f32 to f16
    linalg.yield %s16 : f16
  } -> tensor<1x?x?x16xf16>
  return %r : tensor<1x?x?x16xf16>
}

func.func @main() {
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c10 = arith.constant 10 : index
  %c12 = arith.constant 12 : index
  %p0 = arith.constant 0.0 : f32
  %p1 = arith.constant 1.0 : f32
  %p2 = arith.constant 2.0 : f32
  %eq = tensor.empty(%c4, %c10) : tensor<1x?x?x16xf16>
  %ek = tensor.empty(%c2, %c12) : tensor<1x?x?x16xf16>
  %qd = func.call @wave(%eq, %p0) : (tensor<1x?x?x16xf16>, f32) -> tensor<1x?x?x16xf16>
  %kd = func.call @wave(%ek, %p1) : (tensor<1x?x?x16xf16>, f32) -> tensor<1x?x?x16xf16>
  %vd = func.call @wave(%ek, %p2) : (tensor<1x?x?x16xf16>, f32) -> tensor<1x?x?x16xf16>
  %q = tensor.cast %qd : tensor<1x?x?x16xf16> to tensor<1x4x10x16xf16>
  %k = tensor.cast %kd : tensor<1x?x?x16xf16> to tensor<1x2x12x16xf16>
  %v = tensor.cast %vd : tensor<1x?x?x16xf16> to tensor<1x2x12x16xf16>
  %o, %lse = func.call @attention(%q, %k, %v)
      : (tensor<1x4x10x16xf16>, tensor<1x2x12x16xf16>, tensor<1x2x12x16xf16>)
      -> (tensor<1x4x10x16xf32>, tensor<1x4x10xf32>)
  %lse_m = bufferization.to_buffer %lse : tensor<1x4x10xf32> to memref<1x4x10xf32>
  %lse_u = memref.cast %lse_m : memref<1x4x10xf32> to memref<*xf32>
  func.call @printMemrefF32(%lse_u) : (memref<*xf32>) -> ()
  // Output of query head 0, first 4 of the 16 value dims.
  %o_h0 = tensor.extract_slice %o[0, 0, 0, 0] [1, 1, 10, 4] [1, 1, 1, 1]
      : tensor<1x4x10x16xf32> to tensor<10x4xf32>
  %o_m = bufferization.to_buffer %o_h0 : tensor<10x4xf32> to memref<10x4xf32>
  %o_u = memref.cast %o_m : memref<10x4xf32> to memref<*xf32>
  func.call @printMemrefF32(%o_u) : (memref<*xf32>) -> ()
  return
}
