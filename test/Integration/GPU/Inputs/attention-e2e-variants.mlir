// Variants through fa-to-gpu, the same file for the CPU: document masking
// (a mask_mod reading a tensor of document ids that @entry computes, with
// causal) and softcap with an ALiBi-like score_mod, bf16, head dim 128.

func.func @init(%seed: f32) -> tensor<1x2x300x128xbf16> {
  %e = tensor.empty() : tensor<1x2x300x128xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(b, h, n, d) -> (b, h, n, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e : tensor<1x2x300x128xbf16>) {
  ^bb0(%out: bf16):
    %h = linalg.index 1 : index
    %n = linalg.index 2 : index
    %d = linalg.index 3 : index
    %x = arith.muli %n, %d : index
    %y = arith.addi %x, %h : index
    %z = arith.index_cast %y : index to i32
    %f = arith.sitofp %z : i32 to f32
    %g = arith.mulf %f, %seed : f32
    %s = math.sin %g : f32
    %c = arith.constant 2.0 : f32
    %s2 = arith.mulf %s, %c : f32
    %t = arith.truncf %s2 : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x2x300x128xbf16>
  return %r : tensor<1x2x300x128xbf16>
}

// Document ids: 0 for tokens 0..69, 1 for 70..139, ...
func.func @documents() -> tensor<300xi32> {
  %e = tensor.empty() : tensor<300xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(n) -> (n)>],
                       iterator_types = ["parallel"]} outs(%e : tensor<300xi32>) {
  ^bb0(%out: i32):
    %n = linalg.index 0 : index
    %c70 = arith.constant 70 : index
    %d = arith.divui %n, %c70 : index
    %i = arith.index_cast %d : index to i32
    linalg.yield %i : i32
  } -> tensor<300xi32>
  return %r : tensor<300xi32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @entry() {
  %s1 = arith.constant 0.0137 : f32
  %s2 = arith.constant 0.0291 : f32
  %s3 = arith.constant 0.0077 : f32
  %q = call @init(%s1) : (f32) -> tensor<1x2x300x128xbf16>
  %k = call @init(%s2) : (f32) -> tensor<1x2x300x128xbf16>
  %v = call @init(%s3) : (f32) -> tensor<1x2x300x128xbf16>
  %docs = call @documents() : () -> tensor<300xi32>
  %o1 = fa.attention %q, %k, %v {causal} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %docs[%i] : tensor<300xi32>
    %dj = tensor.extract %docs[%j] : tensor<300xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    fa.yield %keep : i1
  } : tensor<1x2x300x128xbf16>, tensor<1x2x300x128xbf16>, tensor<1x2x300x128xbf16>
    -> tensor<1x2x300x128xbf16>
  %o2 = fa.attention %q, %k, %v {softcap = 5.0 : f32} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %i, %j : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %a = math.absf %df : f32
    %slope = arith.constant -0.0625 : f32
    %bias = arith.mulf %a, %slope : f32
    %t = arith.addf %s, %bias : f32
    fa.yield %t : f32
  } : tensor<1x2x300x128xbf16>, tensor<1x2x300x128xbf16>, tensor<1x2x300x128xbf16>
    -> tensor<1x2x300x128xbf16>
  %o1f = arith.extf %o1 : tensor<1x2x300x128xbf16> to tensor<1x2x300x128xf32>
  %o2f = arith.extf %o2 : tensor<1x2x300x128xbf16> to tensor<1x2x300x128xf32>
  %p1 = tensor.cast %o1f : tensor<1x2x300x128xf32> to tensor<*xf32>
  %p2 = tensor.cast %o2f : tensor<1x2x300x128xf32> to tensor<*xf32>
  call @printMemrefF32(%p1) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%p2) : (tensor<*xf32>) -> ()
  return
}
