// RUN: fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a" | FileCheck %s

// The per-function attributes of stages, overlap and warp-specialize; the
// measured split release of D = 256 turns off without warp specialization
// (a forced one is an error, invalid-sm90-schedule-attrs.mlir).
// CHECK: fa.manifest.attrs_d256_kernels = {json = "{{.*}}\22overlap\22: false{{.*}}\22split_release\22: false{{.*}}\22stages\22: 1{{.*}}\22warp_specialized\22: false
func.func @attrs_d256(%q: tensor<?x?x?x256xbf16>, %k: tensor<?x?x?x256xbf16>, %v: tensor<?x?x?x256xbf16>) -> tensor<?x?x?x256xbf16> attributes {fa.sm90.stages = 1 : i64, fa.sm90.overlap = false, fa.sm90.warp_specialize = false} {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16> -> tensor<?x?x?x256xbf16>
  return %o : tensor<?x?x?x256xbf16>
}
