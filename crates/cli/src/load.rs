//! Reading GGUF files from disk in chunks, through the same streaming loader a
//! browser download goes through, onto the backend the user chose.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use kindling_cpu::CpuBackend;
use kindling_gguf::{Header, HeaderParser, Limits, Progress};
use kindling_gpu::{GpuBackend, GpuOptions};
use kindling_model::{policy, Backend, Loader, Model, ModelOptions};

pub type Error = Box<dyn std::error::Error>;

/// Bytes read per chunk: big enough to be fast, small enough to keep memory flat.
const CHUNK: usize = 4 << 20;

/// Which backend runs the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendChoice {
    /// The GPU when one can be opened, else the CPU.
    Auto,
    Cpu,
    /// wgpu on Vulkan/Metal/DX12.
    Gpu,
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
pub struct Loaded<B: Backend> {
    pub model: Model<B>,
    pub load_ms: f64,
}

/// The model file and the engine to run it on (shared by `run`, `logits`, `bench`).
#[derive(clap::Args, Clone)]
pub struct ModelArgs {
    /// The GGUF file.
    pub file: PathBuf,
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendChoice,
    /// Keep the GPU's KV cache as f16: half its memory and attention bandwidth, logits
    /// within ~2e-2 of the f32 cache's.
    #[arg(long)]
    pub kv_f16: bool,
    /// Run prefill's batch matmul and attention in f32 on the shader cores even where the GPU has
    /// cooperative matrices (tensor cores), which take f16 inputs.
    #[arg(long)]
    pub no_coop_matrix: bool,
    /// Run the GPU's decode matvecs in f32 even over Q4_K, Q6_K, Q8_0, Q5_0, Q4_0 and Q4_1
    /// weights, which otherwise take integer dot products against their input in 24 bits.
    #[arg(long)]
    pub no_int_dot: bool,
    /// Leave the GPU's subgroup operations off (reductions then go through workgroup
    /// memory), as in a browser: wgpu's WebGPU backend requests no subgroups.
    #[arg(long)]
    pub no_subgroups: bool,
    /// Leave shader-f16 off (so also cooperative matrices, which take f16 inputs), as in
    /// Chrome on NVIDIA's Vulkan driver. With `--no-subgroups`: the browser's kernels.
    #[arg(long)]
    pub no_f16: bool,
    /// Keep wgpu's run-time checks (loop bounds, array indices) in the GPU's shaders:
    /// slower; for ruling the shaders out when chasing a GPU fault.
    #[arg(long)]
    pub checked_shaders: bool,
    /// Let the o projection's decode matvec merge a long context's attention splits
    /// itself, as in a browser (GpuOptions::merge_splits_in_matvec): one dispatch a layer
    /// fewer, more work in the matvec.
    #[arg(long)]
    pub merge_splits: bool,
    /// Threads the CPU backend computes on, at most one per core (0: every core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
}

/// Work a command does with a loaded model, written once for every backend.
pub trait ModelTask: Sized {
    /// Which model, on which backend.
    fn model(&self) -> &ModelArgs;
    /// Time every GPU dispatch (`GpuOptions::profile`).
    fn profile(&self) -> bool {
        false
    }
    fn run<B: Backend>(self, loaded: Loaded<B>) -> Result<(), Error>;
}

/// Opens the chosen backend, loads the model onto it and runs `task`. `options`: the
/// model's settings, or `None` for the generation policy's native batch rows for that
/// backend (`policy::NATIVE_CPU_OPTIONS`; on a GPU `policy::GPU_OPTIONS`, as far
/// as the device's storage bindings hold them).
pub fn with_model(options: impl Into<Option<ModelOptions>>, task: impl ModelTask) -> Result<(), Error> {
    let options = options.into();
    let ModelArgs {
        file,
        backend,
        kv_f16,
        no_coop_matrix,
        no_int_dot,
        no_subgroups,
        no_f16,
        checked_shaders,
        merge_splits,
        threads,
    } = task.model().clone();
    kindling_cpu::set_max_threads(threads);
    let path = file.as_path();
    let gpu = GpuOptions {
        kv_f16,
        allow_coop_matrix: !no_coop_matrix,
        allow_int_dot: !no_int_dot,
        allow_subgroups: !no_subgroups,
        allow_f16: !no_f16,
        profile: task.profile(),
        checked_shaders,
        merge_splits_in_matvec: merge_splits,
        ..Default::default()
    };
    let cpu_options = Rows::Given(options.unwrap_or(policy::NATIVE_CPU_OPTIONS));
    let on_gpu = |gpu: GpuBackend| {
        let rows = match options {
            Some(given) => Rows::Given(given),
            None => Rows::Fitted(policy::GPU_OPTIONS, gpu.adapter().max_storage_buffer_binding_size),
        };
        load_onto(path, gpu, rows)
    };
    match backend {
        BackendChoice::Cpu => task.run(load_onto(path, CpuBackend::new(), cpu_options)?),
        BackendChoice::Gpu => task.run(on_gpu(open_gpu(gpu)?)?),
        // A CPU "GPU" (lavapipe, SwiftShader) is far slower than the CPU backend.
        BackendChoice::Auto => match open_gpu(gpu) {
            Ok(gpu) if gpu.adapter().device_type != "Cpu" => task.run(on_gpu(gpu)?),
            Ok(gpu) => {
                eprintln!("note: the only GPU is a software one ({}); running on the CPU backend", gpu.adapter().name);
                task.run(load_onto(path, CpuBackend::new(), cpu_options)?)
            }
            Err(e) => {
                eprintln!("note: no usable GPU ({e}); running on the CPU backend");
                task.run(load_onto(path, CpuBackend::new(), cpu_options)?)
            }
        },
    }
}

fn open_gpu(options: GpuOptions) -> Result<GpuBackend, Error> {
    Ok(pollster::block_on(GpuBackend::new(options))?)
}

/// A model's batch rows: as the command gave them, or the policy's lowered to what one
/// storage binding of this many bytes holds (`policy::fit_batch_to_binding`; the model's
/// shapes are known once its header is read).
#[derive(Clone, Copy)]
enum Rows {
    Given(ModelOptions),
    Fitted(ModelOptions, u64),
}

fn load_onto<B: Backend>(path: &Path, mut backend: B, rows: Rows) -> Result<Loaded<B>, Error> {
    let start = Instant::now();
    let files = shard_paths(path);
    let mut loader = Loader::new(None);
    let mut buf = vec![0u8; CHUNK];
    for (i, path) in files.iter().enumerate() {
        let (mut file, len) = open(path)?;
        if i == 0 {
            loader = Loader::new(Some(len));
        } else {
            loader.next_shard(Some(len))?;
        }
        while !loader.is_shard_complete() {
            let n = file.read(&mut buf).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            if n == 0 {
                break;
            }
            loader.feed(&mut backend, &buf[..n])?;
        }
    }
    let loaded = loader.finish()?;
    let options = match rows {
        Rows::Given(options) => options,
        Rows::Fitted(options, max_binding) => policy::fit_batch_to_binding(&loaded.config, options, max_binding),
    };
    let model = Model::new(backend, loaded, options)?;
    Ok(Loaded { model, load_ms: start.elapsed().as_secs_f64() * 1e3 })
}

/// The files of a model: `path` alone, or for the first shard of a split model
/// (`name-00001-of-00003.gguf`, as llama.cpp's gguf-split names them) every shard.
fn shard_paths(path: &Path) -> Vec<PathBuf> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let split = name.strip_suffix(".gguf").and_then(|stem| {
        let (head, count) = stem.rsplit_once("-of-")?;
        let (base, first) = head.rsplit_once('-')?;
        let n: u32 = count.parse().ok()?;
        (first == "00001" && count.len() == 5 && n > 1).then(|| (base.to_string(), n))
    });
    match split {
        Some((base, n)) => (1..=n).map(|i| path.with_file_name(format!("{base}-{i:05}-of-{n:05}.gguf"))).collect(),
        None => vec![path.to_path_buf()],
    }
}

/// A seed from the clock, for runs that give none.
pub fn clock_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}
