//! Single-threaded CPU benchmark, built for wasm32-wasip1 and run under Node (V8, the
//! engine of Chromium) or natively:
//!
//! ```sh
//! cpu_bench MODEL.gguf [PROMPT_TOKENS=16] [GEN_TOKENS=64] [REPEAT=3]
//! ```
//!
//! Prints prefill and decode tok/s (median of the repeats after one warm-up).

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use kindling_cpu::CpuBackend;
use kindling_model::{EvalOutput, Evaluated, Model, ModelOptions};

/// The CPU backend's futures are ready at once: poll once, no executor needed.
fn ready<F: Future>(f: F) -> F::Output {
    let mut cx = Context::from_waker(Waker::noop());
    match pin!(f).poll(&mut cx) {
        Poll::Ready(v) => v,
        Poll::Pending => unreachable!("the CPU backend never waits"),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).ok_or("usage: cpu_bench MODEL.gguf [PROMPT] [GEN] [REPEAT]")?;
    let num = |i: usize, d: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (prompt_n, gen_n, repeat) = (num(2, 16), num(3, 64), num(4, 3));
    kindling_cpu::set_max_threads(1);

    let t = Instant::now();
    let bytes = std::fs::read(path)?;
    let mut model = Model::load_from_bytes(CpuBackend::new(), &bytes, ModelOptions::default())?;
    drop(bytes);
    println!("load: {:.0} ms ({})", t.elapsed().as_secs_f64() * 1e3, model.backend_name());

    let vocab = model.config().vocab_size as u32;
    let prompt: Vec<u32> = (0..prompt_n as u32).map(|i| 1 + (i * 7919) % vocab.saturating_sub(1).max(1)).collect();
    let (mut prefill, mut decode) = (Vec::new(), Vec::new());
    let mut tokens = Vec::new();
    for rep in 0..repeat.max(1) + 1 {
        let mut session = model.new_session(prompt_n + gen_n + 1)?;
        let t = Instant::now();
        let Evaluated::Token(mut token) = ready(model.eval(&mut session, &prompt, EvalOutput::LastArgmax))? else {
            return Err("no token from prefill".into());
        };
        let prefill_s = t.elapsed().as_secs_f64();
        tokens.clear();
        let t = Instant::now();
        for _ in 0..gen_n {
            tokens.push(token);
            match ready(model.eval(&mut session, &[token], EvalOutput::LastArgmax))? {
                Evaluated::Token(next) => token = next,
                _ => return Err("no token from decode".into()),
            }
        }
        let decode_s = t.elapsed().as_secs_f64();
        if rep > 0 {
            prefill.push(prompt_n as f64 / prefill_s);
            decode.push(gen_n as f64 / decode_s);
        }
    }
    println!("prefill: {:.1} tok/s ({prompt_n} tokens)", median(prefill));
    println!("decode:  {:.1} tok/s ({gen_n} tokens)", median(decode));
    println!("tokens:  {:?}", &tokens[..tokens.len().min(16)]);
    Ok(())
}
