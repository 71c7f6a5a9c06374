# Reads bench/dawn.mjs's JSON lines (TRACE_GPU=1, PROMPTS=512) on stdin; prints the GPU
# time of one decode token after the prompt (each dispatch in a pass of its own) and its
# costliest kernels.
import json
import re
import sys

for line in sys.stdin:
    d = json.loads(line)
    dec = d["p512_gpu_us"]["decode_per_token"]
    print("decode token GPU total", round(dec["total_us"]), "us")
    for k, v in sorted(dec["kernels"].items(), key=lambda kv: -kv[1]["us"])[:10]:
        op = re.search(r"op: (\w+)", k).group(1)
        ty = re.search(r"ty: (?:Some\((\w+)\)|None)", k).group(1) or ""
        print(f"  {op} {ty}: {v['calls']} calls, {v['us']:.1f} us, {v['us'] / v['calls']:.1f} a call")
