//===- Schedule.h - the sm_90a schedule and its resolution --*- C++ -*-===//
//
// The sm_90a schedule switches are declared once, in SM90/Schedule.def; this
// header derives from it the schedule the kernel builder reads
// (SM90Schedule), the values the options carry (SM90ScheduleOptions), and
// declares the resolution (SM90/Schedule.cpp): measured defaults, then the
// pass or pipeline options, then the function's `fa.sm90.*` attributes,
// validated with diagnostics that name the switch and where it was set.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_SM90_SCHEDULE_H
#define FA_CONVERSION_ATTENTIONTONVGPU_SM90_SCHEDULE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::fa {

struct TiledAttention;
struct NVGPUKernelOptions;

/// The value of a switch with a measured default (FA_SM90_AUTO_BOOL): the
/// option `auto|true|false`.
enum class SM90Auto { Auto, False, True };

/// The sm_90a schedule switches (SM90/Schedule.def: one field per switch,
/// its comment there), as the kernel runs them: the base of
/// SM90AttentionDesc, produced by resolveSM90Schedule.
struct SM90Schedule {
#define FA_SM90_BOOL(FIELD, FLAG, ATTR, KEY, DEFAULT, HELP)                    \
  bool FIELD = DEFAULT;
#define FA_SM90_AUTO_BOOL(FIELD, FLAG, ATTR, KEY, DEFAULT, HELP)               \
  bool FIELD = DEFAULT;
#define FA_SM90_INT(FIELD, FLAG, ATTR, KEY, DEFAULT, MIN, MAX, HELP)           \
  int64_t FIELD = DEFAULT;
#define FA_SM90_AUTO_INT(FIELD, FLAG, ATTR, KEY, DEFAULT, MIN, MAX, HELP)      \
  int64_t FIELD = DEFAULT;
#define FA_SM90_TILE_INT(FIELD, FLAG, ATTR, KEY, DEFAULT, MIN, MAX, HELP)      \
  int64_t FIELD = DEFAULT;
#include "fa/Conversion/AttentionToNVGPU/SM90/Schedule.def"
};

/// The schedule as the options of convert-fa-to-nvgpu or fa-to-ptx ask for it
/// (one field per option of SM90/ScheduleOptions.inc, same names and
/// defaults): SM90Auto::Auto and an AUTO_INT of 0 leave the measured default.
struct SM90ScheduleOptions {
#define FA_SM90_BOOL(FIELD, FLAG, ATTR, KEY, DEFAULT, HELP)                    \
  bool FIELD = DEFAULT;
#define FA_SM90_AUTO_BOOL(FIELD, FLAG, ATTR, KEY, DEFAULT, HELP)               \
  SM90Auto FIELD = SM90Auto::Auto;
#define FA_SM90_INT(FIELD, FLAG, ATTR, KEY, DEFAULT, MIN, MAX, HELP)           \
  int64_t FIELD = DEFAULT;
#define FA_SM90_AUTO_INT(FIELD, FLAG, ATTR, KEY, DEFAULT, MIN, MAX, HELP)      \
  int64_t FIELD = 0;
#include "fa/Conversion/AttentionToNVGPU/SM90/Schedule.def"
  /// Where the values were set, for diagnostics ("stages=5 (fa-to-ptx
  /// option)"): the pass or pipeline whose options these are, and the flags
  /// given there (the others are the options' defaults).
  std::string source = "convert-fa-to-nvgpu";
  llvm::StringSet<> given;
};

/// Copies the schedule options declared by SM90/ScheduleOptions.inc out of a
/// pass or a pipeline options struct.
template <typename OptionsOwner>
SM90ScheduleOptions getSM90ScheduleOptions(const OptionsOwner &owner,
                                           StringRef source) {
  SM90ScheduleOptions o;
#define FA_SM90_SWITCH(FIELD, FLAG, ATTR, KEY, HELP)                          \
  if (owner.FIELD.hasValue()) {                                                \
    o.FIELD = owner.FIELD;                                                     \
    o.given.insert(FLAG);                                                      \
  }
#define FA_SM90_TILE_INT(FIELD, FLAG, ATTR, KEY, DEFAULT, MIN, MAX, HELP)
#include "fa/Conversion/AttentionToNVGPU/SM90/Schedule.def"
  o.source = source.str();
  return o;
}

/// Sets the schedule options declared by SM90/ScheduleOptions.inc of a pass
/// or a pipeline options struct (all of them, so that the pass prints them).
template <typename OptionsOwner>
void setSM90ScheduleOptions(OptionsOwner &owner, const SM90ScheduleOptions &o) {
#define FA_SM90_SWITCH(FIELD, FLAG, ATTR, KEY, HELP) owner.FIELD = o.FIELD;
#define FA_SM90_TILE_INT(FIELD, FLAG, ATTR, KEY, DEFAULT, MIN, MAX, HELP)
#include "fa/Conversion/AttentionToNVGPU/SM90/Schedule.def"
}

/// The prefix of the per-function schedule attributes: `fa.sm90.<ATTR>`.
constexpr StringLiteral kSM90AttrPrefix = "fa.sm90.";

/// Checks every `fa.sm90.*` attribute of `func` (a known switch, the type and
/// range of its value) with a diagnostic on `func` naming the attribute, and
/// returns the `fa.sm90.block_kv` override if there is one. For
/// fa-tile-attention-for-chip, which tiles with it.
FailureOr<std::optional<int64_t>> getSM90BlockKVOverride(func::FuncOp func);

/// The schedule of `attn`'s kernel: the measured defaults for its head dim
/// and window (longest-first at D <= 128, split release at D = 256 without a
/// window, getSM90DefaultStages; block-kv is the tiled form's), then
/// `options.sm90` (auto keeps the default), then the function's `fa.sm90.*`
/// attributes. Invalid values and combinations (persistent or a forced split
/// release without warp specialization, the pipelined consumers with one
/// stage, a block_kv attribute the tiled form does not have) are diagnosed on
/// `func`, naming the switch and where it was set. The result is what the
/// kernel runs: a switch whose prerequisite is off is off
/// (normalizeSM90Schedule).
FailureOr<SM90Schedule> resolveSM90Schedule(func::FuncOp func,
                                            const TiledAttention &attn,
                                            const NVGPUKernelOptions &options);

/// Turns off the switches that do not act in this kernel: overlap, warp
/// arrivals, persistent CTAs and split release without warp specialization;
/// ping-pong without overlap; rescale-before-pv without overlap or P from
/// registers; fast softmax with a scale <= 0; longest-first without a right
/// edge or with a left one (windowLeft/Right as in SM90AttentionDesc).
SM90Schedule normalizeSM90Schedule(SM90Schedule s, int64_t windowLeft,
                                   int64_t windowRight, double scale);

/// Adds one key per switch (Schedule.def's KEY) with its value to a launch
/// manifest.
void appendSM90ScheduleManifest(llvm::json::Object &manifest,
                                const SM90Schedule &schedule);

} // namespace mlir::fa

#endif // FA_CONVERSION_ATTENTIONTONVGPU_SM90_SCHEDULE_H
