# (as run on the device; pack9.tgz held the stripped binaries and the synthetic models)
export MODELS="qwen15 qwen05"
source bench/device_setup.sh
export KINDLING_SYNTHETIC_DIR=$PWD/.bench/synthetic
for t in gate_up_and_gated_activation_fuse_in_decode_and_match_cpu_also_over_split_weights matmul_matches_cpu_for_every_type_and_batch_size matmul_then_residual_add_matches_cpu_also_over_split_weights matmul_over_a_weight_split_across_buffers; do
  timeout 90 .bench/gpu_kernels --exact --nocapture $t > /tmp/t.log 2>&1; echo "$t rc $?" >> $OUT/kernels.txt
done
timeout 200 .bench/gpu_e2e --test-threads 2 --nocapture tiny > $OUT/e2e.txt 2>&1
timeout 60 .bench/kindling-gated bench /tmp/qwen15.gguf --backend gpu --prompt-tokens 512 --gen-tokens 4 --profile > $OUT/profile-gated.txt 2>&1
PROMPTS="512 2048" ROUNDS=2 BINS="kindling-main kindling-gated" bash bench/ab.sh
