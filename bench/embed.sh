#!/usr/bin/env bash
# Embedding throughput on the lent GPU machine, in one run (issue 28): Kindling native
# (`kindling bench` on an encoder, wgpu/Vulkan), the npm package's wasm through Dawn
# (bench/dawn_embed.mjs: model.embeddings.create) and llama.cpp's Vulkan `llama-server
# --embedding` (bench/embed_server.py: /v1/embeddings), on nomic-embed-text-v1.5 F16 as
# noise weights of the real shapes (timing only), for a short batch (32 inputs x 16
# tokens) and a long one (4 x 2000), every input exactly that many tokens, [CLS]/[SEP]
# included. Prints a Markdown table of inputs/s and tokens/s with Kindling ÷ llama.cpp.
#
#   bash bench/embed.sh prepare   # here: fills .embed/ (needs .gl/ .dawn/ .llama/ too, see below)
#   bash bench/embed.sh           # there, from the repo root, with .gl .dawn .llama .embed carried
#
# What is carried (about 61 MB with the tracked tree, .llama taken as 13 MB; the limit is 64 MiB):
#   .gl/     the Vulkan loader and glvnd (.deb)       bash bench/llama_server.sh prepare
#   .llama/  llama-server.tar.xz (Vulkan, 13 MB)      bash bench/llama_server.sh prepare
#   .dawn/   Node + Dawn's binding (33 MB)            bash ../shared/dawn-node/prepare.sh .dawn
#   .embed/  kindling.xz (the stripped release binary), web.tar.xz (npm run build's www/wasm),
#            nomic.hdr(.json) (gguf_stub.py header of the real file), gguf_stub.py:
#            bash bench/embed.sh prepare (MODEL=path of nomic-embed-text-v1.5.f16.gguf)
# (.bench/ is not needed.) The lead's device call:
#   run(command="bash bench/embed.sh", carry=[".gl", ".dawn", ".llama", ".embed"])
#
# Environment: BATCHES (default "32x16 4x2000", INPUTSxTOKENS), REPS (5 timed requests after a
# warm-up, the median), ROUNDS (2: native, Dawn, llama.cpp in turn, so drift hits all three),
# SLOTS (llama-server -np values, default "1 8": one server each), SERVER_ARGS, KINDLING_ARGS,
# BUDGET_S (450: a step that could overrun it is skipped, so the whole run stays under 8 min).
# Outside the GPU machine (a check of the script): NO_SETUP=1 MODEL_FILE=real.gguf
# KINDLING=path LLAMA_SERVER=path PKG=www NATIVE_BACKEND=cpu DAWN_BACKEND=cpu (Dawn's part
# then runs in plain Node on the CPU backend).
# Writes under $OUT: kindling.jsonl, dawn.jsonl, llama.jsonl, table.md, server.log,
# stderr.txt (every step's stderr), run.log (the printed lines), gpu.txt.
set -u -o pipefail
if [ "${1:-}" = prepare ]; then
  set -e
  cd "$(git rev-parse --show-toplevel)"
  ex=.git/info/exclude; mkdir -p .git/info; touch $ex
  grep -qxF /.embed/ $ex || echo /.embed/ >> $ex
  mkdir -p .embed
  model=${MODEL:-.cache/models/nomic-embed-text-v1.5.f16.gguf}
  cp ../shared/gguf_stub.py .embed/ 2>/dev/null || cp .bench/gguf_stub.py .embed/
  python3 .embed/gguf_stub.py header "$model" .embed/nomic.hdr
  nice cargo build --release -p kindling-cli
  cp target/release/kindling /tmp/kindling-embed; strip /tmp/kindling-embed
  nice xz -9e -T2 -c /tmp/kindling-embed > .embed/kindling.xz; rm /tmp/kindling-embed
  nice npm run build
  tar -C www -cf - wasm | nice xz -9 -T2 > .embed/web.tar.xz
  echo "built from $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates www || echo ' plus uncommitted changes') on $(date -u +%FT%TZ)" > .embed/built.txt
  for d in .gl .llama .dawn; do [ -d $d ] || echo "missing $d: see the top of bench/embed.sh"; done
  du -shc .gl .dawn .llama .embed 2>/dev/null; git ls-files -z | xargs -0 du -cb | tail -1 | sed 's/total/bytes tracked/'
  exit 0
fi

OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
ERR=$OUT/stderr.txt
BUDGET_S=${BUDGET_S:-450}
BATCHES=${BATCHES:-32x16 4x2000}
say() { echo "$*" | tee -a "$OUT/run.log"; }
# Seconds a step may take: its own limit, or what is left of the budget; 0 = skip it.
allow() { local left=$((BUDGET_S - SECONDS)); if [ "$left" -lt 15 ]; then echo 0; elif [ "$left" -lt "$1" ]; then echo "$left"; else echo "$1"; fi; }

if [ -z "${NO_SETUP:-}" ]; then
  export STUB_DIR=.embed MODELS=nomic
  source bench/device_setup.sh   # .gl, Vulkan, /tmp/nomic.gguf
fi
model=${MODEL_FILE:-/tmp/nomic.gguf}
kindling=${KINDLING:-/tmp/kindling}
if [ -z "${KINDLING:-}" ]; then
  timeout 60 xz -dc .embed/kindling.xz > /tmp/kindling 2>> "$ERR" && chmod +x /tmp/kindling || say "cannot unpack .embed/kindling.xz"
fi
pkg=${PKG:-/tmp/kindling-pkg}
if [ -z "${PKG:-}" ]; then
  mkdir -p "$pkg"; cp www/*.js "$pkg/"
  timeout 60 tar -C "$pkg" -xJf .embed/web.tar.xz 2>> "$ERR" || say "cannot unpack .embed/web.tar.xz"
fi
server=${LLAMA_SERVER:-/tmp/llama/llama-server}
if [ -z "${LLAMA_SERVER:-}" ]; then
  timeout 60 python3 -c "import tarfile; tarfile.open('.llama/llama-server.tar.xz').extractall('/tmp')" 2>> "$ERR" \
    || say "cannot unpack .llama/llama-server.tar.xz"
  if ! ldconfig -p | grep -q 'libgomp\.so\.1' && ls .llama/libgomp1_*.deb > /dev/null 2>&1; then
    dpkg -x .llama/libgomp1_*.deb /tmp/gomp; export LD_LIBRARY_PATH=/tmp/gomp/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
fi
say "$(cat .embed/built.txt 2>/dev/null || echo '.embed/built.txt: none')"
say "model $model ($(stat -c %s "$model" 2>/dev/null) bytes), batches $BATCHES, setup done at ${SECONDS} s"
say "$(LD_LIBRARY_PATH=$(dirname "$server")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} timeout 20 "$server" --version 2>&1 | tail -1)"

for round in $(seq "${ROUNDS:-2}"); do
  for b in $BATCHES; do
    t=$(allow 90); [ "$t" = 0 ] && { say "skipped native $b round $round: budget"; continue; }
    say "== native $b round $round"
    cmd="$kindling bench $model --backend ${NATIVE_BACKEND:-gpu} --inputs ${b%x*} --input-tokens ${b#*x} --repeat ${REPS:-5} --json ${KINDLING_ARGS:-}"
    echo "\$ $cmd" >> "$ERR"
    timeout "$t" $cmd 2>> "$ERR" | grep '^{' | tee -a "$OUT/kindling.jsonl" | tee -a "$OUT/run.log" || say "native $b: failed (stderr.txt)"
  done
  t=$(allow 150)
  if [ "$t" = 0 ]; then say "skipped Dawn round $round: budget"; else
    say "== dawn round $round"
    echo "\$ dawn_embed.mjs (${DAWN_BACKEND:-webgpu})" >> "$ERR"
    if [ "${DAWN_BACKEND:-webgpu}" = webgpu ]; then runner=(bash .dawn/run.sh .dawn); else runner=(node); fi
    REPS="${REPS:-5}" BATCHES="$BATCHES" BACKEND=${DAWN_BACKEND:-webgpu} timeout "$t" "${runner[@]}" bench/dawn_embed.mjs "$pkg" nomic="$model" \
      2>> "$ERR" | grep '^{' | tee -a "$OUT/dawn.jsonl" | tee -a "$OUT/run.log" || say "dawn: failed (stderr.txt)"
  fi
  t=$(allow 200)
  if [ "$t" = 0 ]; then say "skipped llama-server round $round: budget"; else
    say "== llama-server round $round"
    PYTHONUNBUFFERED=1 timeout "$t" python3 bench/embed_server.py --server "$server" --out "$OUT" --slots "${SLOTS:-1 8}" \
      --batches "$BATCHES" --reps "${REPS:-5}" --server-args "${SERVER_ARGS:-}" nomic="$model" 2>> "$ERR" | tee -a "$OUT/run.log" \
      || say "llama-server: failed (server.log, stderr.txt)"
  fi
done
python3 bench/embed_table.py "$OUT" > "$OUT/table.md" 2>> "$ERR"
say "done in ${SECONDS} s"
cat "$OUT/table.md"
