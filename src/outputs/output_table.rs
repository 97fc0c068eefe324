//! The registry of a `gate` or `merge` run's outputs: every file it may write into its output
//! directory (what the run does when one of its inputs is there) and every output of a finished
//! run ([`OUTPUTS`]: where it goes and the one function that renders it from the run's
//! outcome). The writer (`writer::write_outcome`), the removal of a previous run's files and the
//! refusal of an output over an input (`output_files`) all read it. A new output is one entry
//! here and one render function in `report::run_outputs` (or a module of its own).

use std::path::{Path, PathBuf};

use crate::report::run_outputs::{self, Render, Stream};

/// What a run does when one of its inputs is where it would write a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OverInput {
    /// The run writes the file whatever it reads: an input there is refused before anything runs.
    Refuse,
    /// The run reads the file rather than writes it (`--run out/run.jsonl`, the shard a merge
    /// combines): the input stays, and only a file that is no input is removed.
    Keep,
}

/// One file a run may write into its output directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OutputFile {
    /// The file name in the output directory.
    pub name: &'static str,
    pub over_input: OverInput,
}

impl OutputFile {
    /// Where the file goes in `out_dir`.
    pub(crate) fn path(self, out_dir: &Path) -> PathBuf {
        out_dir.join(self.name)
    }
}

/// Written by every finished run (what `baseline accept` promotes).
pub(crate) const RESULTS: OutputFile = OutputFile {
    name: "results.json",
    over_input: OverInput::Refuse,
};

/// Written by a gated run, or a failed one (its setup error).
pub(crate) const JUNIT: OutputFile = OutputFile {
    name: "junit.xml",
    over_input: OverInput::Refuse,
};

/// Written by every finished run, or a failed one (its error).
pub(crate) const SUMMARY: OutputFile = OutputFile {
    name: "summary.md",
    over_input: OverInput::Refuse,
};

/// Written by every finished run (one line per query).
pub(crate) const TRACE: OutputFile = OutputFile {
    name: "trace.jsonl",
    over_input: OverInput::Refuse,
};

/// Written by a gated run (sizes, calibration, judge usage, timings).
pub(crate) const RUN_STATS: OutputFile = OutputFile {
    name: "run-stats.json",
    over_input: OverInput::Refuse,
};

/// Written by a finished run with embedding-based answer relevance.
pub(crate) const EMBEDDINGS: OutputFile = OutputFile {
    name: "embeddings.jsonl",
    over_input: OverInput::Refuse,
};

/// Written by `gate --shard I/N` (read by `merge`).
pub(crate) const SHARD: OutputFile = OutputFile {
    name: "shard.json",
    over_input: OverInput::Keep,
};

/// Written by the tier's `pipeline:` (its first repeat; later ones write `run.<N>.jsonl`).
pub(crate) const RUN: OutputFile = OutputFile {
    name: "run.jsonl",
    over_input: OverInput::Keep,
};

/// Every file a run may write into its output directory (besides the `run.<N>.jsonl` of later
/// repeats: [`repeat_run`]).
pub(crate) const ALL: [OutputFile; 8] = [
    RESULTS, JUNIT, SUMMARY, TRACE, RUN_STATS, EMBEDDINGS, SHARD, RUN,
];

/// Where an output of a finished run goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sink {
    /// A file in the output directory (`--out`).
    OutDir(OutputFile),
    /// The file `--junit FILE` names, when given.
    JunitOption,
    /// Appended to `$GITHUB_STEP_SUMMARY`, when GitHub Actions provides one.
    StepSummary,
    /// stdout, in the format `--format` asked for.
    Stdout,
    /// GitHub workflow commands, one a line, under GitHub Actions only.
    Annotations,
    /// `warning:` lines on stderr.
    Warnings,
    /// `error:` lines on stderr, after everything else.
    Errors,
}

/// One output of a finished run: where it goes and what renders it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Output {
    pub sink: Sink,
    pub render: Rendering,
}

/// How an output is rendered: as texts, or (a large file) written as it is encoded.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Rendering {
    Text(Render),
    Streamed(Stream),
}

/// Every output of a finished run, in the order they are written: files first (each whole or
/// not at all), then the step summary, then the streams.
pub(crate) const OUTPUTS: [Output; 12] = [
    Output {
        sink: Sink::OutDir(RESULTS),
        render: Rendering::Streamed(run_outputs::results_json),
    },
    Output {
        sink: Sink::OutDir(TRACE),
        render: Rendering::Streamed(run_outputs::trace_jsonl),
    },
    Output {
        sink: Sink::OutDir(EMBEDDINGS),
        render: Rendering::Text(run_outputs::embeddings_jsonl),
    },
    Output {
        sink: Sink::JunitOption,
        render: Rendering::Text(run_outputs::junit_xml),
    },
    Output {
        sink: Sink::OutDir(JUNIT),
        render: Rendering::Text(run_outputs::junit_xml),
    },
    Output {
        sink: Sink::OutDir(SUMMARY),
        render: Rendering::Text(run_outputs::summary_md),
    },
    Output {
        sink: Sink::OutDir(RUN_STATS),
        render: Rendering::Text(run_outputs::run_stats_json),
    },
    Output {
        sink: Sink::StepSummary,
        render: Rendering::Text(run_outputs::summary_md),
    },
    Output {
        sink: Sink::Warnings,
        render: Rendering::Text(run_outputs::warnings),
    },
    Output {
        sink: Sink::Annotations,
        render: Rendering::Text(run_outputs::annotations),
    },
    Output {
        sink: Sink::Stdout,
        render: Rendering::Text(run_outputs::stdout),
    },
    Output {
        sink: Sink::Errors,
        render: Rendering::Text(run_outputs::errors),
    },
];

/// The run file the pipeline writes in `out_dir` on its `repeat`-th run (from 1):
/// `run.jsonl`, then `run.2.jsonl`, ...
pub(crate) fn repeat_run(out_dir: &Path, repeat: usize) -> PathBuf {
    match repeat {
        1 => RUN.path(out_dir),
        n => out_dir.join(format!("run.{n}.jsonl")),
    }
}

/// Whether `name` is the run file of a later repeat (`run.<N>.jsonl`, N >= 2), which a previous
/// run with more repeats may have left.
pub(crate) fn is_later_repeat_run(name: &str) -> bool {
    let Some(repeat) = name
        .strip_prefix("run.")
        .and_then(|n| n.strip_suffix(".jsonl"))
    else {
        return false;
    };
    repeat.bytes().all(|b| b.is_ascii_digit()) && repeat.parse::<usize>().is_ok_and(|n| n >= 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_names_each_file_once_and_the_repeat_runs_follow_the_first() {
        let mut names: Vec<&str> = ALL.iter().map(|file| file.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len(), "{names:?}");
        let out = Path::new("out");
        assert_eq!(repeat_run(out, 1), out.join("run.jsonl"));
        assert_eq!(repeat_run(out, 3), out.join("run.3.jsonl"));
        assert!(is_later_repeat_run("run.2.jsonl"));
        assert!(is_later_repeat_run("run.12.jsonl"));
        for name in [
            "run.jsonl",
            "run.1.jsonl",
            "run.0.jsonl",
            "run.x.jsonl",
            "run.+3.jsonl",
        ] {
            assert!(!is_later_repeat_run(name), "{name}");
        }
    }

    #[test]
    fn every_file_a_finished_run_writes_is_in_the_table_and_every_sink_has_an_output() {
        for output in &OUTPUTS {
            if let Sink::OutDir(file) = output.sink {
                assert!(ALL.contains(&file), "{}", file.name);
            }
        }
        for sink in [
            Sink::JunitOption,
            Sink::StepSummary,
            Sink::Stdout,
            Sink::Annotations,
            Sink::Warnings,
            Sink::Errors,
        ] {
            let count = OUTPUTS.iter().filter(|o| o.sink == sink).count();
            assert_eq!(count, 1, "{sink:?}");
        }
    }

    #[test]
    fn only_the_files_a_run_may_read_keep_an_input() {
        let kept: Vec<&str> = ALL
            .iter()
            .filter(|file| file.over_input == OverInput::Keep)
            .map(|file| file.name)
            .collect();
        assert_eq!(kept, ["shard.json", "run.jsonl"]);
    }
}
