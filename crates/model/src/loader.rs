//! The streaming loader: bytes in, in file order and in chunks of any size (a network
//! stream, a file read in pieces); a loaded model out.
//!
//! The header is parsed incrementally; as soon as it is complete the configuration,
//! tokenizer and weight plan are resolved and every weight is allocated on the
//! backend. From then on each chunk is cut at tensor boundaries and handed straight to
//! `Backend::write_weight`, so the loader itself holds no tensor data: peak host memory
//! is the header plus one chunk.
//!
//! A model split by llama.cpp's `gguf-split` (`split.no`/`split.count` metadata) is
//! one stream of its shards in order, with `next_shard` between them: the first shard
//! holds the metadata, each holds a header with its own tensor table, and the weights
//! of a shard are planned and allocated when its header arrives.

use std::collections::HashSet;

use kindling_gguf::{Header, HeaderParser, Limits, Progress};
use kindling_tokenizer::{ChatTemplate, Tokenizer};

use crate::backend::Backend;
use crate::config::ModelConfig;
use crate::error::{ModelError, Result};
use crate::info::ModelInfo;
use crate::weights::{self, ModelWeights, PlannedTensor};

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
    pub weights: ModelWeights<W>,
}

pub struct Loader<B: Backend> {
    received: u64,
    file_len: Option<u64>,
    state: State<B>,
}

enum State<B: Backend> {
    Header(Box<HeaderParser>),
    Data(Box<DataState<B>>),
    /// The header of the next shard of a split model is being read.
    ShardHeader(Box<HeaderParser>, Box<DataState<B>>),
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
    /// The shard being read (0-based) and how many the model has (1: not split).
    shard: u64,
    shard_count: u64,
    /// Where the shard being read starts in the stream.
    shard_start: u64,
    /// Tensor names of the shards read so far (a split model's required tensors may be
    /// in any shard; one name in two shards is refused).
    names: HashSet<String>,
    /// Weights to load (whole tensors, or row runs of fused ones), in stream order,
    /// with their byte ranges in the stream (a split model's shards follow each other).
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
            // A split model's size is the sum of its shards': the caller knows it.
            State::Data(d) | State::ShardHeader(_, d) if d.shard_count > 1 => None,
            State::Data(d) => Some(self.file_len.unwrap_or_else(|| d.plan.last().map_or(d.data_offset, |p| p.2))),
            _ => self.file_len,
        };
        LoadProgress { received: self.received, total }
    }

    /// Whether every needed tensor has arrived (the rest of the stream can be dropped).
    pub fn is_complete(&self) -> bool {
        matches!(&self.state, State::Data(d) if d.next == d.plan.len() && d.shard + 1 == d.shard_count)
    }

    /// Whether every needed tensor of the shard being read has arrived (the rest of
    /// its stream can be dropped); for a model in one file, `is_complete`.
    pub fn is_shard_complete(&self) -> bool {
        matches!(&self.state, State::Data(d) if d.next == d.plan.len())
    }

    /// `(shard being read, 0-based; shards in the model)` once the first header is in.
    pub fn shards(&self) -> Option<(u64, u64)> {
        match &self.state {
            State::Data(d) | State::ShardHeader(_, d) => Some((d.shard, d.shard_count)),
            _ => None,
        }
    }

    /// The shard being read is complete; the bytes fed next are the next shard's, a
    /// file of `file_len` bytes when known.
    pub fn next_shard(&mut self, file_len: Option<u64>) -> Result<()> {
        let state = std::mem::replace(&mut self.state, State::Failed);
        let State::Data(mut data) = state else {
            self.state = state;
            return Err(ModelError::InvalidRequest("next_shard: the current shard's header has not been read".into()));
        };
        if data.next < data.plan.len() {
            let (p, _, end) = &data.plan[data.next];
            let name = p.spec.name.clone();
            let (expected, received) = (*end, self.received);
            self.state = State::Data(data);
            return Err(ModelError::BadShards(format!(
                "shard {} ended at byte {received} of the stream before its tensor '{name}' (which ends at {expected})",
                self.state_shard() + 1
            )));
        }
        if data.shard + 1 >= data.shard_count {
            let n = data.shard_count;
            self.state = State::Data(data);
            return Err(ModelError::InvalidRequest(format!("the model has {n} shard(s) and all have been read")));
        }
        data.shard_start = self.received;
        let mut parser = HeaderParser::new(Limits::default());
        if let Some(len) = file_len {
            parser = parser.with_file_len(len);
        }
        self.state = State::ShardHeader(Box::new(parser), data);
        Ok(())
    }

    fn state_shard(&self) -> u64 {
        self.shards().map_or(0, |s| s.0)
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
            State::Failed => return Err(ModelError::InvalidRequest("the load already failed; start a new one".into())),
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
            State::ShardHeader(mut parser, mut data) => match parser.feed(chunk)? {
                Progress::NeedMore(_) => State::ShardHeader(parser, data),
                Progress::Done { header, rest } => {
                    data.add_shard(header, backend)?;
                    let tail_start = chunk.len() - rest;
                    data.write(backend, start + tail_start as u64, &chunk[tail_start..])?;
                    State::Data(data)
                }
            },
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
            State::ShardHeader(parser, d) => {
                parser.finish()?;
                return Err(ModelError::BadShards(format!(
                    "the model is split in {} files and shard {} ended inside its header",
                    d.shard_count,
                    d.shard + 2
                )));
            }
            State::Data(d) => d,
        };
        if data.shard + 1 < data.shard_count {
            return Err(ModelError::BadShards(format!(
                "the model is split in {n} files and only {k} were read (the next is …-{:05}-of-{n:05}.gguf)",
                data.shard + 2,
                n = data.shard_count,
                k = data.shard + 1
            )));
        }
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
        // Before the metadata is read: the other shards have none.
        let (shard, shard_count) = split_of(&header)?;
        if shard != 0 {
            return Err(ModelError::BadShards(format!(
                "this file is shard {} of {shard_count} of a split model; load the first (…-00001-of-{shard_count:05}.gguf)",
                shard + 1
            )));
        }
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
        let mut data = DataState {
            config,
            info,
            tokenizer,
            chat_template,
            data_offset: header.data_offset,
            shard: 0,
            shard_count,
            names: HashSet::new(),
            shard_start: 0,
            plan: Vec::new(),
            slots: Vec::new(),
            next: 0,
        };
        if shard_count == 1 {
            // One file: every required tensor must be in it, said before anything is allocated.
            let planned = weights::plan(&header, &data.config)?;
            data.allocate(&header, planned, backend)?;
        } else {
            data.take_shard_table(&header, backend)?;
        }
        Ok(data)
    }

    /// Shard `self.shard + 1`'s header has arrived: its weights are planned and allocated.
    fn add_shard(&mut self, header: Header, backend: &mut B) -> Result<()> {
        let (shard, count) = split_of(&header)?;
        if shard != self.shard + 1 || count != self.shard_count {
            return Err(ModelError::BadMetadata {
                key: "split.no".into(),
                why: format!(
                    "expected shard {} of {}, this file says it is shard {} of {count}",
                    self.shard + 2,
                    self.shard_count,
                    shard + 1
                ),
            });
        }
        self.shard = shard;
        self.info.parameters += header.tensors.iter().map(|t| t.n_elems).sum::<u64>();
        self.info.data_bytes += header.data_size();
        self.take_shard_table(&header, backend)
    }

    /// One shard's tensor table: its wanted tensors are allocated; after the last
    /// shard, every required tensor must have been in one of them.
    fn take_shard_table(&mut self, header: &Header, backend: &mut B) -> Result<()> {
        for t in &header.tensors {
            if !self.names.insert(t.name.clone()) {
                return Err(ModelError::BadMetadata {
                    key: "split.no".into(),
                    why: format!("tensor '{}' is in shard {} and in an earlier shard", t.name, self.shard + 1),
                });
            }
        }
        let planned = weights::plan_shard(&header.tensors, &self.config)?;
        self.allocate(header, planned, backend)?;
        if self.shard + 1 == self.shard_count {
            let names = &self.names;
            weights::check_required(&self.config, |n| names.contains(n))?;
        }
        Ok(())
    }

    fn allocate(&mut self, header: &Header, planned: Vec<PlannedTensor>, backend: &mut B) -> Result<()> {
        for p in planned {
            let begin = self.shard_start + header.data_offset + header.tensors[p.index].offset + p.offset;
            let end = begin + p.spec.n_bytes;
            self.slots.push(Some(backend.alloc_weight(&p.spec)?));
            self.plan.push((p, begin, end));
        }
        Ok(())
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
                let slot = self.slots[self.next]
                    .as_mut()
                    .ok_or_else(|| ModelError::backend("weight handle missing during load"))?;
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

/// `(shard, 0-based; shards)` of a file from its `split.no`/`split.count` metadata
/// (a file without them is shard 0 of 1).
fn split_of(header: &Header) -> Result<(u64, u64)> {
    let get = |key: &str| match header.metadata.get(key) {
        None => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| ModelError::BadMetadata {
            key: key.into(),
            why: format!("expected a shard number, found {}", v.type_name()),
        }),
    };
    let count = get("split.count")?.unwrap_or(1);
    let shard = get("split.no")?.unwrap_or(0);
    if count == 0 || shard >= count {
        return Err(ModelError::BadMetadata {
            key: "split.count".into(),
            why: format!("shard {} of {count}", shard + 1),
        });
    }
    Ok((shard, count))
}
