//! Bad inputs through the Rust exports give JS errors with the stable names; dispose
//! makes later calls fail clearly.

use js_sys::Reflect;
use kindling_web::create_loader;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{fetch_bytes, log, stream_load, TINY_LLAMA};

fn name_of(e: impl Into<JsValue>) -> (String, String) {
    let v: JsValue = e.into();
    let name = Reflect::get(&v, &"name".into()).ok().and_then(|n| n.as_string()).unwrap_or_default();
    let message = Reflect::get(&v, &"message".into()).ok().and_then(|n| n.as_string()).unwrap_or_default();
    (name, message)
}

#[wasm_bindgen_test]
async fn not_gguf_is_an_invalid_model_error() {
    let mut loader = create_loader("cpu".into(), Some(4096.0), None, None, None).await.expect("loader");
    let err = loader.feed(&[b'P', b'K', 3, 4, 0, 0, 0, 0]).expect_err("not GGUF");
    let (name, message) = name_of(err);
    log(&format!("not GGUF: {name}: {message}"));
    assert_eq!(name, "InvalidModelError");
    assert!(message.contains("GGUF"), "{message}");
}

#[wasm_bindgen_test]
async fn truncated_file_is_an_invalid_model_error() {
    let bytes = fetch_bytes(TINY_LLAMA).await;
    let cut = bytes.len() * 2 / 3;
    // Without the length the loader only learns at the end that data is missing.
    let mut loader = create_loader("cpu".into(), None, None, None, None).await.expect("loader");
    loader.feed(&bytes[..cut]).expect("the first two thirds are fine");
    assert!(!loader.is_complete());
    let (name, message) = name_of(loader.finish(None).err().expect("truncated"));
    log(&format!("truncated: {name}: {message}"));
    assert_eq!(name, "InvalidModelError");
    // With the length, the header is rejected up front.
    let mut loader = create_loader("cpu".into(), Some(cut as f64), None, None, None).await.expect("loader");
    let (name, _) = name_of(loader.feed(&bytes[..cut]).expect_err("header names data past the end"));
    assert_eq!(name, "InvalidModelError");
}

#[wasm_bindgen_test]
async fn unknown_backend_or_kv_type_and_aborted_loader_fail_clearly() {
    let (name, message) =
        name_of(create_loader("tpu".into(), None, None, None, None).await.err().expect("bad backend"));
    assert_eq!(name, "Error");
    assert!(message.contains("'auto', 'webgpu' or 'cpu'"), "{message}");
    let bad_kv = create_loader("cpu".into(), None, None, None, Some("q8_0".into())).await.err();
    let (name, message) = name_of(bad_kv.expect("bad kvCacheType"));
    assert_eq!(name, "Error");
    assert!(message.contains("unknown kvCacheType 'q8_0': use 'f32' or 'f16'"), "{message}");
    let mut loader = create_loader("cpu".into(), None, None, None, None).await.expect("loader");
    loader.abort();
    let (name, _) = name_of(loader.feed(b"GGUF").expect_err("aborted"));
    assert_eq!(name, "AbortError");
}

#[wasm_bindgen_test]
async fn dispose_frees_and_later_calls_throw() {
    let (mut model, _) = stream_load(TINY_LLAMA, "auto", None).await;
    assert!(!model.tokenize("hello", true, false).expect("tokenize").is_empty());
    model.dispose();
    assert!(model.is_disposed());
    let (name, message) = name_of(model.tokenize("hello", true, false).expect_err("disposed"));
    assert!(message.contains("disposed"), "{name}: {message}");
    assert!(model.generate(vec![1, 2], JsValue::UNDEFINED).is_err());
}
