// The longest-first CTA order is the default for causal kernels at D <= 128 and
// off at D = 256 (measured slower there); fa.sm90.longest_first forces it either way.
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a" | FileCheck %s

// CHECK: fa.manifest.causal_d128_kernels = {json = "{{.*}}\22longest_first\22: true
// CHECK-LABEL: gpu.module @causal_d128_kernels
// CHECK: gpu.grid_dim x
func.func @causal_d128(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// CHECK: fa.manifest.causal_d256_kernels = {json = "{{.*}}\22longest_first\22: false
// CHECK-LABEL: gpu.module @causal_d256_kernels
// CHECK-NOT: gpu.grid_dim
// CHECK: gpu.return
func.func @causal_d256(%q: tensor<?x?x?x256xbf16>, %k: tensor<?x?x?x256xbf16>, %v: tensor<?x?x?x256xbf16>) -> tensor<?x?x?x256xbf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16> -> tensor<?x?x?x256xbf16>
  return %o : tensor<?x?x?x256xbf16>
}

// -----

// CHECK: fa.manifest.causal_d256_forced_kernels = {json = "{{.*}}\22longest_first\22: true
// CHECK-LABEL: gpu.module @causal_d256_forced_kernels
// CHECK: gpu.grid_dim x
func.func @causal_d256_forced(%q: tensor<?x?x?x256xbf16>, %k: tensor<?x?x?x256xbf16>, %v: tensor<?x?x?x256xbf16>) -> tensor<?x?x?x256xbf16> attributes {fa.sm90.longest_first = true} {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16> -> tensor<?x?x?x256xbf16>
  return %o : tensor<?x?x?x256xbf16>
}
