//===- CudaRuntime.cpp - the mgpu* entry points over the CUDA driver ------===//
//
// What host code lowered by MLIR's gpu-to-llvm calls (mgpuModuleLoad,
// mgpuLaunchKernel, mgpuMemAlloc, mgpuTensorMapEncodeTiledMemref, ...), plus
// faCudaMultiprocessorCount for persistent kernels' grids and
// faCudaFreeTensorMap for the tensor maps' device copies. The driver is
// dlopened at first use (FA_LIBCUDA, default libcuda.so.1); each entry point
// makes the primary context of the default device (FA_CUDA_DEVICE, or
// mgpuSetDefaultDevice, else 0) current on the calling thread. A failing
// driver call prints what failed and exits the process with status 1.
//
//===----------------------------------------------------------------------===//

#include <cuda.h>

#include <dlfcn.h>

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#define FA_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

[[noreturn]] void fatal(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
[[noreturn]] void fatal(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fputs("fa_cuda_runtime: ", stderr);
  std::vfprintf(stderr, fmt, ap);
  std::fputc('\n', stderr);
  va_end(ap);
  // _Exit, not exit: gpu-to-llvm's module destructors call back into this
  // library (mgpuModuleUnload), which must not run after a fatal error,
  // possibly from inside the first initialization.
  std::fflush(nullptr);
  std::_Exit(1);
}

// The driver entries this library uses. cuda.h #defines many names to
// versioned symbols (cuMemAlloc -> cuMemAlloc_v2, ...): each pointer has the
// type of the declaration the macro selects and is looked up under the
// expanded name, so the two always agree; messages use the plain name.
#define FA_DRIVER_ENTRIES(X)                                                   \
  X(cuInit)                                                                    \
  X(cuGetErrorName)                                                            \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxSetCurrent)                                                           \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncSetAttribute)                                                        \
  X(cuLaunchKernel)                                                            \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamWaitEvent)                                                         \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventSynchronize)                                                        \
  X(cuEventRecord)                                                             \
  X(cuMemAlloc)                                                                \
  X(cuMemAllocManaged)                                                         \
  X(cuMemFree)                                                                 \
  X(cuMemcpyAsync)                                                             \
  X(cuMemcpyHtoD)                                                              \
  X(cuMemsetD32Async)                                                          \
  X(cuMemsetD16Async)                                                          \
  X(cuMemHostRegister)                                                         \
  X(cuMemHostUnregister)                                                       \
  X(cuTensorMapEncodeTiled)

#define FA_STRINGIFY(x) #x
#define FA_SYMBOL_NAME(x) FA_STRINGIFY(x)

struct Driver {
#define FA_DECLARE_ENTRY(name) decltype(&::name) name = nullptr;
  FA_DRIVER_ENTRIES(FA_DECLARE_ENTRY)
#undef FA_DECLARE_ENTRY
};

Driver driver;

void *lookUp(void *handle, const char *path, const char *symbol) {
  void *address = dlsym(handle, symbol);
  if (!address)
    fatal("%s has no symbol %s (the NVIDIA driver is too old?): %s", path,
          symbol, dlerror());
  return address;
}

void loadDriver() {
  const char *path = std::getenv("FA_LIBCUDA");
  if (!path || !*path)
    path = "libcuda.so.1";
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    fatal("cannot load %s: %s (the NVIDIA driver is needed; FA_LIBCUDA names "
          "another libcuda)",
          path, dlerror());
#define FA_LOAD_ENTRY(name)                                                    \
  driver.name = reinterpret_cast<decltype(driver.name)>(                       \
      lookUp(handle, path, FA_SYMBOL_NAME(name)));
  FA_DRIVER_ENTRIES(FA_LOAD_ENTRY)
#undef FA_LOAD_ENTRY
}

void check(CUresult result, const char *entry, const char *call,
           const char *log = nullptr) {
  if (result == CUDA_SUCCESS)
    return;
  const char *name = nullptr;
  if (!driver.cuGetErrorName || driver.cuGetErrorName(result, &name) !=
                                    CUDA_SUCCESS || !name)
    name = "unknown error";
  if (log && *log)
    fatal("%s: %s failed: %s (%d)\n%s", entry, call, name, int(result), log);
  fatal("%s: %s failed: %s (%d)", entry, call, name, int(result));
}

// Calls driver entry `name`, exiting with a message naming the mgpu entry
// point `entry` when it fails.
#define FA_CALL(entry, name, ...) check(driver.name(__VA_ARGS__), entry, #name)

//===----------------------------------------------------------------------===//
// Context: the primary context of the default device, current on each thread
//===----------------------------------------------------------------------===//

struct DeviceState {
  std::mutex mutex;
  int ordinal = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
  int maxSharedOptIn = -1; // Bytes; -1 until first asked.
  // Bumped when the default device changes; a thread whose copy differs
  // makes the context current again.
  std::atomic<unsigned> generation{1};
};

DeviceState state;
std::once_flag initOnce;
thread_local unsigned threadGeneration = 0;

void selectDevice(int ordinal, const char *entry) {
  CUdevice device;
  FA_CALL(entry, cuDeviceGet, &device, ordinal);
  CUcontext context;
  FA_CALL(entry, cuDevicePrimaryCtxRetain, &context, device);
  state.ordinal = ordinal;
  state.device = device;
  state.context = context;
  state.maxSharedOptIn = -1;
  state.generation.fetch_add(1);
}

void initialize(const char *entry) {
  loadDriver();
  FA_CALL(entry, cuInit, 0);
  int ordinal = 0;
  if (const char *env = std::getenv("FA_CUDA_DEVICE"); env && *env) {
    char *end = nullptr;
    long value = std::strtol(env, &end, 10);
    if (*end || value < 0 || value > INT32_MAX)
      fatal("FA_CUDA_DEVICE=%s is not a device ordinal", env);
    ordinal = int(value);
  }
  std::lock_guard<std::mutex> lock(state.mutex);
  selectDevice(ordinal, entry);
}

// Loads the driver once per process and makes the default device's primary
// context current on this thread once (again after the device changed).
void ensureContext(const char *entry) {
  std::call_once(initOnce, initialize, entry);
  unsigned generation = state.generation.load(std::memory_order_acquire);
  if (threadGeneration == generation)
    return;
  CUcontext context;
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    context = state.context;
    generation = state.generation.load();
  }
  FA_CALL(entry, cuCtxSetCurrent, context);
  threadGeneration = generation;
}

int maxDynamicSharedOptIn(const char *entry) {
  std::lock_guard<std::mutex> lock(state.mutex);
  if (state.maxSharedOptIn < 0)
    FA_CALL(entry, cuDeviceGetAttribute, &state.maxSharedOptIn,
            CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            state.device);
  return state.maxSharedOptIn;
}

CUstream asStream(void *stream) { return static_cast<CUstream>(stream); }
CUdeviceptr asDevicePtr(void *ptr) { return reinterpret_cast<CUdeviceptr>(ptr); }

//===----------------------------------------------------------------------===//
// Memref descriptors and tensor maps
//===----------------------------------------------------------------------===//

// An MLIR ranked memref descriptor: {T *allocated; T *aligned; int64_t offset;
// int64_t sizes[rank]; int64_t strides[rank];}, outermost dimension first,
// strides in elements.
struct MemRefView {
  char *aligned;
  int64_t offset;
  const int64_t *sizes;
  const int64_t *strides;
};

MemRefView viewMemRef(void *descriptor) {
  auto *fields = static_cast<char *>(descriptor);
  MemRefView view;
  std::memcpy(&view.aligned, fields + sizeof(void *), sizeof(void *));
  std::memcpy(&view.offset, fields + 2 * sizeof(void *), sizeof(int64_t));
  view.sizes = reinterpret_cast<const int64_t *>(fields + 2 * sizeof(void *) +
                                                 sizeof(int64_t));
  return view;
}

// The whole buffer of a memref: from its first element, sizes[0] * strides[0]
// elements (one element for rank 0).
void memRefBuffer(int64_t rank, void *descriptor, int64_t elementSizeBytes,
                  void *&start, size_t &bytes) {
  MemRefView view = viewMemRef(descriptor);
  start = view.aligned + view.offset * elementSizeBytes;
  int64_t elements = 1;
  if (rank > 0)
    elements = view.sizes[0] * view.sizes[rank]; // sizes[0] * strides[0]
  bytes = size_t(elements * elementSizeBytes);
}

int tensorMapElementSize(int64_t dataType) {
  switch (dataType) {
  case CU_TENSOR_MAP_DATA_TYPE_UINT8:
    return 1;
  case CU_TENSOR_MAP_DATA_TYPE_UINT16:
  case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
  case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
    return 2;
  case CU_TENSOR_MAP_DATA_TYPE_UINT32:
  case CU_TENSOR_MAP_DATA_TYPE_INT32:
  case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
  case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
  case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
  case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ:
    return 4;
  case CU_TENSOR_MAP_DATA_TYPE_UINT64:
  case CU_TENSOR_MAP_DATA_TYPE_INT64:
  case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
    return 8;
  default:
    return 0;
  }
}

// The bytes a swizzle mode allows in the innermost box dimension (0: no limit
// checked here).
int64_t swizzleSpanBytes(int64_t swizzle) {
  switch (swizzle) {
  case CU_TENSOR_MAP_SWIZZLE_32B:
    return 32;
  case CU_TENSOR_MAP_SWIZZLE_64B:
    return 64;
  case CU_TENSOR_MAP_SWIZZLE_128B:
    return 128;
  default:
    return 0;
  }
}

constexpr const char *kEncodeEntry = "mgpuTensorMapEncodeTiledMemref";
constexpr int kMaxTensorMapRank = 5;

// cuTensorMapEncodeTiled's arguments, innermost dimension first.
struct TiledEncoding {
  CUtensorMapDataType dataType;
  cuuint32_t rank;
  void *globalAddress;
  cuuint64_t globalDim[kMaxTensorMapRank];
  cuuint64_t globalStrides[kMaxTensorMapRank - 1]; // Bytes.
  cuuint32_t boxDim[kMaxTensorMapRank];
  cuuint32_t elementStrides[kMaxTensorMapRank];
};

// Fills `enc` from a memref descriptor and box (outermost first), checking
// the rules cuTensorMapEncodeTiled states, so that a violation is reported by
// name rather than as CUDA_ERROR_INVALID_VALUE.
TiledEncoding encodeTiled(int64_t rank, void *descriptor, int64_t dataType,
                          int64_t interleave, int64_t swizzle,
                          const int64_t *boxDims) {
  if (rank < 1 || rank > kMaxTensorMapRank)
    fatal("%s: rank %lld: a tensor map has rank 1 to %d", kEncodeEntry,
          (long long)rank, kMaxTensorMapRank);
  int64_t elementSize = tensorMapElementSize(dataType);
  if (!elementSize)
    fatal("%s: data type %lld is not a CUtensorMapDataType this runtime "
          "supports",
          kEncodeEntry, (long long)dataType);
  if (interleave < CU_TENSOR_MAP_INTERLEAVE_NONE ||
      interleave > CU_TENSOR_MAP_INTERLEAVE_32B)
    fatal("%s: interleave %lld is not a CUtensorMapInterleave", kEncodeEntry,
          (long long)interleave);
  if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE && rank < 3)
    fatal("%s: rank %lld: an interleaved tensor map has rank 3 or more",
          kEncodeEntry, (long long)rank);
  // Address and strides: 16-byte multiples, 32 with 32-byte interleave.
  int64_t align = interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16;
  MemRefView view = viewMemRef(descriptor);
  TiledEncoding enc;
  enc.dataType = CUtensorMapDataType(dataType);
  enc.rank = cuuint32_t(rank);
  enc.globalAddress = view.aligned + view.offset * elementSize;
  const int64_t *strides = view.sizes + rank;
  if (reinterpret_cast<uintptr_t>(enc.globalAddress) % align)
    fatal("%s: global address %p is not %lld-byte aligned", kEncodeEntry,
          enc.globalAddress, (long long)align);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t outer = rank - 1 - i; // Descriptor index of dimension i.
    int64_t size = view.sizes[outer], box = boxDims[outer];
    if (size < 1 || size > (int64_t(1) << 32))
      fatal("%s: size %lld of dimension %lld is not in 1..2^32", kEncodeEntry,
            (long long)size, (long long)outer);
    if (box < 1 || box > 256)
      fatal("%s: box size %lld of dimension %lld is not in 1..256",
            kEncodeEntry, (long long)box, (long long)outer);
    enc.globalDim[i] = cuuint64_t(size);
    enc.boxDim[i] = cuuint32_t(box);
    enc.elementStrides[i] = 1;
    if (i == 0)
      continue;
    int64_t strideBytes = strides[outer] * elementSize;
    if (strideBytes <= 0 || strideBytes % align ||
        strideBytes >= (int64_t(1) << 40))
      fatal("%s: stride of dimension %lld is %lld bytes: it must be a "
            "positive multiple of %lld below 2^40",
            kEncodeEntry, (long long)outer, (long long)strideBytes,
            (long long)align);
    enc.globalStrides[i - 1] = cuuint64_t(strideBytes);
  }
  if (strides[rank - 1] != 1)
    fatal("%s: innermost stride is %lld elements: a tensor map needs 1",
          kEncodeEntry, (long long)strides[rank - 1]);
  int64_t innerBoxBytes = int64_t(enc.boxDim[0]) * elementSize;
  if (interleave == CU_TENSOR_MAP_INTERLEAVE_NONE) {
    if (innerBoxBytes % 16)
      fatal("%s: innermost box dimension is %lld bytes: it must be a "
            "multiple of 16",
            kEncodeEntry, (long long)innerBoxBytes);
    int64_t span = swizzleSpanBytes(swizzle);
    if (span && innerBoxBytes > span)
      fatal("%s: innermost box dimension is %lld bytes: swizzle mode %lld "
            "allows at most %lld",
            kEncodeEntry, (long long)innerBoxBytes, (long long)swizzle,
            (long long)span);
  }
  return enc;
}

} // namespace

//===----------------------------------------------------------------------===//
// Modules and launches
//===----------------------------------------------------------------------===//

namespace {
// cuModuleLoadDataEx with an error log (printed when loading fails) and, for
// PTX, the JIT optimization level (optLevel < 0: the driver's default).
CUmodule loadModule(const void *image, int optLevel, const char *entry) {
  ensureContext(entry);
  char log[8192] = {0};
  CUjit_option options[3] = {CU_JIT_ERROR_LOG_BUFFER,
                             CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                             CU_JIT_OPTIMIZATION_LEVEL};
  void *values[3] = {log, reinterpret_cast<void *>(uintptr_t(sizeof log)),
                     reinterpret_cast<void *>(uintptr_t(optLevel))};
  unsigned count = optLevel < 0 ? 2 : 3;
  CUmodule module = nullptr;
  check(driver.cuModuleLoadDataEx(&module, image, count, options, values),
        entry, "cuModuleLoadDataEx", log);
  return module;
}
} // namespace

FA_EXPORT void *mgpuModuleLoad(void *data, size_t /*size*/) {
  return loadModule(data, -1, "mgpuModuleLoad");
}

FA_EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel) {
  return loadModule(data, optLevel < 0 ? 0 : optLevel, "mgpuModuleLoadJIT");
}

FA_EXPORT void mgpuModuleUnload(void *module) {
  const char *entry = "mgpuModuleUnload";
  ensureContext(entry);
  // gpu-to-llvm unloads in a global destructor: at process exit the driver
  // may already be shut down, and then nothing is left to unload (seen on
  // the H200: CUDA_ERROR_DEINITIALIZED turned a correct run into status 1).
  CUresult status = driver.cuModuleUnload(static_cast<CUmodule>(module));
  if (status != CUDA_ERROR_DEINITIALIZED)
    check(status, entry, "cuModuleUnload");
}

FA_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  const char *entry = "mgpuModuleGetFunction";
  ensureContext(entry);
  CUfunction function = nullptr;
  FA_CALL(entry, cuModuleGetFunction, &function, static_cast<CUmodule>(module),
          name);
  return function;
}

FA_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                intptr_t gridZ, intptr_t blockX,
                                intptr_t blockY, intptr_t blockZ,
                                int32_t dynamicSharedMemoryBytes, void *stream,
                                void **params, void **extra,
                                size_t /*paramsCount*/) {
  const char *entry = "mgpuLaunchKernel";
  ensureContext(entry);
  if (gridX == 0 || gridY == 0 || gridZ == 0)
    return;
  auto *fn = static_cast<CUfunction>(function);
  constexpr int32_t kDefaultSharedLimit = 48 * 1024;
  if (dynamicSharedMemoryBytes > kDefaultSharedLimit) {
    int limit = maxDynamicSharedOptIn(entry);
    if (dynamicSharedMemoryBytes > limit)
      fatal("%s: %d bytes of dynamic shared memory requested, the device "
            "allows at most %d",
            entry, int(dynamicSharedMemoryBytes), limit);
    FA_CALL(entry, cuFuncSetAttribute, fn,
            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            int(dynamicSharedMemoryBytes));
  }
  FA_CALL(entry, cuLaunchKernel, fn, unsigned(gridX), unsigned(gridY),
          unsigned(gridZ), unsigned(blockX), unsigned(blockY), unsigned(blockZ),
          unsigned(dynamicSharedMemoryBytes), asStream(stream), params, extra);
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

FA_EXPORT void *mgpuStreamCreate(void) {
  const char *entry = "mgpuStreamCreate";
  ensureContext(entry);
  CUstream stream = nullptr;
  FA_CALL(entry, cuStreamCreate, &stream, CU_STREAM_NON_BLOCKING);
  return stream;
}

FA_EXPORT void mgpuStreamDestroy(void *stream) {
  const char *entry = "mgpuStreamDestroy";
  ensureContext(entry);
  FA_CALL(entry, cuStreamDestroy, asStream(stream));
}

FA_EXPORT void mgpuStreamSynchronize(void *stream) {
  const char *entry = "mgpuStreamSynchronize";
  ensureContext(entry);
  FA_CALL(entry, cuStreamSynchronize, asStream(stream));
}

FA_EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  const char *entry = "mgpuStreamWaitEvent";
  ensureContext(entry);
  FA_CALL(entry, cuStreamWaitEvent, asStream(stream),
          static_cast<CUevent>(event), 0);
}

FA_EXPORT void *mgpuEventCreate(void) {
  const char *entry = "mgpuEventCreate";
  ensureContext(entry);
  CUevent event = nullptr;
  FA_CALL(entry, cuEventCreate, &event, CU_EVENT_DISABLE_TIMING);
  return event;
}

FA_EXPORT void mgpuEventDestroy(void *event) {
  const char *entry = "mgpuEventDestroy";
  ensureContext(entry);
  FA_CALL(entry, cuEventDestroy, static_cast<CUevent>(event));
}

FA_EXPORT void mgpuEventSynchronize(void *event) {
  const char *entry = "mgpuEventSynchronize";
  ensureContext(entry);
  FA_CALL(entry, cuEventSynchronize, static_cast<CUevent>(event));
}

FA_EXPORT void mgpuEventRecord(void *event, void *stream) {
  const char *entry = "mgpuEventRecord";
  ensureContext(entry);
  FA_CALL(entry, cuEventRecord, static_cast<CUevent>(event), asStream(stream));
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

FA_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, void * /*stream*/,
                             bool isHostShared) {
  const char *entry = "mgpuMemAlloc";
  ensureContext(entry);
  if (sizeBytes == 0)
    return nullptr;
  CUdeviceptr ptr = 0;
  if (isHostShared)
    FA_CALL(entry, cuMemAllocManaged, &ptr, sizeBytes, CU_MEM_ATTACH_GLOBAL);
  else
    FA_CALL(entry, cuMemAlloc, &ptr, sizeBytes);
  return reinterpret_cast<void *>(ptr);
}

FA_EXPORT void mgpuMemFree(void *ptr, void * /*stream*/) {
  const char *entry = "mgpuMemFree";
  ensureContext(entry);
  if (ptr)
    FA_CALL(entry, cuMemFree, asDevicePtr(ptr));
}

FA_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                          void *stream) {
  const char *entry = "mgpuMemcpy";
  ensureContext(entry);
  FA_CALL(entry, cuMemcpyAsync, asDevicePtr(dst), asDevicePtr(src), sizeBytes,
          asStream(stream));
}

FA_EXPORT void mgpuMemset32(void *dst, unsigned int value, size_t count,
                            void *stream) {
  const char *entry = "mgpuMemset32";
  ensureContext(entry);
  FA_CALL(entry, cuMemsetD32Async, asDevicePtr(dst), value, count,
          asStream(stream));
}

FA_EXPORT void mgpuMemset16(void *dst, unsigned short value, size_t count,
                            void *stream) {
  const char *entry = "mgpuMemset16";
  ensureContext(entry);
  FA_CALL(entry, cuMemsetD16Async, asDevicePtr(dst), value, count,
          asStream(stream));
}

FA_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank, void *rankedDescriptor,
                                         int64_t elementSizeBytes) {
  const char *entry = "mgpuMemHostRegisterMemRef";
  ensureContext(entry);
  void *start;
  size_t bytes;
  memRefBuffer(rank, rankedDescriptor, elementSizeBytes, start, bytes);
  if (bytes)
    FA_CALL(entry, cuMemHostRegister, start, bytes, 0);
}

FA_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank,
                                           void *rankedDescriptor,
                                           int64_t elementSizeBytes) {
  const char *entry = "mgpuMemHostUnregisterMemRef";
  ensureContext(entry);
  void *start;
  size_t bytes;
  memRefBuffer(rank, rankedDescriptor, elementSizeBytes, start, bytes);
  if (bytes)
    FA_CALL(entry, cuMemHostUnregister, start);
}

// Returns a device copy of the encoded 128-byte CUtensorMap (fa's kernels
// take the tensor map as a pointer to device memory). It is not freed.
FA_EXPORT void *mgpuTensorMapEncodeTiledMemref(
    int64_t rank, void *rankedDescriptor, int64_t dataType, int64_t interleave,
    int64_t swizzle, int64_t l2Promotion, int64_t oobFill, int64_t *boxDims) {
  const char *entry = kEncodeEntry;
  ensureContext(entry);
  TiledEncoding enc = encodeTiled(rank, rankedDescriptor, dataType, interleave,
                                  swizzle, boxDims);
  CUtensorMap map;
  std::memset(&map, 0, sizeof map);
  FA_CALL(entry, cuTensorMapEncodeTiled, &map, enc.dataType, enc.rank,
          enc.globalAddress, enc.globalDim, enc.globalStrides, enc.boxDim,
          enc.elementStrides, CUtensorMapInterleave(interleave),
          CUtensorMapSwizzle(swizzle), CUtensorMapL2promotion(l2Promotion),
          CUtensorMapFloatOOBfill(oobFill));
  CUdeviceptr copy = 0;
  FA_CALL(entry, cuMemAlloc, &copy, sizeof map);
  FA_CALL(entry, cuMemcpyHtoD, copy, &map, sizeof map);
  return reinterpret_cast<void *>(copy);
}

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

FA_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  const char *entry = "mgpuSetDefaultDevice";
  ensureContext(entry);
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    if (device == state.ordinal)
      return;
    selectDevice(device, entry);
  }
  ensureContext(entry);
}

// The device copy of a CUtensorMap that mgpuTensorMapEncodeTiledMemref
// returned, once the launches that read it are done (fa-emit-host-launch
// calls it after the stream's last wait).
FA_EXPORT void faCudaFreeTensorMap(void *deviceTensorMap) {
  const char *entry = "faCudaFreeTensorMap";
  ensureContext(entry);
  if (deviceTensorMap)
    FA_CALL(entry, cuMemFree,
            static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(deviceTensorMap)));
}

FA_EXPORT int32_t faCudaMultiprocessorCount(void) {
  const char *entry = "faCudaMultiprocessorCount";
  ensureContext(entry);
  CUdevice device;
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    device = state.device;
  }
  int count = 0;
  FA_CALL(entry, cuDeviceGetAttribute, &count,
          CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
  return count;
}
