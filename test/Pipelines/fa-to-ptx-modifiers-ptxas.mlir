// REQUIRES: ptxas
// softcap and the mask operand in the sm_90a and sm_80 kernels (issue 16):
// applied to every score fragment (docs/Attention.md's order), the mask a
// kernel parameter with its broadcast shape in the manifest.
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=SOFTCAP < %t/softcap_kernel.ptx
// RUN: FileCheck %s --check-prefix=ADD < %t/additive_kernel.json
// RUN: FileCheck %s --check-prefix=BOOL < %t/boolean_kernel.json
// RUN: FileCheck %s --check-prefix=BOOLPTX < %t/boolean_kernel.ptx
// RUN: %ptxas -arch=sm_90a -v %t/softcap_kernel.ptx -o %t/softcap.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL --implicit-check-not=warning
// RUN: %ptxas -arch=sm_90a %t/additive_kernel.ptx -o %t/additive.cubin
// RUN: %ptxas -arch=sm_90a %t/boolean_kernel.ptx -o %t/boolean.cubin
// RUN: FileCheck %s --check-prefix=ALIBI < %t/alibi_kernel.ptx
// RUN: grep -c cvt.rn.f32.s32 %t/alibi_kernel.ptx | FileCheck %s --check-prefix=ALIBICVT
// RUN: %ptxas -arch=sm_90a -v %t/alibi_kernel.ptx -o %t/alibi.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL --implicit-check-not=warning
// RUN: FileCheck %s --check-prefix=SPLIT < %t/alibi_kernel.ptx
// RUN: FileCheck %s --check-prefix=SPLIT < %t/relpos_kernel.ptx
// RUN: FileCheck %s --check-prefix=ROWBIAS < %t/rowbias_kernel.ptx
// RUN: %ptxas -arch=sm_90a -v %t/rowbias_kernel.ptx -o %t/rowbias.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL --implicit-check-not=warning
// RUN: FileCheck %s --check-prefix=TABLEBIAS < %t/tablebias_kernel.ptx
// RUN: %ptxas -arch=sm_90a %t/tablebias_kernel.ptx -o %t/tablebias.cubin
// RUN: grep -c neg.f32 %t/relpos_kernel.ptx | FileCheck %s --check-prefix=RELPOSNEG
// RUN: %ptxas -arch=sm_90a -v %t/relpos_kernel.ptx -o %t/relpos.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL --implicit-check-not=warning
// RUN: FileCheck %s --check-prefix=PREFIX < %t/prefixlm_kernel.ptx
// RUN: FileCheck %s --check-prefix=UNSCALED < %t/prefixlm_kernel.ptx
// RUN: %ptxas -arch=sm_90a -v %t/prefixlm_kernel.ptx -o %t/prefixlm.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL --implicit-check-not=warning
// RUN: FileCheck %s --check-prefix=DOC < %t/doc_kernel.json
// rescale-before-pv's measured default: on with a score_mod region, off
// with softcap or a mask_mod alone; the option still turns it off.
// RUN: FileCheck %s --check-prefix=EARLY < %t/alibi_kernel.json
// RUN: FileCheck %s --check-prefix=EARLY < %t/relpos_kernel.json
// RUN: FileCheck %s --check-prefix=LATE < %t/softcap_kernel.json
// RUN: FileCheck %s --check-prefix=LATE < %t/prefixlm_kernel.json
// RUN: rm -rf %t/off && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a rescale-before-pv=false},fa-dump-kernel{dir=%t/off})' -o /dev/null
// RUN: FileCheck %s --check-prefix=LATE < %t/off/alibi_kernel.json
// EARLY: "rescale_before_pv": true
// LATE: "rescale_before_pv": false
// RUN: FileCheck %s --check-prefix=PREFIX < %t/doc_kernel.ptx
// RUN: FileCheck %s --check-prefix=DOCSCAN < %t/doc_kernel.ptx
// RUN: FileCheck %s --check-prefix=DOCSMEM < %t/doc_kernel.json
// RUN: %ptxas -arch=sm_90a %t/doc_kernel.ptx -o %t/doc.cubin
// RUN: rm -rf %t80 && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80},fa-dump-kernel{dir=%t80})' -o /dev/null
// RUN: FileCheck %s --check-prefix=SOFTCAP < %t80/softcap_kernel.ptx
// RUN: FileCheck %s --check-prefix=ADD < %t80/additive_kernel.json
// RUN: %ptxas -arch=sm_80 %t80/softcap_kernel.ptx -o %t80/softcap.cubin
// RUN: %ptxas -arch=sm_80 %t80/additive_kernel.ptx -o %t80/additive.cubin
// RUN: %ptxas -arch=sm_80 %t80/boolean_kernel.ptx -o %t80/boolean.cubin
// RUN: FileCheck %s --check-prefix=PREFIX < %t80/prefixlm_kernel.ptx
// RUN: %ptxas -arch=sm_80 %t80/alibi_kernel.ptx -o %t80/alibi.cubin
// RUN: FileCheck %s --check-prefix=AFFINE < %t80/alibi_kernel.ptx
// RUN: FileCheck %s --check-prefix=AFFINE < %t80/relpos_kernel.ptx
// RUN: %ptxas -arch=sm_80 %t80/rowbias_kernel.ptx -o %t80/rowbias.cubin
// RUN: %ptxas -arch=sm_80 %t80/tablebias_kernel.ptx -o %t80/tablebias.cubin
// RUN: %ptxas -arch=sm_80 %t80/relpos_kernel.ptx -o %t80/relpos.cubin
// RUN: %ptxas -arch=sm_80 %t80/prefixlm_kernel.ptx -o %t80/prefixlm.cubin
// RUN: %ptxas -arch=sm_80 %t80/doc_kernel.ptx -o %t80/doc.cubin

// ALIBI: cvt.rn.f32.s32
// ALIBI-NOT: cvt.rn.f32.s64
// The key distance moves with the fragment's column: converted once per row
// (the base) and offset as a float, not one conversion per score (256).
// ALIBICVT: {{^[0-9]$}}
// sm_80: the bias slope * (base + offset) stays per row until the score:
// one fma of the column offset (here 8 or -8), then one fma of the raw
// score by the scale 1/sqrt(128) (the scaling contracted into the
// addition): no per-score multiply by the scale, no conversion, no negation.
// AFFINE-NOT: mul.rn.f32 {{.*}}0f3DB504F3
// AFFINE: fma.rn.f32 %r[[BIAS:[0-9]+]], %r{{[0-9]+}}, 0f{{41|C1}}000000, %r{{[0-9]+}};
// AFFINE-NEXT: fma.rn.f32 %r{{[0-9]+}}, %r{{[0-9]+}}, 0f3DB504F3, %r[[BIAS]];
// AFFINE-NOT: mul.rn.f32 {{.*}}0f3DB504F3
// sm_90a splits the bias (KernelScoreModifiers::splitsBias): its value at
// the block's first column once per row and step, in the softmax's max and
// exponent, and per score one fma of the column offset (8, 9, 16, ...) by
// the bias's step per column (one register for every score) onto the raw
// score; the scale stays in the exponent (1/sqrt(128) appears nowhere).
// SPLIT-NOT: 0f3DB504F3
// SPLIT: fma.rn.f32 %r{{[0-9]+}}, %r[[STEP:[0-9]+]], 0f41000000, %r{{[0-9]+}};
// SPLIT: fma.rn.f32 %r{{[0-9]+}}, %r[[STEP]], 0f41000000, %r{{[0-9]+}};
// SPLIT: fma.rn.f32 %r{{[0-9]+}}, %r[[STEP]], 0f41100000, %r{{[0-9]+}};
// SPLIT: fma.rn.f32 %r{{[0-9]+}}, %r[[STEP]], 0f41800000, %r{{[0-9]+}};
// SPLIT-NOT: 0f3DB504F3
// A bias constant along the row costs nothing per score: no column offset
// and no scale in any instruction, the bias only in the row's max and
// exponent (and no spill).
// ROWBIAS-NOT: 0f3DB504F3
// ROWBIAS-NOT: fma.rn.f32 {{.*}}0f41000000
// ROWBIAS: ex2.approx
// ROWBIAS-NOT: 0f3DB504F3
// ROWBIAS-NOT: fma.rn.f32 {{.*}}0f41000000
// A bias read from a captured table at the key is evaluated per score (the
// column is clamped for the read, so it is no affine function of it) and
// added to the raw score divided by the scale: one fma by sqrt(128) each.
// (A global load per score: ptxas spills 168 bytes here, as it did before
// the split, when the bias was added to the scaled score.)
// TABLEBIAS: ld.global.b32 %r[[T:[0-9]+]]
// TABLEBIAS-NEXT: fma.rn.f32 %r{{[0-9]+}}, %r[[T]], 0f413504F3, %r{{[0-9]+}};
// TABLEBIAS-NOT: 0f3DB504F3
// RELPOSNEG: {{^[0-9]$}}
// PREFIX: vote.sync.ballot.b32
// A mask_mod alone leaves the scores unscaled (the softmax's exponent
// scales them): no multiply by the scale 1/sqrt(128) per score.
// UNSCALED-NOT: 0f3DB504F3
// UNSCALED: ret;

// Document ids: Q's load is issued first; the CTA's 12 warps split the key
// blocks' scan (3 warps to a chunk of 32 blocks); their ballots and ranges
// meet in shared memory (3 x 64 + 24 words after the tiles) behind a CTA
// barrier, lanes combine the 12 ranges with a butterfly.
// DOCSCAN: cp.async.bulk.tensor
// DOCSCAN: vote.sync.ballot.b32
// DOCSCAN: st.shared
// DOCSCAN: bar.sync 0;
// DOCSCAN-NEXT: min.u64 {{.*}}, 11;
// DOCSCAN: ld.shared
// DOCSCAN: shfl.sync.bfly.b32
// DOCSCAN: setmaxnreg.dec.sync.aligned.u32 24;
// DOCSMEM: "dynamic_shared_memory_bytes": 116576,

// DOC: "align_bytes": 4,
// DOC-NEXT: "dtype": "i32",
// DOC-NEXT: "meaning": "argument 3 of the function, read by a modifier region, contiguous",
// DOC-NEXT: "name": "arg3",
// DOC-NEXT: "shape": [
// DOC-NEXT: 4096
// DOC-NEXT: ],
// DOC-NEXT: "tensor": "arg3",

// SOFTCAP: tanh.approx.f32
// NOSPILL: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// The mask between out and the sizes; broadcast dims are literal 1.
// ADD: "name": "out",
// ADD: "align_bytes": 2,
// ADD-NEXT: "dtype": "bf16",
// ADD-NEXT: "meaning": "additive mask
// ADD-NEXT: "name": "mask",
// ADD-NEXT: "shape": [
// ADD-NEXT: 1,
// ADD-NEXT: "Hq",
// ADD-NEXT: "Nq",
// ADD-NEXT: "Nk"
// ADD: "name": "B",

// BOOL: "align_bytes": 1,
// BOOL-NEXT: "dtype": "bool",
// BOOL-NEXT: "meaning": "boolean mask
// BOOL-NEXT: "name": "mask",
// BOOL-NEXT: "shape": [
// BOOL-NEXT: "B",
// BOOL-NEXT: 1,
// BOOLPTX: ld.global.b8

func.func @softcap(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {causal, softcap = 30.0 : f32} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

func.func @additive(%q: tensor<?x8x?x128xbf16>, %k: tensor<?x2x?x128xbf16>, %v: tensor<?x2x?x128xbf16>, %m: tensor<1x8x?x?xbf16>) -> tensor<?x8x?x128xbf16> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<1x8x?x?xbf16>) : tensor<?x8x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16> -> tensor<?x8x?x128xbf16>
  return %o : tensor<?x8x?x128xbf16>
}

// -----

func.func @boolean(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %m: tensor<?x1x?x?xi1>) -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v mask(%m : tensor<?x1x?x?xi1>) {window = array<i64: 256, 0>} : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> (tensor<?x?x?x64xf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xf16>, tensor<?x?x?xf32>
}

// -----

// score_mod (ALiBi from the head and the distance) is cloned into the
// softmax step with its index math in 32 bits (cvt.rn.f32.s32, no 64-bit
// conversion per score); no spill.
func.func @alibi(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c1 = arith.constant 1 : index
    %m = arith.constant -0.5 : f32
    %h1 = arith.addi %h, %c1 : index
    %hi = arith.index_cast %h1 : index to i32
    %hf = arith.sitofp %hi : i32 to f32
    %e = arith.mulf %hf, %m : f32
    %slope = math.exp2 %e : f32
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %t = math.fma %slope, %df, %s : f32
    fa.yield %t : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// The key distance through sums and differences with row constants, an fma
// with a constant addend, a negation and a subtraction from the score: the
// same two fmas per score as ALiBi (-2 slope (j - i + 0.25) + 1.5 added).
func.func @relpos(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c1 = arith.constant 1 : index
    %m = arith.constant -0.5 : f32
    %quarter = arith.constant 0.25 : f32
    %half = arith.constant 0.5 : f32
    %zero = arith.constant 0.0 : f32
    %shift = arith.constant 1.5 : f32
    %minus2 = arith.constant -2.0 : f32
    %h1 = arith.addi %h, %c1 : index
    %hi = arith.index_cast %h1 : index to i32
    %hf = arith.sitofp %hi : i32 to f32
    %e = arith.mulf %hf, %m : f32
    %slope = math.exp2 %e : f32
    %d = arith.subi %i, %j : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %a = arith.addf %df, %quarter : f32
    %u = arith.subf %a, %half : f32
    %w = arith.subf %zero, %u : f32
    %g = arith.mulf %slope, %minus2 : f32
    %x = math.fma %w, %g, %shift : f32
    %n = arith.negf %x : f32
    %t = arith.subf %s, %n : f32
    fa.yield %t : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// A mask_mod of positions (prefix-LM) is bounded per block: the tile's key
// range is narrowed by a warp ballot over the blocks.
func.func @prefixlm(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %p = arith.constant 2048 : index
    %inprefix = arith.cmpi slt, %j, %p : index
    %past = arith.cmpi sle, %j, %i : index
    %keep = arith.ori %inprefix, %past : i1
    fa.yield %keep : i1
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Document masking: the captured id tensor is a kernel parameter named after
// the function argument (arg3), its static shape in the manifest.
func.func @doc(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %docs: tensor<4096xi32>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v {causal} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %docs[%i] : tensor<4096xi32>
    %dj = tensor.extract %docs[%j] : tensor<4096xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    fa.yield %keep : i1
  } : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

// -----

// A bias of the row alone (cancels in the softmax, but the kernel must
// still give that result): split with no per-column part.
func.func @rowbias(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %half = arith.constant 0.5 : f32
    %ii = arith.index_cast %i : index to i32
    %if = arith.sitofp %ii : i32 to f32
    %t = math.fma %if, %half, %s : f32
    fa.yield %t : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// A bias read from a captured table at the key: no affine form in the
// column, evaluated per score.
func.func @tablebias(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %tab: tensor<16384xf32>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = tensor.extract %tab[%j] : tensor<16384xf32>
    %r = arith.addf %t, %s : f32
    fa.yield %r : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
