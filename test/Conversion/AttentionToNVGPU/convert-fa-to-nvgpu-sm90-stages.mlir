// RUN: fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a stages=3" | FileCheck %s
// RUN: fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a stages=1 overlap=false" | FileCheck %s --check-prefix=ONE
// RUN: not fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a stages=1" 2>&1 | FileCheck %s --check-prefix=ONE-OVERLAP
// RUN: fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a stages=1 warp-specialize=false" | FileCheck %s --check-prefix=ONE-NOWS

// A 3-deep K/V ring (one tile per CTA): a K, a V and a "released" mbarrier per stage plus the Q one.
// (P in registers: Q 16 KiB + 3 x (K + V) 32 KiB + 1 KiB of realignment.)
// CHECK: \22dynamic_shared_memory_bytes\22: 115712
// CHECK: \22stages\22: 3
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 10>
// One stage with the pipelined consumers would deadlock (block j-1's stage is
// held while block j is awaited): rejected.
// ONE-OVERLAP: error: sm_90a schedule: overlap=true (default) needs at least 2 K/V stages, but stages=1 (convert-fa-to-nvgpu option) (or set overlap=false)
// ONE: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 4>
// ONE-NOWS: \22warp_specialized\22: false
// ONE-NOWS: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 3>
// ONE-NOWS-NOT: setmaxregister
func.func @attn_d64(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> attributes {fa.sm90.persistent = false} {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
