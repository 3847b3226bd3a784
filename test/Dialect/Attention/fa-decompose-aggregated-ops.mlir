// RUN: fa-opt %s --split-input-file --fa-decompose-aggregated-ops | FileCheck %s

// linalg.softmax: replaced by upstream's decomposition (max, exp(x - max), sum,
// divide), which convert-linalg-to-loops lowers; other ops are left as they are.
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME: %[[X:.+]]: tensor<4x8xf32>
// CHECK-NOT: linalg.softmax
// CHECK: %[[MAX:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<4x8xf32>)
// CHECK: arith.maxnumf
// CHECK: %[[EXP:.+]] = linalg.generic {{.*}} ins(%[[X]], %[[MAX]] : tensor<4x8xf32>, tensor<4xf32>)
// CHECK: math.exp
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[EXP]] : tensor<4x8xf32>)
// CHECK: arith.addf
// CHECK: %[[P:.+]] = linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] : tensor<4x8xf32>, tensor<4xf32>)
// CHECK: arith.divf
// CHECK: %[[Y:.+]] = linalg.map { math.absf } ins(%[[P]]
// CHECK: return %[[Y]]
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.map { math.absf } ins(%p : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>)
  return %y : tensor<4x8xf32>
}

// -----

// Dynamic sizes and another dim.
// CHECK-LABEL: func.func @softmax_dynamic(
// CHECK-NOT: linalg.softmax
// CHECK: tensor.dim
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK-NOT: linalg.softmax
func.func @softmax_dynamic(%x: tensor<?x?xf16>) -> tensor<?x?xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf16>
  %m = tensor.dim %x, %c1 : tensor<?x?xf16>
  %e = tensor.empty(%n, %m) : tensor<?x?xf16>
  %p = linalg.softmax dimension(0) ins(%x : tensor<?x?xf16>) outs(%e : tensor<?x?xf16>) -> tensor<?x?xf16>
  return %p : tensor<?x?xf16>
}
