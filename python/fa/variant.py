"""A kernel variant: what selects one compiled fa.attention kernel (or, with
grad, its backward fa.attention_grad), and the MLIR signature it is compiled
from. With kv_lens the kernel takes per-sequence key lengths, with page_size
S it reads K and V from page pools [P, Hkv, S, D] through a page table
(docs/Inference.md, "Paged KV caches"); with varlen it takes packed
variable-length sequences with cumulative offsets (docs/Attention.md).

A Variant is hashable and canonical (the default scale is None whatever the
spelling, causal is window (-1, 0) when no window is given, options are a
sorted tuple), so it is the in-memory cache key and the bundle's index key.
Pure Python: no MLIR, no torch.
"""
import math
import re
import struct
from dataclasses import dataclass, field

DTYPES = ("f16", "bf16")
CHIPS = ("sm_80", "sm_90a")
# Head dims each chip's kernel supports (lib/Conversion/AttentionToNVGPU/SM80FlashAttention.cpp,
# SM90FlashAttention.cpp).
HEAD_DIMS = {"sm_80": (64, 128), "sm_90a": (64, 128, 256)}
# Head dims of each chip's backward (fa.attention_grad) kernel.
GRAD_HEAD_DIMS = {"sm_80": (64, 128), "sm_90a": (64, 128)}
# A page of a paged KV cache holds a multiple of this many keys.
PAGE_MULTIPLE = 16
# A mask operand: its element type (bool: i1, keep where true; the others are
# added to the scores) and its batch / head dims, each the full size or 1
# (broadcast), then `1` when it has one row that every query row reads (a
# per-key mask): `bool:11` is [1, 1, Nq, Nk], `f16:BH` [B, Hq, Nq, Nk],
# `bool:B11` a key-padding mask [B, 1, 1, Nk].
MASK_DTYPES = {"bool": "i1", "f16": "f16", "bf16": "bf16", "f32": "f32"}
MASK_BROADCASTS = ("11", "1H", "B1", "BH", "111", "1H1", "B11", "BH1")
_I64_MAX = 2**63 - 1


def _f32(x):
    """x rounded to f32 (the attribute's type), as a Python float."""
    return struct.unpack("f", struct.pack("f", float(x)))[0]


def _f32_text(x):
    """An f32 as MLIR prints it exactly (hex bit pattern)."""
    return "0x%08X" % struct.unpack("I", struct.pack("f", float(x)))[0]


def normalize_window(causal, window):
    """(left, right) with -1 for unbounded, or None. Causal without a window is
    None here (the `causal` flag says it); causal with a window needs right 0
    (or -1, read as 0). ValueError for anything else."""
    if window is None:
        return None
    try:
        left, right = (int(w) for w in window)
    except (TypeError, ValueError):
        raise ValueError(f"window: {window!r} is not a (left, right) pair of ints") from None
    for name, w in (("left", left), ("right", right)):
        if w < -1 or w > _I64_MAX:
            raise ValueError(f"window: {name} = {w}; each bound is >= 0, or -1 for unbounded")
    if causal:
        if right not in (0, -1):
            raise ValueError(f"window: right = {right} with causal=True; causal attention sees "
                             f"no key right of the diagonal (right must be 0)")
        right = 0
    if (left, right) == (-1, -1):
        return None
    if causal and left == -1:
        return None
    return (left, right)


@dataclass(frozen=True)
class Variant:
    """One fa.attention kernel: element type, head dim, mask, scale, softcap,
    whether it writes the log-sum-exp, the chip and the compiler options; with
    grad, the backward kernel (fa.attention_grad) of that attention (no lse:
    it reads the forward's); kv_lens: it takes per-sequence key lengths
    (`kv_lens(...)`); page_size S: K and V are page pools [P, Hkv, S, D] read
    through a page table (`pages(...)`); fp8: the sm_90a kernel on e4m3 q, k,
    V^T with descales per 128 x 128 block and its quantization kernels
    (Kernel.quantize; dtype is then its inputs' and output's, docs/FP8.md);
    mask: a mask operand `<dtype>:<dims>` (MASK_DTYPES, MASK_BROADCASTS:
    `bool:11` a boolean [1, 1, Nq, Nk] mask, `f16:BH` an additive
    [B, Hq, Nq, Nk] one, `bool:B11` a key-padding [B, 1, 1, Nk] one;
    docs/Attention.md), a forward kernel argument `%mask`."""
    dtype: str = "f16"
    head_dim: int = 128
    causal: bool = False
    window: tuple = None
    scale: float = None
    softcap: float = None
    lse: bool = False
    chip: str = "sm_90a"
    options: tuple = field(default=())
    grad: bool = False
    kv_lens: bool = False
    page_size: int = None
    varlen: bool = False
    fp8: bool = False
    mask: str = None

    @classmethod
    def make(cls, dtype="f16", head_dim=128, causal=False, window=None, scale=None, softcap=None,
             lse=False, chip="sm_90a", options=None, grad=False, kv_lens=False, page_size=None,
             varlen=False, fp8=False, mask=None):
        """The canonical variant; ValueError naming what is wrong."""
        if dtype not in DTYPES:
            raise ValueError(f"dtype: {dtype!r}; the kernels take {', '.join(DTYPES)}")
        if chip not in CHIPS:
            raise ValueError(f"chip: {chip!r}; one of {', '.join(CHIPS)}")
        if isinstance(head_dim, bool) or not isinstance(head_dim, int) or head_dim <= 0:
            raise ValueError(f"head_dim: {head_dim!r} is not a positive int")
        causal = bool(causal)
        window = normalize_window(causal, window)
        if scale is not None:
            scale = float(scale)
            if not math.isfinite(scale):
                raise ValueError(f"scale: {scale} is not finite")
            scale = _f32(scale)
            if scale == _f32(1.0 / math.sqrt(head_dim)):
                scale = None  # the default, however it was written
        if softcap is not None:
            softcap = float(softcap)
            if not (math.isfinite(softcap) and softcap > 0):
                raise ValueError(f"softcap: {softcap} must be a finite number > 0")
            softcap = _f32(softcap)
        opts = normalize_options(options)
        if grad and lse:
            raise ValueError("lse: a backward (grad) kernel reads the forward's lse and writes "
                             "none")
        if page_size in (None, 0):
            page_size = None
        elif isinstance(page_size, bool) or not isinstance(page_size, int) or page_size < 0 \
                or page_size % PAGE_MULTIPLE:
            raise ValueError(f"page_size: {page_size!r} is not a positive multiple of "
                             f"{PAGE_MULTIPLE} (keys per page of a paged KV cache)")
        if grad and (kv_lens or page_size):
            raise ValueError("grad: there is no backward kernel of an attention with kv_lens or "
                             "a paged KV cache (inference only)")
        if varlen and (kv_lens or page_size):
            raise ValueError("varlen: packed sequences take no kv_lens or page table")
        if varlen and grad and chip != "sm_90a":
            raise ValueError("varlen: the backward kernel of packed sequences is sm_90a's")
        if fp8 and (chip != "sm_90a" or grad or kv_lens or page_size or varlen or
                    softcap is not None):
            raise ValueError("fp8: the sm_90a forward kernel only (no grad, kv_lens, pages, "
                             "varlen or softcap)")
        if mask is not None:
            dt, _, dims = str(mask).partition(":")
            if dt not in MASK_DTYPES or dims not in MASK_BROADCASTS:
                raise ValueError(f"mask: {mask!r} is not <dtype>:<dims> with dtype one of "
                                 f"{', '.join(MASK_DTYPES)} and dims one of "
                                 f"{', '.join(MASK_BROADCASTS)} (e.g. bool:11 for a "
                                 f"[1, 1, Nq, Nk] boolean mask)")
            if kv_lens or page_size or varlen or fp8:
                raise ValueError("mask: a mask operand is taken by the 16-bit forward and "
                                 "backward kernels without kv_lens, pages or varlen")
            mask = f"{dt}:{dims}"
        return cls(dtype, head_dim, causal, window, scale, softcap, bool(lse), chip, opts,
                   bool(grad), bool(kv_lens), page_size, bool(varlen), bool(fp8), mask)

    @classmethod
    def parse(cls, spec, chip="sm_90a"):
        """A variant from its command-line spelling, comma-separated:
        `f16,d128,causal,lse,window=64:0,scale=0.125,softcap=30,stages=3`
        (anything key=value that is not window/scale/softcap/chip/page is a
        compiler option); `grad` selects the backward kernel:
        `f16,d128,causal,grad`; `kv_lens` and `page=S` the kernel of a paged KV
        cache with per-sequence lengths: `f16,d128,causal,kv_lens,page=64`;
        `varlen` the kernel of packed variable-length sequences:
        `bf16,d128,causal,lse,varlen`; `fp8` the e4m3 kernel with per-block
        descales of that output dtype: `f16,d128,causal,fp8`; `mask=<dtype>:<dims>`
        the kernel taking a mask operand: `bf16,d128,full,mask=bool:B1`."""
        kw = dict(chip=chip)
        opts = {}
        for tok in filter(None, (t.strip() for t in spec.split(","))):
            if tok in DTYPES:
                kw["dtype"] = tok
            elif re.fullmatch(r"d\d+", tok):
                kw["head_dim"] = int(tok[1:])
            elif tok in ("causal", "lse", "grad", "kv_lens", "varlen", "fp8"):
                kw[tok] = True
            elif tok == "full":
                kw["causal"] = False
            elif "=" in tok:
                k, v = tok.split("=", 1)
                if k == "window":
                    kw["window"] = tuple(int(x) for x in v.split(":"))
                elif k in ("scale", "softcap"):
                    kw[k] = float(v)
                elif k in ("page", "page_size"):
                    try:
                        kw["page_size"] = int(v)
                    except ValueError:
                        raise ValueError(f"variant {spec!r}: page={v!r} is not an integer "
                                         f"(keys per page)") from None
                elif k == "chip":
                    kw["chip"] = v
                elif k == "mask":
                    kw["mask"] = v
                else:
                    opts[k] = v
            else:
                raise ValueError(f"variant {spec!r}: {tok!r} is not a dtype ({', '.join(DTYPES)}),"
                                 f" dN, causal, full, lse, grad, kv_lens, varlen, fp8 or "
                                 f"key=value")
        return cls.make(options=opts, **kw)

    def spec(self):
        """The inverse of parse()."""
        toks = [self.dtype, f"d{self.head_dim}", "causal" if self.causal else "full"]
        if self.lse:
            toks.append("lse")
        if self.grad:
            toks.append("grad")
        if self.kv_lens:
            toks.append("kv_lens")
        if self.page_size:
            toks.append(f"page={self.page_size}")
        if self.varlen:
            toks.append("varlen")
        if self.fp8:
            toks.append("fp8")
        if self.mask:
            toks.append(f"mask={self.mask}")
        if self.window:
            toks.append(f"window={self.window[0]}:{self.window[1]}")
        if self.scale is not None:
            toks.append(f"scale={self.scale!r}")
        if self.softcap is not None:
            toks.append(f"softcap={self.softcap!r}")
        toks += [f"{k}={v}" for k, v in self.options]
        return ",".join(toks)

    def to_json(self):
        d = {"dtype": self.dtype, "head_dim": self.head_dim, "causal": self.causal,
             "window": list(self.window) if self.window else None, "scale": self.scale,
             "softcap": self.softcap, "lse": self.lse, "chip": self.chip,
             "options": {k: v for k, v in self.options}}
        if self.grad:  # absent for forward kernels: their JSON is as before
            d["grad"] = True
        if self.kv_lens:  # likewise absent for kernels without them
            d["kv_lens"] = True
        if self.page_size:
            d["page_size"] = self.page_size
        if self.varlen:
            d["varlen"] = True
        if self.fp8:
            d["fp8"] = True
        if self.mask:
            d["mask"] = self.mask
        return d

    @classmethod
    def from_json(cls, d):
        return cls.make(d["dtype"], d["head_dim"], d["causal"], d.get("window"), d.get("scale"),
                        d.get("softcap"), d["lse"], d["chip"], d.get("options") or {},
                        bool(d.get("grad", False)), bool(d.get("kv_lens", False)),
                        d.get("page_size"), bool(d.get("varlen", False)),
                        bool(d.get("fp8", False)), d.get("mask"))

    def func_name(self):
        """The func.func name (its kernel is <name>_kernel): readable, and unique
        per variant (a short hash covers scale, softcap and options); fa_grad_...
        for a backward kernel; _kvlens and _pageS for kv_lens and the page size."""
        name = "fa_grad" if self.grad else "fa_fp8" if self.fp8 else "fa"
        name += f"_{self.dtype}_d{self.head_dim}_{'causal' if self.causal else 'full'}"
        if self.window:
            name += "_w%s_%s" % tuple("inf" if w < 0 else str(w) for w in self.window)
        if self.lse:
            name += "_lse"
        if self.kv_lens:
            name += "_kvlens"
        if self.page_size:
            name += f"_page{self.page_size}"
        if self.varlen:
            name += "_varlen"
        if self.mask:
            name += "_mask_" + self.mask.replace(":", "")
        if self.scale is not None or self.softcap is not None or self.options:
            import hashlib
            name += "_" + hashlib.sha256(self.spec().encode()).hexdigest()[:8]
        return name

    def _mask_type(self):
        """The mask operand's tensor type: a broadcast dim (1 in the spec) is a
        static 1, the others dynamic."""
        dt, dims = self.mask.split(":")
        return (f"tensor<{'?' if dims[0] == 'B' else '1'}x{'?' if dims[1] == 'H' else '1'}"
                f"x{'1' if dims[2:] == '1' else '?'}x?x{MASK_DTYPES[dt]}>")

    def mlir(self):
        """The MLIR module fa.compile compiles for this variant: one func.func
        holding one fa.attention (or, with grad, one fa.attention_grad) on
        [B, H, N, D] tensors with dynamic B, H, N; with kv_lens a %kv_lens
        argument (tensor<?xi32>) in a `kv_lens(...)` clause; paged: k and v
        are page pools tensor<?x?xSxDxE> and %page_table (tensor<?x?xi32>) is
        in a `pages(...)` clause; varlen: batch-1 tensors [1, H, T, D] and
        %cu_seqlens_q, %cu_seqlens_k (tensor<?xi32>) in a `varlen(...)`
        clause (the kernel's contract is token-major [T, H, D] by default:
        fa-to-ptx{varlen-layout=thd}); mask: a %mask argument
        tensor<{1|?}x{1|?}x{?|1}x?x{i1|f16|bf16|f32}> in a `mask(...)` clause."""
        e = self.dtype
        t = f"tensor<{'1' if self.varlen else '?'}x?x?x{self.head_dim}x{e}>"
        attr_text = attribute_text(self.causal, self.window, self.scale, self.softcap)
        if self.fp8:
            return self._fp8_mlir(t, attr_text)
        if self.grad:
            lse_t = f"tensor<{'1' if self.varlen else '?'}x?x?xf32>"
            ins = f"{t}, {t}, {t}, {t}, {lse_t}, {t}"
            outs = f"{t}, {t}, {t}"
            # varlen: the batch-1 planes [1, H, T, D] (htd) and the offsets.
            cu_args = cu_clause = ""
            if self.varlen:
                cu_args = ", %cu_seqlens_q: tensor<?xi32>, %cu_seqlens_k: tensor<?xi32>"
                cu_clause = (" varlen(%cu_seqlens_q, %cu_seqlens_k : tensor<?xi32>, "
                             "tensor<?xi32>)")
            # mask: the forward's, the argument after do (the backward kernel's
            # parameter `mask` after dv).
            if self.mask:
                mt = self._mask_type()
                cu_args = f", %mask: {mt}"
                cu_clause = f" mask(%mask : {mt})"
            return (f"func.func @{self.func_name()}(%q: {t}, %k: {t}, %v: {t}, %o: {t}, "
                    f"%lse: {lse_t}, %do: {t}{cu_args}) -> ({outs}) {{\n"
                    f"  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do{cu_clause}"
                    f"{attr_text} : {ins} -> {outs}\n"
                    f"  return %dq, %dk, %dv : {outs}\n"
                    f"}}\n")
        if self.lse:
            res_t = f"({t}, tensor<{'1' if self.varlen else '?'}x?x?xf32>)"
            results = "%o, %lse"
        else:
            res_t = t
            results = "%o"
        kt = f"tensor<?x?x{self.page_size}x{self.head_dim}x{e}>" if self.page_size else t
        args = f"%q: {t}, %k: {kt}, %v: {kt}"
        clauses = ""
        if self.kv_lens:
            args += ", %kv_lens: tensor<?xi32>"
            clauses += " kv_lens(%kv_lens : tensor<?xi32>)"
        if self.page_size:
            args += ", %page_table: tensor<?x?xi32>"
            clauses += " pages(%page_table : tensor<?x?xi32>)"
        if self.varlen:
            args += ", %cu_seqlens_q: tensor<?xi32>, %cu_seqlens_k: tensor<?xi32>"
            clauses += (" varlen(%cu_seqlens_q, %cu_seqlens_k : tensor<?xi32>, "
                        "tensor<?xi32>)")
        if self.mask:
            mt = self._mask_type()
            args += f", %mask: {mt}"
            clauses += f" mask(%mask : {mt})"
        return (f"func.func @{self.func_name()}({args}) -> {res_t} {{\n"
                f"  {results} = fa.attention %q, %k, %v{clauses}{attr_text} : {t}, {kt}, {kt}"
                f" -> {res_t}\n"
                f"  return {results} : {res_t.strip('()')}\n"
                f"}}\n")


    def _fp8_mlir(self, out_t, attr_text):
        """fp8: e4m3 q, k, v with [B, H, ceil(N / 128)] descales of 128 x 128 blocks
        (the kernel's tiles, so its module carries the quantization kernels)."""
        t8 = f"tensor<?x?x?x{self.head_dim}xf8E4M3FN>"
        dt = "tensor<?x?x?xf32>"
        attrs = attr_text[2:-1] + ", " if attr_text else ""
        attrs = " {" + attrs + "descale_block = array<i64: 128, 128>}"
        res_t = f"({out_t}, tensor<?x?x?xf32>)" if self.lse else out_t
        results = "%o, %lse" if self.lse else "%o"
        return (f"func.func @{self.func_name()}(%q: {t8}, %k: {t8}, %v: {t8}, %qd: {dt}, "
                f"%kd: {dt}, %vd: {dt}) -> {res_t} {{\n"
                f"  {results} = fa.attention %q, %k, %v descale(%qd, %kd, %vd : {dt}, {dt}, {dt})"
                f"{attrs} : {t8}, {t8}, {t8} -> {res_t}\n"
                f"  return {results} : {res_t.strip('()')}\n"
                f"}}\n")


def attribute_text(causal, window, scale, softcap):
    """fa.attention's attribute dictionary (with its leading space), or ""."""
    attrs = []
    if causal:
        attrs.append("causal")
    if scale is not None:
        attrs.append(f"scale = {_f32_text(scale)} : f32")
    if softcap is not None:
        attrs.append(f"softcap = {_f32_text(softcap)} : f32")
    if window:
        attrs.append(f"window = array<i64: {window[0]}, {window[1]}>")
    return (" {" + ", ".join(attrs) + "}") if attrs else ""


def normalize_options(options):
    """fa-to-ptx options as a sorted tuple of (flag, text): Python spellings
    (block_q=64, persistent=True) become the pipeline's (block-q=64,
    persistent=true)."""
    def text(value):
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)
    return tuple(sorted((str(k).replace("_", "-"), text(v))
                        for k, v in dict(options or {}).items()))


def chip_for_capability(major, minor):
    """The chip whose kernels run on a device of compute capability
    major.minor: sm_90a on 9.0 (wgmma needs exactly sm_90a), sm_80 PTX on 8.x
    and, JIT-compiled by the driver, on later architectures; None below 8.0."""
    if (major, minor) == (9, 0):
        return "sm_90a"
    if major >= 8:
        return "sm_80"
    return None
