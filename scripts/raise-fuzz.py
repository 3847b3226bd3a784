#!/usr/bin/env python3
"""A differential fuzzer of fa-raise-attention: random attention programs written in linalg
on tensors (a 3-D [B*H, N, D] batch_matmul form or a 4-D [B, H, N, D] generic form, f32; in
4-D, K/V heads sometimes repeated (grouped-query) and Q sometimes [B, N, H, D], transposed),
whose scores go through a random chain of what frontends emit: a constant scale (multiplied
or divided), a softcap, an ALiBi-like bias (a slope per head or a constant slope times
j - i), a finite masked_fill, and up to three masks in a random order: positional conditions
(bands, windows, j != i, parity, comparisons of i or j alone, i64 or index arithmetic, a
runtime diagonal offset read by tensor.extract), a
boolean tensor, document ids compared at i and j, an additive tensor, each applied as
select(c, s, -inf), select(not c, -inf, s) or s + where(c, 0, -inf) (mostly in fa's order,
sometimes a mask first or the bias last). Each program runs
through fa-to-cpu as written and after fa-raise-attention; the outputs must agree (f32:
|a - b| <= 2e-5 |b| + 1e-6), where a row that sees no key is NaN as written and 0 raised
(fa's documented result). A program the pass leaves alone is counted, not a finding.

    scripts/raise-fuzz.py OUT_DIR CASES SEED     (build/bin/fa-opt, mlir-runner of LLVM 22)

OUT_DIR/log.txt lists each case (raised or not, what the op became); a finding is
OUT_DIR/bad<N>.mlir (the program with its @main) and bad<N>.txt (why). Each case
JIT-compiles two programs (about a second); scripts/fuzz.sh, CI's fuzz step, runs 40 of
seed 1. Session 32: seeds 3, 4 and 5 (660 programs,
the last 300 with masks before the cap and biases after the masks): every one raised (to
band, softcap, mask operand, score_mod and mask_mod mixes) and agreed with the program as
written.
"""
import os
import pathlib
import random
import re
import subprocess
import sys

import numpy as np

root = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root / "test/Integration/CPU/Inputs"))
import raise_case  # noqa: E402  (emit: the @main with deterministic arguments)

FA_OPT = str(pathlib.Path(os.environ.get("FA_BUILD_DIR", root / "build")) / "bin/fa-opt")
LLVM = pathlib.Path("/usr/lib/llvm-22")
RUNNER = [str(LLVM / "bin/mlir-runner"), "-e", "main", "--entry-point-result=void",
          f"--shared-libs={LLVM}/lib/libmlir_runner_utils.so",
          f"--shared-libs={LLVM}/lib/libmlir_c_runner_utils.so"]


class Program:
    """One random program: the score body of the generic between the contractions, and
    the extra tensors it reads."""

    def __init__(self, rnd, four_d):
        self.rnd = rnd
        self.four_d = four_d
        self.lines = []
        self.args = []  # (name, type, map): generic inputs
        self.captured = []  # (name, type): read by tensor.extract in the body
        self.counter = 0
        self.nq = rnd.choice([16, 16, 8])
        self.nk = 16
        self.heads = 4
        # 4-D only: K/V with 2 heads repeated (repeat_interleave), Q as [B, N, H, D].
        self.gqa = four_d and rnd.random() < 0.3
        self.q_bnhd = four_d and rnd.random() < 0.3

    def fresh(self, prefix="v"):
        self.counter += 1
        return f"%{prefix}{self.counter}"

    def emit(self, text):
        self.lines.append("    " + text)

    def const_f(self, value):
        name = self.fresh("c")
        if value == float("-inf"):
            self.emit(f"{name} = arith.constant 0xFF800000 : f32")
        else:
            self.emit(f"{name} = arith.constant {value:.9e} : f32")
        return name

    def const_i(self, value, ty):
        name = self.fresh("k")
        self.emit(f"{name} = arith.constant {value}" + ("" if ty == "i1" else f" : {ty}"))
        return name

    def positions(self, ty):
        rank = 4 if self.four_d else 3
        i = self.fresh("i")
        j = self.fresh("j")
        self.emit(f"{i} = linalg.index {rank - 2} : index")
        self.emit(f"{j} = linalg.index {rank - 1} : index")
        if ty == "index":
            return i, j
        ii, jj = self.fresh("ii"), self.fresh("jj")
        self.emit(f"{ii} = arith.index_cast {i} : index to {ty}")
        self.emit(f"{jj} = arith.index_cast {j} : index to {ty}")
        return ii, jj

    def add_arg(self, name, ty, amap):
        self.args.append((name, ty, amap))
        return f"%{name}_e{len(self.args)}"  # the block argument of this read

    # -- the parts of the chain --------------------------------------------------
    def scale(self, x):
        c = self.rnd.choice([0.125, 0.1767766952966369, 1.0 / 3.0, 0.5])
        if self.rnd.random() < 0.5:
            y = self.fresh()
            self.emit(f"{y} = arith.mulf {x}, {self.const_f(c)} : f32")
        else:
            y = self.fresh()
            self.emit(f"{y} = arith.divf {x}, {self.const_f(1.0 / c)} : f32")
        return y

    def softcap(self, x):
        cap = self.const_f(self.rnd.choice([0.5, 2.0, 30.0]))
        u, t, y = self.fresh(), self.fresh(), self.fresh()
        self.emit(f"{u} = arith.divf {x}, {cap} : f32")
        self.emit(f"{t} = math.tanh {u} : f32")
        self.emit(f"{y} = arith.mulf {t}, {cap} : f32")
        return y

    def bias(self, x):
        ii, jj = self.positions("i64")
        d, df = self.fresh(), self.fresh()
        self.emit(f"{d} = arith.subi {jj}, {ii} : i64")
        self.emit(f"{df} = arith.sitofp {d} : i64 to f32")
        if self.four_d and self.rnd.random() < 0.6:
            slope = self.add_arg("slopes", f"tensor<{self.heads}xf32>",
                                 "affine_map<(d0, d1, d2, d3) -> (d1)>")
        else:
            slope = self.const_f(self.rnd.choice([0.25, -0.5, 0.0625]))
        b, y = self.fresh(), self.fresh()
        self.emit(f"{b} = arith.mulf {slope}, {df} : f32")
        self.emit(f"{y} = arith.addf {x}, {b} : f32")
        return y

    def condition(self):
        """An i1 condition: positional, a boolean tensor or document ids."""
        kind = self.rnd.choice(["band", "band", "band", "row", "col", "ne", "parity",
                                "bool", "docs", "offset"])
        rank = 4 if self.four_d else 3
        mp = ", ".join(f"d{r}" for r in range(rank))
        if kind == "bool":
            return self.add_arg("mask", f"tensor<{self.nq}x{self.nk}xi1>",
                                f"affine_map<({mp}) -> (d{rank - 2}, d{rank - 1})>")
        if kind == "docs":
            di = self.add_arg("docs_q", f"tensor<{self.nq}xi64>",
                              f"affine_map<({mp}) -> (d{rank - 2})>")
            dj = self.add_arg("docs_k", f"tensor<{self.nk}xi64>",
                              f"affine_map<({mp}) -> (d{rank - 1})>")
            c = self.fresh("b")
            self.emit(f"{c} = arith.cmpi eq, {di}, {dj} : i64")
            return c
        if kind == "offset":
            # j - i <= offset, the offset a runtime tensor<i64> read in the body.
            if ("offset", "tensor<i64>") not in self.captured:
                self.captured.append(("offset", "tensor<i64>"))
            ii, jj = self.positions("i64")
            d, o, c = self.fresh(), self.fresh(), self.fresh("b")
            self.emit(f"{d} = arith.subi {jj}, {ii} : i64")
            self.emit(f"{o} = tensor.extract %offset[] : tensor<i64>")
            self.emit(f"{c} = arith.cmpi sle, {d}, {o} : i64")
            return c
        ty = self.rnd.choice(["i64", "index", "i32"])
        ii, jj = self.positions(ty)
        c = self.fresh("b")
        if kind == "band":
            d = self.fresh()
            self.emit(f"{d} = arith.subi {jj}, {ii} : {ty}")
            pred = self.rnd.choice(["sle", "slt", "sge", "sgt"])
            k = self.const_i(self.rnd.randint(-6, 9), ty)
            self.emit(f"{c} = arith.cmpi {pred}, {d}, {k} : {ty}")
        elif kind in ("row", "col"):
            pred = self.rnd.choice(["slt", "sge"])
            k = self.const_i(self.rnd.randint(1, 12), ty)
            self.emit(f"{c} = arith.cmpi {pred}, {ii if kind == 'row' else jj}, {k} : {ty}")
        elif kind == "ne":
            self.emit(f"{c} = arith.cmpi ne, {jj}, {ii} : {ty}")
        else:  # parity: j - i even
            d, m = self.fresh(), self.fresh()
            self.emit(f"{d} = arith.subi {jj}, {ii} : {ty}")
            two = self.const_i(2, ty)
            zero = self.const_i(0, ty)
            self.emit(f"{m} = arith.remsi {d}, {two} : {ty}")
            self.emit(f"{c} = arith.cmpi eq, {m}, {zero} : {ty}")
        return c

    def mask(self, x):
        kind = self.rnd.choice(["cond", "cond", "cond", "additive", "finite"])
        if kind == "additive":
            rank = 4 if self.four_d else 3
            mp = ", ".join(f"d{r}" for r in range(rank))
            a = self.add_arg("bias", f"tensor<{self.nq}x{self.nk}xf32>",
                             f"affine_map<({mp}) -> (d{rank - 2}, d{rank - 1})>")
            y = self.fresh()
            self.emit(f"{y} = arith.addf {x}, {a} : f32")
            return y
        c = self.condition()
        ninf = self.const_f(float("-inf") if kind == "cond" else -1e9)
        form = self.rnd.choice(["keep", "hide", "where"])
        y = self.fresh()
        if form == "keep":
            self.emit(f"{y} = arith.select {c}, {x}, {ninf} : f32")
        elif form == "hide":
            t, n = self.const_i("true", "i1"), self.fresh("b")
            self.emit(f"{n} = arith.xori {c}, {t} : i1")
            self.emit(f"{y} = arith.select {n}, {ninf}, {x} : f32")
        else:
            z, w = self.const_f(0.0), self.fresh()
            self.emit(f"{w} = arith.select {c}, {z}, {ninf} : f32")
            self.emit(f"{y} = arith.addf {x}, {w} : f32")
        return y

    def body(self):
        x = "%x"
        x = self.scale(x)
        # Mostly fa's order (scale, cap, bias, masks); sometimes a mask first
        # (inside the cap or under the bias) or the bias last.
        if self.rnd.random() < 0.2:
            x = self.mask(x)
        if self.rnd.random() < 0.25:
            x = self.softcap(x)
        if self.rnd.random() < 0.3:
            x = self.bias(x)
        for _ in range(self.rnd.choice([0, 1, 1, 2, 2, 3])):
            x = self.mask(x)
        if self.rnd.random() < 0.15:
            x = self.bias(x)
        self.emit(f"linalg.yield {x} : f32")
        return x

    # -- the whole function ------------------------------------------------------
    def function(self):
        self.body()
        # Tensor arguments are named once (a second read of the same name reuses it).
        seen, args = set(), []
        for name, ty, amap in self.args:
            if name not in seen:
                seen.add(name)
                args.append((name, ty))
        reads = self.args
        B = "x".join(["2", str(self.heads)] if self.four_d else ["8"])
        q = f"tensor<{B}x{self.nq}x32xf32>"
        k = f"tensor<{B}x{self.nk}x32xf32>"
        s = f"tensor<{B}x{self.nq}x{self.nk}xf32>"
        r = f"tensor<{B}x{self.nq}xf32>"
        rank = 4 if self.four_d else 3
        ids = ", ".join(f"d{i}" for i in range(rank))
        idm = f"affine_map<({ids}) -> ({ids})>"
        extra = "".join(f", %{n}: {t}" for n, t in args + self.captured)
        qa = f"tensor<2x{self.nq}x{self.heads}x32xf32>" if self.q_bnhd else q
        kva = f"tensor<2x2x{self.nk}x32xf32>" if self.gqa else k
        L = [f"func.func @attn(%qa: {qa}, %ka: {kva}, %va: {kva}{extra}) -> {q} {{",
             "  %zero = arith.constant 0.000000e+00 : f32",
             "  %ninf_c = arith.constant 0xFF800000 : f32",
             f"  %s_e = tensor.empty() : {s}",
             f"  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : {s}) -> {s}"]
        if self.q_bnhd:
            L += [f"  %qt_e = tensor.empty() : {q}",
                  f"  %q = linalg.transpose ins(%qa : {qa}) outs(%qt_e : {q}) permutation = [0, 2, 1, 3]"]
        else:
            L.append(f"  %q = tensor.cast %qa : {q} to {q}")
        for name in ("k", "v"):
            if self.gqa:
                rep5 = f"tensor<2x2x2x{self.nk}x32xf32>"
                L += [f"  %{name}b_e = tensor.empty() : {rep5}",
                      f"  %{name}b = linalg.broadcast ins(%{name}a : {kva}) outs(%{name}b_e : {rep5}) dimensions = [2]",
                      f"  %{name} = tensor.collapse_shape %{name}b [[0], [1, 2], [3], [4]] : {rep5} into {k}"]
            else:
                L.append(f"  %{name} = tensor.cast %{name}a : {k} to {k}")
        if self.four_d:
            m5 = lambda *x: "affine_map<(d0, d1, d2, d3, d4) -> (" + ", ".join(x) + ")>"
            L.append(f"  %s = linalg.generic {{indexing_maps = [{m5('d0','d1','d2','d4')}, "
                     f"{m5('d0','d1','d3','d4')}, {m5('d0','d1','d2','d3')}], iterator_types = "
                     "[\"parallel\", \"parallel\", \"parallel\", \"parallel\", \"reduction\"]} "
                     f"ins(%q, %k : {q}, {k}) outs(%s_f : {s}) {{")
            L += ["  ^bb0(%a: f32, %b: f32, %acc: f32):", "    %0 = arith.mulf %a, %b : f32",
                  "    %1 = arith.addf %acc, %0 : f32", "    linalg.yield %1 : f32",
                  f"  }} -> {s}"]
        else:
            kt = f"tensor<8x32x{self.nk}xf32>"
            L += [f"  %kt_e = tensor.empty() : {kt}",
                  f"  %kt = linalg.transpose ins(%k : {k}) outs(%kt_e : {kt}) permutation = [0, 2, 1]",
                  f"  %s = linalg.batch_matmul ins(%q, %kt : {q}, {kt}) outs(%s_f : {s}) -> {s}"]
        ins = "".join(f", %{n}" for n, _, _ in reads)
        tys = "".join(f", {t}" for _, t, _ in reads)
        maps = "".join(f", {m}" for _, _, m in reads)
        blk = "".join(f", %{n}_e{r + 1}: {t.split('x')[-1][:-1]}"
                      for r, (n, t, _) in enumerate(reads))
        par = ", ".join(['"parallel"'] * rank)
        L.append(f"  %t = linalg.generic {{indexing_maps = [{idm}{maps}, {idm}], iterator_types = [{par}]}} "
                 f"ins(%s{ins} : {s}{tys}) outs(%s_e : {s}) {{")
        L.append(f"  ^bb0(%x: f32{blk}, %out: f32):")
        L += self.lines
        L.append(f"  }} -> {s}")
        L += [f"  %r_e = tensor.empty() : {r}",
              f"  %mx_i = linalg.fill ins(%ninf_c : f32) outs(%r_e : {r}) -> {r}",
              f"  %mx = linalg.reduce {{ arith.maximumf }} ins(%t : {s}) outs(%mx_i : {r}) dimensions = [{rank - 1}]",
              f"  %mxb = linalg.broadcast ins(%mx : {r}) outs(%s_e : {s}) dimensions = [{rank - 1}]",
              f"  %sub = linalg.map {{ arith.subf }} ins(%t, %mxb : {s}, {s}) outs(%s_e : {s})",
              f"  %ex = linalg.map {{ math.exp }} ins(%sub : {s}) outs(%s_e : {s})",
              f"  %sm_i = linalg.fill ins(%zero : f32) outs(%r_e : {r}) -> {r}",
              f"  %sm = linalg.reduce {{ arith.addf }} ins(%ex : {s}) outs(%sm_i : {r}) dimensions = [{rank - 1}]",
              f"  %smb = linalg.broadcast ins(%sm : {r}) outs(%s_e : {s}) dimensions = [{rank - 1}]",
              f"  %p = linalg.map {{ arith.divf }} ins(%ex, %smb : {s}, {s}) outs(%s_e : {s})",
              f"  %o_e = tensor.empty() : {q}",
              f"  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : {q}) -> {q}"]
        if self.four_d:
            L.append(f"  %o = linalg.generic {{indexing_maps = [{m5('d0','d1','d2','d4')}, "
                     f"{m5('d0','d1','d4','d3')}, {m5('d0','d1','d2','d3')}], iterator_types = "
                     "[\"parallel\", \"parallel\", \"parallel\", \"parallel\", \"reduction\"]} "
                     f"ins(%p, %v : {s}, {k}) outs(%o_f : {q}) {{")
            L += ["  ^bb0(%a: f32, %b: f32, %acc: f32):", "    %0 = arith.mulf %a, %b : f32",
                  "    %1 = arith.addf %acc, %0 : f32", "    linalg.yield %1 : f32",
                  f"  }} -> {q}"]
        else:
            L.append(f"  %o = linalg.batch_matmul ins(%p, %v : {s}, {k}) outs(%o_f : {q}) -> {q}")
        L += [f"  return %o : {q}", "}"]
        return "\n".join(L)


def run(cmd, stdin=None):
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=600)


def numbers(text):
    if "data =" not in text:
        return None
    return np.array([float(x) for x in raise_case.NUMBER.findall(text.split("data =", 1)[1])])


def main():
    out = pathlib.Path(sys.argv[1])
    cases, seed = int(sys.argv[2]), int(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    rnd = random.Random(seed)
    log = open(out / "log.txt", "w")
    stats = {"raised": 0, "left": 0, "bad": 0}
    for n in range(cases):
        prog = Program(rnd, four_d=rnd.random() < 0.5)
        src = out / "case.mlir"
        src.write_text(prog.function() + "\n")
        case = out / "case_main.mlir"
        with open(case, "w") as f:
            old = sys.stdout
            sys.stdout = f
            try:
                raise_case.emit(str(src), seed * 100003 + n)
            finally:
                sys.stdout = old
        text = case.read_text()
        raised = run([FA_OPT, str(case), "--fa-raise-attention"])
        why = None
        if raised.returncode != 0:
            why = "fa-raise-attention failed:\n" + raised.stderr
        elif "fa.attention" not in raised.stdout:
            stats["left"] += 1
            log.write(f"{n}: left as written\n")
            continue
        if why is None:
            op = re.search(r"fa\.attention[^\n]*", raised.stdout).group(0)
            kinds = [k for k in ("causal", "window", "softcap", "mask(", "score_mod", "mask_mod")
                     if k in raised.stdout]
            if prog.gqa and f"tensor<2x2x{prog.nk}x32xf32>" in op:
                kinds.append("gqa")
            outs = []
            for program in (raised.stdout, text):
                low = run([FA_OPT, "--fa-to-cpu"], stdin=program)
                if low.returncode != 0:
                    why = "fa-to-cpu failed:\n" + low.stderr
                    break
                res = run(RUNNER, stdin=low.stdout)
                if res.returncode != 0:
                    why = "mlir-runner failed:\n" + res.stderr
                    break
                outs.append(numbers(res.stdout))
            if why is None:
                a, b = outs
                if a is None or b is None or a.shape != b.shape:
                    why = "no comparable output"
                else:
                    # A row with no visible key: NaN as written, 0 raised (documented).
                    empty = np.isnan(b) & (a == 0)
                    bad = ~((np.abs(a - b) <= 2e-5 * np.abs(b) + 1e-6) | empty)
                    if bad.any():
                        i = int(np.argmax(bad))
                        why = (f"{int(bad.sum())} of {a.size} differ; element {i}: raised "
                               f"{a[i]!r}, as written {b[i]!r}\n{op}")
            if why is None:
                stats["raised"] += 1
                log.write(f"{n}: raised ({', '.join(kinds)})\n")
                continue
        stats["bad"] += 1
        k = stats["bad"]
        (out / f"bad{k}.mlir").write_text(text)
        (out / f"bad{k}.txt").write_text(why)
        log.write(f"{n}: FINDING bad{k}: {why.splitlines()[0]}\n")
        log.flush()
    log.write(f"{stats}\n")
    print(stats)
    return 1 if stats["bad"] else 0


if __name__ == "__main__":
    sys.exit(main())
