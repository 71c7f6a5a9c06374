//! Which backend runs the model, and the loaded engine over either backend.
//!
//! `open_backend` applies the backend choice: 'webgpu' must get a WebGPU device or
//! fails with `WebGPUUnavailableError`; 'auto' takes WebGPU when a hardware adapter
//! and a device are available and otherwise falls back to the CPU backend, recording
//! why (`fallback_reason`). A software adapter (SwiftShader) counts as unusable for
//! 'auto', as in the native CLI: the CPU backend with SIMD128 is much faster there.

use kindling_cpu::CpuBackend;
use kindling_gpu::{GpuBackend, GpuOptions};
use kindling_model::{Backend, Model, Session};
use wasm_bindgen::JsValue;

use crate::caps;
use crate::error::{ErrorName, JsResult, WebError};

/// The backend a caller asks for: `'auto' | 'webgpu' | 'cpu'`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    Auto,
    Webgpu,
    Cpu,
}

impl BackendKind {
    pub fn parse(s: &str) -> JsResult<BackendKind> {
        match s {
            "auto" => Ok(BackendKind::Auto),
            "webgpu" | "gpu" => Ok(BackendKind::Webgpu),
            "cpu" => Ok(BackendKind::Cpu),
            other => Err(WebError::usage(format!("unknown backend '{other}': use 'auto', 'webgpu' or 'cpu'"))),
        }
    }
}

/// How a WebGPU session keeps its KV cache, the `kvCacheType` load option: `'f32'` (the
/// CPU engine's precision) or `'f16'` (half the memory and half the bytes attention reads;
/// keys and values rounded to 11 significant bits, as llama.cpp keeps them by default).
/// The CPU backend's cache is f32 whatever is asked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KvCacheType {
    #[default]
    F32,
    F16,
}

impl KvCacheType {
    /// The option's value; absent: the default.
    pub fn parse(s: Option<&str>) -> JsResult<KvCacheType> {
        match s {
            None => Ok(KvCacheType::default()),
            Some("f32") => Ok(KvCacheType::F32),
            Some("f16") => Ok(KvCacheType::F16),
            Some(other) => Err(WebError::usage(format!("unknown kvCacheType '{other}': use 'f32' or 'f16'"))),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            KvCacheType::F32 => "f32",
            KvCacheType::F16 => "f16",
        }
    }
}

/// A backend ready to receive weights (both boxed: each is a few hundred bytes of
/// handles and scratch).
pub(crate) enum Opened {
    Gpu(Box<GpuBackend>),
    Cpu(Box<CpuBackend>),
}

/// What the loader reports about the backend choice.
pub(crate) struct Choice {
    pub opened: Opened,
    /// `{vendor, architecture, description, isFallbackAdapter}` of the WebGPU adapter
    /// when WebGPU is used (or was probed), else null.
    pub adapter: JsValue,
    /// Why 'auto' did not use WebGPU.
    pub fallback_reason: Option<String>,
}

/// What 'auto' picks before a device is opened: the CPU when no WebGPU adapter is offered
/// or the only one is a software renderer (with the reason), else WebGPU.
pub(crate) struct Preference {
    pub gpu: bool,
    /// The adapter's `{vendor, architecture, description, isFallbackAdapter}`, or null.
    pub adapter: JsValue,
    pub fallback_reason: Option<String>,
}

pub(crate) async fn auto_preference() -> Preference {
    let adapter = match caps::request_adapter().await {
        Ok(a) => a,
        Err(reason) => return Preference { gpu: false, adapter: JsValue::NULL, fallback_reason: Some(reason) },
    };
    let info = caps::adapter_info(&adapter);
    let software = js_sys::Reflect::get(&info, &JsValue::from_str("isFallbackAdapter"))
        .ok()
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    if software {
        let reason = "the only WebGPU adapter is a software renderer (fallback adapter, e.g. SwiftShader); \
                      the CPU backend is faster there — pass backend: 'webgpu' to use it anyway";
        return Preference { gpu: false, adapter: info, fallback_reason: Some(reason.into()) };
    }
    Preference { gpu: true, adapter: info, fallback_reason: None }
}

pub(crate) async fn open_backend(kind: BackendKind, kv: KvCacheType) -> JsResult<Choice> {
    let cpu = |adapter: JsValue, reason: Option<String>| Choice {
        opened: Opened::Cpu(Box::new(CpuBackend::new())),
        adapter,
        fallback_reason: reason,
    };
    match kind {
        BackendKind::Cpu => Ok(cpu(JsValue::NULL, None)),
        BackendKind::Webgpu => {
            let adapter = caps::request_adapter().await.map_err(|r| WebError::new(ErrorName::WebGpuUnavailable, r))?;
            let gpu = open_gpu(kv).await?;
            Ok(Choice {
                opened: Opened::Gpu(Box::new(gpu)),
                adapter: caps::adapter_info(&adapter),
                fallback_reason: None,
            })
        }
        BackendKind::Auto => {
            let pick = auto_preference().await;
            if !pick.gpu {
                return Ok(cpu(pick.adapter, pick.fallback_reason));
            }
            match open_gpu(kv).await {
                Ok(gpu) => {
                    Ok(Choice { opened: Opened::Gpu(Box::new(gpu)), adapter: pick.adapter, fallback_reason: None })
                }
                Err(e) => Ok(cpu(pick.adapter, Some(e.message))),
            }
        }
    }
}

async fn open_gpu(kv: KvCacheType) -> JsResult<GpuBackend> {
    GpuBackend::new(GpuOptions { kv_f16: kv == KvCacheType::F16, ..GpuOptions::default() })
        .await
        .map_err(|e| WebError::new(ErrorName::WebGpuUnavailable, format!("cannot open a WebGPU device: {e}")))
}

/// A model on one backend with its one session (KV cache), reused by every generation
/// so chat turns keep their cached prefix.
pub(crate) struct Loaded<B: Backend> {
    pub model: Model<B>,
    pub session: Session<B>,
}

/// The engine over either backend. `with_engine!` runs the same generic code on both.
pub(crate) enum Engine {
    Gpu(Box<Loaded<GpuBackend>>),
    Cpu(Box<Loaded<CpuBackend>>),
}

impl Engine {
    /// Prompt positions one generation step evaluates: a whole batch on the GPU, whose
    /// steps run on the device while JS goes on; a few on the CPU (`CPU_PREFILL_STEP`).
    pub fn prefill_step_tokens(&self) -> usize {
        match self {
            Engine::Gpu(l) => l.model.max_batch(),
            Engine::Cpu(_) => crate::model::CPU_PREFILL_STEP,
        }
    }

    pub fn backend_name(&self) -> &'static str {
        match self {
            Engine::Gpu(_) => "webgpu",
            Engine::Cpu(_) => "cpu",
        }
    }

    /// How the session's KV cache is kept.
    pub fn kv_cache_type(&self) -> KvCacheType {
        match self {
            Engine::Gpu(l) if l.model.backend().shader_features().kv_f16 => KvCacheType::F16,
            _ => KvCacheType::F32,
        }
    }
}

/// `with_engine!(engine, e => expr)`: evaluates `expr` with `e: &mut Loaded<_>` for
/// whichever backend `engine` holds.
macro_rules! with_engine {
    ($engine:expr, $e:ident => $body:expr) => {
        match $engine {
            $crate::engine::Engine::Gpu($e) => $body,
            $crate::engine::Engine::Cpu($e) => $body,
        }
    };
}
pub(crate) use with_engine;
