# Device call 2 (session 31): the prefill attention's blocks taken last first. Under a
# causal mask a block of rows attends to more positions the later its rows; the kernels
# numbered their workgroups first block first, so the longest ran last. Builds: rows =
# 2,048-row batches natively (the commit after 9e1cff2); order = rows + both attention
# kernels (attention_coop.wgsl, attention_tiled.wgsl) taking the last block first. The
# order build's kernel tests on the H200; each build's profile of the 1.5B's 4,096-token
# prefill at 2,048 and 512 rows; bench/ab.sh, both Qwen shapes at 512 and 4,096 tokens, two
# rounds; the browser's kernels natively (the shader-core attention) on the 1.5B at 4,096
# tokens, two rounds. Carried: .ab31, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab31/gguf_stub.py .ab31/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab31/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
for b in rows order; do xz -dc .ab31/kindling-$b.xz > .bench/kindling-$b; chmod +x .bench/kindling-$b; done
xz -dc .ab31/gpu_kernels.xz > /tmp/gk; chmod +x /tmp/gk
timeout 240 /tmp/gk 2>&1 | grep -v XDG > $R/gpu_kernels.txt; grep "test result\|panicked" $R/gpu_kernels.txt
for batch in 2048 512; do for b in rows order; do
  echo "== $b, batch $batch" >> $R/profile.txt
  timeout 120 .bench/kindling-$b bench /tmp/qwen15.gguf --backend gpu --prompt-tokens 4096 --gen-tokens 8 --batch $batch --profile 2>&1 \
    | sed -n '/device time of the prefill/,/^$/p' | grep "device time\|Attention\|AttnCombine" >> $R/profile.txt
done; done
cat $R/profile.txt
OUT=/tmp/o1 BINS="kindling-rows kindling-order" PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/ab.md; cp /tmp/o1/ab.jsonl $R/ab.jsonl
cat $R/ab.md
OUT=/tmp/o2 MODELS=qwen15 BINS="kindling-rows kindling-order" PROMPTS="4096" ROUNDS=2 EXTRA="--no-coop-matrix --no-subgroups --no-f16" bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o2/ab.md $R/ab-browser-kernels.md; cp /tmp/o2/ab.jsonl $R/ab-browser-kernels.jsonl
cat $R/ab-browser-kernels.md
