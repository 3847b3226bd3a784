// RUN: fa-opt %s --fa-expand-f8e4m3fn-truncf | FileCheck %s

// CHECK-LABEL: func.func @scalar
// CHECK-SAME:  (%[[X:.+]]: f32)
// CHECK-NOT:   arith.truncf
// CHECK-DAG:   %[[BITS:.+]] = arith.bitcast %[[X]] : f32 to i32
// CHECK-DAG:   %[[ABS:.+]] = arith.andi %[[BITS]], %{{.*}} : i32
// Saturation at 448 = 0x43E00000 = 1138753536.
// CHECK-DAG:   %[[SAT:.+]] = arith.minui %[[ABS]], %c1138753536_i32 : i32
// Normal: round the mantissa to 3 bits (+ 0x7FFFF + lsb), >> 20, - (120 << 3).
// CHECK-DAG:   arith.addi %{{.*}}, %c524287_i32 : i32
// CHECK-DAG:   arith.subi %{{.*}}, %c960_i32 : i32
// Subnormal: |x| * 2^9 rounded by the 2^23 magic number.
// CHECK-DAG:   arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK-DAG:   arith.cmpi ult, %[[SAT]], %c1015021568_i32 : i32
// NaN (above 0x7F800000) gives 0x7F.
// CHECK-DAG:   arith.cmpi ugt, %[[ABS]], %c2139095040_i32 : i32
// CHECK:       %[[CODE:.+]] = arith.trunci %{{.*}} : i32 to i8
// CHECK:       %[[R:.+]] = arith.bitcast %[[CODE]] : i8 to f8E4M3FN
// CHECK:       return %[[R]]
func.func @scalar(%x: f32) -> f8E4M3FN {
  %y = arith.truncf %x : f32 to f8E4M3FN
  return %y : f8E4M3FN
}

// f16 is extended first (exact); vectors are expanded elementwise.
// CHECK-LABEL: func.func @vector_f16
// CHECK:       arith.extf %{{.*}} : vector<4xf16> to vector<4xf32>
// CHECK:       arith.bitcast %{{.*}} : vector<4xi8> to vector<4xf8E4M3FN>
func.func @vector_f16(%x: vector<4xf16>) -> vector<4xf8E4M3FN> {
  %y = arith.truncf %x : vector<4xf16> to vector<4xf8E4M3FN>
  return %y : vector<4xf8E4M3FN>
}

// Other truncations are not touched.
// CHECK-LABEL: func.func @to_f16
// CHECK:       arith.truncf %{{.*}} : f32 to f16
func.func @to_f16(%x: f32) -> f16 {
  %y = arith.truncf %x : f32 to f16
  return %y : f16
}
