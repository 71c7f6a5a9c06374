python3 .probe/gguf_stub.py expand .probe/smollm2.hdr /tmp/smollm2.gguf > /dev/null && python3 bench/sane_floats.py /tmp/smollm2.gguf 0.02 0.06 > /dev/null
.probe/cpu-tests decode_speed --ignored --nocapture 2>&1 | grep threads
for r in 1 2 3; do for t in 8 16 4; do for b in mb64 fused; do
  echo "r$r t$t $b $(.probe/kindling-$b bench /tmp/smollm2.gguf --backend cpu --threads $t --prompt-tokens 8 --gen-tokens 128 2>&1 | grep decode)"
done; done; done
