# Device call 4 (session 34): the final build, where only the browser build rewrites loops
# (crates/gpu/src/loop_bounds.rs: every loop with a stride or a run-time count; native
# shaders are main's, unchanged), against main (9430c3e) through Dawn: per kernel
# (TRACE_GPU=1: a 512-token prefill and 8 decode tokens; main, new, new, main) on the Qwen
# 1.5B, Gemma 3 and the Qwen 0.5B; then prefill and decode in one process (bench/dawn_ab.mjs,
# prompts of 8, 512 and 4,096 tokens, three ABBA rounds) on the 1.5B. Carried: .ab39, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 gemma3 qwen05"
mkdir -p .bench; cp .ab39/gguf_stub.py .ab39/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab39/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
for n in head new; do
  pkg=/tmp/pkg-$n; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"
  tar -xJf .ab39/web-$n.tar.xz -C "$pkg/wasm"
done
for m in $MODELS; do
  for b in head new new head; do
    TRACE_GPU=1 PROMPTS=512 REPS=1 GEN_TOKENS=8 TRACE_STEPS=8 timeout 150 bash .dawn/run.sh .dawn bench/dawn.mjs /tmp/pkg-$b \
      $m=/tmp/$m.gguf 2>> $R/call4-dawn-stderr.txt | grep '"model"' | sed "s/^{/{\"build\":\"$b\",/" >> $R/call4-trace.jsonl
  done
done
PROMPTS="8 512 4096" REPS=3 timeout 200 bash .dawn/run.sh .dawn bench/dawn_ab.mjs /tmp/pkg-head /tmp/pkg-new \
  qwen15=/tmp/qwen15.gguf 2>> $R/call4-dawn-stderr.txt | tee -a $R/call4-dawn_ab.jsonl > /dev/null
python3 - $R/call4-dawn_ab.jsonl <<'PY' | tee $R/call4-dawn_ab.md
import json, sys
print("| model | prompt | main: decode | new: decode | new / main decode (median of rounds) | main: prefill | new: prefill | new / main prefill |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    r = json.loads(l)
    print(f"| {r['model']} | {r['prompt']} | {r['A']['decode_tok_s']:.0f} | {r['B']['decode_tok_s']:.0f} | {r['decode_ratio_b_over_a']:.3f} | {r['A']['prefill_tok_s']:.0f} | {r['B']['prefill_tok_s']:.0f} | {r['prefill_ratio_b_over_a']:.3f} |")
PY
tail -3 $R/call4-dawn-stderr.txt
python3 - $R/call4-trace.jsonl <<'PY' | tee $R/call4-trace.txt
import json, re, sys
for l in open(sys.argv[1]):
    d = json.loads(l); g = d["p512_gpu_us"]
    print(d["build"], d["model"], "prefill GPU", round(g["prefill"]["total_us"]), "us, decode token GPU", round(g["decode_per_token"]["total_us"]), "us")
    for part in ("prefill", "decode_per_token"):
        for k, v in sorted(g[part]["kernels"].items(), key=lambda kv: -kv[1]["us"])[:5]:
            op = re.search(r"op: (\w+)", k).group(1); ty = re.search(r"ty: (?:Some\((\w+)\)|None)", k).group(1) or ""
            print(f"  {part} {op} {ty}: {v['us'] / v['calls']:.1f} us a call")
PY
