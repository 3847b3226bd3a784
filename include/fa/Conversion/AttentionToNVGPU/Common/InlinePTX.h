//===- InlinePTX.h - the one place inline PTX is emitted --------*- C++ -*-===//
//
// What MLIR 22's nvvm dialect cannot express yet (wgmma with A in registers,
// register fences, opaque copies that stop LLVM from hoisting or
// rematerializing a value) is emitted as llvm.inline_asm through these
// functions, never assembled by hand at a call site.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_COMMON_INLINEPTX_H
#define FA_CONVERSION_ATTENTIONTONVGPU_COMMON_INLINEPTX_H

#include "fa/Conversion/AttentionToNVGPU/Common/KernelBuilder.h"

#include <string>

namespace mlir::fa::kernel {

/// `ptx` as an llvm.inline_asm with side effects (never merged, hoisted or
/// removed), AT&T dialect, `constraints` in LLVM's syntax ("=r,r", "0" ties
/// an input to output 0, ...). `pure`: without side effects (a plain
/// computation LLVM may move, merge or drop).
Value emitInlinePTX(KernelBuilder &kb, Type resultType, ValueRange operands,
                    StringRef ptx, StringRef constraints, bool pure = false);

/// `ptx` with side effects and no result (a store, a fence, an async copy).
void emitInlinePTXEffect(KernelBuilder &kb, ValueRange operands, StringRef ptx,
                         StringRef constraints);

/// The constraint string of `numOutputs` outputs of class `cls` ('r', 'f',
/// 'l') tied to the first `numOutputs` inputs, then `extraInputs` (e.g.
/// ",r,r,l").
std::string tiedConstraints(int64_t numOutputs, char cls,
                            StringRef extraInputs = "");

/// `v` (an index below 2^31) through `mov.u32`: the same value, but nothing
/// derived from it can be hoisted above this point or merged with what was
/// derived from `v` before.
Value opaqueIndex(KernelBuilder &kb, Value v);

/// %tid.x read again through inline PTX (index): what is derived from it is
/// recomputed where it is used instead of being kept live from the first read.
Value opaqueThreadIdX(KernelBuilder &kb);

/// bar.sync (`sync`) or bar.arrive on named barrier `id` (i32; 0 is the
/// CTA's) of `threads` threads.
void namedBarrier(KernelBuilder &kb, Value id, int64_t threads, bool sync);

/// A special register (`reg`, e.g. "%ctaid.x") read through inline PTX
/// (index): never merged with an earlier read.
Value opaqueSpecialRegister(KernelBuilder &kb, StringRef reg);

/// The 32-bit shared-window address (i32) of workgroup memref `smem`'s
/// first element.
Value sharedAddress32(KernelBuilder &kb, Value smem);

/// ldmatrix.sync .m8n8.x4 (.trans when `transpose`) of 16-bit `elementType`
/// at the 32-bit shared address `laneAddress` + `byteOffset`, as the
/// vector<4x2xelementType> nvgpu.ldmatrix gives. The offset is the
/// instruction's immediate, so one base register serves every fragment of a
/// tile: from nvgpu.ldmatrix LLVM hoists each fragment's address out of the
/// key loop into its own 64-bit register (48 of them, 96 registers, in the
/// sm_80 d128 forward). Side-effecting: it reads memory the loop rewrites.
Value ldmatrixX4(KernelBuilder &kb, Type elementType, Value laneAddress,
                 int64_t byteOffset, bool transpose);

/// The global-window address (i64, cvta.to.global) of global memref
/// `gmem`'s first element.
Value globalAddress(KernelBuilder &kb, Value gmem);

/// cp.async.cg.shared.global of 16 bytes from global address `src` (i64) to
/// the 32-bit shared address `dst` + `dstOffset` (an immediate, as for
/// ldmatrixX4); `srcBytes` (i32, 0..16) of them read, the rest zero-filled.
void cpAsync16(KernelBuilder &kb, Value dst, int64_t dstOffset, Value src,
               Value srcBytes);

/// Keeps the i32 `regs` alive and unmodified up to this point (an empty asm
/// that "rewrites" them); returns the rewritten values.
SmallVector<Value> keepRegistersLive(KernelBuilder &kb, ArrayRef<Value> regs);

} // namespace mlir::fa::kernel

#endif // FA_CONVERSION_ATTENTIONTONVGPU_COMMON_INLINEPTX_H
