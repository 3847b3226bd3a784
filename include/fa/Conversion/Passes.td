//===- Passes.td - fa conversion passes --------------------*- tablegen -*-===//
#ifndef FA_CONVERSION_PASSES_TD
#define FA_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertFAToNVGPUPass : Pass<"convert-fa-to-nvgpu", "ModuleOp"> {
  let summary = "Rewrite a func.func holding fa.attention into a FlashAttention-2 gpu.func built from nvgpu ops";
  let description = [{
    Each `func.func` that holds one `fa.attention` (static head dim 64 or 128, f16 or
    bf16 query/key/value/out, optional causal, GQA, optional lse; no mask, window,
    softcap or descale) is replaced by a `gpu.module @<func>_kernels` holding
    `gpu.func @<func>_kernel`, the FlashAttention-2 forward kernel for `chip`:

    * grid `(ceil(Nq / 64), Hq, B)`, 128 threads = 4 warps, each warp 16 query rows;
    * the query tile, then per step a 64-key K tile and V tile, copied to workgroup
      memory with 16-byte `nvgpu.device_async_copy` (rows past Nq/Nk zero-filled
      through `srcElements`, sources clamped in bounds), rows padded by 8 elements
      against ldmatrix bank conflicts;
    * `nvgpu.ldmatrix` (transposed for V) feeding `nvgpu.mma.sync` m16n8k16 with
      f32 accumulators; S fragments are repacked in registers as the A operand of P*V;
    * online softmax in registers: row max/sum over the 4 lanes of a row with
      `gpu.shuffle xor`, `exp2` with `scale * log2(e)` folded, normalization after
      the loop; causal key blocks past the diagonal are never visited.

    Kernel arguments: `q, k, v, out` as bare pointers (static 1-D memrefs,
    lowered with the bare-pointer convention), `lse` (f32) when requested, then
    `B, Hq, Hkv, Nq, Nk` as i32. The launch manifest (JSON) is attached to the
    module as `fa.manifest.<kernel>`; `fa-dump-kernel` writes it out.

    With `chip=sm_90a` the kernel is the Hopper one of docs/SM90.md instead
    (lib/Conversion/AttentionToNVGPU/SM90FlashAttention.cpp): grid
    `(ceil(Nq / 128), Hq, B)`, 384 threads (2 consumer warpgroups + 1 TMA
    producer warpgroup with `warp-specialize`), Q/K/V by `nvgpu.tma.async.load`
    into a `stages`-deep mbarrier-guarded ring, `nvvm.wgmma.mma_async` with P
    through swizzled shared memory, pipelined ping-pong consumers with
    `overlap`. Its first three arguments are `!llvm.ptr`s to 128-byte
    CUtensorMaps in device memory (q, k, v); the manifest lists them under
    `tensor_maps`.

    Before:
    ```mlir
    func.func @attn(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
      %o = fa.attention %q, %k, %v {causal} : ... -> tensor<?x?x?x64xf16>
      return %o : tensor<?x?x?x64xf16>
    }
    ```
    After:
    ```mlir
    gpu.module @attn_kernels {
      gpu.func @attn_kernel(%q: memref<2147483648xf16>, ..., %nk: i32) workgroup(...) kernel {
        ... nvgpu.device_async_copy, nvgpu.ldmatrix, nvgpu.mma.sync, gpu.shuffle xor ...
      }
    }
    ```
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "Target chip: sm_80 (FlashAttention-2 kernel) or sm_90a "
           "(TMA + mbarrier + wgmma kernel, see docs/SM90.md)">,
    Option<"stages", "stages", "int64_t", /*default=*/"2",
           "sm_90a: depth of the K/V shared-memory ring (1 to 4)">,
    Option<"warpSpecialize", "warp-specialize", "bool", /*default=*/"true",
           "sm_90a: a producer warpgroup issues the TMA loads (setmaxnreg)">,
    Option<"overlap", "overlap", "bool", /*default=*/"true",
           "sm_90a with warp-specialize: pipelined consumers (softmax of block j "
           "under P V of block j-1) and ping-pong of the two consumer warpgroups">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect"
  ];
}

def FADumpKernelPass : Pass<"fa-dump-kernel", "ModuleOp"> {
  let summary = "Write each gpu.binary's PTX and its launch manifest (JSON) to a directory";
  let description = [{
    For every `gpu.binary @<name>_kernels` whose object is PTX (`format=isa`) and whose
    kernel has an `fa.manifest.<kernel>` attribute on the module (set by
    `convert-fa-to-nvgpu`), writes `<dir>/<kernel>.ptx` and `<dir>/<kernel>.json`.
    The JSON holds the kernel name, PTX file name, grid as formulas of B/Hq/Nq, block
    size, dynamic shared memory bytes, and the ordered parameter list with meanings.
    The IR is left unchanged.
  }];
  let options = [
    Option<"dir", "dir", "std::string", /*default=*/"\".\"",
           "Directory to write <kernel>.ptx and <kernel>.json into">,
  ];
}

#endif // FA_CONVERSION_PASSES_TD
