// arith.extf from f8E4M3FN on the CPU (expanded on the bits by fa-to-cpu):
// zero, subnormals (m/8 * 2^-6), the smallest normal, 1, 1.125, the largest
// finite (448), and negatives. @conv keeps the extf from being constant-folded.
// RUN: fa-opt %s --fa-to-cpu | %mlir_runner | FileCheck %s
// CHECK: data =
// CHECK-NEXT: [0,  0.00195312,  0.0136719,  0.015625,  1,  1.125,  448,  -0,  -0.00195312,  -0.0078125,  -448]
func.func private @printMemrefF32(memref<*xf32>)
func.func @conv(%x: tensor<11xf8E4M3FN>) -> tensor<11xf32> {
  %f = arith.extf %x : tensor<11xf8E4M3FN> to tensor<11xf32>
  return %f : tensor<11xf32>
}
func.func @main() {
  %c = arith.constant dense<[0.0, 0.001953125, 0.013671875, 0.015625, 1.0, 1.125, 448.0, -0.0, -0.001953125, -0.0078125, -448.0]> : tensor<11xf8E4M3FN>
  %f = call @conv(%c) : (tensor<11xf8E4M3FN>) -> tensor<11xf32>
  %m = bufferization.to_buffer %f : tensor<11xf32> to memref<11xf32>
  %u = memref.cast %m : memref<11xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
