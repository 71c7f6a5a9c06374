//! The incremental header parser.
//!
//! The header is read item by item: magic + version, the two counts, each key with its
//! value type, each scalar/string value, each array header and each array element (runs
//! of scalars in bulk), each tensor info. An item is only consumed once all its bytes
//! are there; until then the parser keeps just the unconsumed tail of the input and says
//! how many more bytes the item needs. Nothing is ever re-parsed from the start, and no
//! allocation is sized from a declared count: arrays grow as their elements arrive.
//!
//! When the file length is known, every item that would run past it is reported as
//! truncated at once, before anything is allocated for it. A whole-file parse and a
//! streamed parse of the same bytes (with the same file length) give the same result,
//! however the stream is cut into chunks.

use std::collections::HashSet;

use crate::error::{GgufError, Section};
use crate::header::{Header, TensorInfo, DEFAULT_ALIGNMENT};
use crate::limits::Limits;
use crate::primitives::{grow, read_scalar, read_scalars, read_u32, read_u64, to_usize};
use crate::tensors::{check_table, validate_tensor};
use crate::value::{Array, Metadata, Value, ValueType};

const MAGIC: &[u8; 4] = b"GGUF";
/// Bytes of magic + version.
const MAGIC_VERSION_LEN: u64 = 8;

/// What `HeaderParser::feed` achieved with a chunk.
#[derive(Debug, PartialEq)]
pub enum Progress {
    /// At least this many more bytes are needed before the parser can make progress.
    NeedMore(usize),
    /// The header is complete. `rest` is the number of trailing bytes of the chunk just
    /// fed that lie after the end of the tensor table (alignment padding, then tensor
    /// data, which starts at `header.data_offset`).
    Done { header: Header, rest: usize },
}

/// Parses a whole GGUF file (or at least its header, with `bytes.len()` taken as the file
/// length: every tensor must lie inside `bytes`) with default limits.
pub fn parse_header(bytes: &[u8]) -> Result<Header, GgufError> {
    parse_header_with_limits(bytes, Limits::default())
}

/// `parse_header` with explicit limits.
pub fn parse_header_with_limits(bytes: &[u8], limits: Limits) -> Result<Header, GgufError> {
    let mut parser = HeaderParser::new(limits).with_file_len(bytes.len() as u64);
    match parser.feed(bytes)? {
        Progress::Done { header, .. } => Ok(header),
        Progress::NeedMore(_) => parser.finish(),
    }
}

/// Where the parser is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Magic and version (8 bytes).
    Magic,
    /// Tensor count and key/value count (16 bytes).
    Counts,
    /// A key and its value type.
    KvHead,
    /// The value of `cur_key`, of this type (for arrays: the array header).
    KvValue(ValueType),
    /// Inside the arrays on `stack`.
    KvArray,
    /// The next tensor info, or the end of the table.
    Tensor,
    /// Header complete, waiting to be handed out.
    Complete,
    /// Header handed out.
    Returned,
}

/// An array being filled.
#[derive(Debug)]
struct Frame {
    /// Declared element count.
    len: u64,
    arr: Array,
}

/// Why `step` stopped without consuming an item.
enum Stop {
    /// The item needs this many bytes, counted from its start.
    Need(u64),
    Fail(GgufError),
}

impl From<GgufError> for Stop {
    fn from(e: GgufError) -> Self {
        Stop::Fail(e)
    }
}

/// An incremental GGUF header parser: feed it chunks as they arrive.
///
/// ```
/// # use kindling_gguf::{HeaderParser, Limits, Progress};
/// # fn demo(chunks: &[&[u8]], file_len: u64) -> Result<(), kindling_gguf::GgufError> {
/// let mut parser = HeaderParser::new(Limits::default()).with_file_len(file_len);
/// for chunk in chunks {
///     if let Progress::Done { header, rest } = parser.feed(chunk)? {
///         // the last `rest` bytes of `chunk` are padding/tensor data
///         return Ok(());
///     }
/// }
/// let header = parser.finish()?; // the stream ended early: a Truncated error
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct HeaderParser {
    limits: Limits,
    file_len: Option<u64>,
    /// The unconsumed start of the current item (only when it straddles chunks).
    buf: Vec<u8>,
    /// Absolute offset of the first unconsumed byte (the start of the current item).
    pos: u64,
    /// Bytes the current item needs, counted from `pos` (while waiting for input).
    need: u64,
    state: State,
    failed: Option<GgufError>,

    version: u32,
    n_tensors: u64,
    n_kv: u64,
    metadata: Metadata,
    cur_key: String,
    stack: Vec<Frame>,
    alignment: u64,
    tensors: Vec<TensorInfo>,
    names: HashSet<String>,
    header: Option<Header>,
}

impl HeaderParser {
    pub fn new(limits: Limits) -> Self {
        HeaderParser {
            limits,
            file_len: None,
            buf: Vec::new(),
            pos: 0,
            need: 0,
            state: State::Magic,
            failed: None,
            version: 0,
            n_tensors: 0,
            n_kv: 0,
            metadata: Metadata::new(),
            cur_key: String::new(),
            stack: Vec::new(),
            alignment: DEFAULT_ALIGNMENT,
            tensors: Vec::new(),
            names: HashSet::new(),
            header: None,
        }
    }

    /// The total file length, when known (file size, Content-Length). Every length and
    /// count is then checked against it before anything is allocated, and at the end
    /// every tensor must lie inside the file. Call before the first `feed`.
    pub fn with_file_len(mut self, len: u64) -> Self {
        self.file_len = Some(len);
        self
    }

    /// Bytes parsed so far (not counting a buffered, incomplete item). Once the header is
    /// done this is the end of the tensor table.
    pub fn bytes_consumed(&self) -> u64 {
        self.pos
    }

    /// Parses as much of `chunk` (the bytes following everything fed before) as it can.
    /// After an error the parser is spent: later calls return the same error.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Progress, GgufError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.state == State::Returned {
            return Err(GgufError::AlreadyDone);
        }
        let result = self.feed_inner(chunk);
        if let Err(e) = &result {
            self.failed = Some(e.clone());
        }
        result
    }

    /// The stream ended. Returns the header if it was complete but not yet returned by
    /// `feed` (never the case in practice), else the error explaining what is missing.
    pub fn finish(mut self) -> Result<Header, GgufError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        match self.state {
            State::Returned => return Err(GgufError::AlreadyDone),
            State::Complete => {
                if let Some(h) = self.header.take() {
                    return Ok(h);
                }
            }
            _ => {}
        }
        let buffered = self.buf.len() as u64;
        if self.pos == 0 && buffered == 0 {
            return Err(GgufError::Empty);
        }
        if self.state == State::Magic {
            let n = self.buf.len().min(MAGIC.len());
            if self.buf[..n] != MAGIC[..n] {
                return Err(GgufError::BadMagic { found: self.buf[..n].to_vec() });
            }
        }
        Err(GgufError::Truncated {
            section: self.section(),
            offset: self.pos + buffered,
            need: self.need.saturating_sub(buffered).max(1),
        })
    }

    fn feed_inner(&mut self, chunk: &[u8]) -> Result<Progress, GgufError> {
        let mut rest = chunk;
        // First finish the item that straddles the previous chunk's end, topping the
        // buffer up with only as many bytes as that item needs.
        while !self.buf.is_empty() {
            let want = to_usize(self.need).saturating_sub(self.buf.len());
            let take = want.min(rest.len());
            self.buf.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if (self.buf.len() as u64) < self.need {
                return Ok(Progress::NeedMore(to_usize(self.need - self.buf.len() as u64)));
            }
            let buf = std::mem::take(&mut self.buf);
            let (used, need) = self.advance(&buf)?;
            self.buf = buf;
            self.buf.drain(..used);
            match need {
                None => {
                    let rest = rest.len() + self.buf.len();
                    self.buf = Vec::new();
                    return self.hand_out(rest);
                }
                Some(n) => self.need = n,
            }
        }
        // Then parse straight from the chunk, keeping only an incomplete tail.
        let (used, need) = self.advance(rest)?;
        match need {
            None => self.hand_out(rest.len() - used),
            Some(n) => {
                self.need = n;
                self.buf.extend_from_slice(&rest[used..]);
                Ok(Progress::NeedMore(to_usize(n.saturating_sub(self.buf.len() as u64)).max(1)))
            }
        }
    }

    fn hand_out(&mut self, rest: usize) -> Result<Progress, GgufError> {
        match self.header.take() {
            Some(header) => {
                self.state = State::Returned;
                Ok(Progress::Done { header, rest })
            }
            None => Err(GgufError::AlreadyDone),
        }
    }

    /// Consumes complete items from `input`. Returns the bytes consumed and, unless the
    /// header is complete, how many bytes the next item needs from its start.
    fn advance(&mut self, input: &[u8]) -> Result<(usize, Option<u64>), GgufError> {
        let mut at = 0;
        loop {
            if self.state == State::Complete {
                return Ok((at, None));
            }
            match self.step(&input[at..]) {
                Ok(n) => {
                    at += n;
                    self.pos += n as u64;
                }
                Err(Stop::Need(n)) => {
                    if let Some(file_len) = self.file_len {
                        let end = self.pos.saturating_add(n);
                        if end > file_len {
                            if file_len == 0 {
                                return Err(GgufError::Empty);
                            }
                            return Err(GgufError::Truncated {
                                section: self.section(),
                                offset: file_len,
                                need: end - file_len,
                            });
                        }
                    }
                    return Ok((at, Some(n)));
                }
                Err(Stop::Fail(e)) => return Err(e),
            }
        }
    }

    /// Where the parser is, for error messages.
    fn section(&self) -> Section {
        let index = self.metadata.len() as u64;
        match self.state {
            State::Magic | State::Counts => Section::Preamble,
            State::KvHead => Section::Metadata { index, count: self.n_kv, key: None },
            State::KvValue(_) | State::KvArray => {
                Section::Metadata { index, count: self.n_kv, key: Some(self.cur_key.clone()) }
            }
            State::Tensor | State::Complete | State::Returned => {
                Section::TensorTable { index: self.tensors.len() as u64, count: self.n_tensors }
            }
        }
    }

    /// Consumes one item (or a run of scalar array elements) from the start of `inp`,
    /// returning its length; 0 for a change of state.
    fn step(&mut self, inp: &[u8]) -> Result<usize, Stop> {
        match self.state {
            State::Magic => {
                // Check the magic as soon as it (or the whole of a shorter file) is here.
                let magic_len = self.file_len.map_or(4, |l| l.min(4));
                need(inp, magic_len)?;
                let n = (magic_len as usize).min(inp.len());
                if inp[..n] != MAGIC[..n] {
                    return Err(GgufError::BadMagic { found: inp[..n].to_vec() }.into());
                }
                need(inp, MAGIC_VERSION_LEN)?;
                let version = read_u32(inp, 4);
                if !(2..=3).contains(&version) {
                    return Err(GgufError::UnsupportedVersion { version }.into());
                }
                self.version = version;
                self.state = State::Counts;
                Ok(8)
            }
            State::Counts => {
                need(inp, 16)?;
                let n_tensors = read_u64(inp, 0);
                let n_kv = read_u64(inp, 8);
                if n_tensors > self.limits.max_tensors {
                    return Err(GgufError::TooManyTensors { count: n_tensors, limit: self.limits.max_tensors }.into());
                }
                if n_kv > self.limits.max_kv {
                    return Err(GgufError::TooManyKeys { count: n_kv, limit: self.limits.max_kv }.into());
                }
                self.n_tensors = n_tensors;
                self.n_kv = n_kv;
                self.next_kv();
                Ok(16)
            }
            State::KvHead => {
                let (key, at) = self.read_str(inp, 0)?;
                need(inp, at as u64 + 4)?;
                let type_id = read_u32(inp, at);
                if self.metadata.get(key).is_some() {
                    return Err(GgufError::DuplicateKey { key: key.to_owned() }.into());
                }
                let Some(ty) = ValueType::from_id(type_id) else {
                    return Err(GgufError::UnknownValueType {
                        key: key.to_owned(),
                        id: type_id,
                        offset: self.pos + at as u64,
                    }
                    .into());
                };
                self.cur_key = key.to_owned();
                self.state = State::KvValue(ty);
                Ok(at + 4)
            }
            State::KvValue(ValueType::Array) => {
                let n = self.array_header(inp)?;
                self.state = State::KvArray;
                Ok(n)
            }
            State::KvValue(ValueType::String) => {
                let (s, at) = self.read_str(inp, 0)?;
                let value = Value::String(s.to_owned());
                self.finish_kv(value)?;
                Ok(at)
            }
            State::KvValue(ty) => {
                let size = ty.min_size();
                need(inp, size)?;
                let value = read_scalar(ty, inp);
                self.finish_kv(value)?;
                Ok(size as usize)
            }
            State::KvArray => self.array_step(inp),
            State::Tensor => {
                if self.tensors.len() as u64 == self.n_tensors {
                    self.complete()?;
                    return Ok(0);
                }
                self.tensor_info(inp)
            }
            State::Complete | State::Returned => Ok(0),
        }
    }

    /// Moves on to the next key/value pair, or to the tensor table.
    fn next_kv(&mut self) {
        self.state = if (self.metadata.len() as u64) < self.n_kv { State::KvHead } else { State::Tensor };
    }

    fn finish_kv(&mut self, value: Value) -> Result<(), GgufError> {
        if self.cur_key == "general.alignment" {
            match value {
                Value::U32(a) if a.is_power_of_two() => self.alignment = u64::from(a),
                _ => return Err(GgufError::BadAlignment { found: value }),
            }
        }
        let key = std::mem::take(&mut self.cur_key);
        if !self.metadata.insert(key.clone(), value) {
            return Err(GgufError::DuplicateKey { key });
        }
        self.next_kv();
        Ok(())
    }

    /// Reads a string (u64 length + bytes) at `inp[at..]`; returns it and its end.
    fn read_str<'a>(&self, inp: &'a [u8], at: usize) -> Result<(&'a str, usize), Stop> {
        need(inp, at as u64 + 8)?;
        let len = read_u64(inp, at);
        if len > self.limits.max_string_len {
            return Err(GgufError::StringTooLong {
                section: self.section(),
                len,
                offset: self.pos + at as u64,
                limit: self.limits.max_string_len,
            }
            .into());
        }
        let end = (at as u64 + 8).saturating_add(len);
        need(inp, end)?;
        let end = end as usize; // fits: end <= inp.len()
        match std::str::from_utf8(&inp[at + 8..end]) {
            Ok(s) => Ok((s, end)),
            Err(_) => Err(GgufError::InvalidUtf8 { section: self.section(), offset: self.pos + at as u64 }.into()),
        }
    }

    /// Reads an array header (element type + count) and opens a frame for it.
    fn array_header(&mut self, inp: &[u8]) -> Result<usize, Stop> {
        need(inp, 12)?;
        let type_id = read_u32(inp, 0);
        let len = read_u64(inp, 4);
        if self.stack.len() as u64 >= u64::from(self.limits.max_array_depth) {
            return Err(GgufError::ArrayTooDeep {
                key: self.cur_key.clone(),
                offset: self.pos,
                limit: self.limits.max_array_depth,
            }
            .into());
        }
        let Some(ty) = ValueType::from_id(type_id) else {
            return Err(GgufError::UnknownValueType { key: self.cur_key.clone(), id: type_id, offset: self.pos }.into());
        };
        if len > self.limits.max_array_len {
            return Err(GgufError::ArrayTooLong {
                key: self.cur_key.clone(),
                len,
                offset: self.pos,
                limit: self.limits.max_array_len,
            }
            .into());
        }
        // Checked against the file before any element is read: the elements need at least
        // this many bytes.
        let min_total = 12u64.saturating_add(len.saturating_mul(ty.min_size()));
        if let Some(file_len) = self.file_len {
            let end = self.pos.saturating_add(min_total);
            if end > file_len {
                return Err(
                    GgufError::Truncated { section: self.section(), offset: file_len, need: end - file_len }.into()
                );
            }
        }
        self.stack.push(Frame { len, arr: Array::empty(ty) });
        Ok(12)
    }

    /// Reads the next element(s) of the innermost open array, or closes it.
    fn array_step(&mut self, inp: &[u8]) -> Result<usize, Stop> {
        let Some(top) = self.stack.last() else {
            // Not reachable: KvArray always has an open frame.
            self.next_kv();
            return Ok(0);
        };
        let done = top.arr.len() as u64;
        if done == top.len {
            self.close_array()?;
            return Ok(0);
        }
        let remaining = top.len - done;
        match top.arr.element_type() {
            ValueType::String => {
                let (s, at) = self.read_str(inp, 0)?;
                if let Some(Frame { arr: Array::String(v), .. }) = self.stack.last_mut() {
                    grow(v, 1, remaining);
                    v.push(s.to_owned());
                }
                Ok(at)
            }
            ValueType::Array => self.array_header(inp),
            ty => {
                let size = ty.min_size();
                need(inp, size)?;
                let k = (inp.len() as u64 / size).min(remaining) as usize;
                if let Some(top) = self.stack.last_mut() {
                    read_scalars(&mut top.arr, &inp[..k * size as usize], remaining);
                }
                Ok(k * size as usize)
            }
        }
    }

    /// Closes the innermost array: it becomes the KV's value or an element of its parent.
    fn close_array(&mut self) -> Result<(), GgufError> {
        let Some(frame) = self.stack.pop() else { return Ok(()) };
        match self.stack.last_mut() {
            None => self.finish_kv(Value::Array(frame.arr)),
            Some(parent) => {
                let remaining = parent.len - parent.arr.len() as u64;
                if let Array::Array(v) = &mut parent.arr {
                    grow(v, 1, remaining);
                    v.push(frame.arr);
                }
                Ok(())
            }
        }
    }

    /// Reads and validates one tensor info: name, n_dims, dims, type, offset.
    fn tensor_info(&mut self, inp: &[u8]) -> Result<usize, Stop> {
        let (name, mut at) = self.read_str(inp, 0)?;
        need(inp, at as u64 + 4)?;
        let n_dims = read_u32(inp, at);
        at += 4;
        if n_dims > self.limits.max_dims {
            return Err(GgufError::TooManyDims { tensor: name.to_owned(), n_dims, limit: self.limits.max_dims }.into());
        }
        need(inp, at as u64 + 8 * u64::from(n_dims) + 12)?;
        let dims: Vec<u64> = (0..n_dims as usize).map(|i| read_u64(inp, at + 8 * i)).collect();
        at += 8 * n_dims as usize;
        let type_id = read_u32(inp, at);
        let offset = read_u64(inp, at + 4);
        at += 12;
        let info = validate_tensor(name, dims, type_id, offset, self.alignment, &self.names)?;
        self.names.insert(info.name.clone());
        self.tensors.push(info);
        Ok(at)
    }

    /// The tensor table is complete: place the data section and check the tensors
    /// against each other and against the file.
    fn complete(&mut self) -> Result<(), GgufError> {
        let align = self.alignment;
        let data_offset = self.pos.div_ceil(align).saturating_mul(align);
        check_table(&self.tensors, data_offset, self.file_len)?;
        self.header = Some(Header {
            version: self.version,
            metadata: std::mem::take(&mut self.metadata),
            tensors: std::mem::take(&mut self.tensors),
            alignment: align,
            data_offset,
        });
        self.names = HashSet::new();
        self.state = State::Complete;
        Ok(())
    }
}

/// `Err(Need(n))` unless `inp` holds at least `n` bytes.
fn need(inp: &[u8], n: u64) -> Result<(), Stop> {
    if (inp.len() as u64) < n {
        Err(Stop::Need(n))
    } else {
        Ok(())
    }
}
