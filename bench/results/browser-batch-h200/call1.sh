# Device call 2 (session 33): rows a prefill batch takes in the browser build. The npm
# package feeds prompts to the GPU in 512-row batches (policy::GPU_OPTIONS); native takes
# 2,048 (prefill-batch-h200.md). Three wasm builds differing only in that constant (512 =
# main at 276e868, 1,024, 2,048), through Dawn in one process each pair (bench/dawn_ab.mjs:
# A = 512 rows, B = the other), prompts of 512 (one batch for every build: the method's
# check), 2,048 and 4,096 tokens, three ABBA rounds; both Qwen shapes. Carried: .ab37, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab37/gguf_stub.py .ab37/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab37/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
for n in main 2048 1024; do
  pkg=/tmp/pkg-$n; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"
  tar -xJf .ab37/web-$n.tar.xz -C "$pkg/wasm"
done
for m in $MODELS; do
  for n in 2048 1024; do
    PROMPTS="512 2048 4096" REPS=3 timeout 130 bash .dawn/run.sh .dawn bench/dawn_ab.mjs /tmp/pkg-main /tmp/pkg-$n \
      $m=/tmp/$m.gguf 2>> $R/dawn-stderr.txt | sed "s/^{/{\"rows_b\":$n,/" | tee -a $R/dawn_ab.jsonl > /dev/null
  done
done
python3 - $R/dawn_ab.jsonl <<'PY' | tee $R/dawn_ab.md
import json, sys
print("| model | prompt | B rows | 512-row prefill | B prefill | B / 512 prefill (median of rounds) | 512-row decode | B decode |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    r = json.loads(l)
    print(f"| {r['model']} | {r['prompt']} | {r['rows_b']} | {r['A']['prefill_tok_s']:.0f} | {r['B']['prefill_tok_s']:.0f} | {r['prefill_ratio_b_over_a']:.3f} | {r['A']['decode_tok_s']:.0f} | {r['B']['decode_tok_s']:.0f} |")
PY
tail -3 $R/dawn-stderr.txt
