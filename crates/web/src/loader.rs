//! `WebLoader`: the streaming load. JS reads the network (or a file) and calls `feed`
//! with each chunk as it arrives; the chunk is parsed and routed straight into the
//! backend's weight buffers (WebGPU: `queue.writeBuffer`), so WebAssembly memory holds
//! one chunk at a time plus the header and tokenizer. With the CPU backend the weights
//! live in WebAssembly memory, once, and a model that would not fit is refused before
//! its weights download (`memory.rs`).

use kindling_cpu::CpuBackend;
use kindling_gpu::GpuBackend;
use kindling_model::{Backend, Loader};
use wasm_bindgen::prelude::*;

use crate::engine::{open_backend, BackendKind, KvCacheType, Opened};
use crate::error::{ErrorName, JsResult, WebError};
use crate::inspect::{allowed_from_js, FitsCheck};
use crate::memory::{self, CpuNeed};
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
    /// The session's positions asked for at creation (`finish` may still say).
    context_length: Option<u32>,
    /// The fits-check, until the header is complete (`inspect.rs`).
    fits: Option<FitsCheck>,
}

/// Opens the backend (`'auto' | 'webgpu' | 'cpu'`) and returns a loader for a file of
/// `file_length` bytes when known (it lets the header parser reject impossible sizes
/// before allocating anything); for a model split in shards, `file_length` is the
/// first shard's and `model_length` all of them together (the CPU backend's first
/// memory check). `context_length`: the session's positions, when the
/// caller knows them now; the CPU backend checks that its KV cache fits WebAssembly
/// memory as soon as the header has arrived (`memory.rs`). `kv_cache_type`: `'f32' | 'f16'`
/// (`KvCacheType`; absent: the default).
#[wasm_bindgen(js_name = createLoader)]
pub async fn create_loader(
    backend: String,
    file_length: Option<f64>,
    context_length: Option<u32>,
    model_length: Option<f64>,
    kv_cache_type: Option<String>,
) -> JsResult<WebLoader> {
    crate::init();
    let kind = BackendKind::parse(&backend)?;
    let kv = KvCacheType::parse(kv_cache_type.as_deref())?;
    let file_len = byte_count("fileLength", file_length)?;
    let model_len = byte_count("modelLength", model_length)?.or(file_len);
    let choice = open_backend(kind, kv).await?;
    let stream = match choice.opened {
        Opened::Gpu(backend) => AnyStream::Gpu(Box::new(Stream { backend: *backend, loader: Loader::new(file_len) })),
        Opened::Cpu(backend) => {
            // Before a byte is read: the weights alone (≈ the file) must fit.
            if let Some(len) = model_len {
                memory::reserve(len + memory::SLACK).map_err(|reached| memory::weights_do_not_fit(len, reached))?;
            }
            AnyStream::Cpu(Box::new(Stream { backend: *backend, loader: Loader::new(file_len) }))
        }
    };
    let fits = Some(FitsCheck::new(file_len, context_length, kv));
    Ok(WebLoader {
        stream: Some(stream),
        adapter: choice.adapter,
        fallback_reason: choice.fallback_reason,
        context_length,
        fits,
    })
}

/// Once the header is in (the CPU backend has allocated the weights): the KV cache of
/// the session and the activations must fit too.
fn check_cpu_memory(s: &Stream<CpuBackend>, context_length: Option<u32>) -> JsResult<()> {
    let Some(cfg) = s.loader.config() else { return Ok(()) };
    let positions = crate::model::cpu_context(cfg, context_length.map(|c| c as usize));
    let batch = crate::model::batch_rows(cfg, &crate::model::CPU_OPTIONS);
    let need = CpuNeed::new(cfg, s.backend.weight_bytes(), positions, batch);
    memory::reserve(need.after_weights()).map_err(|reached| memory::model_does_not_fit(&cfg.name, &need, reached))
}

fn byte_count(what: &str, n: Option<f64>) -> JsResult<Option<u64>> {
    match n {
        Some(n) if n.is_finite() && n >= 0.0 => Ok(Some(n as u64)),
        Some(n) => Err(WebError::usage(format!("{what} must be a byte count, got {n}"))),
        None => Ok(None),
    }
}

impl WebLoader {
    fn stream(&mut self) -> JsResult<&mut AnyStream> {
        self.stream.as_mut().ok_or_else(|| WebError::new(ErrorName::Abort, "the load was aborted"))
    }

    /// Hands the model loader a chunk (with the CPU backend's memory check once the
    /// header is in).
    fn feed_loader(&mut self, chunk: &[u8]) -> JsResult<()> {
        let context_length = self.context_length;
        let stream = self.stream()?;
        let had_header = with_stream!(&*stream, s => s.loader.config().is_some());
        with_stream!(&mut *stream, s => s.loader.feed(&mut s.backend, chunk))?;
        if let (false, AnyStream::Cpu(s)) = (had_header, &*stream) {
            if let Err(e) = check_cpu_memory(s, context_length) {
                self.abort(); // frees the weights allocated at the header
                return Err(e);
            }
        }
        Ok(())
    }

    /// Ends the fits-check: the chunks it held go to the model loader.
    fn release_held(&mut self) -> JsResult<()> {
        if let Some(fits) = self.fits.take() {
            for piece in fits.into_held() {
                self.feed_loader(&piece)?;
            }
        }
        Ok(())
    }
}

#[wasm_bindgen]
impl WebLoader {
    /// Consumes the next chunk of the file.
    pub fn feed(&mut self, chunk: &[u8]) -> JsResult<()> {
        // The fits-check reads the header first (`inspect.rs`): the model loader gets the
        // chunks held meanwhile only once the model is known to fit, so nothing is
        // allocated for a model that does not, and the two never hold a parsed header
        // at the same time.
        if let Some(fits) = self.fits.as_mut() {
            let device = match self.stream.as_ref() {
                Some(AnyStream::Gpu(s)) => {
                    let a = s.backend.adapter();
                    Some((a.max_buffer_size, a.max_storage_buffer_binding_size))
                }
                _ => None,
            };
            if let Err(e) = fits.feed(chunk, device) {
                self.fits = None;
                self.abort();
                return Err(e);
            }
            if !fits.is_done() {
                fits.hold(chunk);
                return Ok(());
            }
            self.release_held()?;
        }
        self.feed_loader(chunk)
    }

    /// Caps what the backend allows in the fits-check made when the header arrives:
    /// `{ maxBufferSize, maxStorageBufferBindingSize, wasmMemoryBytes }` (each lowers
    /// the device's own limit, or wasm32's 4 GiB). Call before the first `feed`.
    #[wasm_bindgen(js_name = setLimits)]
    pub fn set_limits(&mut self, limits: JsValue) -> JsResult<()> {
        let caps = allowed_from_js(&limits)?;
        if let Some(fits) = self.fits.as_mut() {
            fits.set_caps(caps);
        }
        Ok(())
    }

    /// The shard being read is complete; the next chunks are the next shard's (a file
    /// of `file_length` bytes when known).
    #[wasm_bindgen(js_name = nextShard)]
    pub fn next_shard(&mut self, file_length: Option<f64>) -> JsResult<()> {
        let len = byte_count("fileLength", file_length)?;
        self.release_held()?;
        let stream = self.stream()?;
        with_stream!(stream, s => s.loader.next_shard(len))?;
        Ok(())
    }

    /// Whether every tensor of the shard being read has arrived (for a model in one
    /// file, `isComplete`).
    #[wasm_bindgen(getter, js_name = isShardComplete)]
    pub fn is_shard_complete(&self) -> bool {
        self.stream.as_ref().is_some_and(|s| with_stream!(s, x => x.loader.is_shard_complete()))
    }

    /// How many files the model is split in (1 when not split), once the first header is in.
    #[wasm_bindgen(getter, js_name = shardCount)]
    pub fn shard_count(&self) -> Option<f64> {
        self.stream.as_ref().and_then(|s| with_stream!(s, x => x.loader.shards().map(|(_, n)| n as f64)))
    }

    /// Bytes fed so far, including those the fits-check holds until the header is in.
    #[wasm_bindgen(getter)]
    pub fn received(&self) -> f64 {
        let held = self.fits.as_ref().map_or(0, |f| f.held_bytes());
        let loaded = self.stream.as_ref().map_or(0, |s| with_stream!(s, x => x.loader.progress().received));
        (loaded + held) as f64
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
        self.fits = None;
    }

    /// The stream has ended: builds the model and its session of `context_length`
    /// positions (default: the one given at creation, else the model's trained length,
    /// capped — see `model.rs`).
    pub fn finish(&mut self, context_length: Option<u32>) -> JsResult<WebModel> {
        // A stream that ended inside the header: the model loader says where.
        self.release_held()?;
        let stream = self.stream.take().ok_or_else(|| WebError::new(ErrorName::Abort, "the load was aborted"))?;
        let adapter = std::mem::replace(&mut self.adapter, JsValue::NULL);
        let reason = self.fallback_reason.take();
        let context = context_length.or(self.context_length).map(|c| c as usize);
        match stream {
            AnyStream::Gpu(s) => WebModel::build_gpu(s.backend, s.loader.finish()?, context, adapter, reason),
            AnyStream::Cpu(s) => WebModel::build_cpu(s.backend, s.loader.finish()?, context, adapter, reason),
        }
    }
}
