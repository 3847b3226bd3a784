//===- Schedule.cpp - resolve the sm_90a schedule of one kernel -----------===//
//
// The schedule of one sm_90a kernel, from the switches of SM90/Schedule.def:
// measured defaults, then the options (convert-fa-to-nvgpu or fa-to-ptx),
// then the function's `fa.sm90.*` attributes; every value and combination is
// checked here, with a diagnostic that names the switch and where it was set.
//
//===----------------------------------------------------------------------===//
#include "fa/Conversion/AttentionToNVGPU/SM90/Schedule.h"
#include "fa/Conversion/AttentionToNVGPU/AttentionToNVGPU.h"
#include "fa/Conversion/AttentionToNVGPU/Common/OnlineSoftmax.h"
#include "fa/Conversion/AttentionToNVGPU/SM90/SharedMemoryPlan.h"
#include "fa/Conversion/AttentionToNVGPU/SM90FlashAttention.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"

#include <cstdint>

using namespace mlir;
using namespace mlir::fa;

static_assert(SM90Schedule{}.blockKV == kSM90BlockKV &&
                  SM90Schedule{}.stages == getSM90DefaultStages(128),
              "Schedule.def's defaults are the values at head dim 128");

namespace {
/// One index per switch, in Schedule.def's order.
enum SwitchIndex : unsigned {
#define FA_SM90_SWITCH(FIELD, FLAG, ATTR, KEY, HELP) FIELD##Index,
#include "fa/Conversion/AttentionToNVGPU/SM90/Schedule.def"
  kNumSwitches
};

enum class Kind { Bool, AutoBool, Int, AutoInt, TileInt };

struct SwitchInfo {
  Kind kind;
  StringLiteral flag, attr;
  int64_t min, max; ///< the range of an integer switch
};

const SwitchInfo kSwitches[kNumSwitches] = {
#define FA_SM90_BOOL(FIELD, FLAG, ATTR, KEY, DEFAULT, HELP)                    \
  {Kind::Bool, FLAG, ATTR, 0, 1},
#define FA_SM90_AUTO_BOOL(FIELD, FLAG, ATTR, KEY, DEFAULT, HELP)               \
  {Kind::AutoBool, FLAG, ATTR, 0, 1},
#define FA_SM90_INT(FIELD, FLAG, ATTR, KEY, DEFAULT, MIN, MAX, HELP)           \
  {Kind::Int, FLAG, ATTR, MIN, MAX},
#define FA_SM90_AUTO_INT(FIELD, FLAG, ATTR, KEY, DEFAULT, MIN, MAX, HELP)      \
  {Kind::AutoInt, FLAG, ATTR, MIN, MAX},
#define FA_SM90_TILE_INT(FIELD, FLAG, ATTR, KEY, DEFAULT, MIN, MAX, HELP)      \
  {Kind::TileInt, FLAG, ATTR, MIN, MAX},
#include "fa/Conversion/AttentionToNVGPU/SM90/Schedule.def"
};

bool isBool(unsigned i) {
  return kSwitches[i].kind == Kind::Bool || kSwitches[i].kind == Kind::AutoBool;
}

int64_t getField(const SM90Schedule &s, unsigned i) {
  switch (i) {
#define FA_SM90_SWITCH(FIELD, FLAG, ATTR, KEY, HELP)                           \
  case FIELD##Index:                                                           \
    return static_cast<int64_t>(s.FIELD);
#include "fa/Conversion/AttentionToNVGPU/SM90/Schedule.def"
  }
  llvm_unreachable("unknown sm_90a schedule switch");
}

void setField(SM90Schedule &s, unsigned i, int64_t v) {
  switch (i) {
#define FA_SM90_SWITCH(FIELD, FLAG, ATTR, KEY, HELP)                           \
  case FIELD##Index:                                                           \
    s.FIELD = static_cast<decltype(s.FIELD)>(v);                               \
    return;
#include "fa/Conversion/AttentionToNVGPU/SM90/Schedule.def"
  }
  llvm_unreachable("unknown sm_90a schedule switch");
}

/// "from 1 to 4", "at least 0"; block_kv also a multiple of 16.
std::string rangeText(unsigned i) {
  const SwitchInfo &info = kSwitches[i];
  std::string text = info.max == INT64_MAX
                         ? "at least " + std::to_string(info.min)
                         : "from " + std::to_string(info.min) + " to " +
                               std::to_string(info.max);
  if (info.kind == Kind::TileInt)
    text = "a multiple of 16 " + text;
  return text;
}

bool inRange(unsigned i, int64_t v) {
  const SwitchInfo &info = kSwitches[i];
  return v >= info.min && v <= info.max &&
         (info.kind != Kind::TileInt || v % 16 == 0);
}

/// The index of the switch whose attribute is `fa.sm90.<attr>`.
std::optional<unsigned> lookupAttr(StringRef attr) {
  for (unsigned i = 0; i < kNumSwitches; ++i)
    if (kSwitches[i].attr == attr)
      return i;
  return std::nullopt;
}

/// The function's `fa.sm90.*` attributes as (switch, value), checked: a known
/// switch, a bool for a bool switch, an integer in range for the others.
FailureOr<SmallVector<std::pair<unsigned, int64_t>>>
readAttributes(func::FuncOp func) {
  SmallVector<std::pair<unsigned, int64_t>> values;
  for (NamedAttribute named : func->getAttrs()) {
    StringRef name = named.getName().strref();
    if (!name.consume_front(kSM90AttrPrefix))
      continue;
    std::optional<unsigned> i = lookupAttr(name);
    if (!i) {
      SmallVector<StringRef> known;
      for (const SwitchInfo &info : kSwitches)
        known.push_back(info.attr);
      func.emitError("unknown sm_90a schedule attribute '")
          << named.getName().strref() << "' on function @"
          << func.getSymName() << " (known: " << kSM90AttrPrefix << "{"
          << llvm::join(known, ", ") << "})";
      return failure();
    }
    Attribute attr = named.getValue();
    auto fail = [&](const Twine &what) -> LogicalResult {
      return func.emitError("'")
             << named.getName().strref() << "' on function @"
             << func.getSymName() << " must be " << what << ", got " << attr;
    };
    if (isBool(*i)) {
      auto b = dyn_cast<BoolAttr>(attr);
      if (!b)
        return fail("a bool (true or false)");
      values.push_back({*i, b.getValue()});
      continue;
    }
    auto n = dyn_cast<IntegerAttr>(attr);
    bool isInt = n && !isa<BoolAttr>(attr) &&
                 (n.getType().isIndex() || n.getType().isSignlessInteger()) &&
                 n.getValue().getSignificantBits() <= 64;
    if (!isInt)
      return fail("an integer (n : i64)");
    int64_t v = n.getValue().getSExtValue();
    if (!inRange(*i, v))
      return fail(rangeText(*i));
    values.push_back({*i, v});
  }
  return values;
}

/// The schedule of one function being resolved, with where each switch got
/// its value.
struct Resolver {
  Resolver(func::FuncOp func, const TiledAttention &attn,
           const SM90ScheduleOptions &options)
      : func(func), attn(attn), options(options) {}

  func::FuncOp func;
  const TiledAttention &attn;
  const SM90ScheduleOptions &options;
  SM90Schedule s;
  enum class Source { Default, Measured, Option, Attribute };
  Source source[kNumSwitches] = {};

  /// "persistent=true (attribute fa.sm90.persistent of @f)".
  std::string describe(unsigned i) {
    int64_t v = getField(s, i);
    std::string text = kSwitches[i].flag.str() + "=" +
                       (isBool(i) ? (v ? "true" : "false") : std::to_string(v));
    switch (source[i]) {
    case Source::Default:
      return text + " (default)";
    case Source::Measured:
      return text + " (measured default at head dim " +
             std::to_string(attn.headDim) + ")";
    case Source::Option:
      return text + " (" + options.source + " option)";
    case Source::Attribute:
      return text + " (attribute " + kSM90AttrPrefix.str() +
             kSwitches[i].attr.str() + " of function @" +
             func.getSymName().str() + ")";
    }
    llvm_unreachable("unknown source");
  }

  void set(unsigned i, int64_t v, Source from) {
    setField(s, i, v);
    source[i] = from;
  }

  /// fp8 with per-block descales: O is multiplied every step by alpha times
  /// the ratio of consecutive v descales (FP8Descales::vRescale), so a step
  /// cannot skip it and conditional rescaling is not built for it.
  bool fp8RescalesEveryStep() const {
    return attn.elementType.isFloat(8) && attn.descaleRank == 3;
  }

  /// Head dim 128 with 16-bit inputs (where the variants' defaults were
  /// measured).
  bool sixteenBit128() const {
    return attn.headDim == 128 && !attn.elementType.isFloat(8);
  }

  /// A mask_mod that reads captured tensors (document masking: the block
  /// scan), at D = 128 with 16-bit inputs.
  bool tensorMaskMod128() const {
    return attn.modifiers.maskModReadsTensors() && sixteenBit128();
  }

  /// A per-key boolean mask operand (key padding) at D = 128 with 16-bit
  /// inputs: classified by the same tile-start scan as document masking.
  bool perKeyMask128() const {
    return attn.modifiers.classifiesMaskOperand() && sixteenBit128();
  }

  /// A sliding window's left edge (its second compare per score costs
  /// registers); causal and right-only bands have none.
  bool hasLeftWindowEdge() const { return attn.windowLeft >= 0; }

  /// The measured defaults for this attention.
  void setMeasuredDefaults() {
    // Measured on the H200 (bench/results/final_s2_2026-11-29_final.md): the
    // longest-first order gains up to 6% causal at d64/d128 but loses up to
    // 6% at d256, so d256 keeps blockIdx order unless asked.
    set(longestFirstIndex, attn.headDim <= 128, Source::Measured);
    // Measured on the H200
    // (bench/results/sm90_h200_2026-11-29_s2_split_release*): at D = 256 (2
    // stages) the split release is 20-39% faster without a causal band
    // (0.99-1.02x cudnn); d64/d128 (3 stages): within 1%. Causal d256 with
    // 16-bit inputs, with conditional rescaling and 64-key tiles
    // (bench/results/fp8_rescale_h200_2026-12-03_s26, run5-run6): 1.23-1.30x,
    // 1.01-1.12x cudnn from 1k, no spills (at 80 keys 20 bytes); a left
    // window edge and fp8 with a band (the serial schedule) were not
    // measured with it.
    // A mask_mod that reads captured tensors (document masking) at D = 128
    // (16-bit), round-robin on the H200 (bench/results/variants_h200_2026-12-04_s28,
    // run8-run9): split release with ping-pong off (below) 1.047-1.049x causal,
    // 1.024-1.025x full (split release alone 1.027x / 1.008x); a mask_mod of
    // positions alone (prefix-LM) measured 0.95x with both and keeps them.
    set(splitReleaseIndex,
        (attn.headDim == 256 && !hasLeftWindowEdge() &&
         (!attn.hasWindow() || !attn.elementType.isFloat(8))) ||
            tensorMaskMod128(),
        Source::Measured);
    // Three consumer warpgroups (block-q 192, d64), measured on the H200
    // (bench/results/sm90_d64_h200_2026-12-03_s24, run1): 4 stages are 1-2%
    // faster than 3 without a mask band, 1-2.5% slower with causal.
    bool threeWarpgroupsFull =
        attn.blockQ == kSM90MaxWarpgroups * kSM90RowsPerWarpgroup &&
        !attn.hasWindow();
    set(stagesIndex,
        threeWarpgroupsFull ? 4 : getSM90DefaultStages(attn.headDim),
        Source::Measured);
    // fp8 at D = 256 (128-key tiles: S, P_{j-1} and P_j beside O's 128
    // accumulators), measured on the H200
    // (bench/results/fp8_h200_2026-12-03_s22): the pipelined schedule spills
    // 4-24 bytes (60-116 with per-block descales) at the consumers' 240
    // registers. Without ping-pong it fits without a mask band (0.97-1.01x,
    // per-block descales 1.05-1.10x); with a causal band only the serial
    // schedule fits (1.00-1.03x). Elsewhere both stay on (their defaults).
    if (attn.elementType.isFloat(8) && attn.headDim == 256) {
      set(overlapIndex, !attn.hasWindow(), Source::Measured);
      set(pingPongIndex, false, Source::Measured);
    }
    // Conditional rescaling, measured on the H200
    // (bench/results/rescale_h200_2026-12-03_s25): threshold 8 is 1.01-1.05x
    // at D = 128 (causal too) and 1.04-1.09x at D = 256 without a mask band;
    // causal D = 256 gained nothing alone (0.99-1.00x) but 1.07-1.09x on top
    // of split release (run5 of session 26, above); with a left window edge
    // it stays every step (not measured); at
    // D = 64 the vote and branch cost more than the 32 multiplications they
    // save (0.97-0.99x, with three warpgroups too). fp8 rescales every step
    // unless asked (per-tensor / per-head descales; per-block ones scale O
    // every step anyway, fp8RescalesEveryStep): conditional rescaling is
    // 1.02-1.05x there (bench/results/fp8_rescale_h200_2026-12-03_s26) but
    // 2.2-2.5x the output error on scores that grow along the keys, where a
    // few keys carry most of the weight: rescaling every step makes the
    // row's top probability exactly 1 in e4m3, a stale max rounds it by up
    // to 2^-4 (16-bit P rounds it by 2^-9 at most, below the output's).
    bool conditional =
        !attn.elementType.isFloat(8) &&
        (attn.headDim == 128 || (attn.headDim == 256 && !hasLeftWindowEdge()));
    set(rescaleThresholdIndex,
        conditional ? kernel::kDefaultRescaleThreshold
                    : kernel::kRescaleEveryStep,
        Source::Measured);
    // O rescaled under the S GEMM, measured on the H200 in one process,
    // round-robin (bench/results/variants_h200_2026-12-04_s28, run3): with
    // ALiBi's score_mod 1.04x (full and causal, bf16 d128 16k), softcap
    // 1.00-1.01x; the plain kernels keep it off (session 2's measurement).
    set(rescaleBeforePVIndex, attn.modifiers.scoreMod != nullptr,
        Source::Measured);
    // Softcap alone at D = 128 (16-bit): without ping-pong 1.010-1.013x,
    // full and causal, round-robin (bench/results/variants_h200_2026-12-04_s28,
    // run6): its softmax (two MUFU operations per score) is as long as the
    // other warpgroup's GEMMs, and the turns only add waits.
    // A score_mod whose bias the kernel splits (ALiBi, relative positions)
    // at D = 128 (16-bit): without ping-pong 1.01-1.04x, full and causal,
    // round-robin in two runs (bench/results/variants_h200_2026-12-04_s30,
    // run2 and run3); at D = 64 and 256 it measured 0.83-0.91x (run9).
    if ((attn.modifiers.softcapOnly() && sixteenBit128()) ||
        tensorMaskMod128() ||
        (attn.modifiers.splitsBias(attn.scale) && sixteenBit128()))
      set(pingPongIndex, false, Source::Measured);
    // A per-key boolean mask takes document masking's schedule (split
    // release, no ping-pong): with it ptxas allocates the kernel without
    // spills (16 bytes with ping-pong, session 34). Not timed yet.
    if (perKeyMask128() && !tensorMaskMod128()) {
      set(splitReleaseIndex, true, Source::Default);
      set(pingPongIndex, false, Source::Default);
    }
    // The tiled form's block-kv (fa-tile-attention-for-chip chose it).
    set(blockKVIndex, attn.blockKV, Source::Measured);
    // Persistent CTAs for full attention in the pipelined schedule, and
    // what goes with them (resolvePersistentDefaults, once the options and
    // attributes are in).
    set(persistentIndex, false, Source::Measured);
    set(qBuffersIndex, 1, Source::Measured);
    set(dynamicTilesIndex, false, Source::Measured);
    // The register split follows the resolved schedule (run()).
    set(producerRegistersIndex, kSM90ProducerRegisters, Source::Measured);
  }

  /// Whether the shared memory of `candidate` with two Q tiles fits.
  bool fitsTwoQTiles(const SM90Schedule &candidate) const {
    SM90AttentionDesc twoQ;
    static_cast<SM90Schedule &>(twoQ) = candidate;
    twoQ.persistent = true;
    twoQ.qBuffers = 2;
    twoQ.elementType = attn.elementType;
    twoQ.outputType = attn.outputType;
    twoQ.headDim = attn.headDim;
    twoQ.consumerWarpgroups = attn.blockQ / kSM90RowsPerWarpgroup;
    twoQ.modifiers = attn.modifiers;
    return sm90::planSharedMemory(twoQ).dynamicBytes <=
           sm90::kSharedMemoryLimitBytes;
  }

  /// The ring depth and split release measured with persistent CTAs (two Q
  /// tiles need the room of a stage at D = 128): 4 stages at D = 64, 2 with
  /// split release at D = 128; D = 256 keeps its own.
  SM90Schedule withPersistentRing(SM90Schedule candidate) const {
    if (source[stagesIndex] == Source::Measured && attn.headDim <= 128)
      candidate.stages = attn.headDim == 64 ? 4 : 2;
    if (source[splitReleaseIndex] == Source::Measured && attn.headDim == 128)
      candidate.splitRelease = true;
    return candidate;
  }

  /// Measured on the H200 (bench/results/persistent_h200_2026-12-01_s11):
  /// persistent CTAs with two Q tiles are 1.19x / 1.13x (d64 with 4 stages /
  /// d128 with 2 stages and split release) as fast as one tile per CTA at
  /// 512 tokens, 1.10x / 1.07x at 1k, 1.00-1.03x from 4k (run4), without a
  /// window; with one Q tile
  /// they are slower, and causal tiles are uneven (the static stride loses
  /// to the hardware's CTA order). So the measured default is on for what was
  /// measured: no window, no modifiers, no kv_lens / pages, no varlen (its
  /// persistent CTAs skip the tiles past short sequences' rows in a static
  /// order: +4-11% on equal sequences of 512-1k tokens, -5 to -13% on a mixed
  /// batch, bench/results/varlen_h200_2026-12-02_s13/run4), 16-bit inputs,
  /// head dim 64 or 128 (with three consumer warpgroups at d64 too:
  /// bench/results/sm90_d64_h200_2026-12-03_s24, run3, 1.02-1.05x one tile
  /// per CTA from 2k, 1.15x at 512-1k), the pipelined schedule (a sweep that
  /// turns off
  /// overlap gets one tile per CTA), two Q tiles fitting. A persistent kernel
  /// (measured or set) gets the persistent ring (withPersistentRing) and two
  /// Q tiles where they fit, each unless set explicitly.
  void resolvePersistentDefaults() {
    if (source[persistentIndex] == Source::Measured) {
      // Dynamic tiles are a persistent schedule: asking for them asks for
      // persistent CTAs (with the warp specialization they need).
      bool on =
          (s.dynamicTiles && s.warpSpecialized) ||
          (!s.splitKV && !attn.hasWindow() && attn.modifiers.empty() &&
           !attn.kvLensArg && !attn.pageTableArg && !attn.isVarlen() &&
           !attn.elementType.isFloat(8) && attn.headDim <= 128 &&
           s.warpSpecialized && s.overlap && s.pFromRegisters &&
           (source[qBuffersIndex] == Source::Measured || s.qBuffers == 2) &&
           fitsTwoQTiles(withPersistentRing(s)));
      set(persistentIndex, on, Source::Measured);
    }
    if (!s.persistent)
      return;
    SM90Schedule ring = withPersistentRing(s);
    set(stagesIndex, ring.stages, source[stagesIndex]);
    set(splitReleaseIndex, ring.splitRelease, source[splitReleaseIndex]);
    if (source[qBuffersIndex] == Source::Measured)
      set(qBuffersIndex, fitsTwoQTiles(s) ? 2 : 1, Source::Measured);
  }

  LogicalResult applyOption(unsigned i, int64_t v, bool isAuto) {
    if (isAuto)
      return success();
    if (!isBool(i) && !inRange(i, v))
      return func.emitError()
             << options.source << " option '" << kSwitches[i].flag << "=" << v
             << "' must be "
             << (kSwitches[i].kind == Kind::AutoInt ? "0 (auto) or " : "")
             << rangeText(i);
    set(i, v,
        options.given.contains(kSwitches[i].flag) ? Source::Option
                                                  : source[i]);
    return success();
  }

  LogicalResult applyOptions() {
    const SM90ScheduleOptions &o = options;
#define FA_SM90_BOOL(FIELD, FLAG, ATTR, KEY, DEFAULT, HELP)                    \
  if (failed(applyOption(FIELD##Index, o.FIELD, false)))                       \
    return failure();
#define FA_SM90_AUTO_BOOL(FIELD, FLAG, ATTR, KEY, DEFAULT, HELP)               \
  if (failed(applyOption(FIELD##Index, o.FIELD == SM90Auto::True,              \
                         o.FIELD == SM90Auto::Auto)))                          \
    return failure();
#define FA_SM90_INT(FIELD, FLAG, ATTR, KEY, DEFAULT, MIN, MAX, HELP)           \
  if (failed(applyOption(FIELD##Index, o.FIELD, false)))                       \
    return failure();
#define FA_SM90_AUTO_INT(FIELD, FLAG, ATTR, KEY, DEFAULT, MIN, MAX, HELP)      \
  if (failed(applyOption(FIELD##Index, o.FIELD, o.FIELD == 0)))                \
    return failure();
#include "fa/Conversion/AttentionToNVGPU/SM90/Schedule.def"
    return success();
  }

  /// `i` is on but needs `needed`, which is off.
  LogicalResult needs(unsigned i, unsigned needed) {
    if (!getField(s, i) || getField(s, needed))
      return success();
    return func.emitError("sm_90a schedule: ")
           << describe(i) << " needs " << kSwitches[needed].flag << ", but "
           << describe(needed);
  }

  LogicalResult checkCombinations() {
    // Switches that only refine another one (overlap, warp-arrive,
    // ping-pong, rescale-before-pv, ...) turn off with it
    // (normalizeSM90Schedule): a sweep may turn off the base switch without
    // touching them. These two change the kernel's structure and are refused.
    // A measured persistent default is off without warp specialization.
    if (source[persistentIndex] != Source::Measured &&
        failed(needs(persistentIndex, warpSpecializedIndex)))
      return failure();
    // Dynamic tiles need persistent CTAs: refused when those are set off
    // (a measured persistent default follows dynamic-tiles).
    if (source[persistentIndex] != Source::Measured &&
        failed(needs(dynamicTilesIndex, persistentIndex)))
      return failure();
    if (source[dynamicTilesIndex] != Source::Measured &&
        failed(needs(dynamicTilesIndex, warpSpecializedIndex)))
      return failure();
    // Split-KV runs one tile per CTA (its chunks are CTAs of the grid): a
    // measured persistent default turns off with it, a set one is refused.
    if (s.splitKV && s.dynamicTiles)
      return func.emitError("sm_90a schedule: ")
             << describe(splitKVIndex) << " runs one tile per CTA, but "
             << describe(dynamicTilesIndex);
    if (s.splitKV && s.persistent &&
        source[persistentIndex] != Source::Measured)
      return func.emitError("sm_90a schedule: ")
             << describe(splitKVIndex) << " runs one tile per CTA, but "
             << describe(persistentIndex);
    // A measured split release turns off quietly without warp specialization.
    if (source[splitReleaseIndex] != Source::Measured &&
        failed(needs(splitReleaseIndex, warpSpecializedIndex)))
      return failure();
    // P reaches 2^threshold; e4m3 saturates at 448.
    if (attn.elementType.isFloat(8) &&
        s.rescaleThreshold > kernel::kMaxFP8RescaleThreshold)
      return func.emitError("sm_90a schedule: ")
             << describe(rescaleThresholdIndex) << " lets fp8 probabilities "
             << "reach 2^" << s.rescaleThreshold << ", past e4m3's 448: at most "
             << kernel::kMaxFP8RescaleThreshold << " with fp8 inputs";
    if (fp8RescalesEveryStep() &&
        s.rescaleThreshold != kernel::kRescaleEveryStep)
      return func.emitError("sm_90a schedule: ")
             << describe(rescaleThresholdIndex)
             << " cannot skip O's rescale with per-block fp8 descales (O "
                "is scaled by the ratio of consecutive v descales every step)";
    // setmaxnreg takes multiples of 8.
    if (s.producerRegisters % 8)
      return func.emitError("sm_90a schedule: ")
             << describe(producerRegistersIndex)
             << " must be a multiple of 8 (setmaxnreg)";
    // setmaxnreg.dec cannot raise the producer above what the CTA launched
    // with (nor .inc lower the consumers below it).
    int64_t launched =
        getSM90LaunchRegisters(attn.blockQ / kSM90RowsPerWarpgroup);
    if (s.warpSpecialized && s.producerRegisters > launched)
      return func.emitError("sm_90a schedule: ")
             << describe(producerRegistersIndex) << " is more than the "
             << launched << " registers per thread a CTA of "
             << attn.blockQ / kSM90RowsPerWarpgroup + 1
             << " warpgroups launches with (setmaxnreg.dec lowers the "
                "producer's count)";
    // The pipelined consumers hold block j-1's stage (P V in flight) while
    // they wait for block j: with one stage that wait never ends.
    if (s.warpSpecialized && s.overlap && s.stages < 2)
      return func.emitError("sm_90a schedule: ")
             << describe(overlapIndex) << " needs at least 2 K/V stages, but "
             << describe(stagesIndex) << " (or set overlap=false)";
    // fa-tile-attention-for-chip tiles with the attribute; another tiling
    // would make the manifest and the attribute disagree with the kernel.
    if (source[blockKVIndex] == Source::Attribute && s.blockKV != attn.blockKV)
      return func.emitError("sm_90a schedule: ")
             << describe(blockKVIndex) << " but the tiled form has block-kv "
             << attn.blockKV << " (fa-tile-attention-for-chip tiles with it)";
    return success();
  }

  FailureOr<SM90Schedule> run() {
    setMeasuredDefaults();
    if (failed(applyOptions()))
      return failure();
    FailureOr<SmallVector<std::pair<unsigned, int64_t>>> attrs =
        readAttributes(func);
    if (failed(attrs))
      return failure();
    for (auto [i, v] : *attrs)
      set(i, v, Source::Attribute);
    if (failed(checkCombinations()))
      return failure();
    resolvePersistentDefaults();
    SM90Schedule n =
        normalizeSM90Schedule(s, attn.windowLeft, attn.windowRight, attn.scale);
    if (source[producerRegistersIndex] == Source::Measured)
      n.producerRegisters = measuredProducerRegisters(n);
    return n;
  }

  /// The setmaxnreg split of the resolved schedule `n`: 24 / 240, but 40 /
  /// 232 where the producer does more than stream one tile (persistent
  /// CTAs, split-kv's page lookups over a chunk's run-time range: 8-48 bytes
  /// of spills on 24; transpose-v: 4-8 bytes), 56 / 224 with dynamic tiles,
  /// 32 / 160 with three consumer warpgroups (constants and measurements in
  /// SM90FlashAttention.h); 40 / 232 for the fp8 kernels where the
  /// consumers measured faster on 232 (fp8FasterOn232); 56 / 224 with a
  /// score_mod of arithmetic alone at D = 128.
  int64_t measuredProducerRegisters(const SM90Schedule &n) const {
    if (attn.blockQ == kSM90MaxWarpgroups * kSM90RowsPerWarpgroup)
      return kSM90ThreeWGProducerRegisters;
    if (n.dynamicTiles)
      return kSM90DynamicTilesProducerRegisters;
    if (n.persistent || (n.splitKV && attn.pageTableArg) || n.transposeV ||
        fp8FasterOn232())
      return kSM90PersistentProducerRegisters;
    if (attn.modifiers.scoreModIsArithmetic() && attn.headDim == 128)
      return kSM90ScoreModProducerRegisters;
    return kSM90ProducerRegisters;
  }

  /// Measured on the H200 (bench/results/fp8_vtranspose_h200_2026-12-04_s27,
  /// run3, interleaved, outputs bitwise equal): the fp8 consumers on 232
  /// registers instead of 240 (ptxas schedules them differently; nothing
  /// spills either way at D <= 128) are 1.03-1.09x as fast at causal D = 128
  /// per tensor (f16 and bf16 out) and 1.02-1.14x per head, 1.03-1.06x at
  /// full D = 64 per tensor; elsewhere 0.94-1.01x (full D = 128 per tensor
  /// 0.94-0.97x, per-block causal D = 128 0.98x, causal D = 64 per tensor
  /// 0.98x), and at D = 256 they spill on 232. Windows were not measured.
  bool fp8FasterOn232() const {
    if (!attn.elementType.isFloat(8) || attn.descaleRank == 3)
      return false;
    bool causalOnly = attn.windowRight >= 0 && attn.windowLeft < 0;
    return (attn.headDim == 128 && causalOnly) ||
           (attn.headDim == 64 && !attn.hasWindow() && attn.descaleRank < 2);
  }
};
} // namespace

FailureOr<std::optional<int64_t>>
mlir::fa::getSM90BlockKVOverride(func::FuncOp func) {
  FailureOr<SmallVector<std::pair<unsigned, int64_t>>> attrs =
      readAttributes(func);
  if (failed(attrs))
    return failure();
  std::optional<int64_t> blockKV;
  for (auto [i, v] : *attrs)
    if (i == blockKVIndex)
      blockKV = v;
  return blockKV;
}

FailureOr<SM90Schedule>
mlir::fa::resolveSM90Schedule(func::FuncOp func, const TiledAttention &attn,
                              const NVGPUKernelOptions &options) {
  Resolver r(func, attn, options.sm90);
  return r.run();
}

SM90Schedule mlir::fa::normalizeSM90Schedule(SM90Schedule s,
                                             int64_t windowLeft,
                                             int64_t windowRight,
                                             double scale) {
  s.overlap &= s.warpSpecialized; // the pipelined schedule needs the producer
  s.warpArrive &= s.warpSpecialized;
  s.persistent &= s.warpSpecialized;
  s.splitRelease &= s.warpSpecialized;
  s.dynamicTiles &= s.persistent;
  if (!s.persistent)
    s.qBuffers = 1; // one tile per CTA: one Q
  s.pingPong &= s.overlap;
  s.rescaleBeforePV &= s.overlap && s.pFromRegisters;
  // Scores stay unscaled until the exponent: needs scale > 0 so that the max
  // commutes with the scaling.
  s.fastSoftmax &= scale > 0;
  // Only with a right edge and no left one (causal) does the work grow with
  // the query block.
  s.longestFirst &= windowLeft < 0 && windowRight >= 0;
  return s;
}

void mlir::fa::appendSM90ScheduleManifest(llvm::json::Object &manifest,
                                          const SM90Schedule &schedule) {
#define FA_SM90_SWITCH(FIELD, FLAG, ATTR, KEY, HELP)                           \
  manifest[KEY] = schedule.FIELD;
#include "fa/Conversion/AttentionToNVGPU/SM90/Schedule.def"
}
