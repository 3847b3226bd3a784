//===- SplitKV.h - in-kernel split-KV of the sm_90a kernel ------*- C++ -*-===//
//
// Decoding has a handful of query rows per sequence: one CTA per tile keeps a
// few SMs busy. With the split-kv schedule the key blocks of a tile are cut
// into num_splits chunks (a launch size), one CTA each (grid z = B *
// num_splits). Each CTA runs the usual mainloop over its chunk, writes the
// chunk's normalized O and lse in f32 to the split_o / split_lse workspaces
// and counts itself in the tile's split_counter word; the CTA that arrives
// last merges the chunks by lse (FlashAttention's split-KV combine, here in
// the kernel instead of a second launch), writes out and lse and zeroes the
// word for the next launch. With num_splits = 1 the plain epilogue runs.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM90_SPLITKV_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM90_SPLITKV_H

#include "fa/Conversion/AttentionToNVGPU/SM90/Epilogue.h"

namespace mlir::fa::sm90 {

/// A CTA's key chunk: chunk `index` of `count` (index values).
struct KVSplit {
  Value index, count;

  /// The CTA's chunk from blockIdx.z = batch * count + index (`count`: the
  /// num_splits argument); sets `coord`'s batch to the CTA's batch.
  static KVSplit fromGrid(KernelBuilder &kb, kernel::TileCoord &coord,
                          Value count);
  /// The tile (one per CTA, TileScheduler::getBlockTile's order) and
  /// fromGrid again from opaque reads of blockIdx, for the epilogue: what
  /// derives from them (a division by num_splits, the planes, the rows) is
  /// recomputed there instead of held in registers across the key loop (at
  /// d128 and d256 that spilled 12-72 bytes).
  static KVSplit again(KernelBuilder &kb, kernel::TileCoord &coord,
                       bool longestFirst, Value count);
  /// `range` narrowed to this chunk: ceil(n / count) of its n blocks per
  /// chunk, the last chunks possibly empty. The window's full blocks and
  /// the masks stay the tile's (a chunk's edge blocks are masked as before).
  KVRange narrow(KernelBuilder &kb, KVRange range) const;
};

/// The epilogue of a split-kv kernel: with one chunk buildEpilogue; else the
/// chunk's O / l and lse to the workspaces, the arrival, and in the last CTA
/// of the tile the merge into out (and lse).
void buildSplitKVEpilogue(KernelBuilder &kb, const KernelConfig &cfg,
                          const KernelArgs &args, const SharedMemory &smem,
                          const ConsumerFrame &frame, const EpilogueRows &rows,
                          const MainloopResult &result, const TileState &tile,
                          const KVSplit &split);

} // namespace mlir::fa::sm90

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM90_SPLITKV_H
