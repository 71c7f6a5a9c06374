//! `kindling embed FILE (--text T ... | --input FILE.json) [--truncate] [--backend B]`:
//! embeddings of texts by an encoder model (nomic-bert, bert), printed as OpenAI's
//! embeddings response, `{ object, data: [{ object, embedding, index }], model, usage }`,
//! on one line. The input file holds a JSON array of strings.

use std::io::Write;
use std::path::PathBuf;

use kindling_model::embed::{embedding_response, EmbeddingRequest};
use kindling_model::Backend;
use serde_json::{json, Value};

use crate::load::{with_model, Error, Loaded, ModelArgs, ModelTask};

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("inputs").required(true).args(["text", "input"])))]
pub struct Args {
    #[command(flatten)]
    model: ModelArgs,
    /// A text to embed; repeat for several (one vector each, in order).
    #[arg(long, value_name = "T")]
    text: Vec<String>,
    /// A JSON file holding an array of strings to embed.
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
    /// Cut inputs longer than the model's context to it instead of refusing them.
    #[arg(long)]
    truncate: bool,
}

pub fn run(args: Args) -> Result<(), Error> {
    with_model(None, args)
}

impl Args {
    /// The request the flags and file spell out, checked as the browser's is.
    fn request(&self) -> Result<EmbeddingRequest, Error> {
        let input = match &self.input {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                let v: Value =
                    serde_json::from_str(&text).map_err(|e| format!("{} is not valid JSON: {e}", path.display()))?;
                if !v.is_array() {
                    return Err(format!("{} must hold a JSON array of strings", path.display()).into());
                }
                v
            }
            None => json!(self.text),
        };
        Ok(EmbeddingRequest::from_value(&json!({ "input": input, "truncate": self.truncate }))?)
    }
}

impl ModelTask for Args {
    fn model(&self) -> &ModelArgs {
        &self.model
    }

    fn run<B: Backend>(self, loaded: Loaded<B>) -> Result<(), Error> {
        let mut model = loaded.model;
        let request = self.request()?;
        let embeddings = pollster::block_on(model.embed_texts(&request.input, request.truncate))?;
        let response = embedding_response(&model.info().name, &embeddings);
        let mut out = std::io::stdout().lock();
        writeln!(out, "{response}")?;
        Ok(())
    }
}
