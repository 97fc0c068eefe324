//! ragate: a CI regression gate for retrieval-augmented generation (RAG) systems.
//!
//! The `ragate` binary is the product; this library is the part of it a Rust program can use
//! directly: read qrels and runs ([`input`]), score a run ([`evaluate`]), compare it with a stored
//! baseline and decide each check's verdict ([`gate`], [`baseline`]), and render the outcome
//! ([`report`]). Everything else (the command line, pipeline adapters, progress bars, tiers and
//! shards) belongs to the binary and is private to the crate.
//!
//! Cargo features (both on by default; the binary needs neither to build):
//! - `llm`: OpenAI-compatible HTTP judges and embeddings, and the HTTP pipeline adapter (ureq,
//!   rustls). Without it, a config that names an `openai` judge, `embeddings:` or an `http`
//!   pipeline is rejected with an error naming the feature.
//! - `cache`: the SQLite judge-verdict cache (rusqlite). Without it, opening the cache is an
//!   error naming the feature (set `cache: {mode: off}` to judge without one).
//!
//! # Example
//!
//! Score a run against qrels and print a metric:
//!
//! ```
//! use std::collections::BTreeMap;
//! use std::path::Path;
//!
//! use ragate::evaluate::{EvalOptions, evaluate};
//! use ragate::input::{RunFormat, load_qrels};
//! use ragate::metrics::metric::MetricSpec;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir().unwrap();
//! let qrels_path = dir.path().join("qrels.tsv");
//! let run_path = dir.path().join("run.trec");
//! // Qrels as TSV (`qid<TAB>doc_id<TAB>grade`) and a TREC run (`qid Q0 doc_id rank score tag`).
//! std::fs::write(&qrels_path, "q1\td1\t1\nq1\td2\t2\nq2\td3\t1\n").unwrap();
//! std::fs::write(
//!     &run_path,
//!     "q1 Q0 d2 1 9.0 bm25\nq1 Q0 d9 2 8.0 bm25\nq2 Q0 d8 1 5.0 bm25\nq2 Q0 d3 2 4.0 bm25\n",
//! )
//! .unwrap();
//!
//! let qrels = load_qrels(&qrels_path, None, "test", None)?;
//! let options = EvalOptions {
//!     metrics: vec![MetricSpec::new("recall@1".parse()?), MetricSpec::new("mrr".parse()?)],
//!     judges: BTreeMap::new(),
//!     corpus: None,
//!     cache: None,
//!     embeddings: None,
//!     chunk_separator: None,
//!     threads: 1,
//!     judge_repeat: 1,
//!     keep_ranked: 10,
//!     conventions: Default::default(),
//! };
//! let evaluation = evaluate(&qrels, &run_path, RunFormat::Trec, &options)?;
//! for (metric, mean) in evaluation.metrics.iter().zip(&evaluation.means) {
//!     println!("{metric}: {mean:.3}");
//! }
//! // q1 finds one of its two relevant docs at rank 1; q2 finds its only one at rank 2.
//! assert_eq!(evaluation.means, vec![0.25, 0.75]);
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

pub(crate) mod as_written;
pub mod baseline;
pub(crate) mod cli;
pub(crate) mod columns;
pub(crate) mod commands;
pub mod config;
pub(crate) mod digest;
pub mod env;
pub mod error;
pub(crate) mod escape;
pub mod evaluate;
pub mod exit_code;
pub(crate) mod features;
pub(crate) mod format;
pub mod gate;
pub mod history;
pub(crate) mod http;
pub mod input;
pub(crate) mod json_text;
pub mod judge;
pub mod metrics;
pub(crate) mod outputs;
pub(crate) mod pipeline;
pub(crate) mod process_group;
pub(crate) mod progress;
#[cfg(test)]
mod reader_fuzz;
pub mod report;
pub(crate) mod run;
pub(crate) mod secrets;
pub mod settings;
pub(crate) mod shard;
// The statistics behind the verdicts, a crate of its own (crates/stats: it stays optimised in
// test builds, where ragate is not; Cargo.toml says why): reachable for the statistical
// integration tests and the benches, which exercise them directly, but not part of the
// documented API.
#[doc(hidden)]
pub use ragate_stats as stats;
pub(crate) mod stderr_tail;
pub(crate) mod subprocess;
pub(crate) mod suggest;
pub(crate) mod term;
pub(crate) mod testset;
pub(crate) mod tier;

/// Runs the `ragate` command line on the process's arguments and returns its exit code (0 pass,
/// 1 regression, 2 error; see [`exit_code::ExitStatus`]). An error is printed to stderr with its
/// chain of causes. This is the whole of the binary's `main`.
pub fn run_cli() -> std::process::ExitCode {
    term::init_from_env();
    secrets::register_environment();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // A command line that does not parse exits 2 as well: with `--format json` its document
    // says so.
    let cli = cli::parse(&args, |message| {
        if let Some(document) = outputs::error_output::requested_in_args(&args) {
            let _ = term::write_stdout(&document.render(message, false), term::Stdout::Document);
        }
    });
    term::init(cli.terminal.color, cli.terminal.quiet);
    let document = outputs::error_output::requested(&cli);
    match commands::run(cli) {
        Ok(code) => std::process::ExitCode::from(code as u8),
        Err(error) => {
            term::error(&error);
            if let Some(document) = document.filter(|_| !outputs::stdout::stdout_written()) {
                let message = outputs::error_output::with_causes(&error);
                // stdout already closed: the exit code and stderr still say it.
                let _ = term::write_stdout(
                    &document.render(&message, http::retryable(&error)),
                    term::Stdout::Document,
                );
            }
            exit_code::ExitStatus::Error.into()
        }
    }
}
