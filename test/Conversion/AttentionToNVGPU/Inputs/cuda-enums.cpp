// The CUDA enum values the launch manifest carries (Common/CudaEnums.h, which
// the compiler uses without cuda.h) are cuda.h's: compiled by cuda-enums.test.
#include "CudaEnums.h"

#include <cuda.h>

using namespace mlir::fa::cuda;

#define SAME(ours, theirs)                                                     \
  static_assert(static_cast<unsigned>(ours) == static_cast<unsigned>(theirs),  \
                #ours " != " #theirs)

SAME(TensorMapDataType::UInt8, CU_TENSOR_MAP_DATA_TYPE_UINT8);
SAME(TensorMapDataType::Float16, CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
SAME(TensorMapDataType::Float32, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
SAME(TensorMapDataType::BFloat16, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
SAME(TensorMapInterleave::None, CU_TENSOR_MAP_INTERLEAVE_NONE);
SAME(TensorMapSwizzle::None, CU_TENSOR_MAP_SWIZZLE_NONE);
SAME(TensorMapSwizzle::B32, CU_TENSOR_MAP_SWIZZLE_32B);
SAME(TensorMapSwizzle::B64, CU_TENSOR_MAP_SWIZZLE_64B);
SAME(TensorMapSwizzle::B128, CU_TENSOR_MAP_SWIZZLE_128B);
SAME(TensorMapL2Promotion::None, CU_TENSOR_MAP_L2_PROMOTION_NONE);
SAME(TensorMapL2Promotion::B64, CU_TENSOR_MAP_L2_PROMOTION_L2_64B);
SAME(TensorMapL2Promotion::B128, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
SAME(TensorMapL2Promotion::B256, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
SAME(TensorMapFloatOOBFill::None, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
SAME(TensorMapFloatOOBFill::NanRequestZeroFma,
     CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);

#ifdef FA_CUDA_ENUMS_SELF_TEST // a mismatch must not compile
SAME(TensorMapSwizzle::B128, CU_TENSOR_MAP_SWIZZLE_64B);
#endif
