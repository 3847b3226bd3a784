#!/usr/bin/env python3
"""Property test of the CPU numerics: random cases with extreme but finite
inputs (logits up to 1e4, scales from 1e-30 to 1e30, softcap over huge
logits, fully masked rows, fp8 inputs saturating at 448, windows up to
INT64_MAX) must give finite outputs that match the float64 reference, for
the tiled form (random block sizes) and the reference lowering.

    property.py FA_OPT MLIR_RUNNER_CMD WORKDIR [--cases N] [--seed S]

Each case is one sdpa_case.py emit/check (its checker fails on NaN, and on
an Inf or a value outside its tolerance bound); prints one line per case and
`PROPERTY PASS n cases` or exits 1 naming the first failing case.
"""
import argparse, random, shlex, subprocess, sys, pathlib

HERE = pathlib.Path(__file__).resolve().parent
CASE = [sys.executable, str(HERE / "sdpa_case.py")]
MAX = 9223372036854775807


def draw(rng):
    """One random case, as sdpa_case.py options."""
    in_type = rng.choice(["f32", "f16", "bf16", "f8E4M3FN"])
    opts = ["--B", str(rng.randint(1, 2)), "--Nq", str(rng.choice([1, 3, 9, 17])),
            "--Nk", str(rng.choice([1, 4, 9, 23])), "--D", str(rng.choice([4, 8, 16])),
            "--in-type", in_type, "--seed", str(rng.randrange(1 << 20)), "--lse"]
    hkv = rng.randint(1, 2)
    opts += ["--Hkv", str(hkv), "--Hq", str(hkv * rng.randint(1, 2))]
    if in_type == "f8E4M3FN":
        opts += ["--out-type", rng.choice(["f32", "bf16", "f16"])]
        # Values past 448 saturate when rounded to fp8.
        opts += ["--qk-range", str(rng.choice([1.0, 600.0])),
                 "--v-range", str(rng.choice([1.0, 1000.0]))]
    kind = rng.choice(["logits", "scale", "softcap", "plain"])
    if kind == "logits":
        opts += ["--logit-mag", str(rng.choice([1e2, 1e3, 1e4]))]
    elif kind == "scale":
        opts += ["--scale", rng.choice(["1e-30", "1e-10", "1e10", "1e30"])]
        if in_type != "f8E4M3FN":
            opts += ["--qk-range", str(rng.choice([1e-3, 1.0]))]
    elif kind == "softcap":
        opts += ["--softcap", rng.choice(["1.0", "30.0", "1e-3"]),
                 "--logit-mag", str(rng.choice([1e3, 1e4]))]
    position = rng.choice(["none", "causal", "window", "window-max"])
    if position == "causal":
        opts += ["--causal"]
    elif position == "window":
        opts += ["--window", str(rng.choice([-1, 0, 2])), str(rng.choice([-1, 0, 1]))]
    elif position == "window-max":
        opts += ["--window", str(rng.choice([MAX, 3])), str(rng.choice([MAX, 0, -1]))]
    mask = rng.choice(["none", "none", "bool", "additive"])
    if mask != "none":
        opts += ["--mask", mask]
        # A row with every key masked: out 0, lse -inf.
        if rng.random() < 0.5:
            opts += ["--masked-row", "0"]
    return opts


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("fa_opt")
    p.add_argument("runner", help="the mlir-runner command line")
    p.add_argument("workdir")
    p.add_argument("--cases", type=int, default=12)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = random.Random(a.seed)
    work = pathlib.Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    for n in range(a.cases):
        opts = draw(rng)
        pipelines = [
            "--fa-to-cpu=reference=1",
            f"--fa-to-cpu=block-q={rng.choice([1, 2, 4, 64])} "
            f"block-kv={rng.choice([1, 3, 8, 64])}",
        ]
        mlir = work / f"case{n}.mlir"
        emitted = run(CASE + ["emit"] + opts)
        if emitted.returncode:
            print(f"case {n}: emit failed: {emitted.stderr}")
            return 1
        mlir.write_text(emitted.stdout)
        for k, pipeline in enumerate(pipelines):
            lowered = run([a.fa_opt, str(mlir), pipeline])
            out = run(shlex.split(a.runner), input=lowered.stdout) \
                if lowered.returncode == 0 else lowered
            printed = work / f"case{n}.{k}.out"
            printed.write_text(out.stdout)
            checked = run(CASE + ["check"] + opts + [str(printed)]) \
                if out.returncode == 0 else out
            verdict = (checked.stdout or checked.stderr).strip().splitlines()
            verdict = verdict[0] if verdict else "no output"
            line = f"case {n} {pipeline}: {' '.join(opts)}"
            if checked.returncode or not verdict.startswith("PASS"):
                print(f"{line}\n  FAIL: {verdict}")
                return 1
            print(f"{line}\n  {verdict[:100]}")
    print(f"PROPERTY PASS {a.cases} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
