#include <cstdio>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
// Throughput of the MUFU exponential: f32 vs packed f16x2 / bf16x2, and tanh.
// Each thread runs 8 independent chains so latency is hidden; all SMs busy.
template <int MODE>
__global__ void k(unsigned *out, int iters) {
  unsigned r[8]; float f[8];
  for (int i = 0; i < 8; ++i) { r[i] = 0x3c003c00u ^ (threadIdx.x + i); f[i] = -0.001f * (threadIdx.x + i); }
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      if (MODE == 0) asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(f[i]));
      if (MODE == 1) asm volatile("ex2.approx.f16x2 %0, %0;" : "+r"(r[i]));
      if (MODE == 2) asm volatile("ex2.approx.ftz.bf16x2 %0, %0;" : "+r"(r[i]));
      if (MODE == 3) asm volatile("tanh.approx.f32 %0, %0;" : "+f"(f[i]));
      if (MODE == 4) asm volatile("tanh.approx.f16x2 %0, %0;" : "+r"(r[i]));
      if (MODE == 5) asm volatile("ex2.approx.f16 %0, %0;" : "+h"(*(unsigned short*)&r[i]));
    }
  }
  unsigned acc = 0; for (int i = 0; i < 8; ++i) acc ^= r[i] ^ __float_as_uint(f[i]);
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
template <int MODE> double run(unsigned *d, int sms, const char *name, int per) {
  int iters = 4096; dim3 g(sms * 8), b(256);
  k<MODE><<<g, b>>>(d, 16); cudaDeviceSynchronize();
  cudaEvent_t a, e; cudaEventCreate(&a); cudaEventCreate(&e);
  cudaEventRecord(a); k<MODE><<<g, b>>>(d, iters); cudaEventRecord(e); cudaEventSynchronize(e);
  float ms; cudaEventElapsedTime(&ms, a, e);
  double ops = double(g.x) * b.x * iters * 8;  // instructions (thread-level)
  double clk = 1.98e9;
  printf("%-22s %8.3f ms  %.2f instr/clk/SM  %.2f results/clk/SM\n", name, ms,
         ops / (ms * 1e-3) / clk / sms, ops * per / (ms * 1e-3) / clk / sms);
  return ms;
}
int main() {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  unsigned *d; cudaMalloc(&d, sms * 8 * 256 * 4);
  run<0>(d, sms, "ex2.f32", 1); run<1>(d, sms, "ex2.f16x2", 2); run<2>(d, sms, "ex2.bf16x2", 2);
  run<3>(d, sms, "tanh.f32", 1); run<4>(d, sms, "tanh.f16x2", 2); run<5>(d, sms, "ex2.f16", 1);
  run<0>(d, sms, "ex2.f32 again", 1);
  return 0;
}
