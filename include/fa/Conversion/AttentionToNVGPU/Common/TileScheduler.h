//===- TileScheduler.h - which (query block, head, batch) a CTA works on -*- C++ -*-===//
//
// FlashAttention-3's tile-scheduler interface reduced to what the builders
// need: the grid, the tile of a CTA (one tile per CTA) or the decode of a
// linear tile index (persistent CTAs looping over tiles), in blockIdx order
// or longest first (causal: the query blocks that visit the most key blocks
// start first, so that the grid ends on short ones). Persistent CTAs step
// through the tiles with a static stride or claim them from a device-wide
// counter (dynamic: a CTA that drew short tiles takes more of them).
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
    /// grid min(tiles, SMs); CTA c takes c first, then grid + the value of
    /// an atomic increment of a counter, until a value >= tiles.
    DynamicPersistent,
  };
  /// `kvRowBytes`: bytes of K and V per key of one K/V head (2 D x element
  /// bytes), for the L2 sections of longest-first persistent tiles.
  TileScheduler(Kind kind, bool longestFirst, int64_t blockQ,
                int64_t kvRowBytes = 0)
      : kind(kind), longestFirst(longestFirst), blockQ(blockQ),
        kvRowBytes(kvRowBytes) {}

  Kind getKind() const { return kind; }
  bool isPersistent() const { return kind != Kind::OneTilePerCTA; }
  bool isDynamic() const { return kind == Kind::DynamicPersistent; }
  bool isLongestFirst() const { return longestFirst; }

  /// One tile per CTA: the CTA's tile from blockIdx (x: query block,
  /// reversed when longest first; y: head; z: batch).
  TileCoord getBlockTile(KernelBuilder &kb) const;

  /// Persistent: the number of query blocks and of tiles
  /// (ceil(Nq / blockQ) * Hq * B) and, longest first, the planes of an L2
  /// section; call once, pass to decodeTile.
  struct TileCount {
    Value queryBlocks, tiles;
    Value sectionPlanes; ///< longest first: planes per section, else null
  };
  TileCount getTileCount(KernelBuilder &kb, const ProblemSizes &sizes) const;

  /// Persistent: tile `tile` as (query block, head, batch), query block
  /// fastest, or, longest first, by L2 sections: the (batch, head) planes
  /// in groups of sectionPlanes whose K and V fit together in
  /// kL2SectionBytes, each group's tiles with the last query block of every
  /// plane first, then the one before, ... So the longest tiles start
  /// first while the CTAs that run together read the K/V of a few planes
  /// (the whole grid's, spread over every plane, would not stay in L2).
  TileCoord decodeTile(KernelBuilder &kb, Value tile, const TileCount &count,
                       const ProblemSizes &sizes) const;

  /// Dynamic: the CTA's next tile, gridDim.x + atomic add of 1 to
  /// counter[0] (`counter`: a [2] i32 global memref, zero at launch). The
  /// value (>= tiles once they are all claimed) is the CTA's to take.
  Value claimNextTile(KernelBuilder &kb, Value counter) const;

  /// Dynamic: after this CTA's last claim (one whose value was >= tiles),
  /// by one thread per CTA: counts the CTA out in counter[1]; the last CTA
  /// out resets both words to zero, so the next launch on the stream finds
  /// the counter as it must (no memset per launch).
  void retireCTA(KernelBuilder &kb, Value counter) const;

  /// The K/V bytes of the planes of one longest-first section, well inside
  /// an H100 / H200 L2 (50 MB) next to Q and O traffic. Measured with dynamic
  /// tiles on the H200 (bench/results/dynamic_tiles_h200_2026-12-01_s12,
  /// run4): 8 MiB within 1% of 32 MiB, mostly ahead (causal d128).
  static constexpr int64_t kL2SectionBytes = int64_t(8) << 20;

private:
  Kind kind;
  bool longestFirst;
  int64_t blockQ;
  int64_t kvRowBytes;
};

} // namespace mlir::fa::kernel

#endif // FA_CONVERSION_ATTENTIONTONVGPU_COMMON_TILESCHEDULER_H
