// Issue 16 benchmark kernels (bench/bench_variants.py): bf16, head dim 128,
// dynamic B, H, N. Compiled per chip by bench/variants.sh.

func.func @var_plain_full(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @var_softcap_full(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {softcap = 30.0 : f32} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @var_softcapmod_full(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %inv = arith.constant 0.0333333351 : f32
    %cap = arith.constant 30.0 : f32
    %x = arith.mulf %s, %inv : f32
    %t = math.tanh %x fastmath<afn> : f32
    %r = arith.mulf %t, %cap : f32
    fa.yield %r : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @var_alibi_full(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {} score_mod {
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
    %bias = arith.mulf %slope, %df : f32
    %t = arith.addf %s, %bias : f32
    fa.yield %t : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @var_doc_full(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %docs: tensor<16384xi32>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %docs[%i] : tensor<16384xi32>
    %dj = tensor.extract %docs[%j] : tensor<16384xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    fa.yield %keep : i1
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @var_plain_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @var_softcap_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {causal, softcap = 30.0 : f32} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @var_softcapmod_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %inv = arith.constant 0.0333333351 : f32
    %cap = arith.constant 30.0 : f32
    %x = arith.mulf %s, %inv : f32
    %t = math.tanh %x fastmath<afn> : f32
    %r = arith.mulf %t, %cap : f32
    fa.yield %r : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @var_alibi_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
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
    %bias = arith.mulf %slope, %df : f32
    %t = arith.addf %s, %bias : f32
    fa.yield %t : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @var_doc_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %docs: tensor<16384xi32>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {causal} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %docs[%i] : tensor<16384xi32>
    %dj = tensor.extract %docs[%j] : tensor<16384xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    fa.yield %keep : i1
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @var_prefixlm(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %p = arith.constant 2048 : index
    %inprefix = arith.cmpi slt, %j, %p : index
    %past = arith.cmpi sle, %j, %i : index
    %keep = arith.ori %inprefix, %past : i1
    fa.yield %keep : i1
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @var_windowmod(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %w = arith.constant 1024 : index
    %past = arith.cmpi sle, %j, %i : index
    %d = arith.subi %i, %j : index
    %near = arith.cmpi sle, %d, %w : index
    %keep = arith.andi %past, %near : i1
    fa.yield %keep : i1
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @var_window(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {window = array<i64: 1024, 0>} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @var_addmask_full(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %m: tensor<1x1x?x?xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<1x1x?x?xbf16>) {} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @var_boolmask_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %m: tensor<?x1x?x?xi1>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v mask(%m : tensor<?x1x?x?xi1>) {causal} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @var_relpos_full(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {} score_mod {
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

func.func @var_relpos_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {causal} score_mod {
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

// Check-only variants (bench_variants.py --check): the other two forms of a
// score_mod's split bias on sm_90a (KernelScoreModifiers::splitsBias): a bias
// of the row alone (no per-column part; it cancels in the softmax, a large
// one included) and a bias read from a captured table at the key (evaluated
// per score).
func.func @var_rowbias_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
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

func.func @var_tablebias_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %tab: tensor<16384xf32>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {causal} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = tensor.extract %tab[%j] : tensor<16384xf32>
    %r = arith.addf %t, %s : f32
    fa.yield %r : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// ALiBi with the log-sum-exp (check-only): the split bias's row part is in
// the running max, so the lse must carry it (biases up to slope * N).
func.func @var_alibilse_full(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v {} score_mod {
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
    %bias = arith.mulf %slope, %df : f32
    %t = arith.addf %s, %bias : f32
    fa.yield %t : f32
  } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}
