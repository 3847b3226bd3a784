//===- Passes.td - fa conversion passes --------------------*- tablegen -*-===//
#ifndef FA_CONVERSION_PASSES_TD
#define FA_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertFAToNVGPUPass : Pass<"convert-fa-to-nvgpu", "ModuleOp"> {
  let summary = "Rewrite a func.func holding the tiled form of fa.attention into a FlashAttention-2 gpu.func built from nvgpu ops";
  let description = [{
    Consumes the target-independent tiled form of `fa-tile-attention`, never
    `fa.attention` itself. A chip-independent matcher (`matchTiledAttention`) reads
    each `func.func` holding one tiled attention into a `TiledAttention`:

    * the `scf.forall` over (batch, head, query block): the grid, `block-q` from
      the query slice offset `block * block-q`;
    * the `tensor.extract_slice`s of the query/key/value function arguments: the
      global tensors, the GQA head `head / (Hq / Hkv)`, `block-kv`;
    * `fa.kv_block_range` and the three `scf.for`s (masked, unmasked, masked) or the
      single unmasked loop: the window (causal = `[-1, 0]`) and which key blocks
      need element masks; the kernel recomputes the range with
      `computeKVBlockRange`, so it skips exactly the blocks the tiled form skips;
    * the `fa.online_attention` steps: scale (no mask operand, softcap or descale);
    * the epilogue's `tensor.parallel_insert_slice`s into the results, which the
      function returns: out, and lse when present.

    Anything else is a diagnostic. The chip's builder then replaces the function by
    a `gpu.module @<func>_kernels` holding `gpu.func @<func>_kernel`; for `sm_80`
    (SM80FlashAttention.cpp), FlashAttention-2:

    * grid `(ceil(Nq / block-q), Hq, B)`; `block-q / rows-per-warp` warps (4), each
      owning 32 (or 16) query rows as m16 tiles, so every K and V fragment read from
      shared memory feeds 2 (or 1) mma; block-q 64 or 128, block-kv 32 or 64;
    * one shared buffer: the Q tile (rows-per-warp 32: kept there and read per
      Q K^T; 16: read once into registers, its rows then reused), a K tile and a V
      tile, filled with 16-byte `nvgpu.device_async_copy` (rows past Nq/Nk
      zero-filled, sources clamped in bounds), rows padded by 8 elements against
      ldmatrix bank conflicts; past 48 KiB it is dynamic shared memory
      (`gpu.dynamic_shared_memory`, size in the manifest); K_{j+1} is issued under
      the softmax and P V of block j, V_{j+1} under the next Q K^T;
    * `nvgpu.ldmatrix` (transposed for V) feeding m16n8k16 `nvgpu.mma.sync` (bf16:
      `nvvm.mma.sync`) with f32 accumulators; S fragments repacked in registers as
      the A operand of P V;
    * online softmax in registers: `max.f32`, row max/sum over the 4 lanes of a row
      with `gpu.shuffle xor`, `exp2(s * scale * log2(e) - max)` as one FFMA +
      `ex2.approx`, normalization after the loop; the per-score mask (window edges
      and the Nk tail) only on the blocks that need it (`scf.if`).

    Kernel arguments: `q, k, v, out` as bare pointers (static 1-D memrefs, lowered
    with the bare-pointer convention), `lse` (f32) when requested, then
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

    The sm_90a schedule switches are options of this pass declared from
    `SM90/Schedule.def` (`stages`, `warp-specialize`, `overlap`,
    `p-from-registers`, `fast-softmax`, `warp-arrive`, `rescale-before-pv`,
    `ping-pong`, `longest-first=auto|true|false`, `exp2-poly-every`,
    `persistent`, `split-release=auto|true|false`; `fa-opt --help` lists
    them), overridden per function by `fa.sm90.<name>` attributes (the option
    name with underscores); `resolveSM90Schedule` checks every value and
    combination.

    Before (`fa-tile-attention{block-q=128 block-kv=64}` of a causal fa.attention):
    ```mlir
    func.func @attn(%q: tensor<?x?x?x64xf16>, %k: ..., %v: ...) -> tensor<?x?x?x64xf16> {
      %r = scf.forall (%b, %h, %qb) in (%B, %Hq, %nqb) shared_outs(%o = %init) {
        %q_t = tensor.extract_slice %q[%b, %h, %row0, 0] [1, 1, %rows, 64] [1, 1, 1, 1]
        %begin, %fbegin, %fend, %end = fa.kv_block_range rows [%row0, %row1) keys %nk
            diagonal %diag {block_kv = 64 : i64, window = array<i64: -1, 0>}
        ... three scf.for with fa.online_attention, epilogue ...
        scf.forall.in_parallel { tensor.parallel_insert_slice %o_t into %o[%b, %h, %row0, 0] ... }
      }
      return %r : tensor<?x?x?x64xf16>
    }
    ```
    After:
    ```mlir
    gpu.module @attn_kernels {
      gpu.func @attn_kernel(%q: memref<1099511627776xf16>, ..., %nk: i32) workgroup(...) kernel {
        ... nvgpu.device_async_copy, nvgpu.ldmatrix, nvgpu.mma.sync, gpu.shuffle xor ...
      }
    }
    ```
  }];
  // The sm_90a schedule options (stages, warp-specialize, overlap,
  // p-from-registers, ...) are not listed here: they are declared once, in
  // include/fa/Conversion/AttentionToNVGPU/SM90/Schedule.def, and the pass
  // class declares them from it (SM90/ScheduleOptions.inc), as does fa-to-ptx.
  // TableGen cannot include that list, and a second list here would drift.
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "Target chip: sm_80 (FlashAttention-2 kernel) or sm_90a "
           "(TMA + mbarrier + wgmma kernel, see docs/SM90.md)">,
    Option<"rowsPerWarp", "rows-per-warp", "int64_t", /*default=*/"0",
           "Query rows per warp (sm_80: 16 or 32; 0: 32 when block-q >= 128, else 16)">,
    Option<"deterministic", "deterministic", "bool", /*default=*/"false",
           "Backward kernels (fa.attention_grad) add dQ in a fixed order, key "
           "block by key block, through a dq_semaphore parameter, so dq is "
           "bitwise the same on every run (slower; forward kernels are "
           "deterministic anyway)">,
    Option<"hostLaunch", "host-launch", "bool", /*default=*/"false",
           "Keep each function (callers may call it) and make its body the launch "
           "of its kernel on the host, read from the launch manifest: device "
           "buffers and copies (gpu.alloc, gpu.memcpy), tensor maps "
           "(nvgpu.tma.create.descriptor), the grid from the runtime sizes, "
           "gpu.launch_func, on one stream of async tokens (fa-to-gpu)">,
    Option<"varlenLayout", "varlen-layout", "std::string", /*default=*/"\"thd\"",
           "Memory layout of a varlen attention's packed q, k, v and out in "
           "the kernel's launch contract: thd ([T, H, D], token-major, "
           "FlashAttention's varlen layout) or htd ([H, T, D], the op's "
           "[1, H, T, D] as it is); lse is [H, T] either way (sm_90a). The "
           "varlen backward kernel (fa.attention_grad) takes htd only">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::cf::ControlFlowDialect", "::mlir::func::FuncDialect",
    "::mlir::tensor::TensorDialect", "::mlir::gpu::GPUDialect",
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
    step spill registers; sm_90a: 128 x 128, 128 x 80 for head dim 256, where
    2 stages of 128-key K/V tiles exceed shared memory, 128 x 64 there with a
    left window edge, where 80 keys spill) and runs `fa-tile-attention{block-q block-kv}` on that
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

def FAEmitHostLaunchPass : Pass<"fa-emit-host-launch", "ModuleOp"> {
  let summary = "Give each kernel launch declaration of convert-fa-to-nvgpu{host-launch} its body on memrefs";
  let description = [{
    `convert-fa-to-nvgpu{host-launch}` leaves each attention function calling a private
    declaration `@<function>_launch` on memrefs (the tensors the kernel reads, then its
    outputs), with the kernel, its argument types and its launch manifest in attributes.
    After bufferization (whose buffer deallocation rejects GPU ops), this pass gives each
    declaration its body by interpreting the manifest: on one stream of async tokens,
    `gpu.alloc` + `gpu.memcpy` of every input, `gpu.alloc` of the outputs,
    `nvgpu.tma.create.descriptor` for the tensor maps (sm_90a), the grid from the runtime
    sizes (`memref.dim`), `gpu.launch_func`, the outputs copied back, `gpu.dealloc`,
    `gpu.wait`. Upstream `gpu-to-llvm` lowers the result to the `mgpu*` calls of
    lib/Runtime (`libfa_cuda_runtime`). `fa-to-gpu` runs it.

    ```mlir
    func.func private @f_attention_launch(%q: memref<2x4x256x64xf16>, ..., %out: memref<2x4x256x64xf16>)
        attributes {fa.launch.kernel = @f_attention_kernels::@f_attention_kernel, ...}
    ```
    becomes
    ```mlir
    func.func private @f_attention_launch(...) {
      %t0 = gpu.wait async
      %qd, %t1 = gpu.alloc async [%t0] (%bytes) : memref<?xi8>
      ...
      %t = gpu.launch_func async [...] @f_attention_kernels::@f_attention_kernel blocks in (...) threads in (...) ...
      ...
      gpu.wait [%tn]
      return
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect", "::mlir::nvgpu::NVGPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::func::FuncDialect"
  ];
}

#endif // FA_CONVERSION_PASSES_TD
