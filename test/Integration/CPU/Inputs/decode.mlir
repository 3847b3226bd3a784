// Decoding inputs for split-kv.test: one query row of 8 heads over 2 K/V heads
// (GQA 4:1 per group), 1024 keys, causal (one row: every key), softcap, f32.
func.func @init(%seed: f32) -> tensor<2x8x1024x64xf32> {
  %e = tensor.empty() : tensor<2x8x1024x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, h, n, d) -> (b, h, n, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e : tensor<2x8x1024x64xf32>) {
  ^bb0(%out: f32):
    %b = linalg.index 0 : index
    %h = linalg.index 1 : index
    %n = linalg.index 2 : index
    %d = linalg.index 3 : index
    %x = arith.muli %n, %d : index
    %y = arith.addi %x, %h : index
    %y2 = arith.addi %y, %b : index
    %z = arith.index_cast %y2 : index to i32
    %f = arith.sitofp %z : i32 to f32
    %g = arith.mulf %f, %seed : f32
    %s = math.sin %g : f32
    %c = arith.constant 3.0 : f32
    %t = arith.mulf %s, %c : f32
    linalg.yield %t : f32
  } -> tensor<2x8x1024x64xf32>
  return %r : tensor<2x8x1024x64xf32>
}
func.func private @printMemrefF32(tensor<*xf32>)
func.func @main() {
  %s1 = arith.constant 0.0137 : f32
  %s2 = arith.constant 0.0291 : f32
  %s3 = arith.constant 0.0077 : f32
  %qa = call @init(%s1) : (f32) -> tensor<2x8x1024x64xf32>
  %k8 = call @init(%s2) : (f32) -> tensor<2x8x1024x64xf32>
  %v8 = call @init(%s3) : (f32) -> tensor<2x8x1024x64xf32>
  %q = tensor.extract_slice %qa[0, 0, 0, 0] [2, 8, 1, 64] [1, 1, 1, 1] : tensor<2x8x1024x64xf32> to tensor<2x8x1x64xf32>
  %k = tensor.extract_slice %k8[0, 0, 0, 0] [2, 2, 1024, 64] [1, 1, 1, 1] : tensor<2x8x1024x64xf32> to tensor<2x2x1024x64xf32>
  %v = tensor.extract_slice %v8[0, 4, 0, 0] [2, 2, 1024, 64] [1, 1, 1, 1] : tensor<2x8x1024x64xf32> to tensor<2x2x1024x64xf32>
  %o, %lse = fa.attention %q, %k, %v {causal, softcap = 4.0 : f32} : tensor<2x8x1x64xf32>, tensor<2x2x1024x64xf32>, tensor<2x2x1024x64xf32> -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>)
  %p1 = tensor.cast %o : tensor<2x8x1x64xf32> to tensor<*xf32>
  %p2 = tensor.cast %lse : tensor<2x8x1xf32> to tensor<*xf32>
  call @printMemrefF32(%p1) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%p2) : (tensor<*xf32>) -> ()
  return
}
