# Device call 3b (same machine after 3a): bench/ab_dawn.sh, the session's start (fb51bdf)
# against the new build, natively (default kernels) and through Dawn (the npm package's
# wasm, web-old/web-new), Qwen2.5-1.5B shapes, prompts of 8, 512 and 4,096, two rounds.
set -u
R=$OUT; export OUT=/tmp/o2; mkdir -p $OUT
rm -f .ab/op_timing-*.xz
MODELS=qwen15 PROMPTS="8 512 4096" ROUNDS=2 REPS=2 bash bench/ab_dawn.sh > $OUT/log.txt 2>&1
cp $OUT/ab.md $OUT/ab.jsonl $OUT/dawn.jsonl $OUT/log.txt $R/ 2>/dev/null; cp $OUT/stderr.txt $R/dawn-stderr.txt 2>/dev/null
cat $R/ab.md; cat $R/dawn.jsonl
