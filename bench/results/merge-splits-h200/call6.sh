# Device call 6 (session 32): where the browser build's host time goes while decoding: a
# CPU profile of Node (node --cpu-prof) running the final wasm through Dawn (bench/dawn.mjs),
# the 1.5B after 8 tokens, 128 greedy tokens, a warm-up and ten repetitions; the last 2 s (decode) summarised
# by prof_summary.py (self time by function; wasm, WebGPU calls, GC, idle). Carried: .ab34,
# .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench/web; cp .ab34/gguf_stub.py .ab34/qwen15.hdr.json .bench/
xz -dc .ab34/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
pkg=/tmp/kindling-pkg; mkdir -p $pkg/wasm; cp www/*.js $pkg/; tar -xJf .ab34/web-new.tar.xz -C $pkg/wasm
bash .dawn/run.sh .dawn /dev/null 2>/dev/null   # unpacks Node and the binding into /tmp/dawn-node
mkdir -p /tmp/prof
PROMPTS=8 REPS=10 timeout 120 /tmp/dawn-node/node --cpu-prof --cpu-prof-dir=/tmp/prof --cpu-prof-interval 200 \
  .dawn/shim.mjs /tmp/dawn-node/webgpu bench/dawn.mjs $pkg qwen15=/tmp/qwen15.gguf > $R/dawn.jsonl 2> $R/stderr.txt
prof=$(ls /tmp/prof/*.cpuprofile | head -1)
python3 bench/results/merge-splits-h200/prof_summary.py "$prof" 60 2 | tee $R/profile.txt
xz -c "$prof" > $R/dawn.cpuprofile.xz; ls -la $R
