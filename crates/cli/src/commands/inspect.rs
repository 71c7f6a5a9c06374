//! `kindling inspect FILE`

use std::path::PathBuf;

use kindling_gguf::{Array, Value};
use kindling_model::ModelConfig;
use kindling_tokenizer::Tokenizer;

use crate::load::{read_header, Error};

#[derive(clap::Args)]
pub struct Args {
    /// The GGUF file.
    file: PathBuf,
    /// Also list every metadata key.
    #[arg(long)]
    metadata: bool,
}

pub fn run(args: Args) -> Result<(), Error> {
    let header = read_header(&args.file)?;
    let md = &header.metadata;
    println!("file:          {}", args.file.display());
    println!("gguf version:  {}", header.version);
    println!(
        "tensors:       {} ({} bytes of data from offset {})",
        header.tensors.len(),
        header.data_size(),
        header.data_offset
    );
    match ModelConfig::from_metadata(md) {
        Ok(c) => {
            println!("architecture:  {} ({})", c.architecture.name(), c.name);
            println!("vocab:         {}", c.vocab_size);
            println!("d_model:       {}", c.embedding_length);
            println!("layers:        {}", c.block_count);
            println!("heads:         {} query, {} key/value, head dim {}", c.head_count, c.head_count_kv, c.head_dim);
            println!("ffn:           {} ({:?})", c.feed_forward_length, c.activation);
            println!("context:       {}", c.context_length);
            println!("rms eps:       {:e}", c.rms_norm_eps);
            let windows: Vec<String> = c
                .layers
                .iter()
                .map(|l| {
                    format!("{}@{}", l.sliding_window.map_or("global".to_string(), |w| w.to_string()), l.rope.base)
                })
                .collect();
            println!("layers (window@rope base): {}", windows.join(" "));
        }
        Err(e) => println!("architecture:  not runnable: {e}"),
    }
    match Tokenizer::from_metadata(md) {
        Ok(t) => {
            println!("tokenizer:     {:?}, {} tokens, bos {:?}, eos {:?}", t.kind(), t.vocab_size(), t.bos(), t.eos())
        }
        Err(e) => println!("tokenizer:     unusable: {e}"),
    }
    println!("chat template: {}", if md.get_str("tokenizer.chat_template").is_some() { "yes" } else { "no" });
    println!();
    println!("{:<40} {:>6} {:>22} {:>12}", "tensor", "type", "dims", "bytes");
    for t in &header.tensors {
        let dims: Vec<String> = t.dims.iter().map(|d| d.to_string()).collect();
        println!("{:<40} {:>6} {:>22} {:>12}", t.name, t.ty.name(), dims.join(" x "), t.n_bytes);
    }
    if args.metadata {
        println!();
        for (k, v) in md.iter() {
            println!("{k} = {}", short(v));
        }
    }
    Ok(())
}

/// A value shortened for display: arrays show their length and first items.
fn short(v: &Value) -> String {
    match v {
        Value::String(s) if s.len() > 80 => format!("{:?}… ({} bytes)", &s[..s.floor_char_boundary(80)], s.len()),
        Value::Array(a) => format!(
            "[{} x {}]{}",
            a.len(),
            a.type_name(),
            match a {
                Array::String(s) => format!(" {:?}…", &s[..s.len().min(5)]),
                _ => String::new(),
            }
        ),
        other => format!("{other:?}"),
    }
}
