//! `--json-schema FILE | --regex R | --grammar FILE`: what the generated text must be.

use std::path::{Path, PathBuf};

use kindling_model::ConstraintSpec;

use crate::load::Error;

#[derive(clap::Args, Clone, Debug)]
#[group(multiple = false)]
pub struct ConstraintArgs {
    /// The output is JSON valid under the JSON Schema in this file.
    #[arg(long, value_name = "FILE")]
    json_schema: Option<PathBuf>,
    /// The whole output matches this regex.
    #[arg(long, value_name = "REGEX")]
    regex: Option<String>,
    /// The output parses under the Lark grammar in this file (llguidance's dialect).
    #[arg(long, value_name = "FILE")]
    grammar: Option<PathBuf>,
}

impl ConstraintArgs {
    /// The constraint asked for, read from its file; `None` for free text.
    pub fn spec(&self) -> Result<Option<ConstraintSpec>, Error> {
        if let Some(path) = &self.json_schema {
            return Ok(Some(ConstraintSpec::json_schema_text(&read(path)?)?));
        }
        if let Some(rx) = &self.regex {
            return Ok(Some(ConstraintSpec::Regex(rx.clone())));
        }
        if let Some(path) = &self.grammar {
            return Ok(Some(ConstraintSpec::Grammar(read(path)?)));
        }
        Ok(None)
    }
}

fn read(path: &Path) -> Result<String, Error> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()).into())
}
