"""fa.attention_fp8: attention in FP8 (E4M3) on sm_90a from f16 / bf16 tensors.

The compiled variant (Variant fp8: e4m3 q, k, V^T with f32 descales per 128 x 128 block) carries
its own quantization kernels in its module; a call runs them (per 128-row block: delta =
max|x| / 448, x / delta rounded to nearest even) and then the attention, three small launches
and one large (docs/FP8.md). The output has q's dtype; its error is that of FP8 inputs (about
1e-2 RMSE relative to the values' scale on outlier-heavy data), not of f16.
"""
import torch

from . import dispatch
from .torch_ops import _DTYPE_NAMES, chip_for_device
from .validation import AttentionInputError, UnsupportedError
from .variant import Variant, normalize_window

HEAD_DIMS = (64, 128, 256)


def attention_fp8(q, k, v, *, causal=False, window=None, scale=None, return_lse=False):
    """softmax(scale * Q K^T) V with q, k, v quantized to E4M3 per 128-row block (the sm_90a
    fp8 kernel and its compiled quantization): q [B, Hq, Nq, D], k and v [B, Hkv, Nk, D]
    (Hq a multiple of Hkv), f16 or bf16 on one CUDA device of compute capability 9.0; D in
    64, 128, 256; causal and window bottom-right aligned as in fa.attention. Returns out
    (q's dtype), and lse [B, Hq, Nq] f32 with return_lse. AttentionInputError for tensors
    that do not fit, UnsupportedError where no fp8 kernel exists (other GPUs, dims)."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor) or t.dim() != 4:
            raise AttentionInputError(f"fa.attention_fp8: {name} must be a 4-D tensor "
                                      f"[B, H, N, D]")
    if q.dtype not in (torch.float16, torch.bfloat16) or k.dtype != q.dtype or \
            v.dtype != q.dtype:
        raise AttentionInputError(f"fa.attention_fp8: q, k, v must share one dtype, float16 "
                                  f"or bfloat16 (got {q.dtype}, {k.dtype}, {v.dtype})")
    B, Hq, Nq, D = q.shape
    if k.shape != v.shape or k.shape[0] != B or k.shape[3] != D or k.shape[1] == 0 or \
            Hq % k.shape[1]:
        raise AttentionInputError(f"fa.attention_fp8: q {tuple(q.shape)}, k {tuple(k.shape)},"
                                  f" v {tuple(v.shape)}: k and v need one shape, q the same "
                                  f"batch and D and a multiple of k's heads")
    if q.device.type != "cuda" or k.device != q.device or v.device != q.device:
        raise AttentionInputError("fa.attention_fp8: q, k, v must be on one CUDA device")
    if chip_for_device(q.device) != "sm_90a":
        raise UnsupportedError(f"fa.attention_fp8: {q.device} is not sm_90a (H100 / H200): "
                               f"the fp8 kernel uses its e4m3 wgmma")
    if D not in HEAD_DIMS:
        raise UnsupportedError(f"fa.attention_fp8: head dim {D}: the fp8 kernel supports "
                               f"{', '.join(map(str, HEAD_DIMS))}")
    try:
        window = normalize_window(causal, window)
        variant = Variant.make(_DTYPE_NAMES[q.dtype], D, causal, window, scale, None,
                               return_lse, "sm_90a", fp8=True)
    except ValueError as e:
        raise AttentionInputError(f"fa.attention_fp8: {e}") from None
    kern = dispatch.kernel(variant)
    return kern(**kern.quantize(q, k, v))
