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
           "Target chip (only sm_80 for now)">,
    Option<"rowsPerWarp", "rows-per-warp", "int64_t", /*default=*/"0",
           "Query rows per warp (sm_80: 16 or 32; 0: 32 when block-q >= 128, else 16)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect"
  ];
}

def FATileAttentionForChipPass : Pass<"fa-tile-attention-for-chip", "ModuleOp"> {
  let summary = "Run fa-tile-attention on each func.func with the block sizes a GPU chip's kernel wants for its head dim";
  let description = [{
    The first step of `fa-to-ptx`. For each `func.func` holding an `fa.attention`,
    picks `block-q` and `block-kv` from the chip and the attention's head dim
    (sm_80: 128 x 64 for head dim 64, 128 x 32 for head dim 128, where 64 keys per
    step spill registers) and runs `fa-tile-attention{block-q block-kv}` on that
    function (a dynamic pipeline), so that a module may hold attentions of several
    head dims. Non-zero `block-q` / `block-kv` override the choice.

    Before: `fa.attention` (head dim 128) in `func.func @f`.
    After: the tiled form of `fa-tile-attention{block-q=128 block-kv=32}` in `@f`.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "Target chip whose block sizes to use">,
    Option<"blockQ", "block-q", "int64_t", /*default=*/"0",
           "Query rows per block (0: the chip's choice)">,
    Option<"blockKV", "block-kv", "int64_t", /*default=*/"0",
           "Keys per step (0: the chip's choice)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
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
