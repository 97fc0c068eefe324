//! With `--format json`, a command that stops with an error (exit 2) still prints one JSON
//! document on stdout, with `status: "error"` and the message: scripts and the action never read
//! an empty document. `gate`, `merge` and `compare` print a ragate-gate/1 document
//! (`docs/schema/gate.schema.json`), every other command `{"status", "exit_code", "retryable",
//! "error"}`. `retryable` is [`crate::http::retryable`]: whether a retry of the same run
//! may succeed (an endpoint down), as opposed to a config or input to fix.

use std::ffi::OsString;

use serde_json::json;

use crate::cli::{BaselineCommand, Cli, Command, GateFormat, HistoryCommand};
use crate::error::shorten;
use crate::report::eval_output::OutputFormat;
use crate::report::gate_json;

/// The document a failed command prints, when it was asked for JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ErrorDocument {
    /// A ragate-gate/1 document of `tier` (empty when the command names none: compare).
    Gate { tier: String },
    /// `{"status": "error", "exit_code": 2, "retryable": BOOL, "error": MESSAGE}`.
    Plain,
}

impl ErrorDocument {
    /// The document for `message` (the error and its causes), with a final newline; `retryable`
    /// says whether a retry may fix its cause ([`crate::http::retryable`]).
    pub(crate) fn render(&self, message: &str, retryable: bool) -> String {
        match self {
            ErrorDocument::Gate { tier } => gate_json::render_error(tier, message, retryable),
            ErrorDocument::Plain => {
                let document = json!({
                    "status": "error",
                    "exit_code": crate::exit_code::ERROR,
                    "retryable": retryable,
                    "error": message,
                });
                crate::json_text::document(&document)
            }
        }
    }
}

/// The document a failure of `cli` prints: None unless it was run with `--format json`.
pub(crate) fn requested(cli: &Cli) -> Option<ErrorDocument> {
    let gate = |tier: &str, format: GateFormat| {
        (format == GateFormat::Json).then(|| ErrorDocument::Gate {
            tier: tier.to_string(),
        })
    };
    let plain = |format: GateFormat| (format == GateFormat::Json).then_some(ErrorDocument::Plain);
    match &cli.command {
        Command::Gate(args) => gate(&args.tier, args.report.format),
        Command::Merge(args) => gate(&args.tier, args.report.format),
        Command::Compare(args) => gate("", args.format),
        Command::Validate(args) => plain(args.format),
        Command::Plan(args) => plain(args.format),
        Command::JudgeAgreement(args) => plain(args.format),
        Command::JudgeEval(args) => plain(args.format),
        Command::History(HistoryCommand::Show(args)) => plain(args.format),
        Command::Baseline(BaselineCommand::Accept(args)) => plain(args.format),
        Command::Baseline(BaselineCommand::Show(args)) => plain(args.format),
        Command::Eval(args) => (args.format == OutputFormat::Json).then_some(ErrorDocument::Plain),
        Command::Holes(args) => {
            (args.format == crate::cli::HolesFormat::Json).then_some(ErrorDocument::Plain)
        }
        Command::Convert(_)
        | Command::Qrels(_)
        | Command::Synth(_)
        | Command::History(HistoryCommand::Add(_))
        | Command::Init(_)
        | Command::Report(_)
        | Command::Completions(_)
        | Command::Man(_) => None,
    }
}

/// The document a command line that does not parse prints: read from the raw arguments
/// (`--format json` or `--format=json`, the subcommand, `--tier NAME`), since they did not parse.
pub(crate) fn requested_in_args(args: &[OsString]) -> Option<ErrorDocument> {
    let words: Vec<String> = args
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let json = words
        .windows(2)
        .any(|pair| pair[0] == "--format" && pair[1] == "json")
        || words.iter().any(|w| w == "--format=json");
    if !json {
        return None;
    }
    let tier = words
        .windows(2)
        .find(|pair| pair[0] == "--tier")
        .map(|pair| pair[1].clone())
        .or_else(|| {
            words
                .iter()
                .find_map(|w| w.strip_prefix("--tier=").map(str::to_string))
        })
        .unwrap_or_default();
    let subcommand = words.iter().find(|w| !w.starts_with('-'));
    Some(match subcommand.map(String::as_str) {
        Some("gate" | "merge" | "compare") => ErrorDocument::Gate {
            tier: shorten(&tier).into_owned(),
        },
        _ => ErrorDocument::Plain,
    })
}

/// `error` and its causes on one line (`cannot read x: No such file or directory`), as the
/// documents carry it (the causes its message does not already tell).
pub(crate) fn with_causes(error: &dyn std::error::Error) -> String {
    crate::error::with_causes(error, ": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<OsString> {
        std::iter::once("ragate")
            .chain(words.iter().copied())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn json_is_recognised_in_arguments_that_do_not_parse() {
        assert_eq!(
            requested_in_args(&args(&[
                "gate", "--tier", "smoke", "--format", "json", "--bogus"
            ])),
            Some(ErrorDocument::Gate {
                tier: "smoke".into()
            })
        );
        assert_eq!(
            requested_in_args(&args(&["merge", "--format=json", "--tier=deep"])),
            Some(ErrorDocument::Gate {
                tier: "deep".into()
            })
        );
        assert_eq!(
            requested_in_args(&args(&["validate", "--format", "json", "--x"])),
            Some(ErrorDocument::Plain)
        );
        assert_eq!(requested_in_args(&args(&["gate", "--tier", "smoke"])), None);
    }

    #[test]
    fn the_plain_document_carries_the_status_and_message() {
        let text = ErrorDocument::Plain.render("cannot read x: No such file or directory", false);
        let document: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            document,
            json!({"status": "error", "exit_code": 2, "retryable": false, "error": "cannot read x: No such file or directory"})
        );
    }
}
