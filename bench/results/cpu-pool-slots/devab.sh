# The pool's cost per job on the Xeon, before (one shared claim word) and after (a slot a
# thread), then a5ec18d against this build on SmolLM2 and Qwen2.5-0.5B, taking turns, and
# where this build's decode goes at 8 threads. From the repo root with .bench and .gl carried.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export VK_DRIVER_FILES=/nonexistent.json
lscpu | grep -E "Model name|^CPU\(s\)|Thread|NUMA node\(s\)|L3|Flags" > $R/cpu.txt
for t in 4 8 16; do for b in pool-old pool-new; do
  echo -n "$b: " >> $R/pool.txt
  KINDLING_POOL_THREADS=$t .bench/$b job_overhead --ignored --nocapture 2>&1 | grep "threads," >> $R/pool.txt
done; done
MODELS="qwen05 smollm2" source bench/device_setup.sh > /dev/null 2>&1
for r in 1 2; do for m in smollm2 qwen05; do for t in 8 16; do for p in 8 512; do for b in kindling-a5e kindling; do
  .bench/$b bench /tmp/$m.gguf --backend cpu --threads $t --prompt-tokens $p --gen-tokens 64 --json 2>/dev/null | tail -1 | python3 -c "import json,sys; d=json.load(sys.stdin); print('r$r t$t $m p$p $b prefill %.0f decode %.1f' % (d['prefill_tok_s'], d['decode_tok_s']))" >> $R/ab.txt
done; done; done; done; done
for b in kindling-a5e kindling; do
  echo "== smollm2 threads 8 $b" >> $R/profile.txt
  KINDLING_CPU_PROFILE=1 .bench/$b bench /tmp/smollm2.gguf --backend cpu --threads 8 --prompt-tokens 8 --gen-tokens 128 2>&1 | grep -v "^ *$" | head -24 >> $R/profile.txt
done
