//! The streaming loader: bytes in, in file order and in chunks of any size (a network
//! stream, a file read in pieces); a loaded model out.
//!
//! The header is parsed incrementally; as soon as it is complete the configuration,
//! tokenizer and weight plan are resolved and every weight is allocated on the
//! backend. From then on each chunk is cut at tensor boundaries and handed straight to
//! `Backend::write_weight`, so the loader itself holds no tensor data: peak host memory
//! is the header plus one chunk.

use kindling_gguf::{Header, HeaderParser, Limits, Progress};
use kindling_tokenizer::{ChatTemplate, Tokenizer};

use crate::backend::Backend;
use crate::config::ModelConfig;
use crate::error::{ModelError, Result};
use crate::info::ModelInfo;
use crate::weights::{self, PlannedTensor, Weights};

/// How far a load has got, in bytes of the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadProgress {
    pub received: u64,
    /// The file size when known (from the caller, or from the header once parsed:
    /// the end of the last tensor).
    pub total: Option<u64>,
}

/// Everything a loaded model consists of, before an engine is built around it.
pub struct LoadedModel<W> {
    pub config: ModelConfig,
    pub info: ModelInfo,
    pub tokenizer: Tokenizer,
    pub chat_template: Option<ChatTemplate>,
    pub weights: Weights<W>,
}

pub struct Loader<B: Backend> {
    received: u64,
    file_len: Option<u64>,
    state: State<B>,
}

enum State<B: Backend> {
    Header(Box<HeaderParser>),
    Data(Box<DataState<B>>),
    /// A previous call failed; the loader refuses further input.
    Failed,
}

struct DataState<B: Backend> {
    config: ModelConfig,
    info: ModelInfo,
    tokenizer: Tokenizer,
    chat_template: Option<ChatTemplate>,
    /// Absolute file offset of the data section.
    data_offset: u64,
    /// Weights to load (whole tensors, or row runs of fused ones), in file order, with
    /// their (absolute) byte ranges.
    plan: Vec<(PlannedTensor, u64, u64)>,
    /// Backend handles, parallel to `plan`.
    slots: Vec<Option<B::Weight>>,
    /// First entry of `plan` not yet completely written.
    next: usize,
}

impl<B: Backend> Default for Loader<B> {
    fn default() -> Self {
        Self::new(None)
    }
}

impl<B: Backend> Loader<B> {
    /// A loader for a stream of `file_len` bytes when known. Knowing the length lets
    /// the header parser reject lying counts and sizes before allocating anything.
    pub fn new(file_len: Option<u64>) -> Self {
        let mut parser = HeaderParser::new(Limits::default());
        if let Some(len) = file_len {
            parser = parser.with_file_len(len);
        }
        Loader { received: 0, file_len, state: State::Header(Box::new(parser)) }
    }

    pub fn progress(&self) -> LoadProgress {
        let total = match &self.state {
            State::Data(d) => Some(self.file_len.unwrap_or_else(|| d.plan.last().map_or(d.data_offset, |p| p.2))),
            _ => self.file_len,
        };
        LoadProgress { received: self.received, total }
    }

    /// Whether every needed tensor has arrived (the rest of the stream can be dropped).
    pub fn is_complete(&self) -> bool {
        matches!(&self.state, State::Data(d) if d.next == d.plan.len())
    }

    /// The configuration, once the header has been parsed.
    pub fn config(&self) -> Option<&ModelConfig> {
        match &self.state {
            State::Data(d) => Some(&d.config),
            _ => None,
        }
    }

    /// Consumes the next chunk of the file.
    pub fn feed(&mut self, backend: &mut B, chunk: &[u8]) -> Result<()> {
        let start = self.received;
        self.received += chunk.len() as u64;
        let state = std::mem::replace(&mut self.state, State::Failed);
        let next = match state {
            State::Failed => {
                return Err(ModelError::InvalidRequest("the load already failed; start a new one".into()))
            }
            State::Header(mut parser) => match parser.feed(chunk)? {
                Progress::NeedMore(_) => State::Header(parser),
                Progress::Done { header, rest } => {
                    let mut data = DataState::new(header, backend)?;
                    let tail_start = chunk.len() - rest;
                    data.write(backend, start + tail_start as u64, &chunk[tail_start..])?;
                    State::Data(Box::new(data))
                }
            },
            State::Data(mut data) => {
                data.write(backend, start, chunk)?;
                State::Data(data)
            }
        };
        self.state = next;
        Ok(())
    }

    /// The stream has ended: returns the model, or an error naming what is missing.
    pub fn finish(self) -> Result<LoadedModel<B::Weight>> {
        let data = match self.state {
            State::Failed => return Err(ModelError::InvalidRequest("the load already failed".into())),
            State::Header(parser) => {
                // A complete header would have moved us to Data; this names the cut.
                parser.finish()?;
                return Err(ModelError::TruncatedData { expected: 0, received: self.received });
            }
            State::Data(d) => d,
        };
        if data.next < data.plan.len() {
            let expected = data.plan.last().map_or(0, |p| p.2);
            return Err(ModelError::TruncatedData { expected, received: self.received });
        }
        let DataState { config, info, tokenizer, chat_template, plan, mut slots, .. } = *data;
        let weights = weights::assemble(&config, |name| {
            let i = plan.iter().position(|(p, _, _)| p.spec.name == name)?;
            slots[i].take()
        })?;
        Ok(LoadedModel { config, info, tokenizer, chat_template, weights })
    }
}

impl<B: Backend> DataState<B> {
    fn new(header: Header, backend: &mut B) -> Result<Self> {
        let config = ModelConfig::from_metadata(&header.metadata)?;
        let tokenizer = Tokenizer::from_metadata(&header.metadata)?;
        if tokenizer.vocab_size() != config.vocab_size {
            return Err(ModelError::BadMetadata {
                key: "tokenizer.ggml.tokens".into(),
                why: format!("{} tokens for a model with {} embedding rows", tokenizer.vocab_size(), config.vocab_size),
            });
        }
        // Files without a template get llama.cpp's built-in format for their vocabulary.
        let chat_template = match ChatTemplate::from_metadata(&header.metadata)? {
            Some(t) => Some(t),
            None => ChatTemplate::fallback_for(&tokenizer),
        };
        let info = ModelInfo::from_header(&header, &config);
        let planned = weights::plan(&header, &config)?;
        let mut plan = Vec::with_capacity(planned.len());
        let mut slots = Vec::with_capacity(planned.len());
        for p in planned {
            let begin = header.data_offset + header.tensors[p.index].offset + p.offset;
            let end = begin + p.spec.n_bytes;
            slots.push(Some(backend.alloc_weight(&p.spec)?));
            plan.push((p, begin, end));
        }
        Ok(DataState { config, info, tokenizer, chat_template, data_offset: header.data_offset, plan, slots, next: 0 })
    }

    /// Routes `bytes`, which start at absolute file offset `at`, into the tensors they
    /// overlap. Bytes between and after the needed tensors are skipped.
    fn write(&mut self, backend: &mut B, at: u64, bytes: &[u8]) -> Result<()> {
        let end = at + bytes.len() as u64;
        while self.next < self.plan.len() {
            let (_, t_begin, t_end) = self.plan[self.next];
            if t_begin >= end {
                break;
            }
            let lo = t_begin.max(at);
            let hi = t_end.min(end);
            if lo < hi {
                let slot = self.slots[self.next].as_mut().ok_or_else(|| {
                    ModelError::backend("weight handle missing during load")
                })?;
                backend.write_weight(slot, lo - t_begin, &bytes[(lo - at) as usize..(hi - at) as usize])?;
            }
            if t_end > end {
                break; // the tensor continues in the next chunk
            }
            if let Some(slot) = self.slots[self.next].as_mut() {
                backend.finish_weight(slot)?;
            }
            self.next += 1;
        }
        Ok(())
    }
}
