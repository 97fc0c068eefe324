//! How a `gate` or `merge` run ended, built once: decided against the baseline, measured with no
//! baseline to compare with, or stopped before it had results. Every output of the run (the
//! registry in `outputs::output_table`, rendered by `report::run_outputs`) is a function of it, and
//! its verdict, exit code and headline come from [`RunOutcome::verdict`] alone.

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::baseline::embeddings;
use crate::baseline::results::{Results, RunStatus};
use crate::error::Error;
use crate::gate::GateReport;
use crate::gate::run_verdict::RunVerdict;
use crate::history::sparkline::Trend;
use crate::metrics::embedding_relevance::EmbeddedQuery;
use crate::report::junit::RunInfo;

/// What a run that has results writes besides its verdicts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunFiles<'a> {
    /// The results as stored (results.json, what `baseline accept` promotes).
    pub results: &'a Results,
    /// One trace line per query, by qid (trace.jsonl).
    pub trace: &'a BTreeMap<String, String>,
    /// The vectors behind embedding-based answer relevance (embeddings.jsonl, when any).
    pub embeddings: &'a [EmbeddedQuery],
}

impl RunFiles<'_> {
    /// Writes results.json's bytes into `out` as they are encoded.
    pub(crate) fn write_results_json(&self, out: &mut dyn Write) -> io::Result<()> {
        self.results.write_json(out)
    }

    /// Writes trace.jsonl's lines into `out`, one after the other.
    pub(crate) fn write_trace_jsonl(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::with_capacity(1 << 16, out);
        for line in self.trace.values() {
            out.write_all(line.as_bytes())?;
            out.write_all(b"\n")?;
        }
        out.flush()
    }

    /// embeddings.jsonl's text, None without embeddings.
    pub(crate) fn embeddings_jsonl(&self) -> Option<String> {
        (!self.embeddings.is_empty()).then(|| embeddings::to_jsonl(self.embeddings))
    }
}

/// A run compared with its baseline and decided.
#[derive(Debug)]
pub(crate) struct Decided<'a> {
    pub report: &'a GateReport,
    pub files: RunFiles<'a>,
    /// run-stats.json's document (sizes, calibration, judge usage, timings).
    pub run_stats: serde_json::Value,
    /// The config and the run's clock, which junit.xml names.
    pub junit: &'a RunInfo,
    /// The trends summary.md shows (`--history`; empty without).
    pub trends: &'a [Trend],
    /// Why nothing was gated, printed as the run's last line (a baseline that no longer fits).
    pub error_last: Option<String>,
}

/// A run measured but not gated: no baseline yet, or one that cannot be used (exit 2).
#[derive(Debug)]
pub(crate) struct Unbaselined<'a> {
    pub tier: &'a str,
    pub files: RunFiles<'a>,
    /// Why nothing was gated (the missing or unusable baseline), with what to do.
    pub problem: &'a Error,
    /// The command that accepts these results as the baseline.
    pub accept_command: String,
    /// The floors (`min`, `max`) as measured on this run, one line each.
    pub floors: &'a [String],
    pub junit: &'a RunInfo,
}

/// A run that stopped before it had results (a config, input, pipeline or judge error).
#[derive(Debug)]
pub(crate) struct NotEvaluated<'a> {
    pub tier: &'a str,
    pub error: &'a Error,
    pub junit: &'a RunInfo,
}

/// How the run ended (see the module doc).
#[derive(Debug)]
pub(crate) enum RunOutcome<'a> {
    Decided(Decided<'a>),
    Unbaselined(Unbaselined<'a>),
    NotEvaluated(NotEvaluated<'a>),
}

impl RunOutcome<'_> {
    /// The run's verdict, as every output states it.
    pub(crate) fn verdict(&self) -> RunVerdict {
        match self {
            RunOutcome::Decided(decided) => decided.report.verdict(),
            RunOutcome::Unbaselined(unbaselined) => match unbaselined.files.results.status {
                RunStatus::NoBaseline => RunVerdict::NoBaseline,
                _ => RunVerdict::Error,
            },
            RunOutcome::NotEvaluated(_) => RunVerdict::Error,
        }
    }

    /// The process's exit code.
    pub(crate) fn exit_code(&self) -> i32 {
        self.verdict().exit_code()
    }
}
