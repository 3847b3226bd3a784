"""python -m fa.precompile --chip sm_90a --out DIR [VARIANT ...]

Compiles fa.attention kernels ahead of time into a bundle directory (fa.bundle)
that fa.attention loads where the compiler is absent (FA_BUNDLE=DIR or
fa.load_bundle(DIR)). A VARIANT is a comma-separated spec (fa.Variant.parse):

    f16,d128,causal,lse     bf16,d64,window=256:0     f16,d128,scale=0.1
    f16,d128,causal,grad    (the backward kernel, for loss.backward())
    f16,d128,causal,kv_lens,page=64   (per-sequence lengths, a paged KV cache of
                            64-key pages: fa.attention(..., kv_lens=, page_table=))
    bf16,d128,causal,lse,varlen       (packed variable-length sequences:
                            fa.attention_varlen, sm_90a)
    f16,d128,causal,fp8     (FP8 with per-block descales and its quantization
                            kernels: fa.attention_fp8, sm_90a)

Without VARIANTs: the default sweep, every combination of --dtypes, --head-dims,
causal or not, with and without lse, and for sm_90a the causal kernels with dynamic
tiles at head dims 64 and 128 (what fa.attention runs for causal sequences of at
most 2048 tokens) and the d64 kernels with three consumer warpgroups (block-q 192:
what it runs at head dim 64 from 2048 tokens); 40 kernels for sm_90a by default; --grad
adds the backward kernel of each (dtype, head dim, causal) the chip's backward
supports (training needs it and the forward with lse).
"""
import argparse
import itertools
import sys
import time

from .variant import GRAD_HEAD_DIMS, HEAD_DIMS, Variant


def default_variants(chip, dtypes=("f16", "bf16"), head_dims=None, grad=False):
    head_dims = head_dims or HEAD_DIMS[chip]
    todo = [Variant.make(dt, d, causal, None, None, None, lse, chip)
            for dt, d, causal, lse in itertools.product(dtypes, head_dims, (False, True),
                                                         (False, True))]
    if chip == "sm_90a":  # short causal sequences (fa.torch_ops._short_causal)
        todo += [Variant.make(dt, d, True, None, None, None, lse, chip,
                              options={"dynamic-tiles": True})
                 for dt, d, lse in itertools.product(dtypes, head_dims, (False, True))
                 if d in (64, 128)]
        # d64 from 2048 tokens (fa.torch_ops._prefill_schedule): three consumer warpgroups.
        todo += [Variant.make(dt, 64, causal, None, None, None, lse, chip,
                              options={"block-q": 192})
                 for dt, causal, lse in itertools.product(dtypes, (False, True), (False, True))
                 if 64 in head_dims]
    if grad:
        todo += [Variant.make(dt, d, causal, chip=chip, grad=True)
                 for dt, d, causal in itertools.product(dtypes, head_dims, (False, True))
                 if d in GRAD_HEAD_DIMS[chip]]
    return todo


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m fa.precompile", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chip", action="append", choices=("sm_80", "sm_90a"),
                    help="target chip (repeat for both); default sm_90a")
    ap.add_argument("--out", required=True, help="bundle directory (created or extended)")
    ap.add_argument("--dtypes", default="f16,bf16", help="default sweep: element types")
    ap.add_argument("--head-dims", default=None,
                    help="default sweep: head dims (default: all the chip supports)")
    ap.add_argument("--grad", action="store_true",
                    help="default sweep: also the backward kernels")
    ap.add_argument("variants", nargs="*", help="variant specs (fa.Variant.parse)")
    args = ap.parse_args(argv)
    from . import bundle, compiler
    chips = args.chip or ["sm_90a"]
    todo = []
    for chip in chips:
        if args.variants:
            todo += [Variant.parse(s, chip=chip) for s in args.variants]
        else:
            hd = [int(x) for x in args.head_dims.split(",")] if args.head_dims else None
            if hd:
                hd = [d for d in hd if d in HEAD_DIMS[chip]]
            todo += default_variants(chip, tuple(args.dtypes.split(",")), hd, args.grad)
    done = []
    for v in todo:
        t = time.perf_counter()
        k = compiler.compile_variant(v)
        done.append((v, k))
        print(f"{v.chip:7s} {v.spec():40s} {k.name}  {time.perf_counter() - t:.2f} s",
              flush=True)
    index = bundle.write(args.out, done, compiler=compiler.compiler_id())
    print(f"wrote {args.out}/index.json: {len(index['kernels'])} kernels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
