//===- CudaEnums.h - CUDA driver enum values the manifest carries -*- C++ -*-===//
//
// The values of the cuda.h enums that a launch manifest hands to the CUDA
// driver (cuTensorMapEncodeTiled's arguments), so that the runtime passes
// numbers the compiler wrote instead of keeping its own copy of cuda.h.
// cuda.h is not included (the compiler does not need the CUDA toolkit); the
// values are checked against it by test/Conversion/AttentionToNVGPU/cuda-enums.test
// where cuda.h is installed. Depends on nothing: that test compiles it alone.
//
//===----------------------------------------------------------------------===//
#ifndef FA_CONVERSION_ATTENTIONTONVGPU_COMMON_CUDAENUMS_H
#define FA_CONVERSION_ATTENTIONTONVGPU_COMMON_CUDAENUMS_H

namespace mlir::fa::cuda {

/// CUtensorMapDataType.
enum class TensorMapDataType : unsigned {
  UInt8 = 0,    ///< CU_TENSOR_MAP_DATA_TYPE_UINT8 (fp8 bytes)
  Float16 = 6,  ///< CU_TENSOR_MAP_DATA_TYPE_FLOAT16
  Float32 = 7,  ///< CU_TENSOR_MAP_DATA_TYPE_FLOAT32
  BFloat16 = 9, ///< CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
};

/// CUtensorMapInterleave.
enum class TensorMapInterleave : unsigned {
  None = 0, ///< CU_TENSOR_MAP_INTERLEAVE_NONE
};

/// CUtensorMapSwizzle.
enum class TensorMapSwizzle : unsigned {
  None = 0,  ///< CU_TENSOR_MAP_SWIZZLE_NONE
  B32 = 1,   ///< CU_TENSOR_MAP_SWIZZLE_32B
  B64 = 2,   ///< CU_TENSOR_MAP_SWIZZLE_64B
  B128 = 3,  ///< CU_TENSOR_MAP_SWIZZLE_128B
};

/// CUtensorMapL2promotion.
enum class TensorMapL2Promotion : unsigned {
  None = 0,  ///< CU_TENSOR_MAP_L2_PROMOTION_NONE
  B64 = 1,   ///< CU_TENSOR_MAP_L2_PROMOTION_L2_64B
  B128 = 2,  ///< CU_TENSOR_MAP_L2_PROMOTION_L2_128B
  B256 = 3,  ///< CU_TENSOR_MAP_L2_PROMOTION_L2_256B
};

/// CUtensorMapFloatOOBfill. NONE fills out-of-bounds elements with zeros.
enum class TensorMapFloatOOBFill : unsigned {
  None = 0,              ///< CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE
  NanRequestZeroFma = 1, ///< CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
};

} // namespace mlir::fa::cuda

#endif // FA_CONVERSION_ATTENTIONTONVGPU_COMMON_CUDAENUMS_H
