// The sm_90a schedule switches as pass options (defaults in the first run), a
// function's fa.sm90.* attribute overriding an option for its kernel, and the
// same switches through fa-to-ptx.
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a" | FileCheck %s --check-prefix=DEFAULT
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a stages=2 p-from-registers=false fast-softmax=false warp-arrive=false ping-pong=false longest-first=false" | FileCheck %s --check-prefix=OFF
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a rescale-before-pv=true" | FileCheck %s --check-prefix=RESCALE
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a stages=2 p-from-registers=false fast-softmax=false},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON < %t/attn_kernel.json

// DEFAULT: fa.manifest.attn_kernels = {json = "{{.*}}\22causal\22: true{{.*}}\22fast_softmax\22: true{{.*}}\22longest_first\22: true{{.*}}\22p_from_registers\22: true{{.*}}\22ping_pong\22: true{{.*}}\22rescale_before_pv\22: false{{.*}}\22stages\22: 3{{.*}}\22warp_arrive\22: true
// OFF: fa.manifest.attn_kernels = {json = "{{.*}}\22fast_softmax\22: false{{.*}}\22longest_first\22: false{{.*}}\22p_from_registers\22: false{{.*}}\22ping_pong\22: false{{.*}}\22stages\22: 2{{.*}}\22warp_arrive\22: false
// RESCALE: fa.manifest.attn_kernels = {json = "{{.*}}\22rescale_before_pv\22: true
// JSON: "fast_softmax": false,
// JSON: "p_from_registers": false,
// JSON: "stages": 2,
func.func @attn(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

// -----

// The attribute wins over the option for this function.
// OFF: fa.manifest.attn_attr_kernels = {json = "{{.*}}\22p_from_registers\22: true
func.func @attn_attr(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> attributes {fa.sm90.p_from_registers = true} {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

// -----

// Longest first (one tile per CTA): a causal kernel takes query block gridDim.x - 1 - blockIdx.x
// (the one with the most key blocks first); a non-causal one keeps blockIdx.x.
// DEFAULT: fa.manifest.attn_order_full_kernels = {json = "{{.*}}\22longest_first\22: false{{.*}}fa.manifest.attn_order_kernels = {json = "{{.*}}\22longest_first\22: true
// DEFAULT-LABEL: gpu.module @attn_order_kernels
// DEFAULT: %[[BX:.*]] = gpu.block_id x
// DEFAULT-NEXT: %[[GX:.*]] = gpu.grid_dim x
// DEFAULT-NEXT: %[[C1:.*]] = arith.constant 1 : index
// DEFAULT-NEXT: %[[LAST:.*]] = arith.subi %[[GX]], %[[C1]]
// DEFAULT-NEXT: arith.subi %[[LAST]], %[[BX]]
// DEFAULT-LABEL: gpu.module @attn_order_full_kernels
// DEFAULT-NOT: gpu.grid_dim
// DEFAULT: gpu.return
// OFF-LABEL: gpu.module @attn_order_kernels
// OFF-NOT: gpu.grid_dim
// OFF: gpu.return
func.func @attn_order(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
func.func @attn_order_full(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> attributes {fa.sm90.persistent = false} {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
