//! Shared helpers: where the models are, fetching, streaming into a `WebLoader`.

use js_sys::{Reflect, Uint8Array};
use kindling_web::{create_loader, WebLoader, WebModel};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

pub const SMOLLM2: &str = ".cache/models/SmolLM2-135M-Instruct.Q4_1.gguf";
pub const GEMMA3: &str = ".cache/models/gemma-3-270m-q4_k_m.gguf";
pub const QWEN05: &str = ".cache/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf";
pub const TINY_LLAMA: &str = ".cache/synthetic/tiny-llama.gguf";
pub const TINY_GEMMA3: &str = ".cache/synthetic/tiny-gemma3.gguf";
pub const TINY_LLAMA3: &str = ".cache/synthetic/tiny-llama3.gguf";

pub fn server() -> &'static str {
    option_env!("KINDLING_MODEL_SERVER").unwrap_or("http://127.0.0.1:8631")
}

pub fn url(path: &str) -> String {
    format!("{}/{}", server(), path)
}

/// `Some(true)`: WebGPU must work; `Some(false)`: it must not; `None`: either.
pub fn expect_webgpu() -> Option<bool> {
    match option_env!("KINDLING_WEBGPU") {
        Some("on") => Some(true),
        Some("off") => Some(false),
        _ => None,
    }
}

/// Whether this browser gives a WebGPU adapter (and that matches the expectation).
pub async fn webgpu_available() -> bool {
    let caps = kindling_web::capabilities().await.unwrap_or_else(|e| panic!("capabilities(): {e:?}"));
    let have = get(&caps, "webgpu").as_bool().unwrap_or(false);
    if let Some(want) = expect_webgpu() {
        assert_eq!(have, want, "KINDLING_WEBGPU expects webgpu={want}; capabilities: {}", json(&caps));
    }
    have
}

pub fn get(v: &JsValue, key: &str) -> JsValue {
    Reflect::get(v, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

pub fn json(v: &JsValue) -> String {
    js_sys::JSON::stringify(v).map(String::from).unwrap_or_else(|_| format!("{v:?}"))
}

pub fn log(msg: &str) {
    web_sys::console::log_1(&JsValue::from_str(msg));
}

pub fn now_ms() -> f64 {
    js_sys::Date::now()
}

async fn fetch(url: &str) -> web_sys::Response {
    let global = js_sys::global();
    let fetch = get(&global, "fetch").dyn_into::<js_sys::Function>().expect("fetch");
    let promise = fetch.call1(&global, &JsValue::from_str(url)).expect("fetch call");
    let response =
        JsFuture::from(js_sys::Promise::from(promise)).await.unwrap_or_else(|e| panic!("fetch {url}: {e:?}"));
    let response: web_sys::Response = response.dyn_into().expect("a Response");
    assert!(response.ok(), "GET {url}: HTTP {} (is tests/scripts/serve.py running?)", response.status());
    response
}

/// The whole file (tiny models only).
pub async fn fetch_bytes(path: &str) -> Vec<u8> {
    let response = fetch(&url(path)).await;
    let buf = JsFuture::from(response.array_buffer().expect("arrayBuffer")).await.expect("body");
    Uint8Array::new(&buf).to_vec()
}

/// Streams `path` from the server into a new loader on `backend`, chunk by chunk as
/// the network delivers them; returns the finished model.
pub async fn stream_load(path: &str, backend: &str, context: Option<u32>) -> (WebModel, f64) {
    let start = now_ms();
    let response = fetch(&url(path)).await;
    let len = response.headers().get("content-length").ok().flatten().and_then(|s| s.parse::<f64>().ok());
    let mut loader: WebLoader = match create_loader(backend.into(), len, context, None, None).await {
        Ok(l) => l,
        Err(e) => panic!("createLoader({backend}): {e:?}"),
    };
    let body = response.body().expect("a body");
    let reader: web_sys::ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut last = 0.0;
    loop {
        let step = JsFuture::from(reader.read()).await.expect("read");
        if get(&step, "done").as_bool().unwrap_or(true) {
            break;
        }
        let chunk: Uint8Array = get(&step, "value").unchecked_into();
        if let Err(e) = loader.feed(&chunk.to_vec()) {
            panic!("feed: {e:?}");
        }
        assert!(loader.received() > last, "progress must grow");
        last = loader.received();
    }
    assert!(loader.is_complete(), "every tensor arrived");
    assert_eq!(loader.total(), len.or(loader.total()), "total is the file size");
    let model = loader.finish(context).unwrap_or_else(|e| panic!("finish: {e:?}"));
    (model, now_ms() - start)
}

/// Runs a generation to its end; returns the token ids and the finish reason.
pub async fn generate(model: &mut WebModel, prompt: Vec<u32>, options: &JsValue) -> (Vec<u32>, String) {
    let generation = model.generate(prompt, options.clone()).unwrap_or_else(|e| panic!("generate: {e:?}"));
    let mut ids = Vec::new();
    loop {
        let step = JsFuture::from(generation.next()).await.unwrap_or_else(|e| panic!("next: {}", json(&e)));
        if get(&step, "done").as_bool() == Some(true) {
            return (ids, get(&step, "finishReason").as_string().unwrap_or_default());
        }
        if let Some(id) = get(&step, "tokenId").as_f64() {
            ids.push(id as u32);
        }
    }
}

/// A JS object from `(key, value)` pairs.
pub fn obj(pairs: &[(&str, JsValue)]) -> JsValue {
    let o = js_sys::Object::new();
    for (k, v) in pairs {
        Reflect::set(&o, &JsValue::from_str(k), v).expect("set");
    }
    o.into()
}

/// Imports the test module `crates/web/tests/browser/<file>` from the model server. No
/// test JS is bound as a wasm-bindgen snippet: each snippet is one more module the test
/// page fetches at its start, from the runner's server (tiny_http), whose thread pool can
/// take two new connections for one idle thread and then leave the second unserved while
/// every thread waits on one of the browser's idle keep-alive connections. The page's
/// module graph then never completes: it stays at "Loading scripts..." (seen in CI and
/// here with six snippets, on two cores). The model server has a thread per connection.
pub async fn import_test_module(file: &str) -> JsValue {
    let url = format!("{}/crates/web/tests/browser/{file}", server());
    let import = js_sys::Function::new_with_args("url", "return import(url)");
    let module = import.call1(&JsValue::NULL, &url.into()).expect("import()");
    JsFuture::from(js_sys::Promise::from(module)).await.unwrap_or_else(|e| panic!("import {file}: {}", json(&e)))
}

/// Runs the JS test suite `export(...args)` of the test module `file` (see
/// `import_test_module`) and checks its report (see `run_js_suite`).
pub async fn run_js_module(what: &str, file: &str, export: &str, args: &[JsValue]) {
    let module = import_test_module(file).await;
    let suite: js_sys::Function =
        get(&module, export).dyn_into().unwrap_or_else(|_| panic!("{file} exports no function {export}"));
    let args: js_sys::Array = args.iter().collect();
    let report =
        suite.apply(&JsValue::NULL, &args).unwrap_or_else(|e| panic!("{file}: {export}() threw: {}", json(&e)));
    run_js_suite(what, js_sys::Promise::resolve(&report)).await;
}

/// Awaits a JS test suite's `{ log, failures }` report, prints its log and fails with
/// every failure it recorded.
pub async fn run_js_suite(what: &str, report: js_sys::Promise) {
    let report = JsFuture::from(report).await.unwrap_or_else(|e| panic!("the {what} tests threw: {}", json(&e)));
    for line in js_sys::Array::from(&get(&report, "log")).iter() {
        log(&format!("[js] {}", line.as_string().unwrap_or_default()));
    }
    let failures: Vec<String> =
        js_sys::Array::from(&get(&report, "failures")).iter().filter_map(|v| v.as_string()).collect();
    assert!(failures.is_empty(), "{what} failures:\n{}", failures.join("\n"));
}
