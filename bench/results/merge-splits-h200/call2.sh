# Device call 2 (session 32): call 1's Dawn runs, one process per build, spread 10-30%
# from process to process. Here both builds run in one Node process, taking turns run by
# run (bench/dawn_ab.mjs): main's wasm (0effecf, A) against a5d93ca's (B, the split merge
# in the o projection's matvec), both Qwen shapes, prompts of 8 (no splits: both builds
# run the same kernels, the method's check), 512 and 4,096 tokens, six rounds of ABBA.
# Carried: .ab32, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab32/gguf_stub.py .ab32/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab32/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
for side in old new; do
  pkg=/tmp/pkg-$side; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"
  tar -xJf ".ab32/web-$side.tar.xz" -C "$pkg/wasm"
done
for m in qwen15 qwen05; do
  PROMPTS="8 512 4096" REPS=6 timeout 240 bash .dawn/run.sh .dawn bench/dawn_ab.mjs /tmp/pkg-old /tmp/pkg-new \
    $m=/tmp/$m.gguf 2>> $R/dawn-stderr.txt | tee -a $R/dawn_ab.jsonl
done
python3 - $R/dawn_ab.jsonl <<'PY' | tee $R/dawn_ab.md
import json, sys
print("| model | prompt | main decode (median) | new decode (median) | new / main (median of rounds) | rounds |")
print("|---|---:|---:|---:|---:|---|")
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    r = json.loads(l)
    print(f"| {r['model']} | {r['prompt']} | {r['A']['decode_tok_s']:.1f} | {r['B']['decode_tok_s']:.1f} | {r['decode_ratio_b_over_a']:.3f} | {' '.join(f'{x:.2f}' for x in r['ratios'])} |")
PY
tail -3 $R/dawn-stderr.txt
