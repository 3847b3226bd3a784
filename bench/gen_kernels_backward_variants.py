"""Writes bench/kernels_backward_variants.mlir: the backward (fa.attention_grad) of each
variant of bench/kernels_variants.mlir that has softcap or a score_mod / mask_mod region, with
the same attributes and regions (bf16, head dim 128), plus f16 head dim 64 copies of two of
them. fa-to-ptx derives score_mod's derivative (fa-differentiate-score-mod).

  python3 bench/gen_kernels_backward_variants.py > bench/kernels_backward_variants.mlir
"""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
FUNC = re.compile(r"func\.func @var_(\w+)\((.*?)\) -> tensor<\?x\?x\?x128xbf16> \{\n"
                  r"  %o = fa\.attention %q, %k, %v (.*?) : tensor<\?x\?x\?x128xbf16>, .*?\n"
                  r"  return %o", re.S)
WANTED = ("plain_full", "plain_causal", "softcap_full", "softcap_causal", "softcapmod_full",
          "softcapmod_causal", "alibi_full", "alibi_causal", "doc_full", "doc_causal",
          "prefixlm", "windowmod")
EXTRA_D64 = ("alibi_causal", "doc_causal")


def grad_func(name, args, body, elt, d):
    t = f"tensor<?x?x?x{d}x{elt}>"
    extra = args.split(", %v: tensor<?x?x?x128xbf16>")[1]  # captured tensors, if any
    sig = (f"%q: {t}, %k: {t}, %v: {t}, %o: {t}, %lse: tensor<?x?x?xf32>, %do: {t}{extra}")
    return (f"func.func @bvar_{name}({sig}) -> ({t}, {t}, {t}) {{\n"
            f"  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do {body} : "
            f"{t}, {t}, {t}, {t}, tensor<?x?x?xf32>, {t} -> {t}, {t}, {t}\n"
            f"  return %dq, %dk, %dv : {t}, {t}, {t}\n}}\n")


def main():
    src = open(os.path.join(HERE, "kernels_variants.mlir")).read()
    found = {m.group(1): (m.group(2), m.group(3)) for m in FUNC.finditer(src)}
    print("// The backward kernels of bench/check_backward_variants.py, generated from\n"
          "// bench/kernels_variants.mlir by bench/gen_kernels_backward_variants.py (bf16, D 128;\n"
          "// f16 D 64 copies named *_d64). Compiled per chip:\n"
          "// fa-opt bench/kernels_backward_variants.mlir\n"
          "//   '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a},fa-dump-kernel{dir=OUT})'\n")
    for name in WANTED:
        args, body = found[name]
        print(grad_func(name, args, body, "bf16", 128))
    for name in EXTRA_D64:
        args, body = found[name]
        print(grad_func(name + "_d64", args, body, "f16", 64))


if __name__ == "__main__":
    main()
