// REQUIRES: ptxas
// Packed variable-length sequences (varlen) with softcap, a score_mod reading
// a captured slope table and a mask_mod reading captured document ids, on
// sm_90a, forward and backward: the regions see the sequence as the batch and
// positions within it (the modifiers get the sequence's lengths), and the
// captured tensors keep their own shapes in the manifest (only the packed
// tensors are token-major). bench/check_varlen_modifiers.py checks the
// numbers on a GPU.
// RUN: rm -rf %t && fa-opt %S/../../bench/kernels_varlen_modifiers.mlir '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=FWD < %t/vmod_fwd_kernel.json
// RUN: FileCheck %s --check-prefix=BWD < %t/vmod_bwd_kernel.json
// RUN: %ptxas -arch=sm_90a %t/vmod_fwd_kernel.ptx -o %t/fwd.cubin
// RUN: %ptxas -arch=sm_90a %t/vmod_bwd_kernel.ptx -o %t/bwd.cubin

// FWD: "name": "q_map",
// FWD-NEXT: "shape": [
// FWD-NEXT: "Nq",
// FWD-NEXT: "Hq",
// FWD: "name": "arg5",
// FWD-NEXT: "shape": [
// FWD-NEXT: 8
// FWD-NEXT: ],
// FWD: "name": "arg6",
// FWD-NEXT: "shape": [
// FWD-NEXT: 4096
// FWD-NEXT: ],
// FWD: "name": "cu_seqlens_q",
// FWD: "varlen": true,
// FWD: "varlen_layout": "thd"

// BWD: "op": "attention_grad"
// BWD: "name": "arg8",
// BWD-NEXT: "shape": [
// BWD-NEXT: 8
// BWD-NEXT: ],
// BWD: "name": "arg9",
// BWD-NEXT: "shape": [
// BWD-NEXT: 4096
// BWD-NEXT: ],
// BWD: "name": "cu_seqlens_q",
