"""Top SASS lines by warp stall samples from `ncu --page source --csv --print-source sass`."""
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
hi = next(i for i, r in enumerate(rows) if any(h.strip() == "Source" for h in r))
hdr = rows[hi]
src = next(i for i, h in enumerate(hdr) if h.strip() == "Source")
cands = [i for i, h in enumerate(hdr) if "Sampling" in h and "Not" not in h]
samp = cands[0] if cands else None
print("header:", [h for h in hdr][:30])
if samp is None:
    sys.exit("no sampling column")
data = []
for r in rows[hi + 1:]:
    try:
        data.append((float(r[samp] or 0), r[src], r))
    except (ValueError, IndexError):
        pass
tot = sum(x[0] for x in data) or 1
print("samples:", tot, "column:", hdr[samp])
for s, line, r in sorted(data, key=lambda x: -x[0])[:45]:
    print(f"{100*s/tot:5.1f}%  {line}")
