// Ahead of time: host code lowered by upstream gpu-to-llvm (through
// gpu-lower-to-nvvm-pipeline), translated to LLVM IR, compiled by clang and
// linked with libfa_cuda_runtime.so alone, then run on the fake driver: the
// IR's mgpu* calls resolve to the library and reach the driver.
// REQUIRES: cuda-h, fa-cuda-runtime
// RUN: mlir-opt %s --gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa" \
// RUN:   | mlir-translate --mlir-to-llvmir -o %t.ll
// RUN: %clangxx -Wno-override-module %t.ll -L%fa_cuda_runtime_dir -lfa_cuda_runtime -Wl,-rpath,%fa_cuda_runtime_dir -o %t
// RUN: %clangxx -shared -fPIC -I%cuda_include %S/Inputs/fake_libcuda.cpp -o %t.fake.so
// RUN: env FA_LIBCUDA=%t.fake.so %t 2>&1 | FileCheck %s
// A fatal error inside the module constructor exits with status 1 at once:
// the module destructor (mgpuModuleUnload) must not run and wait on the
// unfinished initialization.
// RUN: env FA_LIBCUDA=%t.fake.so FAKE_CUDA_FAIL=cuModuleLoadDataEx sh -c 'timeout 60 %t; echo "exit status $?"' 2>&1 | FileCheck %s --check-prefixes=FAIL,FAIL-JIT
// RUN: env FA_LIBCUDA=%t.missing.so sh -c 'timeout 60 %t; echo "exit status $?"' 2>&1 | FileCheck %s --check-prefix=FAIL

// CHECK: fake: cuInit 0
// CHECK: fake: cuModuleLoadDataEx image //{{$}}
// CHECK: fake:   option CU_JIT_OPTIMIZATION_LEVEL 2
// CHECK: fake: cuStreamCreate flags 1 -> [[STREAM:0x[0-9a-f]+]]
// CHECK: fake: cuMemAlloc 1024 -> [[BUF:0x[0-9a-f]+]]
// CHECK: fake: cuModuleGetFunction 0xd000 scale
// CHECK: fake: cuFuncSetAttribute 0xf000 MAX_DYNAMIC_SHARED_SIZE_BYTES 65536
// CHECK: fake: cuLaunchKernel 0xf000 grid 4 1 1 block 256 1 1 smem 65536 stream [[STREAM]] params set extra null
// CHECK: fake: cuMemFree [[BUF]]
// CHECK: fake: cuStreamSynchronize [[STREAM]]
// CHECK: fake: cuStreamDestroy [[STREAM]]
// CHECK: fake: cuModuleUnload 0xd000

// FAIL-JIT: fa_cuda_runtime: mgpuModuleLoadJIT: cuModuleLoadDataEx failed
// FAIL-NOT: cuModuleUnload
// FAIL: exit status 1

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%arg0: memref<256xf32>) kernel {
      %tid = gpu.thread_id x
      %v = memref.load %arg0[%tid] : memref<256xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %arg0[%tid] : memref<256xf32>
      gpu.return
    }
  }
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c256 = arith.constant 256 : index
    %smem = arith.constant 65536 : i32
    %t0 = gpu.wait async
    %m, %t1 = gpu.alloc async [%t0] () : memref<256xf32>
    %t2 = gpu.launch_func async [%t1] @kernels::@scale
        blocks in (%c4, %c1, %c1) threads in (%c256, %c1, %c1)
        dynamic_shared_memory_size %smem args(%m : memref<256xf32>)
    %t3 = gpu.dealloc async [%t2] %m : memref<256xf32>
    gpu.wait [%t3]
    return
  }
}
