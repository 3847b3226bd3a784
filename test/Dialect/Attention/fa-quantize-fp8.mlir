// RUN: fa-opt %s --split-input-file --fa-quantize-fp8=granularity=tensor | FileCheck %s --check-prefix=TENSOR
// RUN: fa-opt %s --split-input-file --fa-quantize-fp8=granularity=head | FileCheck %s --check-prefix=HEAD
// RUN: fa-opt %s --split-input-file '--fa-quantize-fp8=granularity=block block-q=4 block-kv=8' | FileCheck %s --check-prefix=BLOCK
// RUN: fa-opt %s --split-input-file '--fa-quantize-fp8=granularity=tensor incoherent=true seed=1' | FileCheck %s --check-prefix=INC
// The output is valid IR that the CPU pipeline lowers completely.
// RUN: fa-opt %s --split-input-file '--fa-quantize-fp8=granularity=block block-q=4 block-kv=8 incoherent=1' --fa-to-cpu | FileCheck %s --check-prefix=CPU

// TENSOR-LABEL: func.func @causal_gqa_lse
// amax of Q over D (rows), then over everything, delta = max(amax, 2^-117) / 448.
// TENSOR:      %[[QROWS:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0 : tensor<1x2x10x4xf16>)
// TENSOR:        math.absf
// TENSOR:        arith.maximumf
// TENSOR:      %[[QAMAX:.+]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction", "reduction"]} ins(%[[QROWS]] : tensor<1x2x10xf32>) outs(%{{.*}} : tensor<f32>)
// TENSOR:      %[[QA:.+]] = tensor.extract %[[QAMAX]][] : tensor<f32>
// TENSOR:      %[[QF:.+]] = arith.maximumf %[[QA]], %{{.*}} : f32
// TENSOR:      %[[QD:.+]] = arith.divf %[[QF]], %{{.*}} : f32
// Quantize: x / delta, clamp to +-448, truncf (round to nearest even).
// TENSOR:      %[[Q8:.+]] = linalg.generic {{.*}} ins(%arg0 : tensor<1x2x10x4xf16>) outs(%{{.*}} : tensor<1x2x10x4xf8E4M3FN>)
// TENSOR:        %[[X:.+]] = arith.extf
// TENSOR:        %[[S:.+]] = arith.divf %[[X]], %[[QD]] : f32
// TENSOR-DAG:    %[[HI:.+]] = arith.constant 4.480000e+02 : f32
// TENSOR-DAG:    %[[LO:.+]] = arith.constant -4.480000e+02 : f32
// TENSOR:        %[[C1:.+]] = arith.maximumf %[[S]], %[[LO]] : f32
// TENSOR:        %[[C2:.+]] = arith.minimumf %[[C1]], %[[HI]] : f32
// TENSOR:        arith.truncf %[[C2]] : f32 to f8E4M3FN
// TENSOR:      %[[K8:.+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x12x4xf8E4M3FN>)
// TENSOR:      %[[V8:.+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x12x4xf8E4M3FN>)
// TENSOR:      %{{.*}}, %{{.*}} = fa.attention %[[Q8]], %[[K8]], %[[V8]] descale(%[[QD]], %{{.*}}, %{{.*}}) {causal}
// TENSOR-SAME:   -> (tensor<1x2x10x4xf16>, tensor<1x2x10xf32>)

// HEAD-LABEL: func.func @causal_gqa_lse
// HEAD:       %[[QROWS:.+]] = linalg.generic {{.*}} ins(%arg0 : tensor<1x2x10x4xf16>) outs(%{{.*}} : tensor<1x2x10xf32>)
// HEAD:       %[[QAMAX:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[QROWS]] : tensor<1x2x10xf32>) outs(%{{.*}} : tensor<1x2xf32>)
// HEAD:       %[[QD:.+]] = linalg.generic {{.*}} ins(%[[QAMAX]] : tensor<1x2xf32>)
// HEAD:         arith.maximumf
// HEAD:         arith.divf
// HEAD:       %[[Q8:.+]] = linalg.generic {indexing_maps = [#{{.*}}, #[[BH:.+]], #{{.*}}], {{.*}} ins(%arg0, %[[QD]] : tensor<1x2x10x4xf16>, tensor<1x2xf32>)
// HEAD:       fa.attention %[[Q8]], %{{.*}}, %{{.*}} descale(%[[QD]], %{{.*}}, %{{.*}} : tensor<1x2xf32>, tensor<1x1xf32>, tensor<1x1xf32>) {causal}

// BLOCK-DAG:  #[[$QBLK:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 4)>
// BLOCK-DAG:  #[[$KBLK:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 8)>
// BLOCK-LABEL: func.func @causal_gqa_lse
// Row maxima padded with zeros from 10 to 12 rows, 3 blocks of 4.
// BLOCK:      %[[QROWS:.+]] = linalg.generic {{.*}} ins(%arg0 : tensor<1x2x10x4xf16>) outs(%{{.*}} : tensor<1x2x10xf32>)
// BLOCK:      %[[PAD:.+]] = tensor.pad %[[QROWS]] low[0, 0, 0] high[0, 0, 2]
// BLOCK:      } : tensor<1x2x10xf32> to tensor<1x2x12xf32>
// BLOCK:      %[[EXP:.+]] = tensor.expand_shape %[[PAD]] {{\[}}[0], [1], [2, 3]] output_shape [1, 2, 3, 4] : tensor<1x2x12xf32> into tensor<1x2x3x4xf32>
// BLOCK:      %[[QAMAX:.+]] = linalg.generic {{.*}} ins(%[[EXP]] : tensor<1x2x3x4xf32>) outs(%{{.*}} : tensor<1x2x3xf32>)
// BLOCK:      %[[QD:.+]] = linalg.generic {{.*}} ins(%[[QAMAX]] : tensor<1x2x3xf32>)
// BLOCK:      %[[Q8:.+]] = linalg.generic {indexing_maps = [#{{.*}}, #[[$QBLK]], #{{.*}}], {{.*}} ins(%arg0, %[[QD]] : tensor<1x2x10x4xf16>, tensor<1x2x3xf32>)
// K: 12 rows, 2 blocks of 8 (padded to 16).
// BLOCK:      tensor.pad %{{.*}} low[0, 0, 0] high[0, 0, 4]
// BLOCK:      %[[K8:.+]] = linalg.generic {indexing_maps = [#{{.*}}, #[[$KBLK]], #{{.*}}], {{.*}} tensor<1x1x2xf32>)
// BLOCK:      %[[V8:.+]] = linalg.generic {indexing_maps = [#{{.*}}, #[[$KBLK]], #{{.*}}], {{.*}} tensor<1x1x2xf32>)
// BLOCK:      fa.attention %[[Q8]], %[[K8]], %[[V8]] descale(%[[QD]], %{{.*}}, %{{.*}} : tensor<1x2x3xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>) {causal, descale_block = array<i64: 4, 8>}

// Incoherent: Q and K times diag(signs) / sqrt(D) (the same constant for both:
// seed 1 gives - - - +), then log2(4) = 2 butterfly stages; V untouched.
// INC-LABEL: func.func @causal_gqa_lse
// INC:       %[[SQ:.+]] = arith.constant dense<[-5.000000e-01, -5.000000e-01, -5.000000e-01, 5.000000e-01]> : tensor<4xf32>
// INC:       %[[Q0:.+]] = linalg.generic {{.*}} ins(%arg0, %[[SQ]] : tensor<1x2x10x4xf16>, tensor<4xf32>) outs(%{{.*}} : tensor<1x2x10x4xf32>)
// INC:       %[[E1:.+]] = tensor.expand_shape %[[Q0]] {{\[}}[0], [1], [2], [3, 4, 5]] output_shape [1, 2, 10, 2, 2, 1]
// INC:       %[[A1:.+]] = tensor.extract_slice %[[E1]][0, 0, 0, 0, 0, 0] [1, 2, 10, 2, 1, 1]
// INC:       %[[B1:.+]] = tensor.extract_slice %[[E1]][0, 0, 0, 0, 1, 0] [1, 2, 10, 2, 1, 1]
// INC:       %[[S1:.+]] = linalg.generic {{.*}} ins(%[[A1]], %[[B1]] :
// INC:         %[[T:.+]] = linalg.index 4 : index
// INC:         %[[FIRST:.+]] = arith.cmpi eq, %[[T]], %{{.*}} : index
// INC:         %[[SUM:.+]] = arith.addf %{{.*}}, %{{.*}} : f32
// INC:         %[[DIFF:.+]] = arith.subf %{{.*}}, %{{.*}} : f32
// INC:         arith.select %[[FIRST]], %[[SUM]], %[[DIFF]] : f32
// INC:       %[[C1:.+]] = tensor.collapse_shape %[[S1]]
// INC:       %[[E2:.+]] = tensor.expand_shape %[[C1]] {{\[}}[0], [1], [2], [3, 4, 5]] output_shape [1, 2, 10, 1, 2, 2]
// INC:       %[[QT:.+]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2], [3, 4, 5]] : tensor<1x2x10x1x2x2xf32> into tensor<1x2x10x4xf32>
// INC:       %[[SK:.+]] = arith.constant dense<[-5.000000e-01, -5.000000e-01, -5.000000e-01, 5.000000e-01]> : tensor<4xf32>
// INC:       linalg.generic {{.*}} ins(%arg1, %[[SK]] : tensor<1x1x12x4xf16>, tensor<4xf32>)
// INC:       %[[KT:.+]] = tensor.collapse_shape %{{.*}} : tensor<1x1x12x1x2x2xf32> into tensor<1x1x12x4xf32>
// INC:       %[[Q8:.+]] = linalg.generic {{.*}} ins(%[[QT]] : tensor<1x2x10x4xf32>) outs(%{{.*}} : tensor<1x2x10x4xf8E4M3FN>)
// INC:       %[[K8:.+]] = linalg.generic {{.*}} ins(%[[KT]] : tensor<1x1x12x4xf32>) outs(%{{.*}} : tensor<1x1x12x4xf8E4M3FN>)
// INC:       %[[V8:.+]] = linalg.generic {{.*}} ins(%arg2 : tensor<1x1x12x4xf16>) outs(%{{.*}} : tensor<1x1x12x4xf8E4M3FN>)
// INC:       fa.attention %[[Q8]], %[[K8]], %[[V8]] descale(

// CPU-LABEL: llvm.func @causal_gqa_lse
// CPU-NOT: fa.
// CPU-NOT: f8E4M3FN
func.func @causal_gqa_lse(%q: tensor<1x2x10x4xf16>, %k: tensor<1x1x12x4xf16>, %v: tensor<1x1x12x4xf16>)
    -> (tensor<1x2x10x4xf16>, tensor<1x2x10xf32>) {
  %o, %l = fa.attention %q, %k, %v {causal} : tensor<1x2x10x4xf16>, tensor<1x1x12x4xf16>, tensor<1x1x12x4xf16>
      -> (tensor<1x2x10x4xf16>, tensor<1x2x10xf32>)
  return %o, %l : tensor<1x2x10x4xf16>, tensor<1x2x10xf32>
}

// -----

// Dynamic B and N: the padding and the block count are computed at run time;
// scale, mask and attributes are kept; f32 inputs need no extf.
// TENSOR-LABEL: func.func @dynamic_masked
// TENSOR:       fa.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%arg3 : tensor<1x1x?x?xi1>) descale(%{{.*}}, %{{.*}}, %{{.*}}) {scale = 5.000000e-01 : f32}
// TENSOR-SAME:    : tensor<?x2x?x4xf8E4M3FN>, tensor<?x1x?x4xf8E4M3FN>, tensor<?x1x?x8xf8E4M3FN> -> tensor<?x2x?x8xbf16>
// HEAD-LABEL: func.func @dynamic_masked
// HEAD:       descale(%{{.*}}, %{{.*}}, %{{.*}} : tensor<?x2xf32>, tensor<?x1xf32>, tensor<?x1xf32>)
// BLOCK-LABEL: func.func @dynamic_masked
// BLOCK:      %[[N:.+]] = tensor.dim %{{.*}}, %c2{{.*}} : tensor<?x2x?xf32>
// BLOCK:      %[[NB:.+]] = arith.ceildivsi %[[N]], %{{.*}} : index
// BLOCK:      %[[PADDED:.+]] = arith.muli %[[NB]], %{{.*}} : index
// BLOCK:      %[[HIGH:.+]] = arith.subi %[[PADDED]], %[[N]] : index
// BLOCK:      tensor.pad %{{.*}} low[0, 0, 0] high[0, 0, %[[HIGH]]]
// BLOCK:      descale(%{{.*}}, %{{.*}}, %{{.*}} : tensor<?x2x?xf32>, tensor<?x1x?xf32>, tensor<?x1x?xf32>) {descale_block = array<i64: 4, 8>, scale = 5.000000e-01 : f32}
// INC-LABEL: func.func @dynamic_masked
// INC:       tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2], [3, 4, 5]] output_shape [%{{.*}}, 2, %{{.*}}, 2, 2, 1] : tensor<?x2x?x4xf32> into tensor<?x2x?x2x2x1xf32>
// CPU-LABEL: llvm.func @dynamic_masked
func.func @dynamic_masked(%q: tensor<?x2x?x4xf32>, %k: tensor<?x1x?x4xf32>, %v: tensor<?x1x?x8xf32>,
                          %m: tensor<1x1x?x?xi1>) -> tensor<?x2x?x8xbf16> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<1x1x?x?xi1>) {scale = 0.5 : f32}
      : tensor<?x2x?x4xf32>, tensor<?x1x?x4xf32>, tensor<?x1x?x8xf32> -> tensor<?x2x?x8xbf16>
  return %o : tensor<?x2x?x8xbf16>
}
