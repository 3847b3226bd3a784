import csv, sys, collections, re
def load(path):
    rows = list(csv.reader(open(path)))
    hdr = rows[1]; data = rows[2:]
    return hdr, data
for path in sys.argv[1:]:
    hdr, data = load(path)
    ix = {h: i for i, h in enumerate(hdr)}
    stalls = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
    tot = collections.Counter(); byop = collections.Counter(); samp_op = collections.Counter(); execd = collections.Counter()
    total_samples = 0
    for r in data:
        src = r[ix["Source"]].strip()
        op = re.sub(r"^@!?U?P\w+\s+", "", src).split(" ")[0]
        n = int(r[ix["Warp Stall Sampling (All Samples)"]] or 0)
        total_samples += n
        samp_op[op] += n
        execd[op] += int(r[ix["Instructions Executed"]] or 0)
        for s in stalls:
            v = int(r[ix[s]] or 0); tot[s] += v
    print(path, "samples", total_samples)
    print("  stalls:", ", ".join(f"{k[6:]} {v/total_samples:.1%}" for k, v in tot.most_common(10)))
    print("  samples by opcode:", ", ".join(f"{k} {v/total_samples:.1%}" for k, v in samp_op.most_common(14)))
    te = sum(execd.values())
    print("  executed (warp instrs, M):", f"{te/1e6:.1f}", ", ".join(f"{k} {v/1e6:.1f}" for k, v in execd.most_common(16)))

def per_op(path, ops):
    hdr, data = load(path)
    ix = {h: i for i, h in enumerate(hdr)}
    stalls = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
    for want in ops:
        c = collections.Counter(); n = 0
        for r in data:
            src = r[ix["Source"]].strip()
            op = re.sub(r"^@!?U?P\w+\s+", "", src).split(" ")[0]
            if op != want: continue
            for s in stalls: c[s] += int(r[ix[s]] or 0)
        t = sum(c.values()) or 1
        print(f"  {want}: " + ", ".join(f"{k[6:]} {v/t:.0%}" for k, v in c.most_common(5)))
