// RUN: fa-opt %s -split-input-file --fa-tile-attention="block-q=128 block-kv=64" --convert-fa-to-nvgpu -verify-diagnostics

// The diagnostics name what the kernel cannot take from the tiled form.

func.func @d32(%q: tensor<1x1x64x32xf16>, %k: tensor<1x1x64x32xf16>, %v: tensor<1x1x64x32xf16>) -> tensor<1x1x64x32xf16> {
  // expected-error @+1 {{sm_80 kernel supports head dim 64 or 128, got 32}}
  %o = fa.attention %q, %k, %v : tensor<1x1x64x32xf16>, tensor<1x1x64x32xf16>, tensor<1x1x64x32xf16> -> tensor<1x1x64x32xf16>
  return %o : tensor<1x1x64x32xf16>
}

// -----

func.func @f32(%q: tensor<1x1x64x64xf32>, %k: tensor<1x1x64x64xf32>, %v: tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32> {
  // expected-error @+1 {{sm_80 kernel needs f16 or bf16 inputs, got 'f32'}}
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32> -> tensor<1x1x64x64xf32>
  return %o : tensor<1x1x64x64xf32>
}

// -----

func.func @f32out(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf32> {
  // expected-error @+1 {{the kernel needs query, key, value and out of one element type: mixed precision ('f16' in, 'f32' out) is not supported on the GPU; produce 'f16' and convert after the attention (arith.extf)}}
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf32>
  return %o : tensor<1x1x64x64xf32>
}

// -----

func.func @dv(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x128xf16>) -> tensor<1x1x64x128xf16> {
  // expected-error @+1 {{the kernel needs the value head dim (128) equal to the query head dim (64)}}
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x128xf16> -> tensor<1x1x64x128xf16>
  return %o : tensor<1x1x64x128xf16>
}

// -----

// Modifier regions the kernels cannot evaluate (fa-to-ptx-modifiers-ptxas.mlir
// has the ones they can).
func.func @scalar_capture(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>, %bias: f32) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{a modifier region may read function arguments only as tensors through tensor.extract / tensor.dim on the GPU}}
  %o = fa.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = arith.addf %s, %bias : f32
    fa.yield %t : f32
  } : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

func.func @dynamic_capture(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>, %doc: tensor<?xi32>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{a tensor a modifier region reads needs a static shape on the GPU, got 'tensor<?xi32>'}}
  %o = fa.attention %q, %k, %v mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %doc[%i] : tensor<?xi32>
    %dj = tensor.extract %doc[%j] : tensor<?xi32>
    %c = arith.cmpi eq, %di, %dj : i32
    fa.yield %c : i1
  } : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

func.func @nested_region(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{the kernel cannot evaluate 'scf.if' (an op with regions) in a modifier region}}
  %o = fa.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.cmpi eq, %i, %j : index
    %t = scf.if %c -> f32 {
      scf.yield %s : f32
    } else {
      %z = arith.constant 0.0 : f32
      scf.yield %z : f32
    }
    fa.yield %t : f32
  } : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

// expected-error @+1 {{convert-fa-to-nvgpu expects exactly one tiled attention (scf.forall with fa.online_attention) per func.func, found 2}}
func.func @two(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> (tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>) {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  %o2 = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o, %o2 : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>
}

// -----

// The output must be returned as is: the kernel writes it to its pointer.
func.func @used(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  %e = tensor.empty() : tensor<1x1x64x64xf16>
  // expected-error @+1 {{the function must return the scf.forall's results (out, then lse)}}
  return %e : tensor<1x1x64x64xf16>
}

// -----

// fp8 is an sm_90a kernel: sm_80 names what it needs.
func.func @descale(%q: tensor<1x4x128x128xf8E4M3FN>, %k: tensor<1x1x128x128xf8E4M3FN>, %v: tensor<1x1x128x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<1x4x128x128xbf16> {
  // expected-error @+1 {{sm_80 kernel needs f16 or bf16 inputs, got 'f8E4M3FN'}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd) {causal} : tensor<1x4x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN> -> tensor<1x4x128x128xbf16>
  return %o : tensor<1x4x128x128xbf16>
}

// -----

// The kernel reads the descales from memory: they must be the function's
// f32 arguments, not values computed from them.
func.func @descale_computed(%q: tensor<1x4x128x128xf8E4M3FN>, %k: tensor<1x1x128x128xf8E4M3FN>, %v: tensor<1x1x128x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<1x4x128x128xbf16> {
  %two = arith.constant 2.0 : f32
  %qd2 = arith.mulf %qd, %two : f32
  // expected-error @+1 {{the kernel needs the q descale to be an f32 function argument or an element of one (per tensor, head or block)}}
  %o = fa.attention %q, %k, %v descale(%qd2, %kd, %vd) {causal} : tensor<1x4x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN> -> tensor<1x4x128x128xbf16>
  return %o : tensor<1x4x128x128xbf16>
}

// -----

func.func @v_descale_computed(%q: tensor<1x4x128x128xf8E4M3FN>, %k: tensor<1x1x128x128xf8E4M3FN>, %v: tensor<1x1x128x128xf8E4M3FN>, %qd: f32, %kd: f32, %vd: f32) -> tensor<1x4x128x128xbf16> {
  %vd2 = arith.addf %vd, %vd : f32
  // expected-error @+1 {{the kernel needs the output multiplied by one v descale, an f32 function argument or an element of one}}
  %o = fa.attention %q, %k, %v descale(%qd, %kd, %vd2) {causal} : tensor<1x4x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN> -> tensor<1x4x128x128xbf16>
  return %o : tensor<1x4x128x128xbf16>
}

// -----

// A diagonal operand (a row tile of a larger attention): the kernel computes
// the bottom-right diagonal Nk - Nq itself.
func.func @diagonal(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x128x64xf16>, %v: tensor<1x1x128x64xf16>, %d: index) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{the kernel supports only the bottom-right diagonal Nk - Nq, not a diagonal operand}}
  %o = fa.attention %q, %k, %v diagonal(%d) {causal} : tensor<1x1x64x64xf16>, tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
