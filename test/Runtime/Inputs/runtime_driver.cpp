// Calls libfa_cuda_runtime.so's entry points the way host code lowered by
// gpu-to-llvm does; argv[1] picks a scenario. Each step is printed to stderr
// ("driver: ...") between the fake driver's lines, so that FileCheck sees
// which mgpu call made which driver calls. The entry points are declared here
// with the signatures of MLIR 22's LLVM IR declarations; there is no header.
#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

extern "C" {
void *mgpuModuleLoad(void *data, size_t size);
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t dynamicSharedMemoryBytes,
                      void *stream, void **params, void **extra,
                      size_t paramsCount);
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate(void);
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream);
void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream);
void mgpuSetDefaultDevice(int32_t device);
void mgpuMemHostRegisterMemRef(int64_t rank, void *rankedDescriptor,
                               int64_t elementSizeBytes);
void mgpuMemHostUnregisterMemRef(int64_t rank, void *rankedDescriptor,
                                 int64_t elementSizeBytes);
void *mgpuTensorMapEncodeTiledMemref(int64_t rank, void *rankedDescriptor,
                                     int64_t dataType, int64_t interleave,
                                     int64_t swizzle, int64_t l2Promotion,
                                     int64_t oobFill, int64_t *boxDims);
int32_t faCudaMultiprocessorCount(void);
}

#define STEP(...)                                                              \
  (std::fprintf(stderr, "driver: " __VA_ARGS__), std::fputc('\n', stderr))

template <int Rank> struct MemRef {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

static void *fakeAddress(uintptr_t address) {
  return reinterpret_cast<void *>(address);
}

static int modules() {
  char ptx[] = ".version 8.0\n.target sm_90a\n.entry attn() { ret; }\n";
  STEP("load jit");
  void *jit = mgpuModuleLoadJIT(ptx, 3);
  STEP("load image");
  char cubin[] = "\x7f" "ELF cubin image";
  void *module = mgpuModuleLoad(cubin, sizeof cubin);
  STEP("get function");
  void *fn = mgpuModuleGetFunction(module, "attn_kernel");
  void *stream = mgpuStreamCreate();
  long long a = 7, b = 8, c = 9;
  void *params[] = {&a, &b, &c, nullptr};
  STEP("launch 48 KiB");
  mgpuLaunchKernel(fn, 16, 8, 2, 384, 1, 1, 48 * 1024, stream, params,
                   nullptr, 3);
  STEP("launch 227 KiB");
  mgpuLaunchKernel(fn, 132, 1, 1, 384, 1, 1, 227 * 1024, stream, params,
                   nullptr, 3);
  STEP("launch empty grid");
  mgpuLaunchKernel(fn, 0, 1, 1, 128, 1, 1, 0, stream, params, nullptr, 3);
  STEP("unload");
  mgpuModuleUnload(module);
  mgpuModuleUnload(jit);
  STEP("done");
  return 0;
}

static int sharedTooLarge() {
  char cubin[] = "cubin";
  void *fn = mgpuModuleGetFunction(mgpuModuleLoad(cubin, sizeof cubin), "k");
  mgpuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, 228 * 1024, nullptr, nullptr,
                   nullptr, 0);
  return 0;
}

// A [B*H, N, D] = [16, 1024, 64] f16 memref whose data starts 64 elements
// into its buffer; box [1, 64, 64]. `d` and `box` vary for the error cases.
static int tensorMap(int64_t d, int64_t box) {
  MemRef<3> q{fakeAddress(0x10000), fakeAddress(0x20000), 64,
              {16, 1024, d}, {1024 * d, d, 1}};
  int64_t boxDims[3] = {1, box, 64};
  STEP("encode");
  void *map = mgpuTensorMapEncodeTiledMemref(
      3, &q, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, boxDims);
  STEP("map %p", map);
  return 0;
}

static int memory() {
  void *stream = mgpuStreamCreate();
  STEP("alloc");
  void *dev = mgpuMemAlloc(4096, stream, false);
  STEP("alloc managed");
  void *managed = mgpuMemAlloc(1000, stream, true);
  STEP("alloc empty -> %p", mgpuMemAlloc(0, stream, false));
  char host[64];
  STEP("memcpy");
  mgpuMemcpy(dev, managed, 1000, stream);
  STEP("memset");
  mgpuMemset32(dev, 0x3f800000u, 1024, stream);
  mgpuMemset16(managed, 0x3c00, 500, stream);
  STEP("register");
  MemRef<2> m{host, host, 4, {8, 16}, {16, 1}};
  mgpuMemHostRegisterMemRef(2, &m, 4);
  mgpuMemHostUnregisterMemRef(2, &m, 4);
  STEP("host %p", static_cast<void *>(host + 16));
  STEP("events");
  void *event = mgpuEventCreate();
  mgpuEventRecord(event, stream);
  void *other = mgpuStreamCreate();
  mgpuStreamWaitEvent(other, event);
  mgpuEventSynchronize(event);
  mgpuEventDestroy(event);
  STEP("free");
  mgpuMemFree(dev, stream);
  mgpuMemFree(managed, stream);
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
  mgpuStreamDestroy(other);
  STEP("done");
  return 0;
}

static int context() {
  STEP("sms %d", faCudaMultiprocessorCount());
  STEP("sms again %d", faCudaMultiprocessorCount());
  STEP("other thread");
  std::thread([] { STEP("thread sms %d", faCudaMultiprocessorCount()); })
      .join();
  STEP("set device 0");
  mgpuSetDefaultDevice(0);
  STEP("sms %d", faCudaMultiprocessorCount());
  STEP("set device 0 again");
  mgpuSetDefaultDevice(0);
  STEP("set device 7");
  mgpuSetDefaultDevice(7);
  return 0;
}

int main(int argc, char **argv) {
  // The parameter arrays below end with a null pointer: the fake counts them.
  setenv("FAKE_CUDA_PARAMS_END_NULL", "1", 1);
  const char *scenario = argc > 1 ? argv[1] : "";
  if (!std::strcmp(scenario, "modules"))
    return modules();
  if (!std::strcmp(scenario, "shared-too-large"))
    return sharedTooLarge();
  if (!std::strcmp(scenario, "tensor-map"))
    return tensorMap(64, 64);
  if (!std::strcmp(scenario, "tensor-map-bad-stride"))
    return tensorMap(60, 64);
  if (!std::strcmp(scenario, "tensor-map-bad-box"))
    return tensorMap(64, 512);
  if (!std::strcmp(scenario, "memory"))
    return memory();
  if (!std::strcmp(scenario, "context"))
    return context();
  std::fprintf(stderr, "usage: %s modules|shared-too-large|tensor-map|"
                       "tensor-map-bad-stride|tensor-map-bad-box|memory|"
                       "context\n",
               argv[0]);
  return 2;
}
