//! `WebModel`: a loaded model as JS sees it. State shared with running generations
//! lives in `Core` behind an `Rc`: a generation step holds the engine borrowed while it
//! awaits the GPU, so a call that arrives meanwhile gets a clear "busy" error instead
//! of a panic, and `dispose()` during a step takes effect when the step ends.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use kindling_cpu::CpuBackend;
use kindling_gpu::GpuBackend;
use kindling_model::policy::{self, ChatRequest};
use kindling_model::{Backend, LoadedModel, Model, ModelConfig, ModelKind, ModelOptions};
use kindling_tokenizer::ChatMessage;
use wasm_bindgen::prelude::*;

use crate::engine::{with_engine, Engine, Loaded};
use crate::error::{JsResult, WebError};
use crate::generation::WebGeneration;
use crate::options;

/// Default context when the caller gives none: the model's trained length capped to
/// this many positions (a 8k-position KV cache of a small model is ~400 MB, more than
/// a browser tab should take unasked).
const DEFAULT_CONTEXT_GPU: usize = 4096;
const DEFAULT_CONTEXT_CPU: usize = 2048;

/// Prompt positions evaluated per batch on the CPU: the generation policy's
/// (kindling-model's `policy`). On WebGPU they depend on the session and the device
/// (`policy::gpu_options`: the CLI's 2,048 rows, no more than the session's positions).
pub(crate) const CPU_OPTIONS: ModelOptions = policy::CPU_OPTIONS;

/// Prompt positions the CPU evaluates per generation step (`Generation::prefill_step`):
/// JS hears an abort only between steps, and a CPU step runs to its end. The smallest
/// batch the CPU's quantized prefill panels take (`kindling_cpu::QGEMM_ROWS`): in V8,
/// a 2048 × 2048 Q4_K matmul of 16 rows ran at 29 GFLOP/s there against 18.5 by the row
/// kernels, which smaller steps would use (`qgemm_speed` under `scripts/test_wasi.sh`).
/// A step of Qwen2.5-0.5B then takes a few decode tokens' time.
pub(crate) const CPU_PREFILL_STEP: usize = kindling_cpu::QGEMM_ROWS;

/// The session's positions: `context` when given, else the default cap, never more
/// than the model was trained for. An encoder's is its whole context whatever was
/// asked: `Model::embed` keeps its own session of that many positions (an input runs
/// as one batch, up to the context), so that is what the fits-checks size.
fn session_positions(cfg: &ModelConfig, context: Option<usize>, default_cap: usize) -> usize {
    match cfg.kind {
        ModelKind::Encoder => cfg.context_length,
        ModelKind::Decoder => context.unwrap_or(default_cap).clamp(1, cfg.context_length),
    }
}

/// Rows of the activation workspace a model of `cfg` gets with `options`: the
/// fits-checks size it as `Model::new` allocates it (an encoder's is its context).
pub(crate) fn batch_rows(cfg: &ModelConfig, options: &ModelOptions) -> usize {
    kindling_model::workspace_rows(cfg, options)
}

/// The positions a CPU session of `context` gets (the memory check sizes its KV cache).
pub(crate) fn cpu_context(cfg: &ModelConfig, context: Option<usize>) -> usize {
    session_positions(cfg, context, DEFAULT_CONTEXT_CPU)
}

/// The positions a WebGPU session of `context` gets (the fits-check sizes its KV cache).
pub(crate) fn gpu_context(cfg: &ModelConfig, context: Option<usize>) -> usize {
    session_positions(cfg, context, DEFAULT_CONTEXT_GPU)
}

pub(crate) struct Core {
    pub engine: RefCell<Option<Engine>>,
    /// `dispose()` was called while the engine was borrowed: drop it when released.
    pub disposed: Cell<bool>,
    /// The generation allowed to advance the session (the latest one started).
    pub owner: Cell<u64>,
}

impl Core {
    /// Runs `f` on the engine, or fails clearly when disposed or busy.
    pub fn with<T>(&self, f: impl FnOnce(&mut Engine) -> JsResult<T>) -> JsResult<T> {
        if self.disposed.get() {
            return Err(disposed());
        }
        let mut guard = self.engine.try_borrow_mut().map_err(|_| busy())?;
        let engine = guard.as_mut().ok_or_else(disposed)?;
        f(engine)
    }

    /// Drops the engine if `dispose()` asked for it while it was borrowed.
    pub fn settle(&self) {
        if self.disposed.get() {
            if let Ok(mut guard) = self.engine.try_borrow_mut() {
                *guard = None;
            }
        }
    }
}

pub(crate) fn busy() -> WebError {
    WebError::usage(
        "the model is busy with another call (a generation step or an embedding); await it before calling again",
    )
}

pub(crate) fn disposed() -> WebError {
    WebError::usage("this model has been disposed; load it again to use it")
}

#[wasm_bindgen]
pub struct WebModel {
    pub(crate) core: Rc<Core>,
    info: JsValue,
    next_generation: u64,
}

fn build<B: Backend>(
    backend: B,
    loaded: LoadedModel<B::Weight>,
    context: Option<usize>,
    default_cap: usize,
    options: ModelOptions,
) -> JsResult<Loaded<B>> {
    // An encoder never generates: its generation session is a placeholder of one
    // position (the KV cache it embeds with is `Model::embed`'s own, allocated at the
    // first call), so a load does not hold a second context's worth of KV cache.
    let capacity = match loaded.config.kind {
        ModelKind::Encoder => 1,
        ModelKind::Decoder => session_positions(&loaded.config, context, default_cap),
    };
    let mut model = Model::new(backend, loaded, options)?;
    let session = model.new_session(capacity)?;
    Ok(Loaded { model, session })
}

impl WebModel {
    pub(crate) fn build_gpu(
        backend: GpuBackend,
        loaded: LoadedModel<<GpuBackend as Backend>::Weight>,
        context: Option<usize>,
        adapter: JsValue,
        fallback_reason: Option<String>,
    ) -> JsResult<WebModel> {
        let a = backend.adapter();
        let max_binding = a.max_storage_buffer_binding_size.min(a.max_buffer_size);
        let options = policy::gpu_options(&loaded.config, gpu_context(&loaded.config, context), max_binding);
        let l = build(backend, loaded, context, DEFAULT_CONTEXT_GPU, options)?;
        Ok(WebModel::new(Engine::Gpu(Box::new(l)), adapter, fallback_reason))
    }

    pub(crate) fn build_cpu(
        backend: CpuBackend,
        loaded: LoadedModel<<CpuBackend as Backend>::Weight>,
        context: Option<usize>,
        adapter: JsValue,
        fallback_reason: Option<String>,
    ) -> JsResult<WebModel> {
        let l = build(backend, loaded, context, DEFAULT_CONTEXT_CPU, CPU_OPTIONS)?;
        Ok(WebModel::new(Engine::Cpu(Box::new(l)), adapter, fallback_reason))
    }

    fn new(engine: Engine, adapter: JsValue, fallback_reason: Option<String>) -> WebModel {
        let info = info_object(&engine, adapter, fallback_reason);
        let core = Core { engine: RefCell::new(Some(engine)), disposed: Cell::new(false), owner: Cell::new(0) };
        WebModel { core: Rc::new(core), info, next_generation: 1 }
    }
}

fn info_object(engine: &Engine, adapter: JsValue, fallback_reason: Option<String>) -> JsValue {
    let o = js_sys::Object::new();
    let set = |k: &str, v: JsValue| {
        let _ = js_sys::Reflect::set(&o, &JsValue::from_str(k), &v);
    };
    with_engine!(engine, e => {
        let info = e.model.info();
        let tok = e.model.tokenizer();
        set("architecture", info.architecture.as_str().into());
        set("name", info.name.as_str().into());
        set("parameters", (info.parameters as f64).into());
        set("quantization", info.quantization.as_str().into());
        // An encoder's inputs may be as long as its context (`Model::embed`).
        let context = match e.model.kind() {
            ModelKind::Encoder => e.model.max_batch().min(info.context_length),
            ModelKind::Decoder => e.session.capacity(),
        };
        set("kind", e.model.kind().as_str().into());
        set("contextLength", (context as f64).into());
        set("trainedContextLength", (info.context_length as f64).into());
        set("dataBytes", (info.data_bytes as f64).into());
        set("vocabSize", (tok.vocab_size() as f64).into());
        set("bosTokenId", tok.bos().map_or(JsValue::NULL, JsValue::from));
        set("eosTokenId", tok.eos().map_or(JsValue::NULL, JsValue::from));
        set("hasChatTemplate", e.model.chat_template().is_some().into());
    });
    set("backend", engine.backend_name().into());
    set("kvCacheType", engine.kv_cache_type().as_str().into());
    set("adapter", adapter);
    set("fallbackReason", fallback_reason.map_or(JsValue::NULL, JsValue::from));
    o.into()
}

#[wasm_bindgen]
impl WebModel {
    /// `{ architecture, name, parameters, quantization, contextLength, backend,
    /// adapter, fallbackReason, ... }` (a fresh copy each call).
    #[wasm_bindgen(getter)]
    pub fn info(&self) -> JsValue {
        js_sys::Object::assign(&js_sys::Object::new(), self.info.unchecked_ref()).into()
    }

    /// Token ids of `text`. `add_special`: the BOS/EOS the vocabulary asks for;
    /// `parse_special`: control-token texts (`<|im_start|>`) become their ids.
    pub fn tokenize(&self, text: &str, add_special: bool, parse_special: bool) -> JsResult<Vec<u32>> {
        self.core.with(|e| Ok(with_engine!(e, l => l.model.tokenizer().encode(text, add_special, parse_special))))
    }

    /// Text of token ids (`render_special`: show control tokens' text).
    pub fn detokenize(&self, ids: Vec<u32>, render_special: bool) -> JsResult<String> {
        self.core.with(|e| {
            with_engine!(e, l => {
                let vocab = l.model.tokenizer().vocab_size();
                if let Some(bad) = ids.iter().find(|&&id| id as usize >= vocab) {
                    return Err(WebError::usage(format!("token id {bad} is outside the vocabulary of {vocab} tokens")));
                }
                Ok(l.model.tokenizer().decode(&ids, render_special))
            })
        })
    }

    /// Renders `messages` (`[{role, content}]`) with the model's chat template.
    #[wasm_bindgen(js_name = applyChatTemplate)]
    pub fn apply_chat_template(&self, messages: JsValue, add_generation_prompt: bool) -> JsResult<String> {
        let messages = options::messages(&messages)?;
        self.core.with(|e| with_engine!(e, l => render_chat(&l.model, &messages, add_generation_prompt)))
    }

    /// Prompt token ids as the native CLI makes them: plain text is text (BOS as the
    /// vocabulary asks); a rendered chat template spells out its control tokens.
    #[wasm_bindgen(js_name = encodePrompt)]
    pub fn encode_prompt(&self, text: &str, templated: bool) -> JsResult<Vec<u32>> {
        self.core.with(|e| with_engine!(e, l => Ok(policy::prompt_ids(l.model.tokenizer(), text, templated))))
    }

    /// Starts a generation from `prompt_ids` with `options` (`{ maxTokens, temperature,
    /// topK, topP, minP, repetitionPenalty, seed, stop, jsonSchema | regex | grammar |
    /// responseFormat }`). Starting one ends the previous generation on this model. A
    /// bad constraint is an InvalidRequestError here, before any step.
    pub fn generate(&mut self, prompt_ids: Vec<u32>, options: JsValue) -> JsResult<WebGeneration> {
        let opts = options::generate(&options)?;
        self.start(prompt_ids, opts)
    }

    /// Starts a chat completion from an OpenAI request given as JSON text (`messages`,
    /// `tools`, `tool_choice`, `parallel_tool_calls`, `response_format`, `max_tokens`,
    /// `temperature`, `top_p`, `seed`, `stop`, ...): rendered through the model's chat
    /// template with its tools, sampled and constrained as the generation policy says
    /// (kindling-model's `policy`, which the CLI's `kindling chat` uses too). A bad
    /// request is an InvalidRequestError here, before any step.
    pub fn chat(&mut self, request_json: &str) -> JsResult<WebGeneration> {
        self.refuse_encoder()?;
        let request: serde_json::Value = serde_json::from_str(request_json)
            .map_err(|e| WebError::invalid_request(format!("the chat request is not JSON: {e}")))?;
        let request = ChatRequest::from_openai(&request).map_err(WebError::constraint)?;
        let seed = (js_sys::Math::random() * 9007199254740991.0) as u64;
        let now = (js_sys::Date::now() / 1000.0) as i64;
        let prepared = self.core.with(|e| {
            with_engine!(e, l => policy::prepare_chat(&l.model, &request, Some(now), seed).map_err(WebError::constraint))
        })?;
        self.start(prepared.prompt_ids, prepared.options)
    }

    /// Frees the model (its weights, KV cache and, with WebGPU, its buffers as far as
    /// the browser lets go of them). Later calls fail with a clear error.
    pub fn dispose(&mut self) {
        self.core.disposed.set(true);
        self.core.owner.set(0);
        self.core.settle();
    }

    #[wasm_bindgen(getter, js_name = isDisposed)]
    pub fn is_disposed(&self) -> bool {
        self.core.disposed.get()
    }
}

impl WebModel {
    /// A generation that owns the session from now on (the previous one has ended).
    fn start(&mut self, prompt_ids: Vec<u32>, opts: kindling_model::GenerateOptions) -> JsResult<WebGeneration> {
        self.refuse_encoder()?; // also: disposed models refuse here, not at the first step
        let core = self.core.clone();
        // The first constrained request builds the model's constraint vocabulary (once).
        let compile = |g: &mut kindling_model::Generation| {
            core.with(|e| with_engine!(e, l => g.compile_constraint(&l.model).map_err(WebError::constraint)))
        };
        let generation = WebGeneration::new(self.core.clone(), self.next_generation, prompt_ids, opts, compile)?;
        self.core.owner.set(self.next_generation);
        self.next_generation += 1;
        Ok(generation)
    }
}

impl WebModel {
    /// An encoder asked to generate or chat: an InvalidRequestError before any step
    /// (the engine's own refusal would come only at the first step).
    fn refuse_encoder(&self) -> JsResult<()> {
        self.core.with(|e| {
            with_engine!(e, l => match l.model.kind() {
                ModelKind::Decoder => Ok(()),
                ModelKind::Encoder => Err(WebError::invalid_request(format!(
                    "{} is an embedding model ({}, an encoder): it cannot generate text; use model.embeddings.create()",
                    l.model.info().name,
                    l.model.info().architecture
                ))),
            })
        })
    }
}

fn render_chat<B: Backend>(
    model: &Model<B>,
    messages: &[ChatMessage],
    add_generation_prompt: bool,
) -> JsResult<String> {
    let mut template = model.chat_template().cloned().ok_or_else(|| {
        WebError::usage("this model has no chat template (tokenizer.chat_template); use generate() with plain text")
    })?;
    // wasm32-unknown-unknown has no clock: give `strftime_now` the browser's.
    template.set_now((js_sys::Date::now() / 1000.0) as i64);
    let tok = model.tokenizer();
    let text_of = |id: Option<u32>| id.and_then(|i| tok.token_text(i)).unwrap_or("").to_string();
    Ok(template
        .render(messages, add_generation_prompt, &text_of(tok.bos()), &text_of(tok.eos()))
        .map_err(kindling_model::ModelError::from)?)
}
