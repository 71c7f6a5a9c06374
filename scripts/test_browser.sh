#!/usr/bin/env bash
# The browser tests: builds the npm package's wasm (npm run build), starts the model
# server, and runs crates/web's wasm-bindgen tests in headless Chromium twice — with
# WebGPU (SwiftShader), then with WebGPU disabled (the CPU fallback), then the model
# cache's restart test (two browser sessions on one profile) and its quota test. Installs what it
# needs once (apt chromium + chromedriver, the wasm32 target, wasm-pack, wasm-bindgen-cli).
#
#   scripts/test_browser.sh            # every run
#   KINDLING_BROWSER_RUNS=on scripts/test_browser.sh   # only the WebGPU run (or: off, restart, quota)
#   KINDLING_BROWSER_FILTER=model_cache scripts/test_browser.sh   # only tests whose name has this
#   KINDLING_BROWSER_RUNS=setup scripts/test_browser.sh   # install, fetch and build; no suite
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PORT=${KINDLING_SERVE_PORT:-8631}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
# The whole WebGPU run (real models on SwiftShader) takes minutes, more beside other suites
# (scripts/test_web.sh); the runner waits this long for all of it (its default is 20 s). A
# page that hangs is caught sooner, by the watch on its output below.
export WASM_BINDGEN_TEST_TIMEOUT=${WASM_BINDGEN_TEST_TIMEOUT:-3600}
export KINDLING_MODEL_SERVER="http://127.0.0.1:$PORT"

need() { command -v "$1" >/dev/null 2>&1; }

# --- tools -------------------------------------------------------------------------
if ! need chromium || ! need chromedriver; then
  echo "== installing chromium and chromedriver"
  if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq chromium chromium-driver
fi
bash scripts/wasm_tools.sh

# --- inputs ------------------------------------------------------------------------
for model in SmolLM2-135M-Instruct.Q4_1 gemma-3-270m-q4_k_m qwen2.5-coder-0.5b-instruct-q4_k_m \
  qwen2.5-coder-1.5b-instruct-q4_k_m; do
  [ -f ".cache/models/$model.gguf" ] || { bash tests/scripts/fetch_models.sh; break; }
done
[ -f .cache/synthetic/tiny-llama.gguf ] || python3 tests/scripts/make_synthetic.py .cache/synthetic
# SmolLM2 split as gguf-split does, for the sharded loads (skipped when up to date).
python3 tests/scripts/make_shards.py .cache/models/SmolLM2-135M-Instruct.Q4_1.gguf .cache/shards 3 >/dev/null
# KINDLING_PREBUILT=1: www/wasm is current (scripts/test.sh builds it once before running
# suites side by side, which must not rewrite it under each other's pages).
if [ "${KINDLING_PREBUILT:-0}" = 1 ] && [ -f www/wasm/kindling_web_bg.wasm ]; then :; else
  echo "== npm run build (wasm-pack, release)"
  npm run --silent build
fi
[ "${KINDLING_BROWSER_RUNS:-}" != setup ] || exit 0   # tools, inputs and the build only

# --- the model server ----------------------------------------------------------------
python3 tests/scripts/serve.py --port "$PORT" --root "$ROOT" &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  curl -fsI "$KINDLING_MODEL_SERVER/package.json" >/dev/null 2>&1 && break
  sleep 0.1
done

# --- the suites ----------------------------------------------------------------------
# A page that stops answering is stopped rather than waited on for the runner's whole
# WASM_BINDGEN_TEST_TIMEOUT: the page's first output must come within FIRST_OUTPUT_S of
# the runner's start (it loads in seconds), and then some output at least every
# QUIET_OUTPUT_S (the longest test takes about 80 s on two cores).
FIRST_OUTPUT_S=${KINDLING_FIRST_OUTPUT_S:-240}
QUIET_OUTPUT_S=${KINDLING_QUIET_OUTPUT_S:-600}
STALLED="== the page stopped answering"
# What marks this suite's processes (a browser switch, chromedriver's log path), so that a
# stalled suite stops only its own browser when another suite runs beside it (scripts/test.sh
# runs the WebGPU suite beside the others).
SUITE_MARK=
SUITE_LOG=
stop_browser() {
  if [ -n "$SUITE_MARK" ]; then
    pkill -f -- "$SUITE_MARK" || true   # the browser (and its helpers) of this suite
    pkill -f -- "--log-path=$SUITE_LOG.chrome" || true   # its chromedriver; the runner then ends
    return
  fi
  pkill -f wasm-bindgen-test-runner || true
  pkill -x chromedriver || true
  pkill -f -- '--enable-automation' || true   # the browser chromedriver started
}
# Each output line as it arrives, and at the end each test's time: from its "Invoking
# test" line to its result line (the runner streams the page's output as it polls it,
# so the figures are good to about a second).
timed() {
  local line name start=0 now limit=3600 page=0 status
  local -a times=()
  while :; do
    if IFS= read -r -t "$limit" line; then :; else
      status=$?
      [ $status -gt 128 ] || break   # end of the runner's output
      [ -z "$line" ] || printf '%s\n' "$line"   # a partial line, kept by read
      echo "$STALLED: no output for $limit s; stopping the runner and the browser"
      stop_browser
      limit=60
      continue
    fi
    printf '%s\n' "$line"
    now=$(date +%s.%N)
    case $line in
      "Running headless tests"*) limit=$FIRST_OUTPUT_S ;;
      "Loading Wasm module..."*|"running "*" tests"*) page=1 ;;
    esac
    [ $page = 0 ] || limit=$QUIET_OUTPUT_S
    case $line in
      "Invoking test: "*) name=${line#Invoking test: }; start=$now ;;
      "test "*" ... "*) [ "$start" = 0 ] || times+=("$(awk -v a="$now" -v b="$start" -v n="$name" 'BEGIN { printf "%7.1f s  %s", a - b, n }')"); start=0 ;;
    esac
  done
  [ ${#times[@]} -eq 0 ] || { echo "== per-test times"; printf '%s\n' "${times[@]}"; }
}
# Chromium's own log (chromedriver --enable-chrome-logs) goes to $3.chrome; its tail is
# shown when the suite fails, to say what the browser was doing.
suite() {
  local status
  KINDLING_WEBGPU=$1 WASM_BINDGEN_TEST_WEBDRIVER_JSON="$2" \
    CHROMEDRIVER_ARGS="--enable-chrome-logs --log-path=$3.chrome" \
    wasm-pack test --release --headless --chrome crates/web --test browser -- --nocapture ${KINDLING_BROWSER_FILTER:-} 2>&1 | timed | tee "$3"
  status=${PIPESTATUS[0]}
  if [ "$status" != 0 ] && [ -s "$3.chrome" ]; then
    echo "== the last 60 lines of chromedriver's and Chromium's log"
    tail -n 60 "$3.chrome" | cut -c1-400
  fi
  rm -f "$3.chrome"
  return "$status"
}
hung() { grep -q -e "Timed out receiving message from renderer" -e "$STALLED" "$1"; }
run() {
  local mode=$1 config log profile status=0
  log=$(mktemp)
  config=$(mktemp --suffix=.json)
  # A profile of our own, removed at the end: the one chromedriver makes by itself
  # (/tmp/org.chromium.Chromium.scoped_dir.*) outlived the runner, with the suite's model
  # cache in it (about 2 GB a run), until the disk filled.
  profile=$(mktemp -d)
  SUITE_MARK="--kindling-suite=$mode-$$"
  SUITE_LOG=$log
  python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); c["goog:chromeOptions"]["args"] += sys.argv[2:]; print(json.dumps(c))' \
    "$2" "$SUITE_MARK" "--user-data-dir=$profile" >"$config"
  suite_runs "$mode" "$config" "$log" "$profile" || status=$?
  rm -rf "$log" "$config" "$profile"
  return $status
}
suite_runs() {
  local mode=$1 config=$2 log=$3 profile=$4
  echo "== browser tests, WebGPU $mode"
  local start=$SECONDS
  # Chromium's renderer has (rarely, with SwiftShader) stopped answering chromedriver
  # mid-suite with no test failing; and the test page has never run its scripts (CI, twice
  # in a row: the runner's server left a module request unserved, which the tests no
  # longer give it the chance to do: see import_test_module in
  # crates/web/tests/browser/support.rs). That, and only that, gets one more run of the
  # suite; any test failure fails at once.
  if ! suite "$mode" "$config" "$log"; then
    hung "$log" || return 1
    echo "== the browser stopped answering (above); running the suite once more"
    rm -rf "$profile" && mkdir "$profile"   # a fresh profile, as the first run had
    suite "$mode" "$config" "$log" || return 1
  fi
  echo "== WebGPU $mode: $((SECONDS - start)) s"
}
# The persistent cache across a browser restart: two browser sessions on one profile
# directory, with the test page at one fixed origin (OPFS storage is per profile and
# origin): visit 1 fills the cache and cuts a download at 50%, visit 2 (a new browser
# process) must load the first with <= 2% fetched and resume the second.
visits() {
  local profile config visit log status=0
  profile=$(mktemp -d)
  config=$(mktemp --suffix=.json)
  log=$(mktemp)
  SUITE_MARK="--user-data-dir=$profile"
  SUITE_LOG=$log
  # The no-WebGPU run's options, with the profile.
  python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); c["goog:chromeOptions"]["args"].append("--user-data-dir=" + sys.argv[2]); print(json.dumps(c))' \
    crates/web/webdriver-nogpu.json "$profile" >"$config"
  echo "== browser restart: two sessions on the profile $profile"
  for visit in 1 2; do
    # Each visit takes seconds; a page that has not answered in 2 minutes has hung.
    KINDLING_WEBGPU=off WASM_BINDGEN_TEST_WEBDRIVER_JSON="$config" WASM_BINDGEN_TEST_TIMEOUT=120 \
      WASM_BINDGEN_TEST_ADDRESS=127.0.0.1:${KINDLING_RESTART_PORT:-8632} \
      wasm-pack test --release --headless --chrome crates/web --test browser -- --nocapture --include-ignored \
      "cache_restart_visit_$visit" 2>&1 | timed | tee "$log"
    [ "${PIPESTATUS[0]}" = 0 ] || { status=1; break; }
  done
  hung "$log" && status=2
  rm -rf "$profile" "$config" "$log"
  return $status
}
restart() {
  local status=0
  visits || status=$?
  # The renderer timeout (see run) gets one more pair of visits on a fresh profile.
  if [ $status = 2 ]; then
    echo "== the browser stopped answering (above); the two visits once more"
    visits || status=$?
  fi
  return $status
}
# The model cache under a real storage limit (a 40 MB quota set through DevTools, which
# the runner's chromedriver session cannot do): crates/web/tests/quota.mjs drives its own
# headless Chromium. Node 20 has WebSocket behind a flag.
quota() {
  local flag=
  node -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)' || flag=--experimental-websocket
  echo "== the model cache under a 40 MB quota"
  node $flag crates/web/tests/quota.mjs "$KINDLING_MODEL_SERVER"
}
RUNS=${KINDLING_BROWSER_RUNS:-on off restart quota}
for mode in $RUNS; do
  case $mode in
    on) run on "$ROOT/crates/web/webdriver.json" ;;
    off) run off "$ROOT/crates/web/webdriver-nogpu.json" ;;
    restart) restart ;;
    quota) quota ;;
    *) echo "unknown run '$mode' (on|off|restart|quota)" >&2; exit 2 ;;
  esac
done
