# Device call 1 (session 31): how many prompt rows a batch should take natively. A long
# prompt is prefilled in chunks of policy::GPU_OPTIONS.max_batch (512) rows; larger chunks
# give the matmuls more tiles (fewer partial waves, fewer split-K spans) and the panel's
# dequantization fewer repeats. `kindling bench --batch N` sets the chunk. main (9e1cff2)
# only: its kernel tests on the H200 (the commit had none there), a profile of the 1.5B's
# 4,096-token prefill at 512 and 2,048 rows, then both Qwen shapes at 2,048 and 4,096 tokens
# with 512 / 1,024 / 2,048 / 4,096 rows, two rounds. Carried: .ab31, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab31/gguf_stub.py .ab31/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab31/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
xz -dc .ab31/kindling-main.xz > /tmp/kindling; chmod +x /tmp/kindling
xz -dc .ab31/gpu_kernels.xz > /tmp/gk; chmod +x /tmp/gk
timeout 240 /tmp/gk 2>&1 | grep -v XDG > $R/gpu_kernels.txt; grep "test result\|panicked" $R/gpu_kernels.txt
for b in 512 2048; do
  echo "== batch $b" >> $R/profile.txt
  timeout 120 /tmp/kindling bench /tmp/qwen15.gguf --backend gpu --prompt-tokens 4096 --gen-tokens 8 --batch $b --profile 2>&1 \
    | sed -n '/device time of the prefill/,/^$/p' | head -24 >> $R/profile.txt
done
cat $R/profile.txt
for round in 1 2; do for m in $MODELS; do for pt in 2048 4096; do for b in 512 1024 2048 4096; do
  [ $b -gt $pt ] && continue
  line=$(timeout 120 /tmp/kindling bench /tmp/$m.gguf --backend gpu --prompt-tokens $pt --gen-tokens 32 --batch $b --json 2>> $R/errors.txt | tail -n 1)
  echo "$line" | python3 -c "import json,sys; d=json.load(sys.stdin); d.update(batch=$b, model='$m', round=$round); print(json.dumps(d))" >> $R/batch.jsonl \
    || echo "$m p$pt b$b round $round: no result" | tee -a $R/errors.txt
done; done; done; done
python3 - $R/batch.jsonl <<'PY' | tee $R/batch.md
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| model | prompt | rows a batch | prefill tok/s (rounds) | median | decode tok/s |")
print("|---|---:|---:|---|---:|---:|")
for k in sorted({(r["model"], r["prompt_tokens"], r["batch"]) for r in rows}):
    sel = [r for r in rows if (r["model"], r["prompt_tokens"], r["batch"]) == k]
    p = [r["prefill_tok_s"] for r in sel]
    print(f"| {k[0]} | {k[1]} | {k[2]} | {' / '.join(f'{v:,.0f}' for v in p)} | {statistics.median(p):,.0f} | {statistics.median(r['decode_tok_s'] for r in sel):.1f} |")
PY
# The browser's kernels natively (no cooperative matrices, subgroups or f16), the 1.5B at
# 4,096 tokens, 512 against 2,048 rows, one round.
for b in 512 2048; do
  line=$(timeout 120 /tmp/kindling bench /tmp/qwen15.gguf --backend gpu --prompt-tokens 4096 --gen-tokens 32 --batch $b --json \
    --no-coop-matrix --no-subgroups --no-f16 2>> $R/errors.txt | tail -n 1)
  echo "$line" | python3 -c "import json,sys; d=json.load(sys.stdin); print('browser kernels, batch $b:', round(d['prefill_tok_s']), round(d['decode_tok_s'], 1))" | tee -a $R/browser-kernels.txt
done
