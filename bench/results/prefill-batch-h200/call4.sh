# Device call 4 (session 31): with 2,048-row batches and the last block first, are the
# split rules still right? The knobs build is the order build (3a42be1) with temporary
# environment knobs (not committed): KX_ATTN_GROUPS / KX_ATTN_POS for the cooperative
# attention's split (ATTN_COOP_TARGET_GROUPS 512, ATTN_COOP_SPLIT_POSITIONS 256) and
# KX_SPLIT_FULL / KX_SPLIT_TARGET for the cooperative matmul's split-K (SPLIT_K_COOP
# full_tiles 256, target 1,024). Profiles of the 1.5B's 4,096-token prefill, then
# bench/ab.sh over the variants, both Qwen shapes at 4,096 tokens, two rounds.
# Carried: .ab31, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab31/gguf_stub.py .ab31/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab31/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
xz -dc .ab31/kindling-knobs.xz > .bench/kindling-knobs; chmod +x .bench/kindling-knobs
for v in "" KX_ATTN_GROUPS=1 KX_ATTN_GROUPS=1024 KX_SPLIT_FULL=128 KX_SPLIT_TARGET=512; do
  echo "== ${v:-defaults}" >> $R/profile.txt
  env $v timeout 120 .bench/kindling-knobs bench /tmp/qwen15.gguf --backend gpu --prompt-tokens 4096 --gen-tokens 8 --profile 2>&1 \
    | sed -n '/device time of the prefill/,/^$/p' | head -16 >> $R/profile.txt
done
cat $R/profile.txt
OUT=/tmp/o1 BINS="kindling-knobs kindling-knobs:KX_ATTN_GROUPS=1 kindling-knobs:KX_ATTN_GROUPS=1024 kindling-knobs:KX_SPLIT_FULL=128 kindling-knobs:KX_SPLIT_TARGET=512" PROMPTS="4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/ab.md; cp /tmp/o1/ab.jsonl $R/ab.jsonl
cat $R/ab.md
