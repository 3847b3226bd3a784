//===- KVCache.h - per-sequence key lengths and paged K/V pools -*- C++ -*-===//
//
// Where the keys of one sequence are, for the kernels of an fa.attention with
// kv_lens and/or pages (docs/Attention.md): the sequence's key count
// clamp(kv_lens[b], 0, capacity), and for a paged cache the pool row of each
// key: key j of sequence b is row j % S of page table[b, j / S] of the pool
// [P, Hkv, S, D], i.e. row (page * Hkv + g) * S + j % S of the pool seen as
// [P * Hkv * S, D]. Page ids and page indices are clamped, so a bad table
// never reads outside the pool (Python's checked mode reports them).
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_COMMON_KVCACHE_H
#define FA_CONVERSION_ATTENTIONTONVGPU_COMMON_KVCACHE_H

#include "fa/Conversion/AttentionToNVGPU/Common/KernelBuilder.h"

namespace mlir::fa::kernel {

/// The key layout of a kernel, fixed at compile time: contiguous
/// [B, Hkv, Nk, D], or a pool of pages of `pageSize` rows; `kvLens`: the
/// kernel reads per-sequence key counts.
struct KVCacheLayout {
  bool kvLens = false;
  int64_t pageSize = 0; ///< 0: not paged
  bool paged() const { return pageSize != 0; }
  bool any() const { return kvLens || paged(); }
};

/// The kernel parameters of a KVCacheLayout (null where absent): the i32
/// memrefs kv_lens [B] and page_table [B, max_pages], and the pool's sizes.
struct KVCacheArgs {
  Value kvLens, pageTable;
  Value numPages, maxPages; ///< index
};

/// The keys of one (sequence, K/V head).
struct SequenceKeys {
  KVCacheLayout layout;
  /// The sequence's key count: clamp(kv_lens[b], 0, Nk) with kv_lens, else
  /// Nk (the capacity: max_pages * page_size when paged).
  Value length;
  /// Contiguous: the first row of the (b, g) plane in [B * Hkv * Nk, D].
  Value planeRow;
  /// Paged: table row b's first element, the K/V head, the pool's sizes.
  Value tableBase, kvHead, kvHeads, numPages, maxPages;
  Value pageTable;

  /// `capacity`: Nk as the kernel's size parameter.
  static SequenceKeys of(KernelBuilder &kb, const KVCacheLayout &layout,
                         const KVCacheArgs &args, Value batch, Value kvHead,
                         Value kvHeads, Value capacity);
  /// The page holding key `key` (paged): table[b, min(key / S, M - 1)]
  /// clamped to [0, P - 1].
  Value pageOf(KernelBuilder &kb, Value key) const;
  /// The plane of the pool [P * Hkv, S, D] holding key `key` (paged):
  /// page * Hkv + g.
  Value pagePlane(KernelBuilder &kb, Value key) const;
  /// The row of key `key` in the K/V tensor seen as [rows, D]: contiguous
  /// planeRow + key; paged pagePlane * S + key % S.
  Value rowOf(KernelBuilder &kb, Value key) const;
};

} // namespace mlir::fa::kernel

#endif // FA_CONVERSION_ATTENTIONTONVGPU_COMMON_KVCACHE_H
