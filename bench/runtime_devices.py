"""The Python runtime on real GPUs (GPU machine, no MLIR): launches on the tensors' device
(cuda:1 when there are two), rejects what does not fit the kernel before any launch, and
copies non-contiguous inputs. Usage: python3 bench/runtime_devices.py K90DIR K80DIR
Prints one line per check and exits 1 if any failed."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import torch  # noqa: E402

from common import reference  # noqa: E402
from fa_runtime import Kernel  # noqa: E402

failures = []


def report(name, ok, detail=""):
    print(f"{'OK  ' if ok else 'FAIL'} {name} {detail}", flush=True)
    if not ok:
        failures.append(name)


def expect_value_error(name, fn, word):
    try:
        fn()
    except ValueError as e:
        report(name, word in str(e), f"ValueError: {e}")
        return
    except Exception as e:  # noqa: BLE001
        report(name, False, f"{type(e).__name__}: {e}")
        return
    report(name, False, "accepted")


def main():
    k90, k80 = sys.argv[1], sys.argv[2]
    n = torch.cuda.device_count()
    print(f"devices: {n}", flush=True)
    for kdir, kname in ((k90, "attn_f16_d128_causal_lse_kernel"), (k80, "attn_f16_d64_causal_lse_kernel")):
        kern = Kernel.load(os.path.join(kdir, kname + ".json"))
        d = kern.manifest["head_dim"]
        for dev in range(n):
            torch.manual_seed(dev)
            q = torch.randn(2, 4, 333, d, device=f"cuda:{dev}", dtype=torch.half)
            k = torch.randn(2, 2, 517, d, device=f"cuda:{dev}", dtype=torch.half)
            v = torch.randn(2, 2, 517, d, device=f"cuda:{dev}", dtype=torch.half)
            with torch.cuda.device(0):  # the current device is not the tensors'
                o, lse = kern(q, k, v)
            torch.cuda.synchronize(dev)
            ref, rlse = reference(q, k, v, True)
            err = (o.float() - ref).abs().max().item()
            report(f"{kname} on cuda:{dev}", o.device.index == dev and err < 4e-3, f"err {err:.2e}")
            # A transposed (non-contiguous) k is copied, the result the same.
            kt = k.transpose(2, 3).contiguous().transpose(2, 3)
            o2, _ = kern(q, kt, v)
            report(f"{kname} non-contiguous k on cuda:{dev}", torch.equal(o, o2))
        dev = n - 1
        q = torch.randn(1, 4, 64, d, device=f"cuda:{dev}", dtype=torch.half)
        k = torch.randn(1, 2, 64, d, device=f"cuda:{dev}", dtype=torch.half)
        expect_value_error(f"{kname} bf16 q", lambda: kern(q.bfloat16(), k, k), "q")
        expect_value_error(f"{kname} f32 k", lambda: kern(q, k.float(), k), "k")
        expect_value_error(f"{kname} head dim", lambda: kern(q[..., :d // 2].contiguous(), k, k), "q")
        expect_value_error(f"{kname} Hq % Hkv", lambda: kern(q[:, :3].contiguous(), k, k), "H")
        expect_value_error(f"{kname} K/V lengths", lambda: kern(q, k, k[:, :, :32].contiguous()), "v")
        expect_value_error(f"{kname} out shape", lambda: kern(q, k, k, out=torch.empty(1, 4, 63, d, device=q.device, dtype=q.dtype)), "out")
        if n > 1:
            expect_value_error(f"{kname} devices differ", lambda: kern(q, k.to("cuda:0"), k), "device")
    print(f"runtime_devices: {len(failures)} failed", flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
