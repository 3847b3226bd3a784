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

/// Keeps the i32 `regs` alive and unmodified up to this point (an empty asm
/// that "rewrites" them); returns the rewritten values.
SmallVector<Value> keepRegistersLive(KernelBuilder &kb, ArrayRef<Value> regs);

} // namespace mlir::fa::kernel

#endif // FA_CONVERSION_ATTENTIONTONVGPU_COMMON_INLINEPTX_H
