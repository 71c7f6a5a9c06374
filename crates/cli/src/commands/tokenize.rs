//! `kindling tokenize FILE (--text TEXT | --text-file F) [--parse-special] [--json]`

use std::path::PathBuf;

use kindling_tokenizer::Tokenizer;

use crate::load::{read_header, Error};

#[derive(clap::Args)]
pub struct Args {
    file: PathBuf,
    #[arg(long, conflicts_with = "text_file", required_unless_present = "text_file")]
    text: Option<String>,
    #[arg(long)]
    text_file: Option<PathBuf>,
    /// Turn special-token text such as `<|im_start|>` into its token.
    #[arg(long)]
    parse_special: bool,
    /// Print `{"token_ids": [...]}`.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<(), Error> {
    let text = match (args.text, &args.text_file) {
        (Some(t), _) => t,
        (None, Some(f)) => std::fs::read_to_string(f).map_err(|e| format!("cannot read {}: {e}", f.display()))?,
        (None, None) => return Err("give --text or --text-file".into()),
    };
    let header = read_header(&args.file)?;
    let tokenizer = Tokenizer::from_metadata(&header.metadata)?;
    let ids = tokenizer.encode(&text, true, args.parse_special);
    if args.json {
        println!("{}", serde_json::json!({ "token_ids": ids }));
    } else {
        for id in ids {
            println!("{id:>8} {:?}", String::from_utf8_lossy(tokenizer.token_bytes(id)));
        }
    }
    Ok(())
}
