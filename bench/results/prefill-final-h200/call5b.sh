# Device call 5b (after 5a): bench/ab_dawn.sh with the session's start (fb51bdf) against the
# final build, natively (default kernels) and through Dawn, Qwen2.5-1.5B shapes, two rounds.
set -u
R=$OUT; export OUT=/tmp/o2; mkdir -p $OUT
rm -f .ab/op_timing-*.xz .ab/gpu_kernels.xz
MODELS=qwen15 PROMPTS="8 512 4096" ROUNDS=2 REPS=2 bash bench/ab_dawn.sh > $OUT/log.txt 2>&1
cp $OUT/ab.md $OUT/ab.jsonl $OUT/dawn.jsonl $OUT/log.txt $R/ 2>/dev/null
cat $R/ab.md; grep -o '"build":"[a-z]*","round":[0-9],"model".*' $R/dawn.jsonl | sed 's/"adapter":{[^}]*},//' | cut -c1-400
