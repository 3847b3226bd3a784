// RUN: rm -rf %t && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=%t/sm80})' -o /dev/null
// RUN: FileCheck %s --check-prefix=SM80 --match-full-lines --strict-whitespace < %t/sm80/win_bf16_d64_kernel.json
// RUN: fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t/sm90})' -o /dev/null
// RUN: FileCheck %s --check-prefix=SM90 < %t/sm90/causal_f16_d128_lse_kernel.json

// The launch manifest (LaunchManifest::toJSON, schema_version 1; docs/Manifest.md)
// as fa-dump-kernel writes it: keys sorted; the grid, the tensor shapes and the
// tensor-map dims/strides as typed expressions ({"ceil_div": [...]}, {"mul": [...]},
// {"min": [...]}, size names); the pointer parameters with the tensor each
// points to (dtype, shape, alignment); the chip's schedule keys at the top level.

// The whole sm_80 manifest: bf16, D = 64, window [100, 0], no lse
// (128 x 64 tiles, 4 warps of 32 rows, 36864 bytes of static shared memory).
// SM80:{
// SM80-NEXT:  "block": [
// SM80-NEXT:    128,
// SM80-NEXT:    1,
// SM80-NEXT:    1
// SM80-NEXT:  ],
// SM80-NEXT:  "block_kv": 64,
// SM80-NEXT:  "block_q": 128,
// SM80-NEXT:  "causal": false,
// SM80-NEXT:  "chip": "sm_80",
// SM80-NEXT:  "dtype": "bf16",
// SM80-NEXT:  "dynamic_shared_memory_bytes": 0,
// SM80-NEXT:  "function": "win_bf16_d64",
// SM80-NEXT:  "grid": [
// SM80-NEXT:    {
// SM80-NEXT:      "ceil_div": [
// SM80-NEXT:        "Nq",
// SM80-NEXT:        128
// SM80-NEXT:      ]
// SM80-NEXT:    },
// SM80-NEXT:    "Hq",
// SM80-NEXT:    "B"
// SM80-NEXT:  ],
// SM80-NEXT:  "head_dim": 64,
// SM80-NEXT:  "kernel": "win_bf16_d64_kernel",
// SM80-NEXT:  "lse": false,
// SM80-NEXT:  "params": [
// SM80-NEXT:    {
// SM80-NEXT:      "align_bytes": 16,
// SM80-NEXT:      "dtype": "bf16",
// SM80-NEXT:      "meaning": "query [B, Hq, Nq, D], contiguous, bf16",
// SM80-NEXT:      "name": "q",
// SM80-NEXT:      "shape": [
// SM80-NEXT:        "B",
// SM80-NEXT:        "Hq",
// SM80-NEXT:        "Nq",
// SM80-NEXT:        "D"
// SM80-NEXT:      ],
// SM80-NEXT:      "tensor": "q",
// SM80-NEXT:      "type": "ptr"
// SM80-NEXT:    },
// SM80-NEXT:    {
// SM80-NEXT:      "align_bytes": 16,
// SM80-NEXT:      "dtype": "bf16",
// SM80-NEXT:      "meaning": "key [B, Hkv, Nk, D], contiguous, bf16",
// SM80-NEXT:      "name": "k",
// SM80-NEXT:      "shape": [
// SM80-NEXT:        "B",
// SM80-NEXT:        "Hkv",
// SM80-NEXT:        "Nk",
// SM80-NEXT:        "D"
// SM80-NEXT:      ],
// SM80-NEXT:      "tensor": "k",
// SM80-NEXT:      "type": "ptr"
// SM80-NEXT:    },
// SM80-NEXT:    {
// SM80-NEXT:      "align_bytes": 16,
// SM80-NEXT:      "dtype": "bf16",
// SM80-NEXT:      "meaning": "value [B, Hkv, Nk, D], contiguous, bf16",
// SM80-NEXT:      "name": "v",
// SM80-NEXT:      "shape": [
// SM80-NEXT:        "B",
// SM80-NEXT:        "Hkv",
// SM80-NEXT:        "Nk",
// SM80-NEXT:        "D"
// SM80-NEXT:      ],
// SM80-NEXT:      "tensor": "v",
// SM80-NEXT:      "type": "ptr"
// SM80-NEXT:    },
// SM80-NEXT:    {
// SM80-NEXT:      "align_bytes": 16,
// SM80-NEXT:      "dtype": "bf16",
// SM80-NEXT:      "meaning": "output [B, Hq, Nq, D], contiguous, bf16",
// SM80-NEXT:      "name": "out",
// SM80-NEXT:      "shape": [
// SM80-NEXT:        "B",
// SM80-NEXT:        "Hq",
// SM80-NEXT:        "Nq",
// SM80-NEXT:        "D"
// SM80-NEXT:      ],
// SM80-NEXT:      "tensor": "out",
// SM80-NEXT:      "type": "ptr"
// SM80-NEXT:    },
// SM80-NEXT:    {
// SM80-NEXT:      "meaning": "batch",
// SM80-NEXT:      "name": "B",
// SM80-NEXT:      "type": "i32"
// SM80-NEXT:    },
// SM80-NEXT:    {
// SM80-NEXT:      "meaning": "query heads",
// SM80-NEXT:      "name": "Hq",
// SM80-NEXT:      "type": "i32"
// SM80-NEXT:    },
// SM80-NEXT:    {
// SM80-NEXT:      "meaning": "key/value heads (divides Hq)",
// SM80-NEXT:      "name": "Hkv",
// SM80-NEXT:      "type": "i32"
// SM80-NEXT:    },
// SM80-NEXT:    {
// SM80-NEXT:      "meaning": "query length",
// SM80-NEXT:      "name": "Nq",
// SM80-NEXT:      "type": "i32"
// SM80-NEXT:    },
// SM80-NEXT:    {
// SM80-NEXT:      "meaning": "key/value length",
// SM80-NEXT:      "name": "Nk",
// SM80-NEXT:      "type": "i32"
// SM80-NEXT:    }
// SM80-NEXT:  ],
// SM80-NEXT:  "ptx": "win_bf16_d64_kernel.ptx",
// SM80-NEXT:  "rescale_threshold": 8,
// SM80-NEXT:  "rows_per_warp": 32,
// SM80-NEXT:  "scale": 0.125,
// SM80-NEXT:  "schema_version": 1,
// SM80-NEXT:  "static_shared_memory_bytes": 36864,
// SM80-NEXT:  "tensor_maps": [],
// SM80-NEXT:  "window": [
// SM80-NEXT:    100,
// SM80-NEXT:    0
// SM80-NEXT:  ]
// SM80-NEXT:}

// sm_90a, causal f16 D = 128 with lse: tensor-map parameters and their maps,
// with the cuda.h enum values (cuda_enums; Common/CudaEnums.h).
// SM90: "block": [
// SM90-NEXT: 384,
// SM90: "params": [
// SM90: "align_bytes": 16,
// SM90-NEXT: "dtype": "f16",
// SM90-NEXT: "meaning": "pointer to the CUtensorMap of q (device memory, 64-byte aligned)",
// SM90-NEXT: "name": "q_map",
// SM90-NEXT: "shape": [
// SM90-NEXT: "B",
// SM90-NEXT: "Hq",
// SM90-NEXT: "Nq",
// SM90-NEXT: "D"
// SM90-NEXT: ],
// SM90-NEXT: "tensor": "q",
// SM90-NEXT: "type": "tensormap"
// SM90-NEXT: },
// SM90: "align_bytes": 4,
// SM90-NEXT: "dtype": "f32",
// SM90-NEXT: "meaning": "log-sum-exp [B, Hq, Nq], contiguous, f32 (ln)",
// SM90-NEXT: "name": "lse",
// SM90-NEXT: "shape": [
// SM90-NEXT: "B",
// SM90-NEXT: "Hq",
// SM90-NEXT: "Nq"
// SM90-NEXT: ],
// SM90-NEXT: "tensor": "lse",
// SM90-NEXT: "type": "ptr"
// SM90: "schema_version": 1,
// SM90: "stages": 3,
// SM90: "tensor_maps": [
// SM90-NEXT: {
// SM90-NEXT: "box": [
// SM90-NEXT: 64,
// SM90-NEXT: 64,
// SM90-NEXT: 1
// SM90-NEXT: ],
// SM90-NEXT: "cuda_enums": {
// SM90-NEXT: "interleave": 0,
// SM90-NEXT: "l2Promotion": 2,
// SM90-NEXT: "oobFill": 0,
// SM90-NEXT: "swizzle": 3,
// SM90-NEXT: "tensorDataType": 6
// SM90-NEXT: },
// SM90-NEXT: "dims": [
// SM90-NEXT: "D",
// SM90-NEXT: "Nq",
// SM90-NEXT: {
// SM90-NEXT: "mul": [
// SM90-NEXT: "B",
// SM90-NEXT: "Hq"
// SM90-NEXT: ]
// SM90-NEXT: }
// SM90-NEXT: ],
// SM90-NEXT: "dtype": "f16",
// SM90-NEXT: "element_strides": [
// SM90-NEXT: 1,
// SM90-NEXT: 1,
// SM90-NEXT: 1
// SM90-NEXT: ],
// SM90-NEXT: "interleave": "none",
// SM90-NEXT: "l2_promotion": "128B",
// SM90-NEXT: "oob_fill": "zero",
// SM90-NEXT: "param": "q_map",
// SM90-NEXT: "rank": 3,
// SM90-NEXT: "strides_bytes": [
// SM90-NEXT: {
// SM90-NEXT: "mul": [
// SM90-NEXT: "D",
// SM90-NEXT: 2
// SM90-NEXT: ]
// SM90-NEXT: },
// SM90-NEXT: {
// SM90-NEXT: "mul": [
// SM90-NEXT: "Nq",
// SM90-NEXT: "D",
// SM90-NEXT: 2
// SM90-NEXT: ]
// SM90-NEXT: }
// SM90-NEXT: ],
// SM90-NEXT: "swizzle": "128B",
// SM90-NEXT: "tensor": "q [B, Hq, Nq, D] contiguous"
// SM90-NEXT: },
// SM90: "param": "k_map",
// SM90: "param": "v_map",
// SM90: "warp_specialized": true,

func.func @win_bf16_d64(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = fa.attention %q, %k, %v {window = array<i64: 100, 0>} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

func.func @causal_f16_d128_lse(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>) {
  %o, %l = fa.attention %q, %k, %v {causal} : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>)
  return %o, %l : tensor<?x?x?x128xf16>, tensor<?x?x?xf32>
}
