//! `WebInspector`: the fits-check before a download. JS feeds it the first bytes of a
//! file (Range requests, or a cached copy) until the GGUF header is complete; it then
//! says what the model is (architecture, parameters, quantization, sizes) and what it
//! needs on a backend for a context length against what that backend allows:
//!
//! - WebGPU: weight buffers (rows repacked as `kindling-gpu` stores them, split by rows
//!   into buffers no larger than `maxStorageBufferBindingSize` and `maxBufferSize`, so
//!   a tensor larger than a binding fits as long as one row does), the KV cache (one
//!   buffer per layer for keys and one for values), the activations of a 512-row
//!   batch (`kindling-model`'s `Workspace`) and prefill's scratch for a weight
//!   dequantized into f32 panels (`other`), each buffer against the limits. WebGPU
//!   does not say how much memory the device has, so the total is reported, not checked.
//! - CPU: everything in WebAssembly memory (`memory.rs`'s `CpuNeed`: weights, KV cache,
//!   activations, slack) plus the parsed header and tokenizer, against wasm32's 4 GiB
//!   (or a lower `wasmMemoryBytes`). The browser may give less than 4 GiB: a CPU load
//!   still makes its own reservation check (`memory.rs`).

use js_sys::{Object, Reflect};
use kindling_gguf::{GgmlType, Header, HeaderParser, Limits, Progress};
use kindling_model::{
    policy, weights, workspace_buffers, ModelConfig, ModelError, ModelInfo, WeightSpec, WorkspaceBuffer,
};
use wasm_bindgen::prelude::*;

use crate::engine::KvCacheType;
use crate::error::{ErrorName, JsResult, WebError};
use crate::memory::{mib, CpuNeed, SLACK};
use crate::model::{batch_rows, cpu_context, gpu_context, CPU_OPTIONS};

/// wasm32 addresses 4 GiB at most.
pub(crate) const WASM32_MAX: u64 = 4 << 30;

/// What a backend allows: the adapter's limits (capped by the caller's) and the
/// WebAssembly memory the CPU backend may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Allowed {
    pub max_buffer_size: u64,
    pub max_binding: u64,
    pub wasm_memory: u64,
}

impl Allowed {
    /// The largest storage buffer the GPU backend creates (`GpuBackend::new`'s weight part).
    fn max_part(&self) -> u64 {
        self.max_binding.min(self.max_buffer_size) & !3
    }
}

/// The largest weight and how it is stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LargestWeight {
    pub name: String,
    /// Bytes as stored on the backend.
    pub bytes: u64,
    pub row_bytes: u64,
    /// Buffers it is split into (1 on the CPU, or when it fits one binding).
    pub parts: u64,
}

/// What a model needs on one backend, and whether that fits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Need {
    pub backend: &'static str,
    pub positions: usize,
    pub weights: u64,
    pub kv_cache: u64,
    pub activations: u64,
    /// CPU: the slack and the parsed header and tokenizer; WebGPU: prefill's dequantized
    /// weight panel (up to 64 MiB, or 128 MiB for a gate and up together).
    pub other: u64,
    pub largest_weight: Option<LargestWeight>,
    /// The largest single buffer besides weights: (what, bytes).
    pub largest_buffer: (String, u64),
    /// Why it does not fit (empty: it fits).
    pub reasons: Vec<String>,
}

impl Need {
    pub fn total(&self) -> u64 {
        self.weights + self.kv_cache + self.activations + self.other
    }

    pub fn fits(&self) -> bool {
        self.reasons.is_empty()
    }
}

/// The activation buffers of a batch of `batch` rows, as `Workspace::alloc` makes them
/// (`kindling_model::workspace_buffers`): (what, bytes) of each distinct shape, the
/// largest of those with the same width and kind. Their sum is at most `CpuNeed`'s
/// activations, which counts every buffer.
fn activation_buffers(cfg: &ModelConfig, batch: usize) -> Vec<(String, u64)> {
    let kind = |b: &WorkspaceBuffer| if b.name.starts_with("logits") { "logits" } else { "activation" };
    let mut widest: Vec<WorkspaceBuffer> = Vec::new();
    for b in workspace_buffers(cfg, batch) {
        match widest.iter_mut().find(|w| w.cols == b.cols && kind(w) == kind(&b)) {
            Some(w) if w.rows < b.rows => *w = b,
            Some(_) => {}
            None => widest.push(b),
        }
    }
    widest.iter().map(|b| (format!("{} [{}, {}]", kind(b), b.rows, b.cols), b.bytes())).collect()
}

/// What the model of `cfg` with weights `specs` needs on WebGPU for `positions`, and
/// whether every buffer fits `allowed`.
pub(crate) fn gpu_need(
    cfg: &ModelConfig,
    specs: &[WeightSpec],
    positions: usize,
    kv: KvCacheType,
    allowed: &Allowed,
) -> Need {
    let max_part = allowed.max_part();
    let mut reasons = Vec::new();
    let mut weights = 0;
    let mut largest: Option<LargestWeight> = None;
    // Prefill's scratch for the largest weight part it dequantizes into f32 panels
    // (kindling-gpu's wide.rs; browsers have no cooperative matrices): one buffer, reused.
    let batch = batch_rows(cfg, &policy::gpu_options(cfg, positions, max_part));
    let mut panel = 0;
    for s in specs {
        // One-row tensors are widened to f32 at upload (GpuBackend::alloc_weight).
        let ty = if s.rows == 1 { GgmlType::F32 } else { s.ty };
        let row_bytes = kindling_gpu::stored_row_bytes(ty, s.cols) as u64;
        let bytes = row_bytes * s.rows as u64;
        weights += bytes;
        let rows_per_part = max_part.checked_div(row_bytes).unwrap_or(0);
        let part_rows = (rows_per_part as usize).min(s.rows);
        // Not the vocabulary tables: the embedding is looked up, and the output matmul
        // runs over the last rows only (or 32-row batches of every position's logits).
        let vocab_table = s.name == "token_embd.weight" || s.name == "output.weight";
        // (f32 panels: a browser has no cooperative matrices.) Asked with the session's
        // largest batch: the rules take more weights as batches grow, so this counts every
        // panel any of its batches makes; a feed-forward's gate, where its batches take it
        // with up as one gated panel (twice the rows), counts that panel.
        if !vocab_table
            && batch >= kindling_gpu::WIDE_MIN_ROWS
            && kindling_gpu::wide_weight_pays(batch, part_rows, s.cols)
        {
            let gated = s.name.ends_with("ffn_gate.weight") && kindling_gpu::wide_gated_pays(batch, part_rows, s.cols);
            let form = kindling_gpu::PanelForm::of(false, gated);
            panel = panel.max(kindling_gpu::wide_panel_bytes(part_rows, s.cols, max_part, form).unwrap_or(0));
        }
        if rows_per_part == 0 {
            reasons.push(format!(
                "one row of tensor '{}' is {row_bytes} bytes, more than the largest buffer the adapter allows ({max_part} bytes)",
                s.name
            ));
        }
        let parts = (s.rows as u64).div_ceil(rows_per_part.max(1));
        if largest.as_ref().is_none_or(|l| bytes > l.bytes) {
            largest = Some(LargestWeight { name: s.name.clone(), bytes, row_bytes, parts });
        }
    }
    // Keys and values, one buffer each per layer.
    let kv_buffer = kindling_gpu::kv_cache_buffer_bytes(positions, cfg.kv_width(), kv == KvCacheType::F16);
    let kv_cache = 2 * cfg.block_count as u64 * kv_buffer;
    let acts = CpuNeed::new(cfg, 0, positions, batch).activations;
    let mut buffers = activation_buffers(cfg, batch);
    buffers.push((format!("KV cache of one layer [{positions}, {}]", cfg.kv_width()), kv_buffer));
    for (what, bytes) in &buffers {
        if *bytes > max_part {
            reasons.push(format!(
                "the {what} buffer is {bytes} bytes ({} MiB), more than the adapter's maxStorageBufferBindingSize \
                 {} and maxBufferSize {}",
                mib(*bytes),
                allowed.max_binding,
                allowed.max_buffer_size
            ));
        }
    }
    let largest_buffer = buffers.into_iter().max_by_key(|b| b.1).unwrap_or_default();
    Need {
        backend: "webgpu",
        positions,
        weights,
        kv_cache,
        activations: acts,
        other: panel,
        largest_weight: largest,
        largest_buffer,
        reasons,
    }
}

/// What the model needs in WebAssembly memory on the CPU backend for `positions`
/// (`CpuNeed`, plus about twice the header's bytes for the parsed header and
/// tokenizer), and whether it fits `allowed.wasm_memory`.
pub(crate) fn cpu_need(
    cfg: &ModelConfig,
    specs: &[WeightSpec],
    positions: usize,
    header_bytes: u64,
    allowed: &Allowed,
) -> Need {
    // Tensor data as the CPU backend allocates it, plus the f32 copy of one-row tensors.
    let weights: u64 = specs.iter().map(|s| s.n_bytes + if s.rows == 1 { 4 * s.cols as u64 } else { 0 }).sum();
    let batch = batch_rows(cfg, &CPU_OPTIONS);
    let need = CpuNeed::new(cfg, weights, positions, batch);
    let largest = specs.iter().max_by_key(|s| s.n_bytes).map(|s| LargestWeight {
        name: s.name.clone(),
        bytes: s.n_bytes,
        row_bytes: s.n_bytes / s.rows.max(1) as u64,
        parts: 1,
    });
    let largest_buffer = activation_buffers(cfg, batch).into_iter().max_by_key(|b| b.1).unwrap_or_default();
    let mut out = Need {
        backend: "cpu",
        positions,
        weights,
        kv_cache: need.kv_cache,
        activations: need.activations,
        other: SLACK + 2 * header_bytes,
        largest_weight: largest,
        largest_buffer,
        reasons: Vec::new(),
    };
    let allowed_bytes = allowed.wasm_memory.min(WASM32_MAX);
    if out.total() > allowed_bytes {
        out.reasons.push(format!(
            "the CPU backend needs about {} MiB (weights {} MiB, KV cache for {positions} positions {} MiB, \
             activations {} MiB, header, tokenizer and slack {} MiB) of WebAssembly memory, more than the {} MiB allowed{}",
            mib(out.total()),
            mib(out.weights),
            mib(out.kv_cache),
            mib(out.activations),
            mib(out.other),
            mib(allowed_bytes),
            if allowed_bytes >= WASM32_MAX { " (wasm32's 4 GiB)" } else { "" }
        ));
    }
    out
}

/// A header's model and what it needs on one backend.
struct Evaluated {
    cfg: ModelConfig,
    info: ModelInfo,
    shards: u64,
    need: Need,
}

fn evaluate(
    header: &Header,
    backend: &str,
    context: Option<usize>,
    kv: KvCacheType,
    allowed: &Allowed,
) -> JsResult<Evaluated> {
    let cfg = ModelConfig::from_metadata(&header.metadata)?;
    let info = ModelInfo::from_header(header, &cfg);
    let shards = shard_count(header);
    // A split model's first shard: its own tensors (the others' come later; the CPU
    // backend's reservation check sees the whole model's length).
    let planned = if shards > 1 { weights::plan_shard(&header.tensors, &cfg)? } else { weights::plan(header, &cfg)? };
    let specs: Vec<WeightSpec> = planned.into_iter().map(|p| p.spec).collect();
    let need = match backend {
        "webgpu" | "gpu" => gpu_need(&cfg, &specs, gpu_context(&cfg, context), kv, allowed),
        "cpu" => cpu_need(&cfg, &specs, cpu_context(&cfg, context), header.data_offset, allowed),
        other => return Err(WebError::usage(format!("backend must be 'webgpu' or 'cpu', got '{other}'"))),
    };
    Ok(Evaluated { cfg, info, shards, need })
}

/// `{ maxBufferSize, maxStorageBufferBindingSize, wasmMemoryBytes }` (missing ones:
/// unlimited, wasm32's 4 GiB).
pub(crate) fn allowed_from_js(limits: &JsValue) -> JsResult<Allowed> {
    let get = |k: &str| -> JsValue {
        if limits.is_object() {
            Reflect::get(limits, &JsValue::from_str(k)).unwrap_or(JsValue::UNDEFINED)
        } else {
            JsValue::UNDEFINED
        }
    };
    Ok(Allowed {
        max_buffer_size: byte_count("maxBufferSize", &get("maxBufferSize"))?.unwrap_or(u64::MAX),
        max_binding: byte_count("maxStorageBufferBindingSize", &get("maxStorageBufferBindingSize"))?
            .unwrap_or(u64::MAX),
        wasm_memory: byte_count("wasmMemoryBytes", &get("wasmMemoryBytes"))?.unwrap_or(WASM32_MAX),
    })
}

/// The same check inside a load (`WebLoader`): the load's first chunks are parsed here
/// and held until the header is complete and checked; only then do they go to the model
/// loader, so a model that does not fit has nothing allocated and no weight byte
/// written, and a load's bytes are fetched once (no extra request).
pub(crate) struct FitsCheck {
    parser: Option<HeaderParser>,
    /// The chunks fed so far, for the model loader.
    held: Vec<Vec<u8>>,
    context: Option<usize>,
    kv: KvCacheType,
    /// The caller's caps (`limits` option), applied over the device's own.
    caps: Allowed,
}

impl FitsCheck {
    pub fn new(file_len: Option<u64>, context: Option<u32>, kv: KvCacheType) -> FitsCheck {
        let mut parser = HeaderParser::new(Limits::default());
        if let Some(len) = file_len {
            parser = parser.with_file_len(len);
        }
        let caps = Allowed { max_buffer_size: u64::MAX, max_binding: u64::MAX, wasm_memory: WASM32_MAX };
        FitsCheck { parser: Some(parser), held: Vec::new(), context: context.map(|c| c as usize), kv, caps }
    }

    pub fn set_caps(&mut self, caps: Allowed) {
        self.caps = caps;
    }

    /// The header has been checked (or could not be parsed): nothing more to do.
    pub fn is_done(&self) -> bool {
        self.parser.is_none()
    }

    /// Keeps a chunk for the model loader while the header is not complete.
    pub fn hold(&mut self, chunk: &[u8]) {
        self.held.push(chunk.to_vec());
    }

    /// Bytes held so far (counted as received: the load's progress grows with them).
    pub fn held_bytes(&self) -> u64 {
        self.held.iter().map(|c| c.len() as u64).sum()
    }

    /// The chunks held, in order; the parsed header is dropped with `self`.
    pub fn into_held(self) -> Vec<Vec<u8>> {
        self.held
    }

    /// Feeds the next chunk; once the header is complete, checks it against `device`
    /// (the backend's own limits; `None`: the CPU backend) and refuses with an
    /// `OutOfMemoryError` when the model does not fit. Errors of the header itself are
    /// left to the model loader (it reports them with the same parser).
    pub fn feed(&mut self, chunk: &[u8], device: Option<(u64, u64)>) -> JsResult<()> {
        let Some(parser) = self.parser.as_mut() else { return Ok(()) };
        let header = match parser.feed(chunk) {
            Ok(Progress::Done { header, .. }) => header,
            Ok(Progress::NeedMore(_)) => return Ok(()),
            Err(_) => {
                self.parser = None;
                return Ok(());
            }
        };
        self.parser = None;
        let mut allowed = self.caps;
        let backend = match device {
            Some((max_buffer, max_binding)) => {
                allowed.max_buffer_size = allowed.max_buffer_size.min(max_buffer);
                allowed.max_binding = allowed.max_binding.min(max_binding);
                "webgpu"
            }
            // Without a cap, the CPU backend's own reservations (`memory.rs`) are the
            // check: they find what this browser really gives, up to wasm32's 4 GiB.
            None if self.caps.wasm_memory >= WASM32_MAX => return Ok(()),
            None => "cpu",
        };
        // A header the engine cannot run is the model loader's to report, in its words.
        let Ok(e) = evaluate(&header, backend, self.context, self.kv, &allowed) else { return Ok(()) };
        if e.need.fits() {
            return Ok(());
        }
        Err(refusal(&e.info.name, &e.need))
    }
}

/// The `OutOfMemoryError` of a model that does not fit, saying what it needs and what is allowed.
fn refusal(name: &str, need: &Need) -> WebError {
    let name = if name.is_empty() { String::new() } else { format!(" '{name}'") };
    let reasons = need.reasons.join("; ");
    let message = if need.backend == "cpu" {
        // The reason has the CPU need's parts.
        format!(
            "the model{name} does not fit the CPU backend; refused when its header arrived, before its weights were \
             downloaded: {reasons}. Use WebGPU, a smaller contextLength or a smaller model"
        )
    } else {
        format!(
            "the model{name} does not fit this WebGPU device; refused when its header arrived, before its weights were \
             downloaded: {reasons} (in all it needs about {} MiB of GPU memory: weights {} MiB, KV cache for {} positions \
             {} MiB, activations {} MiB). Use a smaller contextLength, the CPU backend or a smaller model",
            mib(need.total()),
            mib(need.weights),
            need.positions,
            mib(need.kv_cache),
            mib(need.activations),
        )
    };
    WebError::new(ErrorName::OutOfMemory, message)
}

/// The fits-check's parser: fed the first bytes of a file until its header is complete.
#[wasm_bindgen]
pub struct WebInspector {
    parser: Option<HeaderParser>,
    header: Option<Header>,
    received: u64,
    needed: u64,
    file_len: Option<u64>,
}

fn byte_count(what: &str, v: &JsValue) -> JsResult<Option<u64>> {
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    match v.as_f64() {
        Some(n) if n.is_finite() && n >= 0.0 => Ok(Some(n as u64)),
        _ => Err(WebError::usage(format!("limits.{what} must be a byte count"))),
    }
}

fn set(o: &Object, key: &str, v: impl Into<JsValue>) {
    let _ = Reflect::set(o, &JsValue::from_str(key), &v.into());
}

fn num(n: u64) -> JsValue {
    JsValue::from_f64(n as f64)
}

/// `split.count` of a header (1 when not split).
fn shard_count(header: &Header) -> u64 {
    header.metadata.get_u64("split.count").unwrap_or(1).max(1)
}

#[wasm_bindgen]
impl WebInspector {
    /// An inspector for a file of `file_length` bytes when known (the parser then
    /// rejects counts and sizes that could not fit in it).
    #[wasm_bindgen(constructor)]
    pub fn new(file_length: Option<f64>) -> JsResult<WebInspector> {
        crate::init();
        let file_len = match file_length {
            Some(n) if n.is_finite() && n >= 0.0 => Some(n as u64),
            Some(n) => return Err(WebError::usage(format!("fileLength must be a byte count, got {n}"))),
            None => None,
        };
        let mut parser = HeaderParser::new(Limits::default());
        if let Some(len) = file_len {
            parser = parser.with_file_len(len);
        }
        Ok(WebInspector { parser: Some(parser), header: None, received: 0, needed: 8, file_len })
    }

    /// Parses the next bytes of the file; true once the header is complete (later
    /// bytes are ignored).
    pub fn feed(&mut self, chunk: &[u8]) -> JsResult<bool> {
        let Some(parser) = self.parser.as_mut() else {
            return Ok(self.header.is_some());
        };
        self.received += chunk.len() as u64;
        match parser.feed(chunk).map_err(ModelError::Gguf) {
            Ok(Progress::NeedMore(n)) => {
                self.needed = n as u64;
                Ok(false)
            }
            Ok(Progress::Done { header, .. }) => {
                self.parser = None;
                self.needed = 0;
                self.header = Some(header);
                Ok(true)
            }
            Err(e) => {
                self.parser = None;
                Err(e.into())
            }
        }
    }

    /// The file ended (or the bytes given ran out) before the header did: the error
    /// saying where it was cut.
    pub fn finish(&mut self) -> JsResult<()> {
        if self.header.is_some() {
            return Ok(());
        }
        match self.parser.take() {
            Some(parser) => match parser.finish() {
                Ok(header) => {
                    self.header = Some(header);
                    Ok(())
                }
                Err(e) => Err(ModelError::Gguf(e).into()),
            },
            None => Err(WebError::new(ErrorName::InvalidModel, "the header could not be read")),
        }
    }

    #[wasm_bindgen(getter, js_name = isComplete)]
    pub fn is_complete(&self) -> bool {
        self.header.is_some()
    }

    /// Bytes fed so far.
    #[wasm_bindgen(getter)]
    pub fn received(&self) -> f64 {
        self.received as f64
    }

    /// At least this many more bytes are needed for the next item of the header.
    #[wasm_bindgen(getter)]
    pub fn needed(&self) -> f64 {
        self.needed as f64
    }

    /// Where the tensor data starts (the header's size, padded), once complete.
    #[wasm_bindgen(getter, js_name = headerBytes)]
    pub fn header_bytes(&self) -> Option<f64> {
        self.header.as_ref().map(|h| h.data_offset as f64)
    }

    /// `{ architecture, name, parameters, tensorCount, quantization, fileType,
    /// bytesByType, fileSize, headerBytes, dataBytes, trainedContextLength, ...,
    /// backend, contextLength, memory: { weights, kvCache, activations, other, total },
    /// allowed: {...}, largestWeight, largestBuffer, fits, reasons }` for `backend`
    /// ('webgpu' | 'cpu') and `context_length` positions (default: what a load would
    /// use) with the KV cache as `kv_cache_type` says (`'f32' | 'f16'`, WebGPU only),
    /// against `limits` (`{ maxBufferSize, maxStorageBufferBindingSize,
    /// wasmMemoryBytes }`, missing ones unlimited).
    pub fn report(
        &self,
        backend: &str,
        context_length: Option<u32>,
        limits: JsValue,
        kv_cache_type: Option<String>,
    ) -> JsResult<JsValue> {
        let header = self
            .header
            .as_ref()
            .ok_or_else(|| WebError::usage("report(): the header is not complete yet; feed more bytes"))?;
        let allowed = allowed_from_js(&limits)?;
        let kv = KvCacheType::parse(kv_cache_type.as_deref())?;
        let Evaluated { cfg, info, shards, need } =
            evaluate(header, backend, context_length.map(|c| c as usize), kv, &allowed)?;
        // The CPU backend's cache is f32 whatever is asked.
        let kv = if need.backend == "cpu" { KvCacheType::F32 } else { kv };

        let o = Object::new();
        set(&o, "architecture", info.architecture.as_str());
        set(&o, "kind", cfg.kind.as_str());
        set(&o, "name", info.name.as_str());
        set(&o, "parameters", num(info.parameters));
        set(&o, "tensorCount", num(header.tensors.len() as u64));
        set(&o, "quantization", info.quantization.as_str());
        set(&o, "fileType", header.metadata.get_u64("general.file_type").map_or(JsValue::NULL, num));
        let by_type = Object::new();
        let mut types: Vec<(GgmlType, u64)> = Vec::new();
        for t in &header.tensors {
            match types.iter_mut().find(|(ty, _)| *ty == t.ty) {
                Some((_, n)) => *n += t.n_bytes,
                None => types.push((t.ty, t.n_bytes)),
            }
        }
        for (ty, n) in types {
            set(&by_type, ty.name(), num(n));
        }
        set(&o, "bytesByType", by_type);
        set(&o, "fileSize", self.file_len.map_or_else(|| num(header.file_size_needed()), num));
        set(&o, "headerBytes", num(header.data_offset));
        set(&o, "dataBytes", num(header.data_size()));
        set(&o, "shards", num(shards));
        set(&o, "trainedContextLength", num(cfg.context_length as u64));
        set(&o, "vocabSize", num(cfg.vocab_size as u64));
        set(&o, "blockCount", num(cfg.block_count as u64));
        set(&o, "embeddingLength", num(cfg.embedding_length as u64));
        set(&o, "backend", need.backend);
        set(&o, "contextLength", num(need.positions as u64));
        set(&o, "kvCacheType", kv.as_str());
        let memory = Object::new();
        set(&memory, "weights", num(need.weights));
        set(&memory, "kvCache", num(need.kv_cache));
        set(&memory, "activations", num(need.activations));
        set(&memory, "other", num(need.other));
        set(&memory, "total", num(need.total()));
        set(&o, "memory", memory);
        let a = Object::new();
        let limit = |n: u64| if n == u64::MAX { JsValue::NULL } else { num(n) };
        set(&a, "maxBufferSize", limit(allowed.max_buffer_size));
        set(&a, "maxStorageBufferBindingSize", limit(allowed.max_binding));
        set(&a, "wasmMemoryBytes", num(allowed.wasm_memory.min(WASM32_MAX)));
        set(&o, "allowed", a);
        match &need.largest_weight {
            Some(l) => {
                let w = Object::new();
                set(&w, "name", l.name.as_str());
                set(&w, "bytes", num(l.bytes));
                set(&w, "rowBytes", num(l.row_bytes));
                set(&w, "buffers", num(l.parts));
                set(&o, "largestWeight", w);
            }
            None => set(&o, "largestWeight", JsValue::NULL),
        }
        let b = Object::new();
        set(&b, "name", need.largest_buffer.0.as_str());
        set(&b, "bytes", num(need.largest_buffer.1));
        set(&o, "largestBuffer", b);
        set(&o, "fits", need.fits());
        let reasons = js_sys::Array::new();
        for r in &need.reasons {
            reasons.push(&JsValue::from_str(r));
        }
        set(&o, "reasons", reasons);
        Ok(o.into())
    }
}

#[cfg(test)]
mod tests {
    use kindling_gguf::{Metadata, Value};

    use super::*;

    /// A llama-shaped config: d 64, 2 layers, ffn 128, 4 heads (2 KV), vocab 1000.
    fn config() -> ModelConfig {
        let mut md = Metadata::new();
        let mut put = |k: &str, v: Value| assert!(md.insert(k.to_string(), v));
        put("general.architecture", Value::String("llama".into()));
        put("llama.embedding_length", Value::U32(64));
        put("llama.block_count", Value::U32(2));
        put("llama.feed_forward_length", Value::U32(128));
        put("llama.attention.head_count", Value::U32(4));
        put("llama.attention.head_count_kv", Value::U32(2));
        put("llama.context_length", Value::U32(256));
        put("llama.vocab_size", Value::U32(1000));
        put("llama.attention.layer_norm_rms_epsilon", Value::F32(1e-5));
        ModelConfig::from_metadata(&md).expect("config")
    }

    fn spec(name: &str, ty: GgmlType, cols: usize, rows: usize) -> WeightSpec {
        let n_bytes = ty.bytes_for((cols * rows) as u64).expect("size");
        WeightSpec { name: name.into(), ty, cols, rows, n_bytes }
    }

    fn unlimited() -> Allowed {
        Allowed { max_buffer_size: u64::MAX, max_binding: u64::MAX, wasm_memory: WASM32_MAX }
    }

    #[test]
    fn cpu_need_is_memory_rs_need_plus_header() {
        let cfg = config();
        let specs =
            [spec("token_embd.weight", GgmlType::Q8_0, 64, 1000), spec("output_norm.weight", GgmlType::F32, 64, 1)];
        let weights = specs[0].n_bytes + specs[1].n_bytes + 64 * 4;
        let need = cpu_need(&cfg, &specs, 100, 5000, &unlimited());
        let reference = CpuNeed::new(&cfg, weights, 100, CPU_OPTIONS.max_batch);
        assert_eq!(need.weights, weights);
        assert_eq!(need.kv_cache, reference.kv_cache);
        // 2 (k, v) × 2 layers × 100 positions × (2 heads × 16) × 4 bytes
        assert_eq!(need.kv_cache, 2 * 2 * 100 * 32 * 4);
        assert_eq!(need.activations, reference.activations);
        assert_eq!(need.total(), reference.total() + 2 * 5000);
        assert!(need.fits(), "{:?}", need.reasons);
        // The activation buffers add up to CpuNeed's activations (minus the last-row ones).
        let rows: u64 = activation_buffers(&cfg, 64).iter().map(|b| b.1).sum();
        assert!(rows < need.activations);

        let tight = Allowed { wasm_memory: need.total() - 1, ..unlimited() };
        let refused = cpu_need(&cfg, &specs, 100, 5000, &tight);
        assert!(!refused.fits());
        assert!(refused.reasons[0].contains("WebAssembly memory"), "{}", refused.reasons[0]);
        // Never more than wasm32 can address, whatever the caller allows.
        let big = Allowed { wasm_memory: u64::MAX, ..unlimited() };
        let huge = [spec("token_embd.weight", GgmlType::F32, 64 << 10, 1 << 14)];
        assert!(!cpu_need(&cfg, &huge, 100, 0, &big).fits());
    }

    /// A one-layer llama of `config()`'s shapes as a GGUF file (F32 weights, zeros); with
    /// `vocabulary`, a SentencePiece vocabulary too, so that the engine can load it.
    fn tiny_file(vocabulary: bool) -> Vec<u8> {
        use kindling_gguf::writer::GgufWriter;
        use kindling_gguf::Array;
        let mut w = GgufWriter::new(3);
        w.add_kv("general.architecture", Value::String("llama".into()));
        if vocabulary {
            let tokens =
                ["<unk>", "<s>", "</s>"].map(String::from).into_iter().chain((3..1000).map(|i| format!("t{i}")));
            w.add_kv("tokenizer.ggml.model", Value::String("llama".into()));
            w.add_kv("tokenizer.ggml.tokens", Value::Array(Array::String(tokens.collect())));
            w.add_kv("tokenizer.ggml.scores", Value::Array(Array::F32(vec![0.0; 1000])));
            let types = (0..1000).map(|i| if i < 3 { 3 } else { 1 }).collect();
            w.add_kv("tokenizer.ggml.token_type", Value::Array(Array::I32(types)));
        }
        for (k, v) in [
            ("embedding_length", 64),
            ("block_count", 1),
            ("feed_forward_length", 128),
            ("attention.head_count", 4),
            ("attention.head_count_kv", 2),
            ("context_length", 256),
            ("vocab_size", 1000),
        ] {
            w.add_kv(format!("llama.{k}"), Value::U32(v));
        }
        w.add_kv("llama.attention.layer_norm_rms_epsilon", Value::F32(1e-5));
        let mut t = |name: &str, dims: &[u64]| {
            let n: u64 = dims.iter().product();
            w.add_tensor(name, dims, GgmlType::F32, &vec![0u8; 4 * n as usize]).expect("tensor");
        };
        t("token_embd.weight", &[64, 1000]);
        t("output_norm.weight", &[64]);
        for (name, dims) in [
            ("attn_norm", vec![64]),
            ("attn_q", vec![64, 64]),
            ("attn_k", vec![64, 32]),
            ("attn_v", vec![64, 32]),
            ("attn_output", vec![64, 64]),
            ("ffn_norm", vec![64]),
            ("ffn_gate", vec![64, 128]),
            ("ffn_up", vec![64, 128]),
            ("ffn_down", vec![128, 64]),
        ] {
            t(&format!("blk.0.{name}.weight"), &dims);
        }
        w.to_bytes()
    }

    /// The fits-check counts what the engine allocates: `CpuNeed`'s activations (which
    /// `gpu_need` reports too) are the bytes of the workspace a loaded model holds, at
    /// both backends' batch sizes.
    #[test]
    fn the_fits_check_counts_the_workspace_the_engine_allocates() {
        use kindling_cpu::CpuBackend;
        use kindling_model::Model;
        let file = tiny_file(true);
        for options in [CPU_OPTIONS, policy::GPU_OPTIONS] {
            let model = Model::load_from_bytes(CpuBackend::new(), &file, options).expect("load");
            let need = CpuNeed::new(model.config(), 0, 0, options.max_batch);
            assert_eq!(need.activations, model.backend().activation_bytes(), "batch {}", options.max_batch);
        }
        // Checked against the device's limits: each shape once (q is as wide as d here).
        let shapes: Vec<String> = activation_buffers(&config(), 512).into_iter().map(|b| b.0).collect();
        assert_eq!(
            shapes,
            ["activation [512, 64]", "activation [512, 32]", "activation [512, 128]", "logits [32, 1000]"]
        );
    }

    #[test]
    fn a_load_is_refused_when_the_header_completes() {
        let file = tiny_file(false);
        let header_len = kindling_gguf::parse_header(&file).expect("header").data_offset as usize;
        let feed_all = |check: &mut FitsCheck, device: Option<(u64, u64)>| -> (usize, JsResult<()>) {
            for (i, chunk) in file.chunks(100).enumerate() {
                if let Err(e) = check.feed(chunk, device) {
                    return ((i + 1) * 100, Err(e));
                }
            }
            (file.len(), Ok(()))
        };
        // Fits: nothing said, and the check is done once the header is in.
        let mut ok = FitsCheck::new(Some(file.len() as u64), Some(64), KvCacheType::F32);
        assert!(feed_all(&mut ok, None).1.is_ok());
        assert!(ok.is_done());
        // A need past 4 GiB with no cap is left to memory.rs's reservations (its message).
        let mut uncapped = FitsCheck::new(Some(file.len() as u64), Some(1 << 24), KvCacheType::F32);
        assert!(feed_all(&mut uncapped, None).1.is_ok());
        // Lowered wasm memory: refused with the chunk that completes the header.
        let mut cpu = FitsCheck::new(Some(file.len() as u64), Some(64), KvCacheType::F32);
        cpu.set_caps(Allowed { wasm_memory: 1 << 20, ..unlimited() });
        let (at, result) = feed_all(&mut cpu, None);
        let e = result.expect_err("refused");
        assert_eq!(e.name, ErrorName::OutOfMemory);
        assert!(at >= header_len && at < header_len + 100, "refused after {at} bytes, header {header_len}");
        assert!(e.message.contains("WebAssembly memory") && e.message.contains("1 MiB allowed"), "{}", e.message);
        // Phrased as memory.rs's refusal: "needs about N MiB (weights N MiB, KV cache for P positions N MiB, ...".
        assert!(
            e.message.contains("needs about 17 MiB (weights 1 MiB, KV cache for 64 positions 1 MiB"),
            "{}",
            e.message
        );
        // A device whose binding cannot hold the activations even of the smallest batch
        // (`policy::gpu_options` halves the rows down to 64).
        let mut gpu = FitsCheck::new(None, None, KvCacheType::F32);
        let e = feed_all(&mut gpu, Some((u64::MAX, 20_000))).1.expect_err("refused");
        assert!(
            e.message.contains("this WebGPU device") && e.message.contains("activation [64, 128]"),
            "{}",
            e.message
        );
        // The caller's caps apply over the device's limits.
        let mut capped = FitsCheck::new(None, None, KvCacheType::F32);
        capped.set_caps(Allowed { max_binding: 20_000, ..unlimited() });
        assert!(feed_all(&mut capped, Some((1 << 30, 1 << 30))).1.is_err());
        // Not a model: left to the loader, which says so in its words.
        let mut junk = FitsCheck::new(None, None, KvCacheType::F32);
        assert!(junk.feed(b"PK\x03\x04 not a gguf file", None).is_ok() && junk.is_done());
    }

    #[test]
    fn gpu_need_splits_large_weights_and_checks_every_buffer() {
        let cfg = config();
        // Q8_0 rows of 64 values: 2 blocks of 34 bytes, stored as 2 × 36 = 72 bytes.
        let specs =
            [spec("token_embd.weight", GgmlType::Q8_0, 64, 1000), spec("output_norm.weight", GgmlType::Q8_0, 64, 1)];
        let need = gpu_need(&cfg, &specs, 200, KvCacheType::F32, &unlimited());
        // The one-row tensor is widened to f32.
        assert_eq!(need.weights, 72 * 1000 + 64 * 4);
        assert_eq!(need.kv_cache, 2 * 2 * 200 * 32 * 4);
        // An f16 cache takes half, and nothing else changes.
        let half = gpu_need(&cfg, &specs, 200, KvCacheType::F16, &unlimited());
        assert_eq!(half.kv_cache, 2 * 2 * 200 * 32 * 2);
        assert_eq!((half.weights, half.activations, half.other), (need.weights, need.activations, need.other));
        // 200 positions: batches of 256 rows (`policy::gpu_options`).
        assert_eq!(need.activations, CpuNeed::new(&cfg, 0, 200, 256).activations);
        let l = need.largest_weight.clone().expect("largest");
        assert_eq!((l.name.as_str(), l.bytes, l.row_bytes, l.parts), ("token_embd.weight", 72_000, 72, 1));
        assert!(need.fits(), "{:?}", need.reasons);
        // No weight here is large enough for prefill's f32 panels (4 M values); a
        // 4,096 × 1,024 one is, its panel (16 MiB) reported under `other`; a vocabulary
        // table of that size is not (never a batch matmul of 256 rows).
        assert_eq!(need.other, 0);
        let mut with_ffn = specs.to_vec();
        with_ffn.push(spec("output.weight", GgmlType::Q8_0, 1024, 8192));
        assert_eq!(gpu_need(&cfg, &with_ffn, 200, KvCacheType::F32, &unlimited()).other, 0);
        with_ffn.push(spec("blk.0.ffn_up.weight", GgmlType::Q8_0, 1024, 4096));
        assert_eq!(gpu_need(&cfg, &with_ffn, 200, KvCacheType::F32, &unlimited()).other, 16 << 20);
        // A feed-forward's gate: in 256-row batches a plain panel; from 1,024 rows
        // (here 2,048 positions, batches of 2,048) one gated f32 panel with up's rows, twice
        // the bytes.
        with_ffn.push(spec("blk.0.ffn_gate.weight", GgmlType::Q8_0, 1024, 4096));
        assert_eq!(gpu_need(&cfg, &with_ffn, 200, KvCacheType::F32, &unlimited()).other, 16 << 20);
        assert_eq!(gpu_need(&cfg, &with_ffn, 2048, KvCacheType::F32, &unlimited()).other, 32 << 20);

        // A binding of 8000 bytes: the embedding is split into buffers of 111 rows, but
        // the activations do not fit even at the fewest rows, [64, 128] (32,768 bytes).
        let small = Allowed { max_binding: 8000, ..unlimited() };
        let split = gpu_need(&cfg, &specs, 200, KvCacheType::F32, &small);
        assert_eq!(split.largest_weight.as_ref().expect("largest").parts, 1000u64.div_ceil(8000 / 72));
        assert!(!split.fits());
        assert!(split.reasons.iter().any(|r| r.contains("activation [64, 128]")), "{:?}", split.reasons);
        assert!(split.reasons.iter().all(|r| !r.contains("one row")), "{:?}", split.reasons);

        // maxBufferSize counts too, and a row larger than a buffer cannot be split.
        let tiny = Allowed { max_buffer_size: 64, ..unlimited() };
        let refused = gpu_need(&cfg, &specs, 200, KvCacheType::F32, &tiny);
        assert!(
            refused.reasons.iter().any(|r| r.contains("one row of tensor 'token_embd.weight' is 72 bytes")),
            "{:?}",
            refused.reasons
        );
    }
}
