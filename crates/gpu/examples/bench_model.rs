//! Rough prefill/decode timing of a GGUF model on the GPU backend (until `kindling
//! bench --backend gpu` exists):
//! `cargo run --release -p kindling-gpu --example bench_model -- MODEL.gguf [PROMPT_TOKENS] [GEN_TOKENS]`
use std::time::Instant;

use kindling_gpu::{GpuBackend, GpuOptions};
use kindling_model::{EvalOutput, Evaluated, Model, ModelOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).ok_or("usage: bench_model MODEL.gguf [PROMPT_TOKENS] [GEN_TOKENS]")?;
    let prompt_n: usize = args.get(2).map_or(Ok(128), |s| s.parse())?;
    let gen_n: usize = args.get(3).map_or(Ok(32), |s| s.parse())?;
    let bytes = std::fs::read(path)?;
    let t = Instant::now();
    let backend = pollster::block_on(GpuBackend::new(GpuOptions::default()))?;
    let mut model = Model::load_from_bytes(backend, &bytes, ModelOptions::default())?;
    let load = t.elapsed().as_secs_f64();
    println!("{} on {}: load {load:.2}s", model.config().name, model.backend_name());
    let vocab = model.config().vocab_size as u32;
    let prompt: Vec<u32> = (0..prompt_n as u32).map(|i| (i * 7919 + 13) % vocab).collect();
    for round in 0..2 {
        let mut session = model.new_session(prompt_n + gen_n + 1)?;
        let s0 = model.backend().stats();
        let t = Instant::now();
        let Evaluated::Token(mut tok) = pollster::block_on(model.eval(&mut session, &prompt, EvalOutput::LastArgmax))?
        else {
            return Err("no token".into());
        };
        let prefill = t.elapsed().as_secs_f64();
        let s1 = model.backend().stats();
        let t = Instant::now();
        for _ in 0..gen_n {
            let Evaluated::Token(next) = pollster::block_on(model.eval(&mut session, &[tok], EvalOutput::LastArgmax))?
            else {
                return Err("no token".into());
            };
            tok = next;
        }
        let decode = t.elapsed().as_secs_f64();
        let s2 = model.backend().stats();
        println!(
            "{}: prefill {prompt_n} tokens {:.1} ms ({:.0} tok/s, {} submits, {} dispatches); decode {gen_n} tokens {:.1} ms \
             ({:.1} tok/s, {:.2} ms/token, {:.0} dispatches/token, {:.1} submits/token, {} bytes read back)",
            if round == 0 { "cold" } else { "warm" },
            prefill * 1e3,
            prompt_n as f64 / prefill,
            s1.submits - s0.submits,
            s1.dispatches - s0.dispatches,
            decode * 1e3,
            gen_n as f64 / decode,
            decode * 1e3 / gen_n as f64,
            (s2.dispatches - s1.dispatches) as f64 / gen_n as f64,
            (s2.submits - s1.submits) as f64 / gen_n as f64,
            s2.bytes_read_back - s1.bytes_read_back,
        );
    }
    Ok(())
}
