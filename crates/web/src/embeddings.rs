//! Embeddings on `WebModel`: the request parsed as the CLI parses it (kindling-model's
//! `EmbeddingRequest`, so the browser and `kindling embed` accept and refuse the same
//! things), tokenized and checked whole into an `EmbeddingJob`, then embedded one
//! forward pass at a time (as many inputs as fit in one pass, `Model::embed_next_pack`),
//! so that JS (`model.embeddings.create`) hears an abort and reports progress between
//! passes while short inputs still share one. A pass holds the engine borrowed while
//! its GPU work is in flight, as a generation step does: an overlapping call gets the
//! "busy" error, and `dispose()` meanwhile takes effect when it ends.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, Float32Array, Object, Promise, Reflect};
use kindling_model::{EmbeddingRequest, ModelKind};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::engine::with_engine;
use crate::error::{JsResult, WebError};
use crate::model::{busy, disposed, Core, WebModel};

fn set(o: &Object, key: &str, v: JsValue) {
    let _ = Reflect::set(o, &JsValue::from_str(key), &v);
}

/// The refusal a generative model gets when asked for embeddings.
fn not_an_encoder(name: &str, architecture: &str) -> WebError {
    WebError::invalid_request(format!(
        "{name} is a generative ({architecture}) model: it cannot make embeddings; load an embedding model \
         (an encoder such as nomic-bert or bert)"
    ))
}

#[wasm_bindgen]
impl WebModel {
    /// Checks an OpenAI embeddings request given as JSON text (`{ input: string |
    /// string[], truncate? }`; `dimensions` and a non-float `encoding_format` are
    /// refused) against this model: `{ input: string[], truncate }`, or an
    /// InvalidRequestError (also for a generative model), before anything runs.
    #[wasm_bindgen(js_name = embeddingRequest)]
    pub fn embedding_request(&self, request_json: &str) -> JsResult<JsValue> {
        self.core.with(|e| {
            with_engine!(e, l => match l.model.kind() {
                ModelKind::Encoder => Ok(()),
                ModelKind::Decoder => Err(not_an_encoder(&l.model.info().name, &l.model.info().architecture)),
            })
        })?;
        let request = EmbeddingRequest::from_json(request_json).map_err(WebError::constraint)?;
        let o = Object::new();
        let input: js_sys::Array = request.input.iter().map(|s| JsValue::from_str(s)).collect();
        set(&o, "input", input.into());
        set(&o, "truncate", request.truncate.into());
        Ok(o.into())
    }

    /// Tokenizes `texts` (with the vocabulary's special tokens, `[CLS]` … `[SEP]` for
    /// BERT) and checks every one before anything runs: an input longer than the
    /// model's context is cut to it when `truncate`, else an InvalidRequestError naming
    /// it. The job is then run by `embedNext`.
    #[wasm_bindgen(js_name = embeddingJob)]
    pub fn embedding_job(&self, texts: Vec<String>, truncate: bool) -> JsResult<EmbeddingJob> {
        let inputs = self
            .core
            .with(|e| with_engine!(e, l => l.model.embedding_inputs(&texts, truncate).map_err(WebError::constraint)))?;
        Ok(EmbeddingJob { inputs: Rc::new(inputs), next: Rc::new(RefCell::new(0)) })
    }

    /// Embeds the job's next inputs, as many as share one forward pass: a promise of
    /// `{ embeddings: Float32Array[], tokens }`, each vector L2-normalised and pooled as
    /// the model says, `tokens` the count they took. The job moves past them.
    #[wasm_bindgen(js_name = embedNext)]
    pub fn embed_next(&self, job: &EmbeddingJob) -> Promise {
        let (core, job) = (self.core.clone(), job.clone());
        future_to_promise(async move { embed_next(core, job).await.map_err(JsValue::from) })
    }
}

/// Token ids of an embeddings request, checked, and how far it has run.
#[wasm_bindgen]
#[derive(Clone)]
pub struct EmbeddingJob {
    inputs: Rc<Vec<Vec<u32>>>,
    next: Rc<RefCell<usize>>,
}

#[wasm_bindgen]
impl EmbeddingJob {
    /// Inputs embedded so far.
    #[wasm_bindgen(getter)]
    pub fn done(&self) -> usize {
        *self.next.borrow()
    }

    /// Inputs in the request.
    #[wasm_bindgen(getter)]
    pub fn total(&self) -> usize {
        self.inputs.len()
    }
}

/// The engine stays borrowed across the read-back of the vectors: see the module note.
#[allow(clippy::await_holding_refcell_ref)]
async fn embed_next(core: Rc<Core>, job: EmbeddingJob) -> JsResult<JsValue> {
    if core.disposed.get() {
        return Err(disposed());
    }
    let first = *job.next.borrow();
    let rest = job.inputs.get(first..).unwrap_or_default();
    if rest.is_empty() {
        return Err(WebError::usage("the embeddings job has no inputs left"));
    }
    let result = {
        let mut guard = core.engine.try_borrow_mut().map_err(|_| busy())?;
        let engine = guard.as_mut().ok_or_else(disposed)?;
        with_engine!(engine, l => l.model.embed_next_pack(rest).await)
    };
    core.settle();
    let vectors = result.map_err(WebError::constraint)?;
    let tokens: usize = rest.iter().take(vectors.len()).map(Vec::len).sum();
    *job.next.borrow_mut() = first + vectors.len();
    let embeddings: Array = vectors.iter().map(|v| JsValue::from(Float32Array::from(v.as_slice()))).collect();
    let o = Object::new();
    set(&o, "embeddings", embeddings.into());
    set(&o, "tokens", (tokens as f64).into());
    Ok(o.into())
}
