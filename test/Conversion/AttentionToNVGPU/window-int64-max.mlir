// Window bounds near INT64_MAX: the kernels compute their band with bounds
// clamped to 2^62 (clampWindowBound), never INT64_MAX (whose + 1 wrapped to
// INT64_MIN and hid every key). The tiled form already carries the clamped
// bound; the second pair of RUN lines puts INT64_MAX back into it to check
// that convert-fa-to-nvgpu clamps what it reads as well.
// RUN: fa-opt %s --fa-tile-attention-for-chip=chip=sm_80 --convert-fa-to-nvgpu=chip=sm_80 | FileCheck %s
// RUN: fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu=chip=sm_90a | FileCheck %s
// RUN: fa-opt %s --fa-tile-attention-for-chip=chip=sm_80 | sed 's/4611686018427387904/9223372036854775807/g' | FileCheck %s --check-prefix=TILED
// RUN: fa-opt %s --fa-tile-attention-for-chip=chip=sm_80 | sed 's/4611686018427387904/9223372036854775807/g' | fa-opt --convert-fa-to-nvgpu=chip=sm_80 | FileCheck %s
// RUN: fa-opt %s --fa-tile-attention-for-chip=chip=sm_90a | sed 's/4611686018427387904/9223372036854775807/g' | fa-opt --convert-fa-to-nvgpu=chip=sm_90a | FileCheck %s
// RUN: fa-opt %s --fa-to-ptx=chip=sm_80 -o /dev/null
// RUN: fa-opt %s --fa-to-ptx=chip=sm_90a -o /dev/null

// TILED: fa.kv_block_range {{.*}}window = array<i64: 9223372036854775807, 9223372036854775807>

// CHECK-NOT: 9223372036854775807
// CHECK-NOT: -9223372036854775808
// CHECK: \22window\22: [\0A{{ *}}4611686018427387904,\0A{{ *}}4611686018427387904\0A{{ *}}]
// CHECK-LABEL: gpu.module @attn_kernels
// CHECK: arith.constant 4611686018427387904 : index
// CHECK-NOT: 9223372036854775807
// CHECK-NOT: -9223372036854775808
func.func @attn(%q: tensor<1x2x?x64xf16>, %k: tensor<1x2x?x64xf16>,
                %v: tensor<1x2x?x64xf16>) -> tensor<1x2x?x64xf16> {
  %o = fa.attention %q, %k, %v
      {window = array<i64: 9223372036854775807, 9223372036854775807>}
      : tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16>
      -> tensor<1x2x?x64xf16>
  return %o : tensor<1x2x?x64xf16>
}
