// A stand-in for libcuda.so with the prototypes of cuda.h (included, so that
// they are checked): each call the runtime makes is appended to a log that
// the Python test reads back (fake_cuda_log), with the values it was given;
// cuLaunchKernel decodes its kernel parameters by the kinds the test sets
// (fake_cuda_set_param_kinds: 'p' a pointer, 'i' an i32;
// "KINDS;SUFFIX=KINDS;..." gives the functions whose names end in SUFFIX their
// own) and logs the function's name on a line "launch NAME" before its own.
// Devices: a pointer's device ordinal is bits 40..43 of its address; every
// device has 132 SMs.
#include <cuda.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

static std::string logText, paramKinds;
static std::vector<std::string> functionNames; // function i: handle 0xf0000 + i

/// The kinds of function `name`'s parameters: the entry "SUFFIX=KINDS" of the
/// set kinds whose SUFFIX ends `name`, else the entry without '='.
static std::string kindsOf(const std::string &name) {
  std::string fallback;
  size_t start = 0;
  while (start <= paramKinds.size()) {
    size_t end = paramKinds.find(';', start);
    if (end == std::string::npos)
      end = paramKinds.size();
    std::string entry = paramKinds.substr(start, end - start);
    size_t eq = entry.find('=');
    if (eq == std::string::npos)
      fallback = entry;
    else if (name.size() >= eq &&
             name.compare(name.size() - eq, eq, entry, 0, eq) == 0)
      return entry.substr(eq + 1);
    start = end + 1;
  }
  return fallback;
}

static void logf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf(const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  logText += buf;
  logText += '\n';
}

extern "C" {
const char *fake_cuda_log() { return logText.c_str(); }
void fake_cuda_reset() { logText.clear(); }
void fake_cuda_set_param_kinds(const char *kinds) { paramKinds = kinds; }

CUresult CUDAAPI cuInit(unsigned int flags) {
  logf("cuInit %u", flags);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGetErrorName(CUresult error, const char **str) {
  *str = "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
  logf("cuDeviceGet %d", ordinal);
  *device = 100 + ordinal;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib,
                                      CUdevice dev) {
  logf("cuDeviceGetAttribute %d device %d", int(attrib), dev);
  *pi = attrib == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT ? 132 : -1;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
  logf("cuDevicePrimaryCtxRetain device %d", dev);
  *pctx = reinterpret_cast<CUcontext>(uintptr_t(0xc0000 + dev));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  logf("cuCtxSetCurrent %#lx", (unsigned long)(uintptr_t)ctx);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
                                       CUdeviceptr ptr) {
  logf("cuPointerGetAttribute %d %#llx", int(attribute), (unsigned long long)ptr);
  if (attribute != CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL || ptr < (1ull << 32))
    return CUDA_ERROR_INVALID_VALUE;
  *static_cast<int *>(data) = int((ptr >> 40) & 0xf);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image) {
  const char *ptx = static_cast<const char *>(image);
  logf("cuModuleLoadData %zu bytes, %s", strlen(ptx),
       strstr(ptx, ".entry") ? "has .entry" : "no .entry");
  *module = reinterpret_cast<CUmodule>(uintptr_t(0xd0000));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod,
                                     const char *name) {
  logf("cuModuleGetFunction %s", name);
  functionNames.push_back(name);
  *hfunc = reinterpret_cast<CUfunction>(
      uintptr_t(0xf0000 + functionNames.size() - 1));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib,
                                    int value) {
  logf("cuFuncSetAttribute %d %d", int(attrib), value);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX,
                                unsigned int gridDimY, unsigned int gridDimZ,
                                unsigned int blockDimX, unsigned int blockDimY,
                                unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream,
                                void **kernelParams, void **extra) {
  size_t index = uintptr_t(f) - 0xf0000;
  std::string name = index < functionNames.size() ? functionNames[index] : "?";
  std::string kinds = kindsOf(name);
  logf("launch %s", name.c_str());
  std::string params;
  char buf[64];
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] == 'p')
      snprintf(buf, sizeof buf, " %#llx",
               (unsigned long long)*static_cast<uint64_t *>(kernelParams[i]));
    else
      snprintf(buf, sizeof buf, " %d", *static_cast<int32_t *>(kernelParams[i]));
    params += buf;
  }
  logf("cuLaunchKernel grid %u %u %u block %u %u %u smem %u stream %#lx "
       "extra %s params%s",
       gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
       sharedMemBytes, (unsigned long)(uintptr_t)hStream,
       extra ? "set" : "null", params.c_str());
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuTensorMapEncodeTiled(
    CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
    cuuint32_t tensorRank, void *globalAddress, const cuuint64_t *globalDim,
    const cuuint64_t *globalStrides, const cuuint32_t *boxDim,
    const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
    CUtensorMapFloatOOBfill oobFill) {
  std::string s;
  char buf[64];
  auto list = [&](const char *what, auto *v, unsigned n) {
    s += what;
    for (unsigned i = 0; i < n; ++i) {
      snprintf(buf, sizeof buf, " %llu", (unsigned long long)v[i]);
      s += buf;
    }
  };
  list(" dims", globalDim, tensorRank);
  list(" strides", globalStrides, tensorRank - 1);
  list(" box", boxDim, tensorRank);
  list(" estrides", elementStrides, tensorRank);
  logf("cuTensorMapEncodeTiled dtype %d rank %u addr %#lx%s interleave %d "
       "swizzle %d l2 %d oob %d",
       int(tensorDataType), tensorRank,
       (unsigned long)(uintptr_t)globalAddress, s.c_str(), int(interleave),
       int(swizzle), int(l2Promotion), int(oobFill));
  // Mark the 128 bytes with bits 8..15 of the address.
  memset(tensorMap, int((uintptr_t(globalAddress) >> 8) & 0xff),
         sizeof(CUtensorMap));
  return CUDA_SUCCESS;
}
} // extern "C"
