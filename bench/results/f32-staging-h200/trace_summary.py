# Reads bench/dawn.mjs's JSON lines (TRACE_GPU=1, PROMPTS=512) on stdin; prints the
# prefill's GPU total and its eight costliest kernels.
import json
import re
import sys

for line in sys.stdin:
    d = json.loads(line)
    pre = d["p512_gpu_us"]["prefill"]
    print("total", round(pre["total_us"]), "prefill tok/s", round(d["p512"]["prefill_tok_s"]))
    for k, v in sorted(pre["kernels"].items(), key=lambda kv: -kv[1]["us"])[:8]:
        op = re.search(r"op: (\w+)", k).group(1)
        ty = re.search(r"ty: (?:Some\((\w+)\)|None)", k).group(1) or ""
        print(f"  {op} {ty}: {v['calls']} calls, {v['us']:.1f} us, {v['us'] / v['calls']:.1f} a call")
