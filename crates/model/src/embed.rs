//! Text embeddings from an encoder (`arch::Block::Encoder`): `Model::embed` runs each
//! input through the encoder, pools its last hidden states (mean, CLS or last, as the
//! file says) and L2-normalises the vector on the host; and the OpenAI-shaped request
//! and response the CLI and the browser share (`EmbeddingRequest`,
//! `embedding_response`).
//!
//! Many inputs go through one forward pass: consecutive inputs are packed row after
//! row into one batch of at most the encoder session's capacity (the context it was
//! made with; an input is never longer, being cut or refused first), started with
//! `Backend::begin_packed_batch`, so each input's positions restart at 0 and each row
//! attends only to its own input's rows. The batch's last hidden states are read back
//! once and each input's vector is pooled over its own rows on the host: the vectors
//! are those of the inputs run one at a time (tests/embeddings.rs checks it).

use serde_json::{json, Map, Value};

use crate::backend::Backend;
use crate::engine::{Model, Session};
use crate::error::{ModelError, Result};
use crate::forward::encoder::{self, EncoderPass};
use crate::weights::ModelWeights;

/// Whether a model generates text or embeds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelKind {
    /// Generates text token by token (`Generation`).
    Decoder,
    /// Embeds text (`Model::embed`).
    Encoder,
}

impl ModelKind {
    /// `"decoder"` or `"encoder"` (what `model.info.kind` says in JS).
    pub fn as_str(self) -> &'static str {
        match self {
            ModelKind::Decoder => "decoder",
            ModelKind::Encoder => "encoder",
        }
    }
}

/// How an encoder's hidden states (one row per token) become one vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pooling {
    /// The mean of every row.
    Mean,
    /// The first row (`[CLS]`).
    Cls,
    /// The last row.
    Last,
}

impl Pooling {
    pub fn as_str(self) -> &'static str {
        match self {
            Pooling::Mean => "mean",
            Pooling::Cls => "cls",
            Pooling::Last => "last",
        }
    }
}

/// Mean of `rows` rows of `cols` values (f64 sums, so the order of a long input does
/// not matter); an empty input gives zeros.
pub fn mean_rows(hidden: &[f32], cols: usize) -> Vec<f32> {
    let mut sum = vec![0.0f64; cols];
    let mut rows = 0usize;
    for row in hidden.chunks_exact(cols.max(1)) {
        sum.iter_mut().zip(row).for_each(|(s, &v)| *s += v as f64);
        rows += 1;
    }
    sum.into_iter().map(|s| (s / rows.max(1) as f64) as f32).collect()
}

/// `v / |v|` in place (a zero vector stays zero).
pub fn l2_normalize(v: &mut [f32]) {
    let norm = v.iter().map(|&x| x as f64 * x as f64).sum::<f64>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x = (*x as f64 / norm) as f32);
    }
}

/// Embeddings of several texts and the tokens they took.
#[derive(Clone, Debug, PartialEq)]
pub struct Embeddings {
    /// One L2-normalised vector per input, in input order.
    pub vectors: Vec<Vec<f32>>,
    /// Tokens run through the model, summed over the inputs (after truncation).
    pub prompt_tokens: usize,
}

impl<B: Backend> Model<B> {
    /// Embeds each input (token ids, as the tokenizer gives them with their special
    /// tokens) into one L2-normalised vector, pooled as the model says. An input
    /// longer than the model's context is cut to it when `truncate`, else refused with
    /// an error naming the limit; nothing runs unless every input is valid. Fails
    /// clearly for a decoder, and for a backend without the encoder ops.
    pub async fn embed(&mut self, inputs: &[Vec<u32>], truncate: bool) -> Result<Vec<Vec<f32>>> {
        let limit = self.embed_check(inputs, truncate)?;
        let cut: Vec<Vec<u32>> = inputs.iter().map(|ids| ids[..ids.len().min(limit)].to_vec()).collect();
        let mut out = Vec::with_capacity(inputs.len());
        while out.len() < cut.len() {
            out.extend(self.embed_next_pack(&cut[out.len()..]).await?);
        }
        Ok(out)
    }

    /// Embeds the inputs at the start of `inputs` that fit in one forward pass (at
    /// least the first) and returns their vectors: the caller goes on from the next.
    /// For callers that report progress and hear an abort between passes (the
    /// browser); the inputs are those `embedding_inputs` gave (checked and cut to the
    /// context), as anything else is refused here.
    pub async fn embed_next_pack(&mut self, inputs: &[Vec<u32>]) -> Result<Vec<Vec<f32>>> {
        let budget = self.config().context_length.min(self.max_batch());
        let cut: Vec<&[u32]> = inputs.iter().map(Vec::as_slice).collect();
        let first = pack(&cut, budget).into_iter().next().unwrap_or_default();
        // Only this pass's inputs: the rest are checked when their pass comes (a caller
        // going through many passes checked them all once up front).
        let limit = self.embed_check(&inputs[..first.len()], false)?;
        let mut session = match self.encoder_session.take() {
            Some(s) => s,
            None => self.new_session(limit)?,
        };
        let result = self.embed_packed(&mut session, first).await;
        // Kept for the next call: allocated once, like the workspace.
        self.encoder_session = Some(session);
        result
    }

    /// Tokenizes `texts` (with the special tokens the vocabulary adds, `[CLS]` and
    /// `[SEP]` for BERT) and embeds them. A truncated input keeps its closing special
    /// token (`[SEP]`) at the end, as the model saw it in training.
    pub async fn embed_texts(&mut self, texts: &[String], truncate: bool) -> Result<Embeddings> {
        let inputs = self.embedding_inputs(texts, truncate)?;
        let vectors = self.embed(&inputs, truncate).await?;
        Ok(Embeddings { vectors, prompt_tokens: inputs.iter().map(Vec::len).sum() })
    }

    /// `texts` tokenized for embedding (as `embed_texts` does) and checked as `embed`
    /// checks them, each cut to the context when `truncate`: the inputs
    /// `embed_next_pack` takes. Nothing runs.
    pub fn embedding_inputs(&self, texts: &[String], truncate: bool) -> Result<Vec<Vec<u32>>> {
        let tok = self.tokenizer();
        let eos = tok.eos().filter(|_| tok.add_eos());
        let ids: Vec<Vec<u32>> = texts.iter().map(|t| tok.encode(t, true, false)).collect();
        let limit = self.embed_check(&ids, truncate)?;
        Ok(ids
            .into_iter()
            .map(|mut ids| {
                if ids.len() > limit {
                    let closing = eos.filter(|e| ids.last() == Some(e));
                    ids.truncate(limit);
                    if let (Some(e), Some(last)) = (closing, ids.last_mut()) {
                        *last = e;
                    }
                }
                ids
            })
            .collect())
    }

    /// Checks that this model and backend embed and that every input fits; returns the
    /// most tokens an input may have (the context length).
    fn embed_check(&self, inputs: &[Vec<u32>], truncate: bool) -> Result<usize> {
        let cfg = self.config();
        if !matches!(self.weights, ModelWeights::Encoder(_)) {
            return Err(ModelError::invalid_request(format!(
                "{} is a generative ({}) model: it cannot make embeddings; load an embedding model (an encoder such as nomic-bert or bert)",
                cfg.name,
                cfg.architecture.name()
            )));
        }
        if !self.backend().supports_encoders() {
            return Err(ModelError::backend(format!(
                "the {} backend does not run encoder models yet",
                self.backend_name()
            )));
        }
        if inputs.is_empty() {
            return Err(ModelError::invalid_request("nothing to embed: no inputs"));
        }
        let limit = cfg.context_length.min(self.max_batch());
        for (i, ids) in inputs.iter().enumerate() {
            if ids.is_empty() {
                return Err(ModelError::invalid_request(format!("input {i} is empty: nothing to embed")));
            }
            if ids.len() > limit && !truncate {
                return Err(ModelError::invalid_request(format!(
                    "input {i} is {} tokens, longer than the model's context of {limit} tokens; shorten it or pass truncate to cut it",
                    ids.len()
                )));
            }
            if let Some(&bad) = ids.iter().find(|&&t| t as usize >= cfg.vocab_size) {
                return Err(ModelError::invalid_request(format!(
                    "input {i}: token id {bad} is outside the vocabulary of {} tokens",
                    cfg.vocab_size
                )));
            }
        }
        Ok(limit)
    }

    /// Inputs packed into one batch (together at most the workspace's rows) through the
    /// encoder, each pooled over its own rows and normalised.
    async fn embed_packed(&mut self, session: &mut Session<B>, batch: &[&[u32]]) -> Result<Vec<Vec<f32>>> {
        let ModelWeights::Encoder(w) = &self.weights else {
            return Err(ModelError::invalid_request("not an encoder"));
        };
        session.truncate(0);
        let lens: Vec<usize> = batch.iter().map(|ids| ids.len()).collect();
        let ids: Vec<u32> = batch.concat();
        let n = ids.len();
        self.backend.begin_packed_batch(&ids, &lens)?;
        let ws = &self.work;
        let mut pass = EncoderPass { b: &mut self.backend, cfg: &self.config, w, ws, caches: session.caches_mut() };
        encoder::record(&mut pass)?;
        let d = self.config.embedding_length;
        let pooling = self.config.pooling;
        // Each input's rows of the batch.
        let ranges: Vec<std::ops::Range<usize>> = lens
            .iter()
            .scan(0, |first, &len| {
                *first += len;
                Some(*first - len..*first)
            })
            .collect();
        let rows = match pooling {
            // One input's last row only: copied to row 0 of `ws.last`, one row read.
            Pooling::Last if lens.len() == 1 && n > 1 => {
                self.backend.select_row(ws.x, n - 1, ws.last);
                let row = self.backend.read_rows(ws.last, 1).await?;
                return Ok(vec![finish(row, d)?]);
            }
            // Up to the last input's first row.
            Pooling::Cls => ranges.last().map_or(0, |r| r.start + 1),
            Pooling::Mean | Pooling::Last => n,
        };
        let hidden = self.backend.read_rows(ws.x, rows).await?;
        if hidden.len() != rows * d {
            return Err(ModelError::backend(format!("read {} values of {rows} rows of {d}", hidden.len())));
        }
        ranges
            .into_iter()
            .map(|r| {
                let v = match pooling {
                    Pooling::Mean => mean_rows(&hidden[r.start * d..r.end * d], d),
                    Pooling::Cls => hidden[r.start * d..(r.start + 1) * d].to_vec(),
                    Pooling::Last => hidden[(r.end - 1) * d..r.end * d].to_vec(),
                };
                finish(v, d)
            })
            .collect()
    }
}

/// Consecutive inputs packed into batches of at most `budget` rows, in order (an input
/// longer than the budget, which the callers never pass, would be a batch alone).
fn pack<'a, 'b>(inputs: &'b [&'a [u32]], budget: usize) -> Vec<&'b [&'a [u32]]> {
    let mut batches = Vec::new();
    let (mut first, mut rows) = (0, 0);
    for (i, ids) in inputs.iter().enumerate() {
        if i > first && rows + ids.len() > budget {
            batches.push(&inputs[first..i]);
            (first, rows) = (i, 0);
        }
        rows += ids.len();
    }
    if first < inputs.len() {
        batches.push(&inputs[first..]);
    }
    batches
}

/// A pooled vector of width `d`, L2-normalised.
fn finish(mut v: Vec<f32>, d: usize) -> Result<Vec<f32>> {
    if v.len() != d {
        return Err(ModelError::backend(format!("read {} values of a {d}-wide embedding", v.len())));
    }
    l2_normalize(&mut v);
    Ok(v)
}

/// An OpenAI embeddings request: `{ "input": string | [string], "truncate"?: bool }`
/// (other OpenAI fields, `model`, `encoding_format`, `user`, are accepted and ignored;
/// `dimensions` is refused).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmbeddingRequest {
    pub input: Vec<String>,
    pub truncate: bool,
}

impl EmbeddingRequest {
    /// Parses the request's JSON text.
    pub fn from_json(text: &str) -> Result<Self> {
        let v: Value = serde_json::from_str(text)
            .map_err(|e| ModelError::invalid_request(format!("the embeddings request is not JSON: {e}")))?;
        Self::from_value(&v)
    }

    pub fn from_value(v: &Value) -> Result<Self> {
        let o: &Map<String, Value> =
            v.as_object().ok_or_else(|| ModelError::invalid_request("the embeddings request must be a JSON object"))?;
        let input = match o.get("input") {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    item.as_str().map(str::to_string).ok_or_else(|| {
                        ModelError::invalid_request(format!("input[{i}] must be a string, found {}", kind(item)))
                    })
                })
                .collect::<Result<Vec<_>>>()?,
            Some(other) => {
                return Err(ModelError::invalid_request(format!(
                    "input must be a string or an array of strings, found {}",
                    kind(other)
                )))
            }
            None => return Err(ModelError::invalid_request("the embeddings request has no input")),
        };
        if input.is_empty() {
            return Err(ModelError::invalid_request("input is an empty array: nothing to embed"));
        }
        let truncate = match o.get("truncate") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                return Err(ModelError::invalid_request(format!(
                    "truncate must be true or false, found {}",
                    kind(other)
                )))
            }
        };
        if o.get("dimensions").is_some_and(|d| !d.is_null()) {
            return Err(ModelError::invalid_request(
                "dimensions is not supported: the model's embeddings have one width",
            ));
        }
        if let Some(f) = o.get("encoding_format").and_then(Value::as_str).filter(|f| *f != "float") {
            return Err(ModelError::invalid_request(format!("encoding_format '{f}' is not supported (float is)")));
        }
        Ok(EmbeddingRequest { input, truncate })
    }
}

/// OpenAI's embeddings response: `{ object: "list", data: [{ object: "embedding",
/// embedding, index }], model, usage: { prompt_tokens, total_tokens } }`.
pub fn embedding_response(model: &str, e: &Embeddings) -> Value {
    let data: Vec<Value> = e
        .vectors
        .iter()
        .enumerate()
        .map(|(i, v)| json!({ "object": "embedding", "embedding": v, "index": i }))
        .collect();
    json!({
        "object": "list",
        "data": data,
        "model": model,
        "usage": { "prompt_tokens": e.prompt_tokens, "total_tokens": e.prompt_tokens },
    })
}

/// A JSON value's kind, for error messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooling_helpers() {
        let hidden = [1.0, 2.0, 3.0, 6.0];
        assert_eq!(mean_rows(&hidden, 2), vec![2.0, 4.0]);
        let mut v = vec![3.0, 4.0];
        l2_normalize(&mut v);
        assert_eq!(v, vec![0.6, 0.8]);
        let mut zero = vec![0.0; 3];
        l2_normalize(&mut zero);
        assert_eq!(zero, vec![0.0; 3]);
    }

    #[test]
    fn inputs_pack_in_order_within_the_budget() {
        let ids: Vec<Vec<u32>> = [3usize, 4, 2, 9, 1, 1, 12].iter().map(|&n| vec![7; n]).collect();
        let refs: Vec<&[u32]> = ids.iter().map(|v| &v[..]).collect();
        let lens = |b: Vec<&[&[u32]]>| -> Vec<Vec<usize>> {
            b.iter().map(|batch| batch.iter().map(|i| i.len()).collect()).collect()
        };
        assert_eq!(lens(pack(&refs, 10)), vec![vec![3, 4, 2], vec![9, 1], vec![1], vec![12]]);
        assert_eq!(lens(pack(&refs, 1)), vec![vec![3], vec![4], vec![2], vec![9], vec![1], vec![1], vec![12]]);
        assert_eq!(lens(pack(&refs, 100)), vec![vec![3, 4, 2, 9, 1, 1, 12]]);
        assert!(pack(&[], 10).is_empty());
    }

    #[test]
    fn request_forms_and_errors() {
        let one = EmbeddingRequest::from_json(r#"{"input": "hi"}"#).unwrap();
        assert_eq!(one, EmbeddingRequest { input: vec!["hi".into()], truncate: false });
        let many = EmbeddingRequest::from_json(r#"{"input": ["a", "b"], "truncate": true, "model": "x"}"#).unwrap();
        assert_eq!(many, EmbeddingRequest { input: vec!["a".into(), "b".into()], truncate: true });
        for (bad, says) in [
            (r#"{"input": 3}"#, "found a number"),
            (r#"{"input": ["a", 1]}"#, "input[1] must be a string"),
            (r#"{"input": []}"#, "empty array"),
            (r#"{}"#, "no input"),
            (r#"{"input": "a", "truncate": "yes"}"#, "truncate must be"),
            (r#"{"input": "a", "dimensions": 64}"#, "dimensions"),
            (r#"[1]"#, "JSON object"),
            ("{", "not JSON"),
        ] {
            let e = EmbeddingRequest::from_json(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn response_shape() {
        let e = Embeddings { vectors: vec![vec![0.6, 0.8], vec![1.0, 0.0]], prompt_tokens: 7 };
        let r = embedding_response("nomic", &e);
        assert_eq!(r["object"], "list");
        assert_eq!(r["model"], "nomic");
        assert_eq!(r["data"][1]["index"], 1);
        assert_eq!(r["data"][1]["object"], "embedding");
        assert_eq!(r["data"][0]["embedding"][1].as_f64().map(|v| v as f32), Some(0.8));
        assert_eq!(r["usage"]["prompt_tokens"], 7);
        assert_eq!(r["usage"]["total_tokens"], 7);
    }
}
