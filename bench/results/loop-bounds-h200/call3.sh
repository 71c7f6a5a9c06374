# Device call 3 (session 34): the final build (decode's loops bounded for Tint; the
# prefill kernels' left as main's) against main (9430c3e) on the other two models, Gemma 3
# 270M and SmolLM2 135M: per kernel through Dawn (TRACE_GPU=1: a 512-token prefill, where
# Gemma's 256-wide heads take the per-row attention kernel, and 8 decode tokens; main, new,
# new, main); decode and prefill through Dawn in one process (bench/dawn_ab.mjs, prompts of 8
# and 512, three ABBA rounds); natively (bench/ab.sh, two rounds). Carried: .ab39, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="gemma3 smollm2"
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
      $m=/tmp/$m.gguf 2>> $R/call3-dawn-stderr.txt | grep '"model"' | sed "s/^{/{\"build\":\"$b\",/" >> $R/call3-trace.jsonl
  done
done
for m in $MODELS; do
  PROMPTS="8 512" REPS=3 timeout 150 bash .dawn/run.sh .dawn bench/dawn_ab.mjs /tmp/pkg-head /tmp/pkg-new \
    $m=/tmp/$m.gguf 2>> $R/call3-dawn-stderr.txt | tee -a $R/call3-dawn_ab.jsonl > /dev/null
done
python3 - $R/call3-dawn_ab.jsonl <<'PY' | tee $R/call3-dawn_ab.md
import json, sys
print("| model | prompt | main: decode | new: decode | new / main decode (median of rounds) | main: prefill | new: prefill | new / main prefill |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    r = json.loads(l)
    print(f"| {r['model']} | {r['prompt']} | {r['A']['decode_tok_s']:.0f} | {r['B']['decode_tok_s']:.0f} | {r['decode_ratio_b_over_a']:.3f} | {r['A']['prefill_tok_s']:.0f} | {r['B']['prefill_tok_s']:.0f} | {r['prefill_ratio_b_over_a']:.3f} |")
PY
xz -dc .ab39/kindling.xz > .bench/kindling; xz -dc .ab39/kindling-new.xz > .bench/kindling-new; chmod +x .bench/kindling .bench/kindling-new
OUT=/tmp/o1 BINS="kindling kindling-new" PROMPTS="8 512" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/call3-native-ab.md; cp /tmp/o1/ab.jsonl $R/call3-native-ab.jsonl
cat $R/call3-native-ab.md
tail -3 $R/call3-dawn-stderr.txt
python3 - $R/call3-trace.jsonl <<'PY' | tee $R/call3-trace.txt
import json, re, sys
for l in open(sys.argv[1]):
    d = json.loads(l); g = d["p512_gpu_us"]
    print(d["build"], d["model"], "prefill GPU", round(g["prefill"]["total_us"]), "us, decode token GPU", round(g["decode_per_token"]["total_us"]), "us")
    for part in ("prefill", "decode_per_token"):
        for k, v in sorted(g[part]["kernels"].items(), key=lambda kv: -kv[1]["us"])[:4]:
            op = re.search(r"op: (\w+)", k).group(1); ty = re.search(r"ty: (?:Some\((\w+)\)|None)", k).group(1) or ""
            print(f"  {part} {op} {ty}: {v['us'] / v['calls']:.1f} us a call")
PY
