#!/usr/bin/env bash
# The browser suites (scripts/test_browser.sh) and the pages (scripts/test_pages.sh), side by
# side: the WebGPU suite spends most of its time in SwiftShader compiling pipelines, one
# core's work, so the suite without WebGPU, the cache's restart and quota tests and then the
# pages run beside it on the other core (own model-server ports; one wasm build for all, made
# first, which none rebuilds under another's pages), then KINDLING_BESIDE_WEBGPU (a command)
# if set; KINDLING_AFTER_WEBGPU (a command) runs after the WebGPU suite on its core, so the
# two lanes end near the same time. The WebGPU lane's output follows the others'. Each
# script also runs alone (see their headers).
set -euo pipefail
cd "$(dirname "$0")/.."

KINDLING_BROWSER_RUNS=setup bash scripts/test_browser.sh   # tools, inputs, the wasm build

webgpu_log=$(mktemp)
trap 'rm -f "$webgpu_log"' EXIT
{
  KINDLING_PREBUILT=1 KINDLING_SERVE_PORT=8641 KINDLING_BROWSER_RUNS=on bash scripts/test_browser.sh || exit 1
  [ -z "${KINDLING_AFTER_WEBGPU:-}" ] || bash -c "$KINDLING_AFTER_WEBGPU" || exit 2
} >"$webgpu_log" 2>&1 &
webgpu_suite=$!

others=0
KINDLING_PREBUILT=1 KINDLING_BROWSER_RUNS="off restart quota" bash scripts/test_browser.sh || others=$?
if [ "$others" = 0 ]; then
  echo "== the pages people open: types, the packed package in a Vite app, the GPU test bench and the chat demo"
  KINDLING_PREBUILT=1 bash scripts/test_pages.sh || others=$?
fi
# What else should use this core while the WebGPU suite runs (scripts/test.sh: the fuzzers
# and the WASI tests).
if [ "$others" = 0 ] && [ -n "${KINDLING_BESIDE_WEBGPU:-}" ]; then
  bash -c "$KINDLING_BESIDE_WEBGPU" || others=$?
fi

webgpu=0
wait "$webgpu_suite" || webgpu=$?
echo "== the browser tests with WebGPU${KINDLING_AFTER_WEBGPU:+, then: $KINDLING_AFTER_WEBGPU} (ran beside the above)"
cat "$webgpu_log"
if [ "$others" != 0 ] || [ "$webgpu" != 0 ]; then
  lane=$([ "$webgpu" = 2 ] && echo 'the checks after the WebGPU suite ' || echo 'the WebGPU suite ')
  echo "== failed: $([ "$webgpu" = 0 ] || echo "$lane")$([ "$others" = 0 ] || echo 'the suites without WebGPU, the pages or the checks beside them')" >&2
  exit 1
fi
