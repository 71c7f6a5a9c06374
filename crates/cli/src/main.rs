//! `kindling`: run GGUF models natively over the same crates the browser package uses.

mod commands;
mod constraint_args;
mod load;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "kindling", version, about = "Run GGUF language models on the GPU (wgpu) or the CPU")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show a GGUF file's architecture, hyperparameters, tokenizer and tensor table.
    Inspect(commands::inspect::Args),
    /// Generate text from a prompt.
    Run(commands::run::Args),
    /// One OpenAI chat completion (messages, tools, response format) as JSON.
    Chat(commands::chat::Args),
    /// Embeddings of texts by an encoder model (nomic-bert, bert), as OpenAI's JSON.
    Embed(commands::embed::Args),
    /// Print the token ids of a text, as the model's prompt tokenization gives them.
    Tokenize(commands::tokenize::Args),
    /// Evaluate a sequence in one pass and print the top logits at every position.
    Logits(commands::logits::Args),
    /// Measure load time, prefill and decode speed (an encoder: embedding throughput).
    Bench(commands::bench::Args),
    /// List GPU adapters with their features and limits.
    Info(commands::info::Args),
    /// Print the WGSL of a kernel variant (`--key NAME`), or list them all (`--list`).
    Shaders(commands::shaders::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Inspect(a) => commands::inspect::run(a),
        Command::Run(a) => commands::run::run(a),
        Command::Chat(a) => commands::chat::run(a),
        Command::Embed(a) => commands::embed::run(a),
        Command::Tokenize(a) => commands::tokenize::run(a),
        Command::Logits(a) => commands::logits::run(a),
        Command::Bench(a) => commands::bench::run(a),
        Command::Info(a) => commands::info::run(a),
        Command::Shaders(a) => commands::shaders::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
