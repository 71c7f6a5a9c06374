//! `kindling bench FILE [--backend] [--prompt-tokens N] [--gen-tokens N] [--json] [--profile]`:
//! load time, prefill and decode speed, and the work per decoded token; with
//! `--profile`, the device time of each kernel in the prefill and per decoded token.
//! With `--json-schema FILE | --regex R | --grammar FILE`, also constrained against free
//! decoding through `Generation` (greedy, the same prompt), side by side (issue 26).
//! On an encoder (nomic-bert, bert) it measures embeddings instead: `--inputs N
//! --input-tokens T` (bench/embed.rs).

mod embed;

use std::time::Instant;

use kindling_model::{
    Backend, ConstraintSpec, EvalOutput, Evaluated, GenerateOptions, Generation, KernelTime, Model, ModelKind,
    ModelOptions, SamplerConfig, CHAINED_STEPS,
};
use kindling_tokenizer::ChatMessage;

use crate::constraint_args::ConstraintArgs;
use crate::load::{with_model, Error, Loaded, ModelArgs, ModelTask};

/// The constrained comparison's prompt when `--prompt` is not given: asks for a long
/// output (pair it with a schema that wants many items, bench/schemas/).
const DEFAULT_PROMPT: &str = "List 30 people who could work at a small software company, as JSON that follows \
     the schema: every field filled in, realistic values.";

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    model: ModelArgs,
    /// Prompt length for the prefill measurement.
    #[arg(long, default_value_t = 512)]
    prompt_tokens: usize,
    /// Tokens generated (greedily) for the decode measurement.
    #[arg(long, default_value_t = 128)]
    gen_tokens: usize,
    /// Positions evaluated per batch during prefill [default: the policy's for the
    /// backend, as every other command runs: 2,048 on a GPU where its storage bindings
    /// hold them, 512 on the CPU].
    #[arg(long)]
    batch: Option<usize>,
    /// Timed repetitions (the median is reported).
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Encoders only: inputs embedded per request (one request is timed as a whole).
    #[arg(long, default_value_t = 32)]
    inputs: usize,
    /// Encoders only: tokens per input, the special tokens ([CLS], [SEP]) included;
    /// at most the model's context.
    #[arg(long, default_value_t = 16)]
    input_tokens: usize,
    #[arg(long)]
    json: bool,
    /// Time every GPU dispatch with timestamp queries and print the device time per
    /// kernel (the last repetition's prefill, and per decoded token). Each submission
    /// is then waited for: tok/s of a profiled run are lower than a plain run's.
    #[arg(long)]
    profile: bool,
    /// Also decode under this constraint, and freely, through `Generation` (greedy, up
    /// to --gen-tokens tokens after --prompt) and print the two side by side.
    #[command(flatten)]
    constraint: ConstraintArgs,
    /// The prompt of the constrained comparison, as a user message in the model's chat
    /// template (where it has one).
    #[arg(long)]
    prompt: Option<String>,
}

pub fn run(args: Args) -> Result<(), Error> {
    with_model(args.batch.map(|max_batch| ModelOptions { max_batch }), args)
}

impl ModelTask for Args {
    fn model(&self) -> &ModelArgs {
        &self.model
    }

    fn profile(&self) -> bool {
        self.profile
    }

    fn run<B: Backend>(self, loaded: Loaded<B>) -> Result<(), Error> {
        let args = self;
        let load_ms = loaded.load_ms;
        let mut model = loaded.model;
        if model.kind() == ModelKind::Encoder {
            return bench_encoder(&mut model, &args, load_ms);
        }
        let r = measure(&mut model, &args)?;
        let constrained = match args.constraint.spec()? {
            Some(spec) => Some(measure_constrained(&mut model, &args, spec)?),
            None => None,
        };
        let (file, backend) = (args.model.file.display().to_string(), model.backend_name());
        let name = model.info().name.clone();
        if args.profile && r.profile.is_none() {
            eprintln!("note: no device profile: this backend or adapter has no timestamp queries inside passes");
        }
        if args.json {
            let mut out = serde_json::json!({
                "file": file, "model": name, "backend": backend,
                "load_ms": load_ms,
                "prompt_tokens": args.prompt_tokens, "batch": model.max_batch(), "prefill_tok_s": r.prefill_tok_s,
                "gen_tokens": args.gen_tokens, "decode_tok_s": r.decode_tok_s,
                "dispatches_per_token": r.dispatches_per_token, "submits_per_token": r.submits_per_token,
                "bytes_read_per_token": r.bytes_read_per_token, "wait_ms_per_token": r.wait_ms_per_token,
            });
            if let Some(c) = &constrained {
                out["constrained"] = c.json();
            }
            if let Some(p) = &r.profile {
                let rows = |ks: &[KernelTime], per: f64| -> Vec<serde_json::Value> {
                    ks.iter().map(|k| serde_json::json!({"kernel": k.kernel, "dispatches": k.dispatches as f64 / per, "us": k.ns / per / 1e3})).collect()
                };
                out["profile"] = serde_json::json!({
                    "prefill": rows(&p.prefill, 1.0),
                    "decode_per_token": rows(&p.decode, args.gen_tokens.max(1) as f64),
                });
            }
            println!("{out}");
        } else {
            println!("model:     {name} ({file})");
            println!("backend:   {backend}");
            println!("load:      {load_ms:.0} ms");
            println!(
                "prefill:   {:.1} tok/s ({} tokens, batches of {} rows)",
                r.prefill_tok_s,
                args.prompt_tokens,
                model.max_batch()
            );
            println!("decode:    {:.1} tok/s ({} tokens)", r.decode_tok_s, args.gen_tokens);
            println!(
                "per token: {:.0} dispatches, {:.2} submits, {:.0} bytes read back",
                r.dispatches_per_token, r.submits_per_token, r.bytes_read_per_token
            );
            println!("           {:.3} ms of it waiting for the device", r.wait_ms_per_token);
            if let Some(c) = &constrained {
                c.print();
            }
            if let Some(p) = &r.profile {
                print_profile(&format!("device time of the prefill ({} tokens)", args.prompt_tokens), &p.prefill, 1.0);
                print_profile("device time per decoded token", &p.decode, args.gen_tokens.max(1) as f64);
            }
        }
        Ok(())
    }
}

/// Embedding throughput of an encoder: one JSON line, or a few lines of text.
fn bench_encoder<B: Backend>(model: &mut Model<B>, args: &Args, load_ms: f64) -> Result<(), Error> {
    let b = embed::EmbedBench { inputs: args.inputs, input_tokens: args.input_tokens, repeat: args.repeat };
    let r = embed::measure_embed(model, &b)?;
    let (file, backend) = (args.model.file.display().to_string(), model.backend_name());
    let name = model.info().name.clone();
    if args.json {
        let out = serde_json::json!({
            "file": file, "model": name, "backend": backend, "kind": "encoder",
            "load_ms": load_ms,
            "inputs": b.inputs, "input_tokens": b.input_tokens, "tokens": b.inputs * b.input_tokens,
            "repeat": args.repeat.max(1), "seconds": r.seconds, "runs_s": r.runs_s,
            "inputs_per_s": r.inputs_per_s(&b), "tokens_per_s": r.tokens_per_s(&b),
            "first_ids": r.head, "last_id": r.last,
        });
        println!("{out}");
    } else {
        println!("model:     {name} ({file}), an encoder");
        println!("backend:   {backend}");
        println!("load:      {load_ms:.0} ms");
        println!(
            "embed:     {} inputs x {} tokens in {:.1} ms (median of {})",
            b.inputs,
            b.input_tokens,
            r.seconds * 1e3,
            args.repeat.max(1)
        );
        println!("           {:.1} inputs/s, {:.0} tokens/s", r.inputs_per_s(&b), r.tokens_per_s(&b));
    }
    Ok(())
}

/// A table of kernels by device time, each figure divided by `per` (tokens).
fn print_profile(title: &str, kernels: &[KernelTime], per: f64) {
    let total: f64 = kernels.iter().map(|k| k.ns).sum();
    println!("\n{title}: {:.1} µs", total / per / 1e3);
    println!("  {:>9} {:>7} {:>9} {:>6}  kernel (type, workgroups)", "µs", "calls", "µs/call", "share");
    for k in kernels {
        let calls = k.dispatches as f64 / per;
        let us = k.ns / per / 1e3;
        let per_call = if k.dispatches > 0 { k.ns / k.dispatches as f64 / 1e3 } else { 0.0 };
        println!("  {us:9.1} {calls:7.1} {per_call:9.2} {:5.1}%  {}", 100.0 * k.ns / total.max(1.0), k.kernel);
    }
}

/// Device time per kernel of the last repetition (`--profile`).
struct Profile {
    prefill: Vec<KernelTime>,
    decode: Vec<KernelTime>,
}

struct Figures {
    prefill_tok_s: f64,
    decode_tok_s: f64,
    dispatches_per_token: f64,
    submits_per_token: f64,
    bytes_read_per_token: f64,
    /// Of a decode step, the time spent waiting for the device (the rest: recording
    /// and submitting on the host).
    wait_ms_per_token: f64,
    profile: Option<Profile>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn measure<B: Backend>(model: &mut Model<B>, args: &Args) -> Result<Figures, Error> {
    let vocab = model.config().vocab_size as u32;
    // A deterministic prompt of ordinary token ids (content does not change the speed).
    let prompt: Vec<u32> =
        (0..args.prompt_tokens as u32).map(|i| 1 + (i * 7919) % vocab.saturating_sub(1).max(1)).collect();
    let context = args.prompt_tokens + args.gen_tokens + 1;
    let (mut prefill, mut decode) = (Vec::new(), Vec::new());
    let mut per_token = (0.0, 0.0, 0.0, 0.0);
    let mut profile = None;
    for rep in 0..args.repeat.max(1) + 1 {
        let mut session = model.new_session(context)?;
        model.take_profile();
        let t = Instant::now();
        let first = pollster::block_on(model.eval(&mut session, &prompt, EvalOutput::LastArgmax))?;
        let prefill_s = t.elapsed().as_secs_f64();
        let prefill_profile = model.take_profile();
        let Evaluated::Token(mut token) = first else { return Err("no token from prefill".into()) };
        let before = model.backend().counters();
        let t = Instant::now();
        if model.can_chain() && args.gen_tokens > 0 {
            // As `Generation` decodes greedily there: up to CHAINED_STEPS steps are
            // submitted ahead of the token being read.
            pollster::block_on(model.eval(&mut session, &[token], EvalOutput::SubmitArgmax))?;
            let (mut submitted, mut in_flight) = (1, 1);
            for _ in 0..args.gen_tokens {
                while in_flight < CHAINED_STEPS && submitted < args.gen_tokens {
                    pollster::block_on(model.eval_chained(&mut session))?;
                    submitted += 1;
                    in_flight += 1;
                }
                pollster::block_on(model.finish_chained(&mut session))?;
                in_flight -= 1;
            }
        } else {
            for _ in 0..args.gen_tokens {
                match pollster::block_on(model.eval(&mut session, &[token], EvalOutput::LastArgmax))? {
                    Evaluated::Token(t) => token = t,
                    Evaluated::Logits(_) | Evaluated::Candidates(_) | Evaluated::Submitted | Evaluated::Cached => {
                        return Err("no token from decode".into())
                    }
                }
            }
        }
        let decode_s = t.elapsed().as_secs_f64();
        let after = model.backend().counters();
        if let (Some(prefill), Some(decode)) = (prefill_profile, model.take_profile()) {
            profile = Some(Profile { prefill, decode });
        }
        if rep == 0 {
            continue; // warm-up: pipelines, bind groups, caches
        }
        prefill.push(args.prompt_tokens as f64 / prefill_s);
        decode.push(args.gen_tokens as f64 / decode_s);
        let n = args.gen_tokens.max(1) as f64;
        per_token = (
            (after.dispatches - before.dispatches) as f64 / n,
            (after.submits - before.submits) as f64 / n,
            (after.bytes_read - before.bytes_read) as f64 / n,
            (after.wait_us - before.wait_us) as f64 / n / 1000.0,
        );
    }
    Ok(Figures {
        prefill_tok_s: median(prefill),
        decode_tok_s: median(decode),
        dispatches_per_token: per_token.0,
        submits_per_token: per_token.1,
        bytes_read_per_token: per_token.2,
        wait_ms_per_token: per_token.3,
        profile,
    })
}

/// One decode through `Generation` (the median repetition's figures).
struct GenRun {
    /// Tokens generated (the first, which comes with the prefill, included).
    tokens: usize,
    /// Tokens after the first, per second of the time after it.
    decode_tok_s: f64,
    finish: &'static str,
    text: String,
    /// Host time in the constraint (its masks, taking its tokens), per generated token (ms).
    constraint_ms_per_token: f64,
}

/// Free against constrained decoding through `Generation`, greedy, the same prompt.
struct Constrained {
    prompt_tokens: usize,
    free: GenRun,
    constrained: GenRun,
    /// The constrained decode with chaining off: every step submitted, its mask computed
    /// meanwhile, its logit row read and masked on the host (backends that chain only).
    unchained: Option<GenRun>,
}

impl Constrained {
    fn ratio(&self) -> f64 {
        self.constrained.decode_tok_s / self.free.decode_tok_s.max(1e-9)
    }

    fn json(&self) -> serde_json::Value {
        let run = |r: &GenRun| {
            serde_json::json!({"tokens": r.tokens, "decode_tok_s": r.decode_tok_s, "finish_reason": r.finish,
                "constraint_ms_per_token": r.constraint_ms_per_token})
        };
        serde_json::json!({
            "prompt_tokens": self.prompt_tokens,
            "free": run(&self.free),
            "constrained": run(&self.constrained),
            "constrained_unchained": self.unchained.as_ref().map(run),
            "ratio": self.ratio(),
            "text": self.constrained.text,
        })
    }

    fn print(&self) {
        println!("\nthrough Generation, greedy, a {}-token prompt:", self.prompt_tokens);
        let row = |name: &str, r: &GenRun| {
            print!("  {name:<24} {:8.1} tok/s  ({} tokens, {})", r.decode_tok_s, r.tokens, r.finish);
            if r.constraint_ms_per_token > 0.0 {
                print!(", constraint {:.3} ms a token on the host", r.constraint_ms_per_token);
            }
            println!();
        };
        row("free decode", &self.free);
        row("constrained decode", &self.constrained);
        if let Some(u) = &self.unchained {
            row("constrained, unchained", u);
        }
        println!("  constrained / free:      {:8.1}%", 100.0 * self.ratio());
        let mut head: String = self.constrained.text.chars().take(160).collect();
        if head.len() < self.constrained.text.len() {
            head.push_str("...");
        }
        println!("  constrained output:      {head}");
    }
}

fn measure_constrained<B: Backend>(
    model: &mut Model<B>,
    args: &Args,
    spec: ConstraintSpec,
) -> Result<Constrained, Error> {
    let text = args.prompt.as_deref().unwrap_or(DEFAULT_PROMPT);
    let prompt = chat_prompt(model, text)?;
    let options = |constraint: Option<ConstraintSpec>| GenerateOptions {
        max_tokens: args.gen_tokens.max(2),
        sampler: SamplerConfig { temperature: 0.0, ..SamplerConfig::default() },
        // The free decode runs all its tokens, as the plain bench's does; a constrained
        // one ends where its output is complete.
        stop_at_eog: false,
        constraint,
        ..GenerateOptions::default()
    };
    let free = decode_median(model, &prompt, options(None), true, args.repeat)?;
    let constrained = decode_median(model, &prompt, options(Some(spec.clone())), true, args.repeat)?;
    let unchained = if model.can_chain_masked() {
        Some(decode_median(model, &prompt, options(Some(spec)), false, args.repeat)?)
    } else {
        None
    };
    Ok(Constrained { prompt_tokens: prompt.len(), free, constrained, unchained })
}

/// `prompt` as a user message in the model's chat template (as `kindling run --chat`
/// renders it), or as plain text where it has none.
fn chat_prompt<B: Backend>(model: &Model<B>, text: &str) -> Result<Vec<u32>, Error> {
    let tok = model.tokenizer();
    let ids = match model.chat_template() {
        Some(template) => {
            let text_of = |id: Option<u32>| id.and_then(|i| tok.token_text(i)).unwrap_or("").to_string();
            let rendered =
                template.render(&[ChatMessage::new("user", text)], true, &text_of(tok.bos()), &text_of(tok.eos()))?;
            let mut ids = tok.encode(&rendered, true, true);
            // A template that writes `bos_token` itself would otherwise get a second BOS.
            if ids.len() >= 2 && ids[0] == ids[1] && Some(ids[0]) == tok.bos() {
                ids.remove(0);
            }
            ids
        }
        None => tok.encode(text, true, false),
    };
    if ids.is_empty() {
        return Err("the prompt has no tokens".into());
    }
    Ok(ids)
}

/// A warm-up and `repeat` timed decodes in new sessions; the median by decode speed.
fn decode_median<B: Backend>(
    model: &mut Model<B>,
    prompt: &[u32],
    options: GenerateOptions,
    chaining: bool,
    repeat: usize,
) -> Result<GenRun, Error> {
    let mut runs = Vec::new();
    for rep in 0..repeat.max(1) + 1 {
        let mut session = model.new_session(prompt.len() + options.max_tokens + 1)?;
        let mut generation = Generation::new(prompt.to_vec(), options.clone())?;
        generation.set_chaining(chaining);
        // The constraint's vocabulary and grammar are built here, outside the timing.
        generation.compile_constraint(model)?;
        pollster::block_on(generation.next(model, &mut session))?;
        let t = Instant::now();
        while pollster::block_on(generation.next(model, &mut session))?.is_some() {}
        let decode_s = t.elapsed().as_secs_f64();
        if rep == 0 {
            continue; // warm-up: pipelines, bind groups, caches
        }
        let tokens = generation.generated().len();
        let constraint_ms = generation.constraint_time();
        runs.push(GenRun {
            constraint_ms_per_token: constraint_ms / tokens.max(1) as f64,
            tokens,
            decode_tok_s: tokens.saturating_sub(1) as f64 / decode_s.max(1e-9),
            finish: generation.finish_reason().map_or("unknown", |f| f.as_str()),
            text: generation.text().to_string(),
        });
    }
    runs.sort_by(|a, b| a.decode_tok_s.total_cmp(&b.decode_tok_s));
    let mid = runs.len() / 2;
    Ok(runs.swap_remove(mid))
}
