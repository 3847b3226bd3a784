// convert-fa-to-nvgpu{host-launch} keeps each attention function (callers
// still call it) and makes its body a call of @<function>_launch on memrefs;
// fa-emit-host-launch gives that declaration its body from the launch
// manifest. (fa-to-gpu runs the two with bufferization in between.)
// RUN: fa-opt %s --pass-pipeline='builtin.module(fa-tile-attention-for-chip{chip=sm_90a},fa-outline-attention,convert-fa-to-nvgpu{chip=sm_90a host-launch=1},canonicalize)' | FileCheck %s --check-prefix=CALL
// RUN: fa-opt %s --pass-pipeline='builtin.module(fa-tile-attention-for-chip{chip=sm_90a},fa-outline-attention,convert-fa-to-nvgpu{chip=sm_90a host-launch=1},fa-emit-host-launch,canonicalize,cse)' | FileCheck %s --check-prefix=SM90
// RUN: fa-opt %s --pass-pipeline='builtin.module(fa-tile-attention-for-chip{chip=sm_80},fa-outline-attention,convert-fa-to-nvgpu{chip=sm_80 host-launch=1},fa-emit-host-launch,canonicalize,cse)' | FileCheck %s --check-prefix=SM80

// CALL: module attributes {fa.manifest.attn_attention_kernels = {json = "{{.*}}", kernel = "attn_attention_kernel"}, gpu.container_module}
// CALL: gpu.module @attn_attention_kernels
// CALL: gpu.func @attn_attention_kernel(
// CALL-LABEL: func.func private @attn_attention_launch(
// CALL-SAME:      memref<?x?x?x64xf16, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x64xf16, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x64xf16, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x64xf16>, memref<?x?x?xf32>)
// CALL-SAME:      attributes {fa.launch.kernel = @attn_attention_kernels::@attn_attention_kernel, fa.launch.kernel_arg_types = [!llvm.ptr, !llvm.ptr, !llvm.ptr, memref<1099511627776xf16>, memref<1099511627776xf32>, i32, i32, i32, i32, i32], fa.launch.manifest = "{{.*}}", fa.launch.tensors = ["q", "k", "v", "out", "lse"]}
// CALL-LABEL: func.func private @attn_attention(
// CALL-SAME:      %[[Q:.*]]: tensor<?x?x?x64xf16>, %[[K:.*]]: tensor<?x?x?x64xf16>, %[[V:.*]]: tensor<?x?x?x64xf16>)
// CALL:         cf.assert %{{.*}}, "fa: the GPU kernel needs at least one key (Nk > 0) when there are query rows"
// CALL:         %[[QB:.*]] = bufferization.to_buffer %[[Q]] read_only
// CALL:         %[[KB:.*]] = bufferization.to_buffer %[[K]] read_only
// CALL:         %[[VB:.*]] = bufferization.to_buffer %[[V]] read_only
// CALL:         %[[O:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?x64xf16>
// CALL:         %[[L:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?xf32>
// CALL:         call @attn_attention_launch(%[[QB]], %[[KB]], %[[VB]], %[[O]], %[[L]])
// CALL:         %[[OT:.*]] = bufferization.to_tensor %[[O]] restrict writable
// CALL:         %[[LT:.*]] = bufferization.to_tensor %[[L]] restrict writable
// CALL:         return %[[OT]], %[[LT]]
// CALL-LABEL: func.func @attn(
// CALL:         call @attn_attention(
// CALL-LABEL: func.func @main(
// CALL:         call @attn(

// sm_90a: each input staged contiguously, copied to the device, described by
// a tensor map ([B*H, N, D], boxes of 64 x 64 for q and 128 x 64 for k, v,
// 128-byte swizzle); the grid [ceil(Nq / 128), Hq, B] of 384 threads with the
// kernel's dynamic shared memory; outputs copied back; all freed.
// SM90-LABEL: func.func private @attn_attention_launch(
// SM90:         %[[T0:.*]] = gpu.wait async
// SM90:         %[[QD:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] (%{{.*}}) : memref<?xi8>
// SM90:         %[[QS:.*]] = memref.alloc(%{{.*}}) : memref<?x?x?x64xf16>
// SM90:         memref.copy %arg0, %[[QS]]
// SM90:         gpu.memcpy async [%[[T1]]] %{{.*}}, %[[QS]]
// SM90:         memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [%{{.*}}, %{{.*}}, 64], strides: [%{{.*}}, 64, 1]
// SM90:         nvgpu.tma.create.descriptor %{{.*}} box[%c1, %c64, %c64] : memref<*xf16> -> <tensor = memref<1x64x64xf16, 3>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>
// SM90:         nvgpu.tma.create.descriptor %{{.*}} box[%c1, %c128, %c64] : memref<*xf16> -> <tensor = memref<1x128x64xf16, 3>
// SM90:         nvgpu.tma.create.descriptor %{{.*}} box[%c1, %c128, %c64] : memref<*xf16> -> <tensor = memref<1x128x64xf16, 3>
// SM90:         %[[GX:.*]] = arith.ceildivui %{{.*}}, %c128 : index
// SM90:         %[[TL:.*]] = gpu.launch_func async [%{{.*}}] @attn_attention_kernels::@attn_attention_kernel blocks in (%[[GX]], %{{.*}}, %{{.*}}) threads in (%c384, %c1, %c1)  dynamic_shared_memory_size %c{{[0-9]+}}_i32 args(%{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : memref<1099511627776xf16>, %{{.*}} : memref<1099511627776xf32>, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i32)
// SM90:         %[[C1:.*]] = gpu.memcpy async [%[[TL]]] %arg3, %{{.*}} : memref<?x?x?x64xf16>, memref<?x?x?x64xf16>
// SM90:         %[[C2:.*]] = gpu.memcpy async [%[[C1]]] %arg4, %{{.*}} : memref<?x?x?xf32>, memref<?x?x?xf32>
// SM90-COUNT-5: gpu.dealloc async
// SM90:         gpu.wait [%{{.*}}]
// SM90-COUNT-3: memref.dealloc
// SM90-COUNT-3: call @faCudaFreeTensorMap(%{{.*}}) : (!llvm.ptr) -> ()
// SM90-NEXT:    return

// sm_80: plain device pointers, 128 threads, static shared memory only.
// SM80-NOT:   func.func private @faCudaFreeTensorMap
// SM80-LABEL: func.func private @attn_attention_launch(
// SM80-NOT:     nvgpu.tma.create.descriptor
// SM80:         gpu.launch_func async [%{{.*}}] @attn_attention_kernels::@attn_attention_kernel blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%c128, %c1, %c1)  dynamic_shared_memory_size %c0_i32 args(%{{.*}} : memref<1099511627776xf16>, %{{.*}} : memref<1099511627776xf16>, %{{.*}} : memref<1099511627776xf16>, %{{.*}} : memref<1099511627776xf16>, %{{.*}} : memref<1099511627776xf32>, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i32)

func.func @attn(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v {causal} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xf16>, tensor<?x?x?xf32>
}
func.func @main(%q: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o, %lse = call @attn(%q, %q, %q) : (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>)
  return %o : tensor<?x?x?x64xf16>
}
