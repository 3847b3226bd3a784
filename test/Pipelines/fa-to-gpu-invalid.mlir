// What fa-to-gpu (and its host launch) cannot do is reported on the op.
// RUN: fa-opt %s --split-input-file --verify-diagnostics '--pass-pipeline=builtin.module(fa-to-gpu{chip=sm_90a})' -o /dev/null
// RUN: not fa-opt %s --split-input-file '--pass-pipeline=builtin.module(fa-to-gpu{chip=sm_90a O=7})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: fa-to-gpu option 'O=7' must be 0, 1, 2 or 3

// fp8: the kernel takes V transposed and descale tensors, which the Python
// runtime prepares.
func.func @fp8(%q: tensor<1x2x256x128xf8E4M3FN>, %k: tensor<1x2x256x128xf8E4M3FN>, %v: tensor<1x2x256x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<1x2x256x128xf16> {
  // expected-error @+1 {{convert-fa-to-nvgpu{host-launch}: the kernel takes a tensor 'v_t' that the host launch cannot provide (fp8 kernels take v transposed and descales: launch them through python/fa_runtime)}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) : tensor<1x2x256x128xf8E4M3FN>, tensor<1x2x256x128xf8E4M3FN>, tensor<1x2x256x128xf8E4M3FN> -> tensor<1x2x256x128xf16>
  return %o : tensor<1x2x256x128xf16>
}

// -----

// Mixed precision: named, with the way out.
func.func @mixed(%q: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf32> {
  // expected-error @+1 {{mixed precision ('f16' in, 'f32' out) is not supported on the GPU; produce 'f16' and convert after the attention (arith.extf)}}
  %o = fa.attention %q, %q, %q : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16> -> tensor<1x2x64x64xf32>
  return %o : tensor<1x2x64x64xf32>
}

// -----

// A launch declaration whose attributes were damaged.
// expected-error @+1 {{fa-emit-host-launch: malformed launch declaration}}
func.func private @broken_launch(memref<?xf16>) attributes {fa.launch.kernel = @m::@k, fa.launch.manifest = "{}"}

// -----

// The backward kernel is launched through its manifest (fa-to-ptx), not yet
// from a whole program.
func.func @grad(%q: tensor<1x4x16x64xf16>, %k: tensor<1x2x16x64xf16>, %v: tensor<1x2x16x64xf16>,
                %o: tensor<1x4x16x64xf16>, %l: tensor<1x4x16xf32>, %do: tensor<1x4x16x64xf16>) -> (tensor<1x4x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>) {
  // expected-error @+1 {{the backward kernel has no host launch yet (fa-to-gpu); compile it with fa-to-ptx and launch it through its manifest}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %l, %do : tensor<1x4x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x4x16x64xf16>, tensor<1x4x16xf32>, tensor<1x4x16x64xf16> -> tensor<1x4x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>
  return %dq, %dk, %dv : tensor<1x4x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>
}

// -----

// An op of the program that no host lowering handles: fa-to-gpu ends with
// fa-check-lowered-to-llvm{gpu-launches} (gpu.binary and gpu.launch_func are its
// output) and fails at the op instead of exit 0 with it left.
func.func @thread(%x: index) -> index {
  // expected-error @+1 {{'gpu.thread_id' op fa-to-gpu: could not lower this op to the llvm dialect}}
  %t = gpu.thread_id x
  // expected-error @+1 {{'builtin.unrealized_conversion_cast' op fa-to-gpu: could not lower this op to the llvm dialect}}
  %s = arith.addi %t, %x : index
  return %s : index
}
