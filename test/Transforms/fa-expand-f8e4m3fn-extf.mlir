// RUN: fa-opt %s --fa-expand-f8e4m3fn-extf --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @scalar(
// CHECK-SAME: %[[X:.+]]: f8E4M3FN) -> f16
// CHECK-DAG: %[[C0x7F:.+]] = arith.constant 127 : i32
// CHECK-DAG: %[[C0x80:.+]] = arith.constant 128 : i32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 1.329228E+36 : f32
// CHECK: %[[I8:.+]] = arith.bitcast %[[X]] : f8E4M3FN to i8
// CHECK: %[[BITS:.+]] = arith.extui %[[I8]] : i8 to i32
// CHECK: %[[MAG:.+]] = arith.andi %[[BITS]], %[[C0x7F]] : i32
// CHECK: %[[SIGNBIT:.+]] = arith.andi %[[BITS]], %[[C0x80]] : i32
// CHECK: %[[F:.+]] = arith.bitcast %{{.+}} : i32 to f32
// CHECK: %[[V:.+]] = arith.mulf %[[F]], %[[SCALE]] : f32
// CHECK: %[[NAN:.+]] = arith.cmpi eq, %[[MAG]], %[[C0x7F]] : i32
// CHECK: %[[SEL:.+]] = arith.select %[[NAN]], %{{.+}}, %[[V]] : f32
// CHECK: %[[T:.+]] = arith.truncf %[[SEL]] : f32 to f16
// CHECK: return %[[T]]
// CHECK-NOT: arith.extf
func.func @scalar(%x: f8E4M3FN) -> f16 {
  %y = arith.extf %x : f8E4M3FN to f16
  return %y : f16
}

// -----

// Other extf are left alone.
// CHECK-LABEL: func.func @not_fp8(
// CHECK: arith.extf %{{.+}} : f16 to f32
func.func @not_fp8(%x: f16) -> f32 {
  %y = arith.extf %x : f16 to f32
  return %y : f32
}
