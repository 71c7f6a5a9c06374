//! `WebGeneration`: one generation, advanced by JS one token at a time with `next()`
//! (the JS wrapper turns it into an async iterator). Each step borrows the model's
//! engine for the duration of its GPU work; between steps nothing is held, so the
//! caller may tokenize or dispose.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Object, Promise, Reflect};
use kindling_model::{GenerateOptions, Generation};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::engine::with_engine;
use crate::error::{ErrorName, JsResult, WebError};
use crate::model::{busy, disposed, Core};

struct State {
    generation: Generation,
    /// Set by `cancel()` (also while a step is in flight): the generation ends with
    /// this reason at its next step.
    cancelled: Rc<Cell<Option<&'static str>>>,
}

#[wasm_bindgen]
pub struct WebGeneration {
    core: Rc<Core>,
    id: u64,
    state: Rc<RefCell<State>>,
    cancelled: Rc<Cell<Option<&'static str>>>,
}

impl WebGeneration {
    /// A generation whose constraint (if any) `compile` has built over the model's
    /// vocabulary, so that a bad schema rejects here, before any step.
    pub(crate) fn new(
        core: Rc<Core>,
        id: u64,
        prompt: Vec<u32>,
        options: GenerateOptions,
        compile: impl FnOnce(&mut Generation) -> JsResult<()>,
    ) -> JsResult<Self> {
        let mut generation = Generation::new(prompt, options)?;
        compile(&mut generation)?;
        let cancelled = Rc::new(Cell::new(None));
        let state = Rc::new(RefCell::new(State { generation, cancelled: cancelled.clone() }));
        Ok(WebGeneration { core, id, state, cancelled })
    }
}

fn object(pairs: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (k, v) in pairs {
        let _ = Reflect::set(&o, &JsValue::from_str(k), v);
    }
    o.into()
}

fn done(reason: &str) -> JsValue {
    object(&[("done", true.into()), ("finishReason", reason.into())])
}

/// One step: `{done: false, text, tokenId}` (tokenId null for text released at the
/// end), `{done: false, prefilled}` (a batch of a long prompt went into the KV cache;
/// `prefilled` prompt tokens are in it now) or `{done: true, finishReason}`.
///
/// The engine and the generation stay borrowed across the GPU read-back: that is the
/// point (the step owns the model while its work is in flight). Every other entry point
/// uses `try_borrow*`, so an overlapping call gets a "busy" error, never a panic.
#[allow(clippy::await_holding_refcell_ref)]
async fn step(core: Rc<Core>, id: u64, state: Rc<RefCell<State>>) -> JsResult<JsValue> {
    let mut st =
        state.try_borrow_mut().map_err(|_| WebError::usage("next() called again before the previous step finished"))?;
    if let Some(reason) = st.cancelled.get() {
        return Ok(done(reason));
    }
    if let Some(reason) = st.generation.finish_reason() {
        return Ok(done(reason.as_str()));
    }
    if core.disposed.get() {
        return Err(disposed());
    }
    if core.owner.get() != id {
        return Err(WebError::usage("a newer generation started on this model; this one has ended"));
    }
    let result = {
        let mut guard = core.engine.try_borrow_mut().map_err(|_| busy())?;
        let engine = guard.as_mut().ok_or_else(disposed)?;
        let generation = &mut st.generation;
        // A long prompt goes in part by part, one a step, so that JS gets control (and can
        // hear an abort) between them: on the CPU a step runs to its end without yielding.
        let batch = engine.prefill_step_tokens();
        with_engine!(engine, l => {
            match generation.prefill_step(&mut l.model, &mut l.session, batch).await {
                Ok(Some(cached)) => Ok(Step::Prefilled(cached)),
                Ok(None) => generation.next(&mut l.model, &mut l.session).await.map(Step::Token),
                Err(e) => Err(e),
            }
        })
    };
    core.settle();
    match result? {
        Step::Prefilled(cached) => Ok(object(&[("done", false.into()), ("prefilled", (cached as f64).into())])),
        Step::Token(Some(piece)) => Ok(object(&[
            ("done", false.into()),
            ("text", piece.text.into()),
            ("tokenId", piece.token_id.map_or(JsValue::NULL, JsValue::from)),
        ])),
        Step::Token(None) => Ok(done(st.generation.finish_reason().map_or("unknown", |r| r.as_str()))),
    }
}

/// What one step did: a batch of the prompt into the KV cache (the prompt tokens now
/// cached), or the next token.
enum Step {
    Prefilled(usize),
    Token(Option<kindling_model::Piece>),
}

#[wasm_bindgen]
impl WebGeneration {
    /// A promise of the next step (see `step`).
    pub fn next(&self) -> Promise {
        let (core, id, state) = (self.core.clone(), self.id, self.state.clone());
        future_to_promise(async move { step(core, id, state).await.map_err(JsValue::from) })
    }

    /// Ends the generation: later steps report `{done: true, finishReason: reason}`
    /// (`'abort'` by default).
    pub fn cancel(&self, reason: Option<String>) -> JsResult<()> {
        let reason: &'static str = match reason.as_deref() {
            None | Some("abort") => "abort",
            Some("stop") => "stop",
            Some(other) => return Err(WebError::new(ErrorName::Usage, format!("unknown cancel reason '{other}'"))),
        };
        self.cancelled.set(Some(reason));
        Ok(())
    }

    /// Token ids generated so far.
    pub fn generated(&self) -> Vec<u32> {
        self.state.try_borrow().map(|s| s.generation.generated().to_vec()).unwrap_or_default()
    }

    /// Text released so far.
    pub fn text(&self) -> String {
        self.state.try_borrow().map(|s| s.generation.text().to_string()).unwrap_or_default()
    }

    /// The prompt's token ids.
    #[wasm_bindgen(js_name = promptIds)]
    pub fn prompt_ids(&self) -> Vec<u32> {
        self.state.try_borrow().map(|s| s.generation.prompt().to_vec()).unwrap_or_default()
    }

    /// Milliseconds the host spent in the constraint so far (its masks, taking its
    /// tokens; 0 without one); in the result's `timings.constraintMs`.
    #[wasm_bindgen(js_name = constraintMs)]
    pub fn constraint_ms(&self) -> f64 {
        self.state.try_borrow().map(|s| s.generation.constraint_time()).unwrap_or(0.0)
    }

    /// The tool calls complete so far: `[{ name, arguments }]`, `arguments` as JSON text.
    #[wasm_bindgen(js_name = toolCalls)]
    pub fn tool_calls(&self) -> js_sys::Array {
        let Ok(state) = self.state.try_borrow() else { return js_sys::Array::new() };
        let calls = state.generation.tool_calls().iter();
        calls.map(|c| object(&[("name", c.name.as_str().into()), ("arguments", c.arguments.as_str().into())])).collect()
    }
}
