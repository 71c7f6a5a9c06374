//! `WebLoader`: the streaming load. JS reads the network (or a file) and calls `feed`
//! with each chunk as it arrives; the chunk is parsed and routed straight into the
//! backend's weight buffers (WebGPU: `queue.writeBuffer`), so WebAssembly memory holds
//! one chunk at a time plus the header and tokenizer. With the CPU backend the weights
//! live in WebAssembly memory, once.

use kindling_cpu::CpuBackend;
use kindling_gpu::GpuBackend;
use kindling_model::{Backend, Loader};
use wasm_bindgen::prelude::*;

use crate::engine::{open_backend, BackendKind, Opened};
use crate::error::{ErrorName, JsResult, WebError};
use crate::model::WebModel;

/// A loader with the backend its weights go to.
struct Stream<B: Backend> {
    backend: B,
    loader: Loader<B>,
}

enum AnyStream {
    Gpu(Box<Stream<GpuBackend>>),
    Cpu(Box<Stream<CpuBackend>>),
}

macro_rules! with_stream {
    ($s:expr, $x:ident => $body:expr) => {
        match $s {
            AnyStream::Gpu($x) => $body,
            AnyStream::Cpu($x) => $body,
        }
    };
}

#[wasm_bindgen]
pub struct WebLoader {
    /// `None` once aborted (everything allocated so far has been dropped).
    stream: Option<AnyStream>,
    adapter: JsValue,
    fallback_reason: Option<String>,
}

/// Opens the backend (`'auto' | 'webgpu' | 'cpu'`) and returns a loader for a file of
/// `file_length` bytes when known (it lets the header parser reject impossible sizes
/// before allocating anything).
#[wasm_bindgen(js_name = createLoader)]
pub async fn create_loader(backend: String, file_length: Option<f64>) -> JsResult<WebLoader> {
    crate::init();
    let kind = BackendKind::parse(&backend)?;
    let file_len = match file_length {
        Some(n) if n.is_finite() && n >= 0.0 => Some(n as u64),
        Some(n) => return Err(WebError::usage(format!("fileLength must be a byte count, got {n}"))),
        None => None,
    };
    let choice = open_backend(kind).await?;
    let stream = match choice.opened {
        Opened::Gpu(backend) => AnyStream::Gpu(Box::new(Stream { backend: *backend, loader: Loader::new(file_len) })),
        Opened::Cpu(backend) => {
            if let Some(len) = file_len {
                ensure_wasm_memory(len)?;
            }
            AnyStream::Cpu(Box::new(Stream { backend, loader: Loader::new(file_len) }))
        }
    };
    Ok(WebLoader { stream: Some(stream), adapter: choice.adapter, fallback_reason: choice.fallback_reason })
}

/// The CPU backend keeps the weights in WebAssembly memory, whose allocation failure
/// would abort the module: check up front, with a fallible reservation, that the
/// model fits (the memory stays reserved for the weights that follow).
fn ensure_wasm_memory(file_len: u64) -> JsResult<()> {
    let need = usize::try_from(file_len).ok().and_then(|n| n.checked_add(16 << 20));
    let mut probe: Vec<u8> = Vec::new();
    match need.map(|n| probe.try_reserve_exact(n)) {
        Some(Ok(())) => Ok(()),
        _ => Err(WebError::new(
            ErrorName::OutOfMemory,
            format!(
                "the model ({} MiB) does not fit in WebAssembly memory (4 GiB at most, less on some devices) \
                 for the CPU backend; use a smaller model or WebGPU",
                file_len >> 20
            ),
        )),
    }
}

impl WebLoader {
    fn stream(&mut self) -> JsResult<&mut AnyStream> {
        self.stream.as_mut().ok_or_else(|| WebError::new(ErrorName::Abort, "the load was aborted"))
    }
}

#[wasm_bindgen]
impl WebLoader {
    /// Consumes the next chunk of the file.
    pub fn feed(&mut self, chunk: &[u8]) -> JsResult<()> {
        with_stream!(self.stream()?, s => s.loader.feed(&mut s.backend, chunk))?;
        Ok(())
    }

    /// Bytes fed so far.
    #[wasm_bindgen(getter)]
    pub fn received(&self) -> f64 {
        self.stream.as_ref().map_or(0.0, |s| with_stream!(s, x => x.loader.progress().received as f64))
    }

    /// The file size when known (given, or from the header once parsed).
    #[wasm_bindgen(getter)]
    pub fn total(&self) -> Option<f64> {
        self.stream.as_ref().and_then(|s| with_stream!(s, x => x.loader.progress().total.map(|t| t as f64)))
    }

    /// Whether every tensor has arrived (the rest of the stream can be dropped).
    #[wasm_bindgen(getter, js_name = isComplete)]
    pub fn is_complete(&self) -> bool {
        self.stream.as_ref().is_some_and(|s| with_stream!(s, x => x.loader.is_complete()))
    }

    /// `'webgpu'` or `'cpu'`.
    #[wasm_bindgen(getter)]
    pub fn backend(&self) -> String {
        match &self.stream {
            Some(AnyStream::Gpu(_)) => "webgpu".into(),
            Some(AnyStream::Cpu(_)) => "cpu".into(),
            None => "none".into(),
        }
    }

    #[wasm_bindgen(getter, js_name = fallbackReason)]
    pub fn fallback_reason(&self) -> Option<String> {
        self.fallback_reason.clone()
    }

    /// Drops everything allocated so far (weight buffers, the backend). Later calls
    /// fail with `AbortError`.
    pub fn abort(&mut self) {
        self.stream = None;
    }

    /// The stream has ended: builds the model and its session of `context_length`
    /// positions (default: the model's trained length, capped — see `model.rs`).
    pub fn finish(&mut self, context_length: Option<u32>) -> JsResult<WebModel> {
        let stream = self.stream.take().ok_or_else(|| WebError::new(ErrorName::Abort, "the load was aborted"))?;
        let adapter = std::mem::replace(&mut self.adapter, JsValue::NULL);
        let reason = self.fallback_reason.take();
        let context = context_length.map(|c| c as usize);
        match stream {
            AnyStream::Gpu(s) => WebModel::build_gpu(s.backend, s.loader.finish()?, context, adapter, reason),
            AnyStream::Cpu(s) => WebModel::build_cpu(s.backend, s.loader.finish()?, context, adapter, reason),
        }
    }
}
