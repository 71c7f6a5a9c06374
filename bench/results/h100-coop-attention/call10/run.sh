ROUNDS=2 REPS=3 bash bench/llama_server.sh > /tmp/llama.log 2>&1
tail -16 $OUT/table.md
