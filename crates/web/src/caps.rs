//! `capabilities()`: what this browser's WebGPU offers, read from `navigator.gpu`
//! itself (WebGPU's own names for features and limits), and whether this build has
//! SIMD128 CPU kernels.

use js_sys::{Array, Object, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::error::JsResult;

/// The WebGPU limits worth showing (the ones the kernels and weight buffers depend on,
/// and the ones people compare adapters by).
const LIMITS: &[&str] = &[
    "maxBufferSize",
    "maxStorageBufferBindingSize",
    "maxUniformBufferBindingSize",
    "maxStorageBuffersPerShaderStage",
    "maxComputeWorkgroupStorageSize",
    "maxComputeInvocationsPerWorkgroup",
    "maxComputeWorkgroupSizeX",
    "maxComputeWorkgroupSizeY",
    "maxComputeWorkgroupSizeZ",
    "maxComputeWorkgroupsPerDimension",
    "maxBindGroups",
    "maxDynamicUniformBuffersPerPipelineLayout",
    "maxDynamicStorageBuffersPerPipelineLayout",
    "minStorageBufferOffsetAlignment",
    "minUniformBufferOffsetAlignment",
];

fn get(target: &JsValue, key: &str) -> JsValue {
    Reflect::get(target, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn set(target: &Object, key: &str, value: impl Into<JsValue>) {
    // Setting a property on a plain object we created cannot fail.
    let _ = Reflect::set(target, &JsValue::from_str(key), &value.into());
}

/// `navigator.gpu`, or `None` where the browser has no WebGPU (or no navigator: a
/// worklet).
pub(crate) fn navigator_gpu() -> Option<JsValue> {
    let navigator = get(&js_sys::global(), "navigator");
    if navigator.is_undefined() || navigator.is_null() {
        return None;
    }
    let gpu = get(&navigator, "gpu");
    (!gpu.is_undefined() && !gpu.is_null()).then_some(gpu)
}

/// What `navigator.gpu.requestAdapter()` gives: the adapter, or why there is none.
pub(crate) async fn request_adapter() -> Result<JsValue, String> {
    let Some(gpu) = navigator_gpu() else {
        return Err("navigator.gpu is missing: this browser (or this context) has no WebGPU".into());
    };
    let request = get(&gpu, "requestAdapter")
        .dyn_into::<js_sys::Function>()
        .map_err(|_| "navigator.gpu.requestAdapter is not a function".to_string())?;
    let promise = request.call0(&gpu).map_err(|e| format!("navigator.gpu.requestAdapter() threw: {}", describe(&e)))?;
    let adapter = JsFuture::from(Promise::resolve(&promise))
        .await
        .map_err(|e| format!("navigator.gpu.requestAdapter() failed: {}", describe(&e)))?;
    if adapter.is_null() || adapter.is_undefined() {
        return Err("navigator.gpu.requestAdapter() returned null: WebGPU is disabled or no GPU is usable \
                    (in Chrome see chrome://gpu; headless Chrome needs --enable-unsafe-webgpu)"
            .into());
    }
    Ok(adapter)
}

/// `{vendor, architecture, description, isFallbackAdapter}` of an adapter.
pub(crate) fn adapter_info(adapter: &JsValue) -> JsValue {
    let info = get(adapter, "info");
    let out = Object::new();
    for key in ["vendor", "architecture", "description"] {
        let v = if info.is_object() { get(&info, key) } else { JsValue::UNDEFINED };
        set(&out, key, v.as_string().unwrap_or_default());
    }
    // Chrome moved `isFallbackAdapter` from the adapter to its info object.
    let fallback = get(&info, "isFallbackAdapter").as_bool().or_else(|| get(adapter, "isFallbackAdapter").as_bool());
    set(&out, "isFallbackAdapter", fallback.unwrap_or(false));
    out.into()
}

fn features(adapter: &JsValue) -> Array {
    let set = get(adapter, "features");
    let mut names: Vec<String> = Vec::new();
    if let Ok(Some(iter)) = js_sys::try_iter(&set) {
        for item in iter.flatten() {
            if let Some(s) = item.as_string() {
                names.push(s);
            }
        }
    }
    names.sort();
    names.into_iter().map(JsValue::from).collect()
}

fn limits(adapter: &JsValue) -> Object {
    let limits = get(adapter, "limits");
    let out = Object::new();
    for &key in LIMITS {
        let v = get(&limits, key);
        if v.as_f64().is_some() {
            set(&out, key, v);
        }
    }
    out
}

/// Best-effort text of a thrown JS value.
pub(crate) fn describe(e: &JsValue) -> String {
    if let Some(err) = e.dyn_ref::<js_sys::Error>() {
        return format!("{}: {}", String::from(err.name()), String::from(err.message()));
    }
    e.as_string().unwrap_or_else(|| format!("{e:?}"))
}

/// `{ webgpu, adapter, features, limits, simd128, reason }`: `webgpu` is true when an
/// adapter was returned; `reason` says why not otherwise.
#[wasm_bindgen::prelude::wasm_bindgen(js_name = capabilities)]
pub async fn capabilities() -> JsResult<JsValue> {
    crate::init();
    let out = Object::new();
    set(&out, "simd128", cfg!(target_feature = "simd128"));
    match request_adapter().await {
        Ok(adapter) => {
            set(&out, "webgpu", true);
            set(&out, "adapter", adapter_info(&adapter));
            set(&out, "features", features(&adapter));
            set(&out, "limits", limits(&adapter));
            set(&out, "reason", JsValue::NULL);
        }
        Err(reason) => {
            set(&out, "webgpu", false);
            set(&out, "adapter", JsValue::NULL);
            set(&out, "features", Array::new());
            set(&out, "limits", Object::new());
            set(&out, "reason", reason);
        }
    }
    Ok(out.into())
}
