//===- TileScheduler.h - which (query block, head, batch) a CTA works on -*- C++ -*-===//
//
// FlashAttention-3's tile-scheduler interface reduced to what the builders
// need: the grid, the tile of a CTA (one tile per CTA) or the decode of a
// linear tile index (persistent CTAs looping over tiles), in blockIdx order
// or longest first (causal: the query blocks that visit the most key blocks
// start first, so that the grid ends on short ones).
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_COMMON_TILESCHEDULER_H
#define FA_CONVERSION_ATTENTIONTONVGPU_COMMON_TILESCHEDULER_H

#include "fa/Conversion/AttentionToNVGPU/Common/KernelBuilder.h"

namespace mlir::fa::kernel {

/// One output tile: rows [qBlock * blockQ, +blockQ) of query head `head` of
/// batch `batch`.
struct TileCoord {
  Value qBlock, head, batch;
};

/// The runtime sizes a scheduler reads (index values; batch may be the i32
/// kernel argument, cast where it is used).
struct ProblemSizes {
  Value batch, queryHeads, kvHeads, queryLength, keyLength;
};

class TileScheduler {
public:
  enum class Kind {
    OneTilePerCTA, ///< grid (ceil(Nq / blockQ), Hq, B)
    StaticPersistent, ///< grid min(tiles, SMs); CTA c takes c, c + grid, ...
  };
  TileScheduler(Kind kind, bool longestFirst, int64_t blockQ)
      : kind(kind), longestFirst(longestFirst), blockQ(blockQ) {}

  Kind getKind() const { return kind; }
  bool isPersistent() const { return kind == Kind::StaticPersistent; }
  bool isLongestFirst() const { return longestFirst; }

  /// One tile per CTA: the CTA's tile from blockIdx (x: query block,
  /// reversed when longest first; y: head; z: batch).
  TileCoord getBlockTile(KernelBuilder &kb) const;

  /// Persistent: the number of query blocks and of tiles
  /// (ceil(Nq / blockQ) * Hq * B); call once, pass to decodeTile.
  struct TileCount {
    Value queryBlocks, tiles;
  };
  TileCount getTileCount(KernelBuilder &kb, const ProblemSizes &sizes) const;

  /// Persistent: tile `tile` as (query block, head, batch), query block
  /// fastest, or, longest first, the heads and batches of the last query
  /// block first.
  TileCoord decodeTile(KernelBuilder &kb, Value tile, const TileCount &count,
                       const ProblemSizes &sizes) const;

private:
  Kind kind;
  bool longestFirst;
  int64_t blockQ;
};

} // namespace mlir::fa::kernel

#endif // FA_CONVERSION_ATTENTIONTONVGPU_COMMON_TILESCHEDULER_H
