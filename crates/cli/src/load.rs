//! Reading GGUF files from disk in chunks, through the same streaming loader a
//! browser download goes through.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::time::Instant;

use kindling_cpu::CpuBackend;
use kindling_gguf::{Header, HeaderParser, Limits, Progress};
use kindling_model::{Loader, Model, ModelOptions};

pub type Error = Box<dyn std::error::Error>;

/// Bytes read per chunk: big enough to be fast, small enough to keep memory flat.
const CHUNK: usize = 4 << 20;

/// Which backend runs the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendChoice {
    Cpu,
}

fn open(path: &Path) -> Result<(File, u64), Error> {
    let file = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let len = file.metadata().map_err(|e| format!("cannot stat {}: {e}", path.display()))?.len();
    Ok((file, len))
}

/// Parses only the header (metadata and tensor table), reading no more than it needs.
pub fn read_header(path: &Path) -> Result<Header, Error> {
    let (mut file, len) = open(path)?;
    let mut parser = HeaderParser::new(Limits::default()).with_file_len(len);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if n == 0 {
            return Ok(parser.finish()?);
        }
        if let Progress::Done { header, .. } = parser.feed(&buf[..n])? {
            return Ok(header);
        }
    }
}

/// A model loaded onto a backend, and how long loading took.
pub struct Loaded {
    pub model: Model<CpuBackend>,
    pub load_ms: f64,
}

pub fn load_model(path: &Path, backend: BackendChoice, options: ModelOptions) -> Result<Loaded, Error> {
    let start = Instant::now();
    let (mut file, len) = open(path)?;
    let BackendChoice::Cpu = backend;
    let mut backend = CpuBackend::new();
    let mut loader = Loader::new(Some(len));
    let mut buf = vec![0u8; CHUNK];
    while !loader.is_complete() {
        let n = file.read(&mut buf).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        loader.feed(&mut backend, &buf[..n])?;
    }
    let model = Model::new(backend, loader.finish()?, options)?;
    Ok(Loaded { model, load_ms: start.elapsed().as_secs_f64() * 1e3 })
}
