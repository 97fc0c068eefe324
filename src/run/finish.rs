//! The second half of a gate run, shared by `gate` and `merge`, in one direction: take the tier's
//! loaded baseline, make it comparable (re-judged when the judges changed), decide, render every
//! report, write.

use crate::baseline::collect;
use crate::baseline::results::{Results, RunStatus};
use crate::config::{Config, Tier};
use crate::error::{Error, Result};
use crate::gate::calibration::Calibration;
use crate::gate::decision::{self, DecidedRun, DecisionInputs, MismatchHint, NextStep};
use crate::input::labels::Label;
use crate::input::{corpus, qrels::Qrels};
use crate::outputs::output_files;
use crate::outputs::output_table;
use crate::outputs::writer::{self, Evaluated, OutputOptions, RunFigures};
use crate::report::junit::RunInfo;
use crate::report::operational;
use crate::report::outcome::{Decided, RunFiles, RunOutcome, Unbaselined};
use crate::run::history_series::{self, Series};
use crate::run::judged_depth;
use crate::run::rejudge::{self, Identities, Rejudging};
use crate::run::repeats;
use crate::run::tier_baseline::{self, Baseline};
use crate::run::tier_labels;

/// Compares `evaluated` with the tier's `baseline` (as [`load_baseline`] or the preflight loaded
/// it), writes results.json, trace.jsonl, junit.xml, summary.md and run-stats.json, and returns
/// the exit code. Without a baseline (the tier's first run) the measured metrics are still
/// written and shown, with the command that accepts them; with an unusable one, too (status
/// `error`), and the baseline's error is returned.
pub(crate) fn finish(
    config: &Config,
    tier: &Tier,
    qrels: &Qrels,
    evaluated: Evaluated,
    options: OutputOptions,
    baseline: Result<Option<Baseline>>,
    labels: Option<&[Label]>,
) -> Result<i32> {
    let mut evaluated = evaluated;
    // What reads the texts (calibration matches labels to answers) reads them before the
    // results are moved out and, with `store_text: false`, stripped of them.
    let measured = match &baseline {
        Ok(Some(_)) => Some(Measured {
            calibrations: tier_labels::calibrations(labels, &tier.metrics, &evaluated.results),
            figures: operational::by_slice(&evaluated.results, &evaluated.operational),
        }),
        _ => None,
    };
    let mut current = stored(tier, &mut evaluated);
    // A baseline made with other conventions is no baseline for these results: refused, and
    // these results are left to accept like a first run's.
    let other_conventions = matches!(&baseline, Ok(Some(found))
        if found.results.provenance.conventions() != current.provenance.conventions());
    let baseline = match baseline {
        Ok(Some(found)) if other_conventions => Err(conventions_refused(
            tier,
            &found.results,
            &current,
            &options,
        )),
        other => other,
    };
    let finishing = Finishing {
        config,
        tier,
        qrels,
        options: &options,
        evaluated: &evaluated,
    };
    let (found, measured) = match (baseline, measured) {
        (Ok(Some(baseline)), Some(measured)) => (baseline, measured),
        (unbaselined, _) => {
            let error = unbaselined
                .err()
                .unwrap_or_else(|| tier_baseline::missing(tier, &accept_hint(tier, &options)));
            // A missing baseline leaves results to accept; an unreadable one leaves results
            // that `accept` refuses (fix or remove the file first).
            current.status = if error.is_missing() || other_conventions {
                RunStatus::NoBaseline
            } else {
                RunStatus::Error
            };
            return finishing.write_unbaselined(&current, &error);
        }
    };
    finishing.write_decided(found, current, measured)
}

/// What a decided run measured besides its results: the judges' calibrations and the
/// operational figures per slice.
struct Measured {
    calibrations: Vec<Calibration>,
    figures: operational::Figures,
}

/// What the steps of a run's end share.
struct Finishing<'a> {
    config: &'a Config,
    tier: &'a Tier,
    qrels: &'a Qrels,
    options: &'a OutputOptions,
    evaluated: &'a Evaluated,
}

impl Finishing<'_> {
    /// A run without a usable baseline (`error` says why): its results and the floors they
    /// would set, written and shown with the command that accepts them.
    fn write_unbaselined(&self, current: &Results, error: &Error) -> Result<i32> {
        let (config, tier, options) = (self.config, self.tier, self.options);
        let floors = decision::first_run_floors(tier, current);
        for line in &floors {
            crate::term::note(format!("floor on this run: {line}"));
        }
        let junit = output_files::run_info(options, &config.path);
        let outcome = RunOutcome::Unbaselined(Unbaselined {
            tier: &tier.name,
            files: run_files(current, self.evaluated),
            problem: error,
            accept_command: options.accept_command(&tier.name),
            floors: &floors,
            junit: &junit,
        });
        writer::write_outcome(&outcome, options)?;
        Ok(outcome.exit_code())
    }

    /// A run with a baseline: made comparable, decided, and every output written.
    fn write_decided(
        &self,
        found: Baseline,
        mut current: Results,
        Measured {
            calibrations,
            figures,
        }: Measured,
    ) -> Result<i32> {
        let (config, tier, options, evaluated) =
            (self.config, self.tier, self.options, self.evaluated);
        let (baseline, rejudged) =
            comparable_baseline(config, tier, self.qrels, found.results, &current, options)?;
        let series = match &options.history {
            Some(dir) => Some(history_series::read_series(dir, tier, &current)?),
            None => None,
        };
        let run_notes = rejudged
            .into_iter()
            .chain(run_notes(evaluated, &figures, &baseline, &current))
            .collect();
        let DecidedRun {
            report,
            baseline_mismatch,
            mismatch,
        } = self.decide(
            (&baseline, &found.sha256),
            &current,
            &calibrations,
            series.as_ref(),
            run_notes,
        );
        let trends = series.map_or_else(Vec::new, |series| series.trends(tier, &current, &report));
        current.status = report.status;
        current.baseline_mismatch = baseline_mismatch;
        let junit = RunInfo::of_run(&config.path, options.started)?;
        let run = RunFigures {
            calibrations: &calibrations,
            operational: &figures,
        };
        let outcome = RunOutcome::Decided(Decided {
            report: &report,
            files: run_files(&current, evaluated),
            run_stats: writer::run_stats(tier, &current, evaluated, &report, run, options),
            junit: &junit,
            trends: &trends,
            // Why nothing was gated is the run's last line, not one warning among others.
            error_last: mismatch.filter(|_| report.status == RunStatus::Error),
        });
        writer::write_outcome(&outcome, options)?;
        Ok(outcome.exit_code())
    }

    /// The run decided against the (comparable) baseline, with the drift checks of the history
    /// `series`.
    fn decide(
        &self,
        (baseline, baseline_sha256): (&Results, &str),
        current: &Results,
        calibrations: &[Calibration],
        series: Option<&Series>,
        run_notes: Vec<String>,
    ) -> DecidedRun {
        let (config, tier, qrels) = (self.config, self.tier, self.qrels);
        let accept_command = self.options.accept_command(&tier.name);
        decision::decide(DecisionInputs {
            config,
            tier,
            baseline,
            current,
            calibrations,
            judged_at_k: judged_depth::of_run(current, qrels),
            model_judged_at_k: judged_depth::model_of_run(current, qrels),
            drift: series.map(|series| series.drift(tier, baseline_sha256)),
            run_notes,
            mismatch: Some(MismatchHint {
                path: &tier.baseline,
                next_step: NextStep::Accept {
                    command: &accept_command,
                    recorded: None,
                },
            }),
        })
    }
}

/// The files of a run with results.
fn run_files<'a>(current: &'a Results, evaluated: &'a Evaluated) -> RunFiles<'a> {
    RunFiles {
        results: current,
        trace: &evaluated.trace,
        embeddings: &evaluated.embeddings,
    }
}

/// The results as the tier stores them, with the run-to-run noise of a repeated run (a baseline
/// accepted from them knows its own noise: `repeats::describe`).
fn stored(tier: &Tier, evaluated: &mut Evaluated) -> Results {
    // Moved, not copied: the per-query records are the run's largest data.
    let mut results = std::mem::replace(&mut evaluated.results, Results::moved_out(&tier.name));
    results.noise = evaluated.noise.clone();
    if tier.store_text {
        results
    } else {
        collect::strip_text(results)
    }
}

/// What accepts the run's results, ending the error of a missing or unusable baseline.
fn accept_hint(tier: &Tier, options: &OutputOptions) -> String {
    format!(
        "run `{}` to accept {}",
        options.accept_command(&tier.name),
        output_table::RESULTS.path(&options.out_dir).display()
    )
}

/// The refusal of a baseline whose values were computed with other conventions (relevance level,
/// no_relevant) than `current`'s, naming both.
fn conventions_refused(
    tier: &Tier,
    baseline: &Results,
    current: &Results,
    options: &OutputOptions,
) -> Error {
    let differences = baseline.provenance.conventions().differences(
        &current.provenance.conventions(),
        ["the baseline", "these results"],
    );
    Error::Usage(format!(
        "{}: {}: values computed with another relevance_level or no_relevant are not \
         comparable; {}",
        tier.baseline.display(),
        differences.join("; "),
        accept_hint(tier, options)
    ))
}

/// The tier's baseline (None: the tier's first run), for a run that had no preflight (`merge`).
pub(crate) fn load_baseline(tier: &Tier, options: &OutputOptions) -> Result<Option<Baseline>> {
    tier_baseline::load(tier, &accept_hint(tier, options))
}

/// The baseline as compared: re-judged by the current judges when they differ from the
/// baseline's and `--allow-judge-change` allows it (an error otherwise), with a note saying so.
fn comparable_baseline(
    config: &Config,
    tier: &Tier,
    qrels: &Qrels,
    baseline: Results,
    current: &Results,
    options: &OutputOptions,
) -> Result<(Results, Option<String>)> {
    let identities = Identities::of(current);
    let changes = rejudge::differences(&Identities::of(&baseline), &identities);
    if changes.is_empty() {
        return Ok((baseline, None));
    }
    if !options.allow_judge_change {
        let accept = options.accept_command(&tier.name);
        return Err(rejudge::refused(&changes, Some(&accept)));
    }
    let corpus = corpus::read_optional(config.corpus.as_deref())?;
    let cache = crate::run::config_judge::run_cache(config)?;
    let with = Rejudging {
        config,
        tier,
        qrels,
        corpus: corpus.as_ref(),
        cache: cache.as_ref(),
        source: &tier.baseline,
    };
    let rejudged = rejudge::rejudge(&baseline, &identities, &with)?;
    let note = format!(
        "the baseline was re-judged with the current judges (--allow-judge-change): {}",
        changes.join("; ")
    );
    Ok((rejudged, Some(note)))
}

/// Notes about the run itself: run-to-run noise, judge consistency, judging work and the
/// operational figures per slice.
fn run_notes(
    evaluated: &Evaluated,
    figures: &operational::Figures,
    baseline: &Results,
    current: &Results,
) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(noise) = &evaluated.noise {
        notes.extend(repeats::describe(noise, baseline, current));
    }
    if let Some(consistency) = &evaluated.judge_consistency {
        notes.extend(consistency.describe());
    }
    if evaluated.judge_tasks > 0 {
        let mut note = format!(
            "judging: {} tasks, {} sent to judges, {} answered from the cache",
            evaluated.judge_tasks,
            evaluated.judge_calls,
            evaluated.judge_tasks.saturating_sub(evaluated.judge_calls)
        );
        for (name, u) in &evaluated.llm_usage {
            note.push_str(&format!(
                "; `{name}`: {} HTTP calls ({} retries), {} prompt and {} completion tokens",
                u.calls, u.retries, u.prompt_tokens, u.completion_tokens
            ));
        }
        notes.push(note);
    }
    notes.extend(operational::describe(figures));
    notes
}
