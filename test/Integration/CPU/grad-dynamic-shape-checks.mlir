// fa.attention_grad's rules that the verifier cannot check on dynamic dims
// stop the program with a message instead of reading out of bounds: a dO
// with 3 rows for a query of 4, and (the second entry) Hq = 6 query heads
// over Hkv = 4 K/V heads. Both CPU lowerings; the failed cf.assert prints
// with puts and aborts: stdbuf -o0 keeps the message.
// RUN: fa-opt %s --fa-to-cpu | not --crash stdbuf -o0 %mlir_runner 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: fa-opt %s --fa-to-cpu=reference=1 | not --crash stdbuf -o0 %mlir_runner 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: sed -e 's/@main(/@main_rows(/' -e 's/@main_heads(/@main(/' %s | fa-opt --fa-to-cpu | not --crash stdbuf -o0 %mlir_runner 2>&1 | FileCheck %s --check-prefix=HEADS
// RUN: sed -e 's/@main(/@main_rows(/' -e 's/@main_heads(/@main(/' %s | fa-opt --fa-to-cpu=reference=1 | not --crash stdbuf -o0 %mlir_runner 2>&1 | FileCheck %s --check-prefix=HEADS
// The same shapes when they agree run through (the check is no false alarm).
// RUN: sed -e 's/@main(/@main_rows(/' -e 's/@main_ok(/@main(/' %s | fa-opt --fa-to-cpu | stdbuf -o0 %mlir_runner 2>&1 | FileCheck %s --check-prefix=OK

// ROWS: fa.attention_grad: do dim 2 differs from the query's
// HEADS: fa.attention_grad: query head count must be a multiple of the key/value head count
// OK: ran

!t = tensor<?x?x?x8xf32>
func.func @grad(%q: !t, %k: !t, %v: !t, %o: !t, %lse: tensor<?x?x?xf32>, %do: !t)
    -> (!t, !t, !t) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {causal}
      : !t, !t, !t, !t, tensor<?x?x?xf32>, !t -> !t, !t, !t
  return %dq, %dk, %dv : !t, !t, !t
}

func.func @run(%q: tensor<1x?x4x8xf32>, %kv: tensor<1x?x4x8xf32>,
               %lse: tensor<1x?x4xf32>, %do: tensor<1x?x?x8xf32>) {
  %qd = tensor.cast %q : tensor<1x?x4x8xf32> to !t
  %kvd = tensor.cast %kv : tensor<1x?x4x8xf32> to !t
  %lsed = tensor.cast %lse : tensor<1x?x4xf32> to tensor<?x?x?xf32>
  %dod = tensor.cast %do : tensor<1x?x?x8xf32> to !t
  %r:3 = func.call @grad(%qd, %kvd, %kvd, %qd, %lsed, %dod)
      : (!t, !t, !t, !t, tensor<?x?x?xf32>, !t) -> (!t, !t, !t)
  return
}

func.func @main() {
  %q = arith.constant dense<1.0> : tensor<1x2x4x8xf32>
  %lse = arith.constant dense<0.0> : tensor<1x2x4xf32>
  %do = arith.constant dense<0.5> : tensor<1x2x3x8xf32>
  %qd = tensor.cast %q : tensor<1x2x4x8xf32> to tensor<1x?x4x8xf32>
  %lsed = tensor.cast %lse : tensor<1x2x4xf32> to tensor<1x?x4xf32>
  %dod = tensor.cast %do : tensor<1x2x3x8xf32> to tensor<1x?x?x8xf32>
  func.call @run(%qd, %qd, %lsed, %dod)
      : (tensor<1x?x4x8xf32>, tensor<1x?x4x8xf32>, tensor<1x?x4xf32>, tensor<1x?x?x8xf32>) -> ()
  return
}

func.func @main_heads() {
  %q = arith.constant dense<1.0> : tensor<1x6x4x8xf32>
  %kv = arith.constant dense<0.5> : tensor<1x4x4x8xf32>
  %lse = arith.constant dense<0.0> : tensor<1x6x4xf32>
  %qd = tensor.cast %q : tensor<1x6x4x8xf32> to tensor<1x?x4x8xf32>
  %kvd = tensor.cast %kv : tensor<1x4x4x8xf32> to tensor<1x?x4x8xf32>
  %lsed = tensor.cast %lse : tensor<1x6x4xf32> to tensor<1x?x4xf32>
  %dod = tensor.cast %q : tensor<1x6x4x8xf32> to tensor<1x?x?x8xf32>
  func.call @run(%qd, %kvd, %lsed, %dod)
      : (tensor<1x?x4x8xf32>, tensor<1x?x4x8xf32>, tensor<1x?x4xf32>, tensor<1x?x?x8xf32>) -> ()
  return
}

func.func @main_ok() {
  %q = arith.constant dense<1.0> : tensor<1x6x4x8xf32>
  %kv = arith.constant dense<0.5> : tensor<1x2x4x8xf32>
  %lse = arith.constant dense<0.0> : tensor<1x6x4xf32>
  %qd = tensor.cast %q : tensor<1x6x4x8xf32> to tensor<1x?x4x8xf32>
  %kvd = tensor.cast %kv : tensor<1x2x4x8xf32> to tensor<1x?x4x8xf32>
  %lsed = tensor.cast %lse : tensor<1x6x4xf32> to tensor<1x?x4xf32>
  %dod = tensor.cast %q : tensor<1x6x4x8xf32> to tensor<1x?x?x8xf32>
  func.call @run(%qd, %kvd, %lsed, %dod)
      : (tensor<1x?x4x8xf32>, tensor<1x?x4x8xf32>, tensor<1x?x4xf32>, tensor<1x?x?x8xf32>) -> ()
  vector.print str "ran\n"
  return
}
