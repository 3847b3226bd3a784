// fa-to-gpu: a program with an attention between other ops becomes the LLVM
// dialect: the kernel as a gpu.binary holding PTX, the host calling the mgpu*
// runtime (lib/Runtime) and launching it; nothing of fa, tensors or memrefs
// left. (A nested module: fa-to-gpu-nested.mlir.)
// RUN: fa-opt %s --fa-to-gpu=chip=sm_90a | FileCheck %s
// RUN: fa-opt %s --fa-to-gpu=chip=sm_80 | FileCheck %s --check-prefix=SM80
// RUN: fa-opt %s --fa-to-gpu=chip=sm_90a | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR
// RUN: fa-opt %s '--pass-pipeline=builtin.module(fa-to-gpu{chip=sm_90a persistent=1})' | FileCheck %s --check-prefix=PERSISTENT
// RUN: fa-opt %s '--pass-pipeline=builtin.module(fa-to-gpu{chip=sm_90a dynamic-tiles=true})' | FileCheck %s --check-prefix=DYNAMIC

// CHECK-NOT: = fa.
// CHECK: gpu.binary @f_attention_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">, {{.*}}assembly = "{{.*}}.target sm_90a{{.*}}wgmma.mma_async
// CHECK: llvm.func @f_attention_launch(
// CHECK:   llvm.call @mgpuStreamCreate()
// CHECK:   llvm.call @mgpuMemAlloc(
// CHECK:   llvm.call @mgpuMemcpy(
// CHECK:   llvm.call @mgpuTensorMapEncodeTiledMemref(
// CHECK:   gpu.launch_func <%{{.*}} : !llvm.ptr> @f_attention_kernels::@f_attention_kernel blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) : i64 dynamic_shared_memory_size %{{.*}} args(
// CHECK:   llvm.call @mgpuMemFree(
// CHECK:   llvm.call @mgpuStreamSynchronize(
// CHECK:   llvm.call @mgpuStreamDestroy(
// CHECK: llvm.func @f(
// CHECK:   llvm.fadd
// CHECK:   llvm.call @f_attention(
// CHECK:   llvm.fmul
// CHECK-NOT: memref.
// CHECK-NOT: tensor.

// SM80: gpu.binary @f_attention_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">, {{.*}}mma.sync.aligned.m16n8k16
// SM80-NOT: mgpuTensorMapEncodeTiledMemref
// SM80: gpu.launch_func

// A persistent kernel's grid, min(tiles, SMs): the SM count from the runtime.
// PERSISTENT: llvm.func @faCudaMultiprocessorCount() -> i32
// PERSISTENT: %[[SMS:.*]] = llvm.call @faCudaMultiprocessorCount() : () -> i32
// PERSISTENT: gpu.launch_func

// Dynamic tiles: the launch makes the kernel's tile counter itself (8 bytes,
// zeroed on the stream before the launch; freed after).
// DYNAMIC: llvm.func @f_attention_launch(
// DYNAMIC: llvm.call @mgpuTensorMapEncodeTiledMemref(
// DYNAMIC: llvm.call @mgpuMemset32(%[[CTR:[0-9]+]],
// DYNAMIC: gpu.launch_func
// DYNAMIC-SAME: %[[CTR]] : !llvm.ptr, %{{.+}} : i32
// DYNAMIC: llvm.call @mgpuMemFree(%[[CTR]],

// The module constructor loads the PTX through the runtime's JIT entry point.
// LLVMIR: @llvm.global_ctors
// LLVMIR-DAG: call ptr @mgpuModuleLoadJIT(ptr @f_attention_kernels_binary, i32 3)
// LLVMIR-DAG: call void @mgpuLaunchKernel(

func.func @f(%q: tensor<1x2x128x64xf16>, %x: tensor<1x2x128x64xf16>) -> tensor<1x2x128x64xf16> {
  %a = arith.addf %q, %x : tensor<1x2x128x64xf16>
  %o = fa.attention %a, %q, %q {causal} : tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16> -> tensor<1x2x128x64xf16>
  %r = arith.mulf %o, %x : tensor<1x2x128x64xf16>
  return %r : tensor<1x2x128x64xf16>
}
