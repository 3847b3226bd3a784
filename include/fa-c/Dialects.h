/*===- Dialects.h - C API of the fa dialect ------------------------*- C -*-===*\
|*                                                                            *|
|* mlirGetDialectHandle__fa__() gives the fa dialect's handle, for            *|
|* mlirDialectHandleInsertDialect / mlirDialectHandleLoadDialect.             *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef FA_C_DIALECTS_H
#define FA_C_DIALECTS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(FA, fa);

#ifdef __cplusplus
}
#endif

#endif /* FA_C_DIALECTS_H */
