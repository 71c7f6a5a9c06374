//! `kindling run FILE --prompt TEXT [...]`: generate text, streamed to stdout.

use std::io::Write;
use std::time::Instant;

use kindling_model::{policy, Backend, GenerateOptions, Generation, SamplerConfig};
use kindling_tokenizer::ChatMessage;

use crate::constraint_args::ConstraintArgs;
use crate::load::{clock_seed, with_model, Error, Loaded, ModelArgs, ModelTask};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    model: ModelArgs,
    #[arg(long)]
    prompt: String,
    #[arg(long, default_value_t = policy::MAX_TOKENS)]
    max_tokens: usize,
    /// 0 picks the most likely token every step (greedy).
    #[arg(long, default_value_t = policy::TEMPERATURE)]
    temperature: f32,
    /// 0 disables top-k.
    #[arg(long, default_value_t = policy::TOP_K)]
    top_k: usize,
    #[arg(long, default_value_t = policy::TOP_P)]
    top_p: f32,
    #[arg(long, default_value_t = policy::MIN_P)]
    min_p: f32,
    #[arg(long, default_value_t = 1.0)]
    repetition_penalty: f32,
    /// Random seed (default: from the clock). The same seed gives the same tokens.
    #[arg(long)]
    seed: Option<u64>,
    /// Stop before this string (repeatable).
    #[arg(long)]
    stop: Vec<String>,
    /// Wrap the prompt as a user message in the model's chat template.
    #[arg(long)]
    chat: bool,
    /// Positions the session can hold (default: prompt + max tokens, within the model's).
    #[arg(long)]
    context: Option<usize>,
    /// Print one JSON object at the end instead of streaming text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    constraint: ConstraintArgs,
}

pub fn run(args: Args) -> Result<(), Error> {
    with_model(None, args)
}

impl ModelTask for Args {
    fn model(&self) -> &ModelArgs {
        &self.model
    }

    fn run<B: Backend>(self, loaded: Loaded<B>) -> Result<(), Error> {
        let args = self;
        let load_ms = loaded.load_ms;
        let mut model = loaded.model;
        let constraint = args.constraint.spec()?;

        let prompt_text = if args.chat {
            let template = model
                .chat_template()
                .ok_or("this model has no chat template (tokenizer.chat_template); run without --chat")?;
            let tok = model.tokenizer();
            let text_of = |id: Option<u32>| id.and_then(|i| tok.token_text(i)).unwrap_or("").to_string();
            template.render(
                &[ChatMessage::new("user", args.prompt.as_str())],
                true,
                &text_of(tok.bos()),
                &text_of(tok.eos()),
            )?
        } else {
            args.prompt.clone()
        };
        let prompt_ids = policy::prompt_ids(model.tokenizer(), &prompt_text, args.chat);
        if prompt_ids.is_empty() {
            return Err("the prompt has no tokens".into());
        }
        let seed = args.seed.unwrap_or_else(clock_seed);
        let options = GenerateOptions {
            max_tokens: args.max_tokens,
            sampler: SamplerConfig {
                temperature: args.temperature,
                top_k: args.top_k,
                top_p: args.top_p,
                min_p: args.min_p,
                repetition_penalty: args.repetition_penalty,
                seed,
                ..SamplerConfig::default()
            },
            stop: args.stop.clone(),
            stop_at_eog: true,
            constraint,
            tool_calls: None,
        };
        let context = args.context.unwrap_or(prompt_ids.len() + args.max_tokens);
        let mut session = model.new_session(context)?;
        let mut generation = Generation::new(prompt_ids.clone(), options)?;
        // A bad schema, regex or grammar fails here, before the prompt is evaluated.
        generation.compile_constraint(&model)?;

        let start = Instant::now();
        let mut first_token_at = None;
        let mut out = std::io::stdout().lock();
        while let Some(piece) = pollster::block_on(generation.next(&mut model, &mut session))? {
            first_token_at.get_or_insert_with(|| start.elapsed());
            if !args.json {
                out.write_all(piece.text.as_bytes())?;
                out.flush()?;
            }
        }
        let total = start.elapsed();
        let generated = generation.generated().len();
        let prefill_s = first_token_at.unwrap_or(total).as_secs_f64();
        let decode_s = (total.as_secs_f64() - prefill_s).max(1e-9);
        let finish = generation.finish_reason().map_or("unknown", |f| f.as_str());
        if args.json {
            let value = serde_json::json!({
                "prompt_token_ids": prompt_ids,
                "token_ids": generation.generated(),
                "text": generation.text(),
                "finish_reason": finish,
                "seed": seed,
                "backend": model.backend_name(),
                "timings": {
                    "load_ms": load_ms,
                    "prefill_ms": prefill_s * 1e3,
                    "prefill_tok_s": prompt_ids.len() as f64 / prefill_s.max(1e-9),
                    "decode_tok_s": generated.saturating_sub(1) as f64 / decode_s,
                },
            });
            writeln!(out, "{value}")?;
        } else {
            writeln!(out)?;
            eprintln!(
                "[{generated} tokens, finish: {finish}; load {load_ms:.0} ms, prefill {:.1} tok/s, decode {:.1} tok/s]",
                prompt_ids.len() as f64 / prefill_s.max(1e-9),
                generated.saturating_sub(1) as f64 / decode_s
            );
        }
        Ok(())
    }
}
