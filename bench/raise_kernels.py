"""Kernels raised from attention written in linalg, checked on the GPU against torch.

fa-raise-attention turns what torch-mlir / stablehlo-to-linalg / TOSA emit into
fa.attention, ALiBi and document masks into score_mod / mask_mod regions
(docs/Embedding.md). This script builds such linalg programs (f16 matmuls, the score
modifications in f32, a decomposed softmax), compiles them with
fa.compile(text, raise_attention=True) for both chips, and on the GPU runs each kernel
through fa_runtime on torch tensors against a float32 torch reference of the same
program, with a negative control per case, and times it.

    python3 bench/raise_kernels.py compile OUT        # here (needs the compiler)
    python3 bench/raise_kernels.py check OUT [--json FILE] [--chip sm_90a]   # on the GPU

Written in session 32 without a GPU; `check` ran on the H200 in session 33 (sm_90a: 4/4
right, every negative control fails; bench/results/raise_h200_2026-12-05_s33).

Cases (B = 1, H = 8, N = 1024, D = 128, f16):
  alibi    causal, + slope[h] * (j - i), slopes an f32 [H] argument (score_mod)
  docs     visible where doc[i] == doc[j], ids an i32 [N] argument (mask_mod)
  window   i - 256 <= j <= i written with linalg.index compares (window [256, 0])
  softcap  Gemma 2's 30 * tanh(s / 30), then causal
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

B, H, N, D = 1, 8, 1024, 128
SCALE = 1.0 / D ** 0.5


def _program(name, body, extra_args="", extra_ins="", extra_types="", extra_maps=""):
    """[B, H, N, D] f16 attention in linalg: Q K^T and P V as multiply-add generics in
    f16, the score modifications of `body` (f16 in, f16 out), the softmax as reductions
    and maps."""
    q = f"tensor<{B}x{H}x{N}x{D}xf16>"
    s = f"tensor<{B}x{H}x{N}x{N}xf16>"
    r = f"tensor<{B}x{H}x{N}xf16>"

    def m5(*x):
        return "affine_map<(d0, d1, d2, d3, d4) -> (" + ", ".join(x) + ")>"
    m4 = "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>"
    red = '["parallel", "parallel", "parallel", "parallel", "reduction"]'
    par = '["parallel", "parallel", "parallel", "parallel"]'
    mac = ["  ^bb0(%a: f16, %b: f16, %acc: f16):", "    %0 = arith.mulf %a, %b : f16",
           "    %1 = arith.addf %acc, %0 : f16", "    linalg.yield %1 : f16"]
    return "\n".join(
        [f"func.func @{name}(%q: {q}, %k: {q}, %v: {q}{extra_args}) -> {q} {{",
         "  %zero = arith.constant 0.000000e+00 : f16",
         "  %ninf_c = arith.constant 0xFC00 : f16",
         f"  %s_e = tensor.empty() : {s}",
         f"  %s_f = linalg.fill ins(%zero : f16) outs(%s_e : {s}) -> {s}",
         f"  %s = linalg.generic {{indexing_maps = [{m5('d0', 'd1', 'd2', 'd4')}, "
         f"{m5('d0', 'd1', 'd3', 'd4')}, {m5('d0', 'd1', 'd2', 'd3')}], iterator_types = {red}}} "
         f"ins(%q, %k : {q}, {q}) outs(%s_f : {s}) {{"] + mac +
        [f"  }} -> {s}",
         f"  %t = linalg.generic {{indexing_maps = [{m4}{extra_maps}, {m4}], iterator_types = "
         f"{par}}} ins(%s{extra_ins} : {s}{extra_types}) outs(%s_e : {s}) {{",
         body.rstrip("\n"),
         f"  }} -> {s}",
         f"  %r_e = tensor.empty() : {r}",
         f"  %mx_i = linalg.fill ins(%ninf_c : f16) outs(%r_e : {r}) -> {r}",
         f"  %mx = linalg.reduce {{ arith.maximumf }} ins(%t : {s}) outs(%mx_i : {r}) dimensions = [3]",
         f"  %mxb = linalg.broadcast ins(%mx : {r}) outs(%s_e : {s}) dimensions = [3]",
         f"  %sub = linalg.map {{ arith.subf }} ins(%t, %mxb : {s}, {s}) outs(%s_e : {s})",
         f"  %ex = linalg.map {{ math.exp }} ins(%sub : {s}) outs(%s_e : {s})",
         f"  %sm_i = linalg.fill ins(%zero : f16) outs(%r_e : {r}) -> {r}",
         f"  %sm = linalg.reduce {{ arith.addf }} ins(%ex : {s}) outs(%sm_i : {r}) dimensions = [3]",
         f"  %smb = linalg.broadcast ins(%sm : {r}) outs(%s_e : {s}) dimensions = [3]",
         f"  %p = linalg.map {{ arith.divf }} ins(%ex, %smb : {s}, {s}) outs(%s_e : {s})",
         f"  %o_e = tensor.empty() : {q}",
         f"  %o_f = linalg.fill ins(%zero : f16) outs(%o_e : {q}) -> {q}",
         f"  %o = linalg.generic {{indexing_maps = [{m5('d0', 'd1', 'd2', 'd4')}, "
         f"{m5('d0', 'd1', 'd4', 'd3')}, {m5('d0', 'd1', 'd2', 'd3')}], iterator_types = {red}}} "
         f"ins(%p, %v : {s}, {q}) outs(%o_f : {q}) {{"] + mac +
        [f"  }} -> {q}", f"  return %o : {q}", "}"]) + "\n"


def _scaled(extra_block_args=""):
    return [f"  ^bb0(%x: f16{extra_block_args}, %out: f16):",
            "    %x32 = arith.extf %x : f16 to f32",
            f"    %scale = arith.constant {SCALE:.9e} : f32",
            "    %y = arith.mulf %x32, %scale : f32",
            "    %ninf = arith.constant 0xFF800000 : f32"]


def _positions():
    return ["    %i = linalg.index 2 : index", "    %j = linalg.index 3 : index",
            "    %ii = arith.index_cast %i : index to i64",
            "    %jj = arith.index_cast %j : index to i64",
            "    %d = arith.subi %jj, %ii : i64"]


def _end(value):
    return [f"    %r16 = arith.truncf {value} : f32 to f16", "    linalg.yield %r16 : f16"]


def programs():
    """{case: linalg MLIR text}."""
    alibi = _scaled(", %slope: f32") + _positions() + [
        "    %df = arith.sitofp %d : i64 to f32", "    %bias = arith.mulf %slope, %df : f32",
        "    %z = arith.addf %y, %bias : f32", "    %zero64 = arith.constant 0 : i64",
        "    %keep = arith.cmpi sle, %d, %zero64 : i64",
        "    %m = arith.select %keep, %z, %ninf : f32"] + _end("%m")
    docs = _scaled(", %di: i32, %dj: i32") + [
        "    %same = arith.cmpi eq, %di, %dj : i32",
        "    %m = arith.select %same, %y, %ninf : f32"] + _end("%m")
    window = _scaled() + _positions() + [
        "    %zero64 = arith.constant 0 : i64", "    %w = arith.constant -256 : i64",
        "    %le = arith.cmpi sle, %d, %zero64 : i64", "    %ge = arith.cmpi sge, %d, %w : i64",
        "    %keep = arith.andi %le, %ge : i1",
        "    %m = arith.select %keep, %y, %ninf : f32"] + _end("%m")
    softcap = _scaled() + _positions() + [
        "    %cap = arith.constant 3.000000e+01 : f32", "    %u = arith.divf %y, %cap : f32",
        "    %th = math.tanh %u : f32", "    %c = arith.mulf %th, %cap : f32",
        "    %zero64 = arith.constant 0 : i64", "    %keep = arith.cmpi sle, %d, %zero64 : i64",
        "    %m = arith.select %keep, %c, %ninf : f32"] + _end("%m")
    return {
        "alibi": _program("alibi", "\n".join(alibi), extra_args=f", %slopes: tensor<{H}xf32>",
                          extra_ins=", %slopes", extra_types=f", tensor<{H}xf32>",
                          extra_maps=", affine_map<(d0, d1, d2, d3) -> (d1)>"),
        "docs": _program("docs", "\n".join(docs), extra_args=f", %ids: tensor<{N}xi32>",
                         extra_ins=", %ids, %ids", extra_types=f", tensor<{N}xi32>, tensor<{N}xi32>",
                         extra_maps=", affine_map<(d0, d1, d2, d3) -> (d2)>, "
                                    "affine_map<(d0, d1, d2, d3) -> (d3)>"),
        "window": _program("window", "\n".join(window)),
        "softcap": _program("softcap", "\n".join(softcap)),
    }


def compile_all(out):
    import fa
    report = {}
    for chip in ("sm_90a", "sm_80"):
        for case, text in programs().items():
            k = fa.compile(text, chip=chip, raise_attention=True, cache=False)
            path = k.save(os.path.join(out, chip, case))
            report[f"{chip}/{case}"] = dict(path=path, kernel=k.name,
                                            params=[p["name"] for p in k.manifest["params"]],
                                            causal=k.manifest.get("causal"),
                                            window=k.manifest.get("window"))
            print(f"{chip}/{case}: {k.name}, params {report[f'{chip}/{case}']['params']}")
    with open(os.path.join(out, "kernels.json"), "w") as f:
        json.dump(report, f, indent=1)


def reference(case, q, k, v, extra):
    """The linalg program's semantics in float32 torch: out, and the number of
    visible (row, key) pairs of one head."""
    import torch
    s = torch.einsum("bhid,bhjd->bhij", q.float(), k.float()) * SCALE
    i = torch.arange(N, device=q.device)[:, None]
    j = torch.arange(N, device=q.device)[None, :]
    d = (j - i).float()
    if case == "alibi":
        s = s + extra["arg3"].float()[None, :, None, None] * d
        s = s.masked_fill(j > i, float("-inf"))
    elif case == "docs":
        ids = extra["arg3"]
        s = s.masked_fill(ids[:, None] != ids[None, :], float("-inf"))
    elif case == "window":
        s = s.masked_fill((j > i) | (j < i - 256), float("-inf"))
    elif case == "softcap":
        s = 30.0 * torch.tanh(s / 30.0)
        s = s.masked_fill(j > i, float("-inf"))
    visible = int(torch.isfinite(s[0, 0]).sum().item())
    return torch.einsum("bhij,bhjd->bhid", torch.softmax(s, -1), v.float()), visible


def check_all(out, chip, json_path):
    import torch
    import fa_runtime
    dev = torch.device("cuda")
    gen = torch.Generator(device="cpu").manual_seed(0)
    results = {}
    ok_all = True
    for case in programs():
        kern = fa_runtime.Kernel.load(os.path.join(out, chip, case, f"{case}_kernel.json"))
        q, k, v = (torch.randn((B, H, N, D), generator=gen).to(dev, torch.float16) for _ in range(3))
        extra = {}
        if case == "alibi":
            extra["arg3"] = torch.tensor([2.0 ** (-8 * (h + 1) / H) for h in range(H)],
                                         device=dev)
        elif case == "docs":
            extra["arg3"] = torch.sort(torch.randint(0, 4, (N,), generator=gen))[0].to(
                dev, torch.int32)
        out_t = kern(q, k, v, **extra)
        torch.cuda.synchronize()
        ref, visible = reference(case, q, k, v, extra)
        err = (out_t.float() - ref).abs().max().item()
        ok = err <= 2e-2
        # Negative control: other inputs to the modification (or the plain
        # causal reference where the case has none) must not match.
        if extra:
            bad_extra = {n: (t * 2 if t.is_floating_point() else torch.roll(t, 7))
                         for n, t in extra.items()}
            bad = kern(q, k, v, **bad_extra)
        else:
            bad = None
        other, _ = reference("alibi" if case != "alibi" else "window", q, k, v,
                             {"arg3": torch.ones(H, device=dev)})
        neg_err = ((bad.float() - ref).abs().max().item() if bad is not None
                   else (out_t.float() - other).abs().max().item())
        neg_ok = neg_err > 2e-2
        # Time: back-to-back launches between CUDA events, median of 7.
        times = []
        for _ in range(7):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(20):
                kern(q, k, v, **extra)
            b.record()
            torch.cuda.synchronize()
            times.append(a.elapsed_time(b) / 20)
        ms = sorted(times)[3]
        # FLOPs of the visible work (4 N_visible D per head: ANCHORS.md's
        # convention, with the masked pairs left out).
        flops = 4 * B * H * visible * D
        results[case] = dict(max_err=err, ok=ok, negative_err=neg_err, negative_ok=neg_ok,
                             ms=ms, visible_tflops=flops / ms / 1e9)
        ok_all &= ok and neg_ok
        print(f"{chip}/{case}: max |out - ref| {err:.3g} ({'ok' if ok else 'WRONG'}), "
              f"negative control {neg_err:.3g} ({'fails as it must' if neg_ok else 'DID NOT FAIL'}), "
              f"{ms:.3f} ms")
    if json_path:
        with open(json_path, "w") as f:
            json.dump(dict(date=time.strftime("%Y-%m-%d"), chip=chip,
                           device=torch.cuda.get_device_name(), results=results), f, indent=1)
    return 0 if ok_all else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["compile", "check"])
    p.add_argument("out")
    p.add_argument("--chip", default="sm_90a")
    p.add_argument("--json")
    a = p.parse_args()
    if a.mode == "compile":
        compile_all(a.out)
        return 0
    return check_all(a.out, a.chip, a.json)


if __name__ == "__main__":
    sys.exit(main())
