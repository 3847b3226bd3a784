// What an ahead-of-time executable of the GPU integration tests needs from
// MLIR's runner libraries, which link libMLIR and cannot travel to the GPU
// machine: printMemrefF32 (the same header and row layout as
// libmlir_runner_utils, which compare_prints.py parses) and memrefCopy (the
// strided copy that bufferization's memref.copy lowers to).
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  int64_t rank;
  void *descriptor;
} UnrankedMemRef;

// A ranked descriptor: allocated, aligned, offset, sizes[rank], strides[rank].
static int64_t *sizesOf(void *d) { return (int64_t *)((char *)d + 24); }
static int64_t offsetOf(void *d) { return *(int64_t *)((char *)d + 16); }
static char *alignedOf(void *d) { return *(char **)((char *)d + 8); }

void printMemrefF32(int64_t rank, void *d) {
  int64_t *sizes = sizesOf(d), *strides = sizes + rank;
  printf("Unranked Memref base@ = %p rank = %" PRId64 " offset = %" PRId64
         " sizes = [",
         (void *)alignedOf(d), rank, offsetOf(d));
  int64_t n = 1;
  for (int64_t i = 0; i < rank; ++i) {
    printf(i ? ", %" PRId64 : "%" PRId64, sizes[i]);
    n *= sizes[i];
  }
  printf("] strides = [");
  for (int64_t i = 0; i < rank; ++i)
    printf(i ? ", %" PRId64 : "%" PRId64, strides[i]);
  printf("] data = \n");
  const float *base = (const float *)alignedOf(d) + offsetOf(d);
  for (int64_t e = 0; e < n; ++e) {
    int64_t rest = e, at = 0;
    for (int64_t i = rank - 1; i >= 0; --i) {
      at += (rest % sizes[i]) * strides[i];
      rest /= sizes[i];
    }
    printf(e ? ", %g" : "%g", base[at]);
    if (rank && (e + 1) % sizes[rank - 1] == 0)
      printf("\n");
  }
  printf("\n");
}

void memrefCopy(int64_t elementSize, UnrankedMemRef *src, UnrankedMemRef *dst) {
  int64_t rank = src->rank;
  int64_t *sizes = sizesOf(src->descriptor);
  int64_t *srcStrides = sizes + rank;
  int64_t *dstStrides = sizesOf(dst->descriptor) + rank;
  char *s = alignedOf(src->descriptor) + offsetOf(src->descriptor) * elementSize;
  char *t = alignedOf(dst->descriptor) + offsetOf(dst->descriptor) * elementSize;
  int64_t n = 1;
  for (int64_t i = 0; i < rank; ++i)
    n *= sizes[i];
  for (int64_t e = 0; e < n; ++e) {
    int64_t rest = e, from = 0, to = 0;
    for (int64_t i = rank - 1; i >= 0; --i) {
      from += (rest % sizes[i]) * srcStrides[i];
      to += (rest % sizes[i]) * dstStrides[i];
      rest /= sizes[i];
    }
    memcpy(t + to * elementSize, s + from * elementSize, elementSize);
  }
}

// The program: the inputs' @entry (void), as a C main with exit status 0.
void entry(void);
int main(void) {
  entry();
  return 0;
}
