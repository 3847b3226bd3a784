//===- Passes.h - fa conversion passes --------------------------*- C++ -*-===//
#ifndef FA_CONVERSION_PASSES_H
#define FA_CONVERSION_PASSES_H

#include "fa/Conversion/AttentionToNVGPU/AttentionToNVGPU.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::fa {

#define GEN_PASS_DECL
#include "fa/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fa/Conversion/Passes.h.inc"

/// convert-fa-to-nvgpu with its sm_90a schedule options (declared in the pass
/// from SM90/Schedule.def, not in Passes.td) set to `schedule`, whose
/// `source` names the pipeline in diagnostics.
std::unique_ptr<Pass>
createConvertFAToNVGPUPass(const ConvertFAToNVGPUPassOptions &options,
                           const SM90ScheduleOptions &schedule);

} // namespace mlir::fa

#endif // FA_CONVERSION_PASSES_H
