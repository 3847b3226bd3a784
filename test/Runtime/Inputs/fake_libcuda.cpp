// A stand-in for libcuda.so.1, loaded by libfa_cuda_runtime.so through
// FA_LIBCUDA. It includes cuda.h, so each entry is defined under the symbol
// cuda.h's macros select (cuMemAlloc -> cuMemAlloc_v2, ...), the one the
// runtime must look up. Every call is printed to stderr as "fake: <call>
// <arguments>". FAKE_CUDA_FAIL=<call> makes that call return
// CUDA_ERROR_INVALID_VALUE, or FAKE_CUDA_FAIL_CODE (a failing cuModuleLoadDataEx also writes a JIT
// log). cuLaunchKernel counts its parameters when FAKE_CUDA_PARAMS_END_NULL
// is set. Two devices (ordinals 0 and 1), 132 SMs, 227 KiB shared opt-in.
// Built with -DFAKE_NO_TENSOR_MAP it lacks cuTensorMapEncodeTiled.
#include <cuda.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fputs("fake: ", stderr);
  std::vfprintf(stderr, fmt, ap);
  std::fputc('\n', stderr);
  va_end(ap);
}

// CUDA_ERROR_INVALID_VALUE (or the code FAKE_CUDA_FAIL_CODE gives) when
// FAKE_CUDA_FAIL names `call`.
static CUresult outcome(const char *call) {
  const char *fail = std::getenv("FAKE_CUDA_FAIL");
  if (!fail || std::strcmp(fail, call))
    return CUDA_SUCCESS;
  const char *code = std::getenv("FAKE_CUDA_FAIL_CODE");
  return code ? static_cast<CUresult>(std::atoi(code))
              : CUDA_ERROR_INVALID_VALUE;
}

static unsigned long long hex(const void *p) {
  return (unsigned long long)(uintptr_t)p;
}

static CUdeviceptr nextDevicePtr = 0x7f0000000000ull;

extern "C" {
CUresult CUDAAPI cuInit(unsigned int flags) {
  say("cuInit %u", flags);
  return outcome("cuInit");
}
CUresult CUDAAPI cuGetErrorName(CUresult error, const char **str) {
  switch (error) {
  case CUDA_ERROR_INVALID_VALUE:
    *str = "CUDA_ERROR_INVALID_VALUE";
    return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_DEVICE:
    *str = "CUDA_ERROR_INVALID_DEVICE";
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}
CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
  say("cuDeviceGet %d", ordinal);
  if (ordinal < 0 || ordinal > 1)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = 100 + ordinal;
  return outcome("cuDeviceGet");
}
CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib,
                                      CUdevice dev) {
  say("cuDeviceGetAttribute %d device %d", int(attrib), dev);
  switch (attrib) {
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *pi = 132;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *pi = 227 * 1024;
    break;
  default:
    *pi = -1;
  }
  return outcome("cuDeviceGetAttribute");
}
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
  say("cuDevicePrimaryCtxRetain device %d", dev);
  *pctx = reinterpret_cast<CUcontext>(uintptr_t(0xc000 + dev));
  return outcome("cuDevicePrimaryCtxRetain");
}
CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  say("cuCtxSetCurrent %#llx", hex(ctx));
  return outcome("cuCtxSetCurrent");
}
CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image,
                                    unsigned int numOptions,
                                    CUjit_option *options,
                                    void **optionValues) {
  char *log = nullptr;
  size_t logSize = 0;
  say("cuModuleLoadDataEx image %.8s options %u", static_cast<const char *>(image),
      numOptions);
  for (unsigned i = 0; i < numOptions; ++i) {
    uintptr_t value = uintptr_t(optionValues[i]);
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
      log = static_cast<char *>(optionValues[i]);
    else if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      logSize = value;
    else if (options[i] == CU_JIT_OPTIMIZATION_LEVEL)
      say("  option CU_JIT_OPTIMIZATION_LEVEL %u", unsigned(value));
    else
      say("  option %d %#llx", int(options[i]), (unsigned long long)value);
  }
  CUresult result = outcome("cuModuleLoadDataEx");
  if (result != CUDA_SUCCESS && log && logSize)
    std::snprintf(log, logSize, "ptxas fatal   : fake JIT error log");
  *module = reinterpret_cast<CUmodule>(uintptr_t(0xd000));
  return result;
}
CUresult CUDAAPI cuModuleUnload(CUmodule hmod) {
  say("cuModuleUnload %#llx", hex(hmod));
  return outcome("cuModuleUnload");
}
CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod,
                                     const char *name) {
  say("cuModuleGetFunction %#llx %s", hex(hmod), name);
  *hfunc = reinterpret_cast<CUfunction>(uintptr_t(0xf000));
  return outcome("cuModuleGetFunction");
}
CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc,
                                    CUfunction_attribute attrib, int value) {
  say("cuFuncSetAttribute %#llx %s %d", hex(hfunc),
      attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
          ? "MAX_DYNAMIC_SHARED_SIZE_BYTES"
          : "other",
      value);
  return outcome("cuFuncSetAttribute");
}
CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX,
                                unsigned int gridDimY, unsigned int gridDimZ,
                                unsigned int blockDimX, unsigned int blockDimY,
                                unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream,
                                void **kernelParams, void **extra) {
  // With FAKE_CUDA_PARAMS_END_NULL set (by runtime_driver.cpp), the
  // parameters are i64s and the array ends with a null pointer.
  char params[64];
  std::snprintf(params, sizeof params, "%s", kernelParams ? "set" : "null");
  if (kernelParams && std::getenv("FAKE_CUDA_PARAMS_END_NULL")) {
    unsigned count = 0;
    while (kernelParams[count])
      ++count;
    std::snprintf(params, sizeof params, "%u first %lld", count,
                  count ? *static_cast<long long *>(kernelParams[0]) : 0);
  }
  say("cuLaunchKernel %#llx grid %u %u %u block %u %u %u smem %u stream "
      "%#llx params %s extra %s",
      hex(f), gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
      sharedMemBytes, hex(hStream), params, extra ? "set" : "null");
  return outcome("cuLaunchKernel");
}
CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int flags) {
  static uintptr_t next = 0x5000;
  *phStream = reinterpret_cast<CUstream>(next++);
  say("cuStreamCreate flags %u -> %#llx", flags, hex(*phStream));
  return outcome("cuStreamCreate");
}
CUresult CUDAAPI cuStreamDestroy(CUstream hStream) {
  say("cuStreamDestroy %#llx", hex(hStream));
  return outcome("cuStreamDestroy");
}
CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) {
  say("cuStreamSynchronize %#llx", hex(hStream));
  return outcome("cuStreamSynchronize");
}
CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent,
                                   unsigned int flags) {
  say("cuStreamWaitEvent %#llx %#llx flags %u", hex(hStream), hex(hEvent),
      flags);
  return outcome("cuStreamWaitEvent");
}
CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int flags) {
  static uintptr_t next = 0xe000;
  *phEvent = reinterpret_cast<CUevent>(next++);
  say("cuEventCreate flags %u -> %#llx", flags, hex(*phEvent));
  return outcome("cuEventCreate");
}
CUresult CUDAAPI cuEventDestroy(CUevent hEvent) {
  say("cuEventDestroy %#llx", hex(hEvent));
  return outcome("cuEventDestroy");
}
CUresult CUDAAPI cuEventSynchronize(CUevent hEvent) {
  say("cuEventSynchronize %#llx", hex(hEvent));
  return outcome("cuEventSynchronize");
}
CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream) {
  say("cuEventRecord %#llx %#llx", hex(hEvent), hex(hStream));
  return outcome("cuEventRecord");
}
CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize) {
  *dptr = nextDevicePtr;
  nextDevicePtr += (bytesize + 255) / 256 * 256;
  say("cuMemAlloc %zu -> %#llx", bytesize, (unsigned long long)*dptr);
  return outcome("cuMemAlloc");
}
CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize,
                                   unsigned int flags) {
  *dptr = nextDevicePtr;
  nextDevicePtr += (bytesize + 255) / 256 * 256;
  say("cuMemAllocManaged %zu %s -> %#llx", bytesize,
      flags == CU_MEM_ATTACH_GLOBAL ? "global" : "other",
      (unsigned long long)*dptr);
  return outcome("cuMemAllocManaged");
}
CUresult CUDAAPI cuMemFree(CUdeviceptr dptr) {
  say("cuMemFree %#llx", (unsigned long long)dptr);
  return outcome("cuMemFree");
}
CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src,
                               size_t ByteCount, CUstream hStream) {
  say("cuMemcpyAsync %#llx <- %#llx %zu bytes stream %#llx",
      (unsigned long long)dst, (unsigned long long)src, ByteCount,
      hex(hStream));
  return outcome("cuMemcpyAsync");
}
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost,
                              size_t ByteCount) {
  uint64_t head = 0;
  std::memcpy(&head, srcHost, ByteCount < 8 ? ByteCount : 8);
  say("cuMemcpyHtoD %#llx %zu bytes head %#llx", (unsigned long long)dstDevice,
      ByteCount, (unsigned long long)head);
  return outcome("cuMemcpyHtoD");
}
CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui,
                                  size_t N, CUstream hStream) {
  say("cuMemsetD32Async %#llx value %#x count %zu stream %#llx",
      (unsigned long long)dstDevice, ui, N, hex(hStream));
  return outcome("cuMemsetD32Async");
}
CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us,
                                  size_t N, CUstream hStream) {
  say("cuMemsetD16Async %#llx value %#x count %zu stream %#llx",
      (unsigned long long)dstDevice, unsigned(us), N, hex(hStream));
  return outcome("cuMemsetD16Async");
}
CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytesize,
                                   unsigned int Flags) {
  say("cuMemHostRegister %#llx %zu bytes flags %u", hex(p), bytesize, Flags);
  return outcome("cuMemHostRegister");
}
CUresult CUDAAPI cuMemHostUnregister(void *p) {
  say("cuMemHostUnregister %#llx", hex(p));
  return outcome("cuMemHostUnregister");
}
#ifndef FAKE_NO_TENSOR_MAP
CUresult CUDAAPI cuTensorMapEncodeTiled(
    CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
    cuuint32_t tensorRank, void *globalAddress, const cuuint64_t *globalDim,
    const cuuint64_t *globalStrides, const cuuint32_t *boxDim,
    const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
    CUtensorMapFloatOOBfill oobFill) {
  char text[512];
  int at = 0;
  auto list = [&](const char *what, auto *values, unsigned n) {
    at += std::snprintf(text + at, sizeof text - at, " %s", what);
    for (unsigned i = 0; i < n; ++i)
      at += std::snprintf(text + at, sizeof text - at, " %llu",
                          (unsigned long long)values[i]);
  };
  list("dims", globalDim, tensorRank);
  list("strides", globalStrides, tensorRank - 1);
  list("box", boxDim, tensorRank);
  list("elementStrides", elementStrides, tensorRank);
  say("cuTensorMapEncodeTiled dtype %d rank %u address %#llx%s interleave %d "
      "swizzle %d l2 %d oob %d",
      int(tensorDataType), tensorRank, hex(globalAddress), text,
      int(interleave), int(swizzle), int(l2Promotion), int(oobFill));
  // A recognizable map: the copy the runtime makes must start with it.
  uint64_t mark = 0x7e45'0000'0000'0000ull | uint64_t(tensorRank);
  std::memset(tensorMap, 0, sizeof(CUtensorMap));
  std::memcpy(tensorMap, &mark, sizeof mark);
  return outcome("cuTensorMapEncodeTiled");
}
#endif
} // extern "C"
