//! `kindling logits FILE (--prompt TEXT | --token-ids 1,2,3) [--top K] [--json]`:
//! teacher-forced evaluation in one pass, the tool fidelity is measured with.

use kindling_model::{Backend, EvalOutput, Evaluated};

use crate::load::{with_model, Error, Loaded, ModelArgs, ModelTask};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    model: ModelArgs,
    /// Text to evaluate (tokenized with special tokens added and parsed).
    #[arg(long, conflicts_with = "token_ids", required_unless_present = "token_ids")]
    prompt: Option<String>,
    /// Comma-separated token ids to evaluate.
    #[arg(long, value_delimiter = ',')]
    token_ids: Option<Vec<u32>>,
    /// How many top logits to print per position.
    #[arg(long, default_value_t = 5)]
    top: usize,
    /// Print `{"token_ids": [...], "top": [[[id, logit], ...], ...]}`.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<(), Error> {
    with_model(None, args)
}

impl ModelTask for Args {
    fn model(&self) -> &ModelArgs {
        &self.model
    }

    fn run<B: Backend>(self, mut loaded: Loaded<B>) -> Result<(), Error> {
        let args = self;
        let model = &mut loaded.model;
        let ids = match (&args.prompt, args.token_ids) {
            (Some(p), _) => model.tokenizer().encode(p, true, true),
            (None, Some(ids)) => ids,
            (None, None) => return Err("give --prompt or --token-ids".into()),
        };
        if ids.is_empty() {
            return Err("nothing to evaluate: the prompt has no tokens".into());
        }
        let mut session = model.new_session(ids.len())?;
        if ids.len() > session.capacity() {
            return Err(format!("{} tokens exceed the model's context of {}", ids.len(), session.capacity()).into());
        }
        let Evaluated::Logits(logits) = pollster::block_on(model.eval(&mut session, &ids, EvalOutput::AllLogits))?
        else {
            return Err("the engine returned no logits".into());
        };
        let vocab = model.config().vocab_size;
        let top: Vec<Vec<(u32, f32)>> = logits.chunks_exact(vocab).map(|row| top_k(row, args.top)).collect();
        if args.json {
            let top: Vec<Vec<(u32, f32)>> = top;
            println!("{}", serde_json::json!({ "token_ids": ids, "top": top }));
        } else {
            for (i, (id, row)) in ids.iter().zip(&top).enumerate() {
                let piece = String::from_utf8_lossy(model.tokenizer().token_bytes(*id)).into_owned();
                let best: Vec<String> = row.iter().map(|(t, l)| format!("{t}:{l:.3}")).collect();
                println!("{i:>4} {id:>7} {piece:<16?} -> {}", best.join(" "));
            }
        }
        Ok(())
    }
}

/// The `k` largest (id, logit) pairs, largest first (lower id first on ties).
pub fn top_k(row: &[f32], k: usize) -> Vec<(u32, f32)> {
    let mut idx: Vec<(u32, f32)> = row.iter().enumerate().map(|(i, &l)| (i as u32, l)).collect();
    let k = k.min(idx.len());
    if k == 0 {
        return Vec::new();
    }
    idx.select_nth_unstable_by(k - 1, |a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    idx.truncate(k);
    idx.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    idx
}
