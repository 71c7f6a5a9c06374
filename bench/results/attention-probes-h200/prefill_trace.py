# Reads bench/dawn.mjs's JSON lines (TRACE_GPU=1) on stdin; prints each prompt's prefill GPU
# time (every dispatch in a pass of its own), its costliest kernels and attention's.
import json
import re
import sys

for line in sys.stdin:
    d = json.loads(line)
    for key, g in d.items():
        if not key.endswith("_gpu_us"):
            continue
        pre = g["prefill"]
        print(d.get("build", ""), d["model"], key, "prefill GPU total", round(pre["total_us"]), "us")
        rows = sorted(pre["kernels"].items(), key=lambda kv: -kv[1]["us"])
        # The eight costliest, and attention's kernels wherever they rank.
        shown = [kv for i, kv in enumerate(rows) if i < 8 or "op: Att" in kv[0]]
        for k, v in shown:
            op = re.search(r"op: (\w+)", k).group(1)
            ty = re.search(r"ty: (?:Some\((\w+)\)|None)", k).group(1) or ""
            print(f"  {op} {ty}: {v['calls']} calls, {v['us']:.0f} us, {v['us'] / v['calls']:.1f} a call")
