/*===- Registration.h - C API: register fa, compile through a pipeline -*- C -*-===*\
|*                                                                            *|
|* The C counterparts of fa/Registration/InitAll.h, and one entry point that  *|
|* compiles a module through a named pipeline (docs/Embedding.md).            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef FA_C_REGISTRATION_H
#define FA_C_REGISTRATION_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Adds the fa dialect and everything upstream that fa's pipelines need
/// (mlir::fa::registerDialects + registerPipelineDependencies) to `registry`.
MLIR_CAPI_EXPORTED void faRegisterAllDialects(MlirDialectRegistry registry);

/// Registers fa's passes and named pipelines (fa-to-cpu, fa-to-ptx) with the
/// global pass registry. Safe to call more than once.
MLIR_CAPI_EXPORTED void faRegisterAllPassesAndPipelines(void);

/// Runs the textual pass pipeline `pipeline` (e.g. "fa-to-cpu",
/// "fa-to-ptx{chip=sm_90a}") on `module`, in place. Registers fa's passes and
/// pipelines first. The module's context must hold what the pipeline needs
/// (faRegisterAllDialects). Diagnostics go to the context's handlers; a
/// pipeline that does not parse is reported there too. Returns failure if the
/// pipeline does not parse or fails.
MLIR_CAPI_EXPORTED MlirLogicalResult faCompileModule(MlirModule module,
                                                     MlirStringRef pipeline);

#ifdef __cplusplus
}
#endif

#endif /* FA_C_REGISTRATION_H */
