[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p /tmp/b7 && tar xzf .bench/pack7.tgz -C /tmp/b7 && cp /tmp/b7/* .bench/ && tar xzf .bench/synthetic.tgz -C .bench || exit 1
export MODELS="gemma3 qwen15"
source bench/device_setup.sh
export KINDLING_SYNTHETIC_DIR=$PWD/.bench/synthetic
for t in attention_matches_cpu_gqa_windows_and_long_histories attention_over_histories_longer_than_one_chunk rope_qk_is_one_dispatch_with_biases_norms_and_kv_store_or_none_in_decode_and_matches_cpu; do
  timeout 60 .bench/gpu_kernels --exact --nocapture $t > /tmp/t.log 2>&1; echo "$t rc $?" >> $OUT/kernels.txt; grep -E "^attention heads|^long attention|panicked" /tmp/t.log >> $OUT/kernels.txt; grep "n=70.*attend=true" /tmp/t.log >> $OUT/kernels.txt
done
cat $OUT/kernels.txt | cut -c1-160
timeout 200 .bench/gpu_e2e --test-threads 2 --nocapture tiny > $OUT/e2e.txt 2>&1; echo "e2e rc $?" >> $OUT/e2e.txt
grep -E "test result|rc " $OUT/e2e.txt
for b in main wide; do timeout 60 .bench/kindling-$b bench /tmp/gemma3.gguf --backend gpu --prompt-tokens 512 --gen-tokens 4 --profile > $OUT/profile-gemma3-$b.txt 2>&1; done
grep -E "Attention|prefill" $OUT/profile-gemma3-*.txt | head
PROMPTS="512 2048" ROUNDS=2 BINS="kindling-main kindling-wide" bash bench/ab.sh > /dev/null 2>&1
cat $OUT/ab.md; head -3 $OUT/errors.txt
cp .bench/kindling-wide .bench/kindling
mkdir -p $OUT/llama; OUT=$OUT/llama ROUNDS=2 REPS=3 bash bench/llama_server.sh > /tmp/llama.log 2>&1
tail -8 $OUT/llama/table.md; tar czf $OUT/llama.tgz -C $OUT llama
