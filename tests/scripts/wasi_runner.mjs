// Runs a wasm32-wasip1 module under Node's WASI (V8, the engine of Chromium).
// Cargo's runner for `cargo test --target wasm32-wasip1`:
//   CARGO_TARGET_WASM32_WASIP1_RUNNER="node tests/scripts/wasi_runner.mjs"
// and for the benchmark: node tests/scripts/wasi_runner.mjs cpu_bench.wasm MODEL ...
// / is preopened, so any absolute path resolves.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { WASI } from "node:wasi";
import process from "node:process";
import v8 from "node:v8";

// Node 20's V8 can crash in incremental marking while a large wasm memory grows
// (seen loading a 100 MB model: "Fatal error ... unreachable code" in
// MarkCompactCollector::ProcessEphemerons). Nothing here needs incremental GC.
v8.setFlagsFromString("--no-incremental-marking");

const [wasmPath, ...rawArgs] = process.argv.slice(2);
// The module's working directory is "/", so relative paths to files that exist here
// are made absolute.
const args = rawArgs.map((a) => (!path.isAbsolute(a) && existsSync(a) ? path.resolve(a) : a));
if (!wasmPath) {
  console.error("usage: node wasi_runner.mjs MODULE.wasm [ARGS...]");
  process.exit(2);
}
const wasi = new WASI({
  version: "preview1",
  args: [wasmPath, ...args],
  env: process.env,
  preopens: { "/": "/" },
  returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(wasmPath));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
