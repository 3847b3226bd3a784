/* libFAPythonCAPI.so (python/CMakeLists.txt) is fa's C API and MLIR's IR and
 * ExecutionEngine C APIs, whole-archived; this file only gives the library a
 * version string that the Python package checks against its own. */
const char *faPythonCAPIVersion(void) { return "1"; }
