// Every sm_90a schedule switch of SM90/Schedule.def is an fa-to-ptx option
// and reaches the kernel (the manifest records each); the pipeline hands them
// to convert-fa-to-nvgpu, whose printed options show them.
// RUN: rm -rf %t && fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a stages=2 warp-arrive=false fast-softmax=false rescale-before-pv=true ping-pong=false longest-first=false split-release=true persistent=true exp2-poly-every=3 rescale-threshold=4 block-kv=64},fa-dump-kernel{dir=%t/a})' -o /dev/null
// RUN: FileCheck %s --check-prefix=A < %t/a/attn_kernel.json
// RUN: fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a warp-specialize=false overlap=false p-from-registers=false stages=1},fa-dump-kernel{dir=%t/b})' -o /dev/null
// RUN: FileCheck %s --check-prefix=B < %t/b/attn_kernel.json
// RUN: fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a persistent=true longest-first=true})' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=DUMP

// A: "block_kv": 64,
// A: "exp2_poly_every": 3,
// A: "fast_softmax": false,
// A: "longest_first": false,
// A: "overlap": true,
// A: "p_from_registers": true,
// A: "persistent": true,
// A: "ping_pong": false,
// A: "q_buffers": 2,
// A: "rescale_before_pv": true,
// A: "rescale_threshold": 4,
// A: "split_kv": false,
// A: "split_release": true,
// A: "stages": 2,
// A: "warp_arrive": false,
// A: "warp_specialized": true,

// B: "block_kv": 128,
// B: "overlap": false,
// B: "p_from_registers": false,
// B: "persistent": false,
// B: "q_buffers": 1,
// B: "stages": 1,
// B: "warp_specialized": false,

// DUMP: fa-tile-attention-for-chip{block-kv=0 block-q=0 chip=sm_90a}
// DUMP-NEXT: convert-fa-to-nvgpu{chip=sm_90a deterministic=false dynamic-tiles=auto exp2-poly-every=0 fast-softmax=true host-launch=false longest-first=true overlap=auto p-from-registers=true persistent=true ping-pong=auto producer-registers=0 q-buffers=0 rescale-before-pv=auto rescale-threshold=0 rows-per-warp=0 split-kv=false split-release=auto stages=0 transpose-v=false varlen-layout=thd warp-arrive=true warp-specialize=true}
func.func @attn(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
