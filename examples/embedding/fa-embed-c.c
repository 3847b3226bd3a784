/*===- fa-embed-c.c - fa through the MLIR C API ----------------------------===*\
|*                                                                            *|
|*   fa-embed-c                        the dialect handle on a bare context   *|
|*   fa-embed-c <file> <pipeline>      parse <file> in a context built from   *|
|*                                     faRegisterAllDialects, run <pipeline>  *|
|*                                     with faCompileModule, print the result *|
|*                                                                            *|
|* Plain C: what a C (or ctypes, or another language's FFI) embedder writes.  *|
|* Built in-tree as fa-capi-test (test/CAPI/) and against the installed fa    *|
|* by examples/embedding (test/Embedding/).                                   *|
\*===----------------------------------------------------------------------===*/
#include "fa-c/Dialects.h"
#include "fa-c/Registration.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#include <stdio.h>
#include <string.h>

static void printTo(MlirStringRef text, void *stream) {
  fwrite(text.data, 1, text.length, (FILE *)stream);
}

static MlirLogicalResult printDiagnostic(MlirDiagnostic diagnostic,
                                         void *userData) {
  (void)userData;
  mlirLocationPrint(mlirDiagnosticGetLocation(diagnostic), printTo, stderr);
  fputs(": ", stderr);
  mlirDiagnosticPrint(diagnostic, printTo, stderr);
  fputc('\n', stderr);
  return mlirLogicalResultSuccess();
}

/* The fa dialect alone, through its handle: fa.attention parses and prints. */
static int dialectHandle(void) {
  MlirDialectHandle fa = mlirGetDialectHandle__fa__();
  MlirStringRef ns = mlirDialectHandleGetNamespace(fa);
  printf("namespace: %.*s\n", (int)ns.length, ns.data);

  MlirContext context = mlirContextCreate();
  mlirDialectHandleLoadDialect(fa, context);
  mlirContextSetAllowUnregisteredDialects(context, false);
  const char *text =
      "func.func @f(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {\n"
      "  %o = fa.attention %q, %q, %q {causal} : tensor<1x1x4x8xf32>,\n"
      "      tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>\n"
      "  return %o : tensor<1x1x4x8xf32>\n"
      "}\n";
  /* func is not loaded: only fa's handle was, so parsing must fail on func. */
  mlirContextAttachDiagnosticHandler(context, printDiagnostic, NULL, NULL);
  MlirModule module =
      mlirModuleCreateParse(context, mlirStringRefCreateFromCString(text));
  printf("without func: %s\n", mlirModuleIsNull(module) ? "rejected" : "parsed");
  if (!mlirModuleIsNull(module))
    return 1;

  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  faRegisterAllDialects(registry);
  mlirContextAppendDialectRegistry(context, registry);
  mlirDialectRegistryDestroy(registry);
  module = mlirModuleCreateParse(context, mlirStringRefCreateFromCString(text));
  if (mlirModuleIsNull(module))
    return 1;
  mlirOperationPrint(mlirModuleGetOperation(module), printTo, stdout);
  putchar('\n');
  mlirModuleDestroy(module);
  mlirContextDestroy(context);
  return 0;
}

static int compile(const char *file, const char *pipeline) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  faRegisterAllDialects(registry);
  MlirContext context = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirContextAttachDiagnosticHandler(context, printDiagnostic, NULL, NULL);

  int status = 1;
  MlirModule module =
      mlirModuleCreateParseFromFile(context, mlirStringRefCreateFromCString(file));
  if (!mlirModuleIsNull(module)) {
    if (mlirLogicalResultIsSuccess(faCompileModule(
            module, mlirStringRefCreateFromCString(pipeline)))) {
      mlirOperationPrint(mlirModuleGetOperation(module), printTo, stdout);
      putchar('\n');
      status = 0;
    }
    mlirModuleDestroy(module);
  }
  mlirContextDestroy(context);
  return status;
}

int main(int argc, char **argv) {
  if (argc == 1)
    return dialectHandle();
  if (argc == 3)
    return compile(argv[1], argv[2]);
  fputs("usage: fa-embed-c [<file.mlir> <pipeline>]\n", stderr);
  return 2;
}
