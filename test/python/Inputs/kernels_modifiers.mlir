// Kernels with a boolean mask operand and a mask_mod reading a captured
// tensor (arg3): test/python/fa_runtime_test.py's Modifiers.
func.func @boolmask(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %m: tensor<?x1x?x?xi1>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<?x1x?x?xi1>) : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
func.func @docs(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %d: tensor<64xi32>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %d[%i] : tensor<64xi32>
    %dj = tensor.extract %d[%j] : tensor<64xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    fa.yield %keep : i1
  } : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
