//! Embeddings on `WebModel`: the request parsed as the CLI parses it (kindling-model's
//! `EmbeddingRequest`, so the browser and `kindling embed` accept and refuse the same
//! things), and one input embedded per call, so that JS (`model.embeddings.create`)
//! hears an abort and reports progress between inputs. The call holds the engine
//! borrowed while its GPU work is in flight, as a generation step does: an overlapping
//! call gets the "busy" error, and `dispose()` meanwhile takes effect when it ends.

use std::rc::Rc;

use js_sys::{Float32Array, Object, Promise, Reflect};
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

    /// Embeds `text` (tokenized with the vocabulary's special tokens, `[CLS]` … `[SEP]`
    /// for BERT): a promise of `{ embedding: Float32Array, tokens }`, the vector
    /// L2-normalised and pooled as the model says, `tokens` the count it took. Longer
    /// than the model's context: cut to it when `truncate`, else an InvalidRequestError.
    pub fn embed(&self, text: String, truncate: bool) -> Promise {
        let core = self.core.clone();
        future_to_promise(async move { embed(core, text, truncate).await.map_err(JsValue::from) })
    }
}

/// The engine stays borrowed across the read-back of the vector: see the module note.
#[allow(clippy::await_holding_refcell_ref)]
async fn embed(core: Rc<Core>, text: String, truncate: bool) -> JsResult<JsValue> {
    if core.disposed.get() {
        return Err(disposed());
    }
    let result = {
        let mut guard = core.engine.try_borrow_mut().map_err(|_| busy())?;
        let engine = guard.as_mut().ok_or_else(disposed)?;
        with_engine!(engine, l => l.model.embed_texts(std::slice::from_ref(&text), truncate).await)
    };
    core.settle();
    let embeddings = result.map_err(WebError::constraint)?;
    let vector =
        embeddings.vectors.into_iter().next().ok_or_else(|| WebError::usage("the engine returned no vector"))?;
    let o = Object::new();
    set(&o, "embedding", Float32Array::from(vector.as_slice()).into());
    set(&o, "tokens", (embeddings.prompt_tokens as f64).into());
    Ok(o.into())
}
