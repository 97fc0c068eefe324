//! The second half of a gate run, shared by `gate` and `merge`, in one direction: load the tier's
//! baseline, make it comparable (re-judged when the judges changed), decide, render every
//! report, write.

use crate::app::history;
use crate::app::output_table;
use crate::app::outputs::{self, Evaluated, OutputOptions, RunFigures};
use crate::app::rejudge::{self, Identities, Rejudging};
use crate::app::repeats;
use crate::baseline::collect;
use crate::baseline::pairing;
use crate::baseline::results::{Results, RunStatus};
use crate::baseline::store;
use crate::config::{CacheMode, Config, Tier};
use crate::error::Result;
use crate::gate::{self, GateReport, calibration, decision};
use crate::input::{corpus, qrels::Qrels};
use crate::judge::cache::JudgeCache;
use crate::report::junit::RunInfo;
use crate::report::operational;

/// The depth of the judged@k coverage report.
const JUDGED_DEPTH: usize = 10;

/// Compares `evaluated` with the tier's baseline, writes results.json, trace.jsonl, junit.xml,
/// summary.md and run-stats.json, and returns the exit code. Without a baseline (the tier's first
/// run) the measured metrics are still written and shown, with the command that accepts them.
pub fn finish(
    config: &Config,
    tier: &Tier,
    qrels: &Qrels,
    evaluated: Evaluated,
    options: OutputOptions,
) -> Result<i32> {
    let mut current = stored(tier, &evaluated);
    let baseline = match load_baseline(tier, &options) {
        Ok(baseline) => baseline,
        Err(error) => {
            // A missing baseline leaves results to accept; an unreadable one leaves results
            // that `accept` refuses (fix or remove the file first).
            current.status = if error.is_missing() {
                RunStatus::NoBaseline
            } else {
                RunStatus::Error
            };
            let floors = decision::first_run_floors(config, tier, &current);
            for line in &floors {
                crate::term::note(format!("floor on this run: {line}"));
            }
            outputs::render_unbaselined(tier, &current, &evaluated, &options, &error, &floors)
                .write(&options)?;
            return Err(error);
        }
    };
    let (baseline, rejudged) =
        comparable_baseline(config, tier, qrels, baseline, &current, &options)?;
    let calibrations = calibration::for_tier(tier, &config.metrics, &evaluated.results)?;
    let mut report = decision::decide(config, tier, &baseline, &current, &calibrations);
    report.notes.extend(rejudged);
    let figures = operational::by_slice(&evaluated.results, &evaluated.operational);
    add_run_notes(&mut report, &evaluated, &figures, &baseline, &current);
    report.notes.extend(calibration::judges_note(
        &config.metrics,
        &current.provenance.judges,
        &calibrations,
    ));
    report.judged_at_k =
        gate::judged_at_k(&current, qrels, JUDGED_DEPTH).map(|share| (JUDGED_DEPTH, share));
    if let Some((k, share)) = report.judged_at_k.filter(|(_, share)| *share < 0.5) {
        report.warnings.push(format!(
            "judged@{k} is {share:.2}: most retrieved docs are unjudged and count as irrelevant, \
             so recall and nDCG look worse than they are; judge more docs"
        ));
    }
    let trends = match &options.history {
        Some(dir) => history::apply_to_gate(dir, tier, &current, &mut report)?,
        None => Vec::new(),
    };
    current.status = report.status;
    current.baseline_mismatch = decision::baseline_mismatch(&report, &current);
    let acceptable = current.baseline_mismatch.is_some() || report.status != RunStatus::Error;
    let next_step = pairing::next_step(&options.accept_command(&tier.name), acceptable);
    let mismatch =
        decision::mismatch_message(&report, &baseline, &current, &tier.baseline, &next_step);
    if let Some(message) = &mismatch {
        report.warnings.insert(0, message.clone());
    }
    let junit = RunInfo::of_run(&config.path, options.started)?;
    let run = RunFigures {
        calibrations: &calibrations,
        operational: &figures,
        junit: &junit,
        trends: &trends,
    };
    let mut outputs = outputs::render(tier, &current, &evaluated, &report, run, &options);
    // Why nothing was gated is the run's last line, not one warning among others.
    if let Some(message) = mismatch.filter(|_| report.status == RunStatus::Error) {
        outputs.error_last(message);
    }
    outputs.write(&options)?;
    Ok(report.exit_code())
}

/// The results as the tier stores them, with the run-to-run noise of a repeated run (a baseline
/// accepted from them knows its own noise: `repeats::describe`).
fn stored(tier: &Tier, evaluated: &Evaluated) -> Results {
    let mut results = evaluated.results.clone();
    results.noise = evaluated.noise.clone();
    if tier.store_text {
        results
    } else {
        collect::strip_text(results)
    }
}

/// The tier's baseline, which must be a baseline of this tier.
fn load_baseline(tier: &Tier, options: &OutputOptions) -> Result<Results> {
    let accept_hint = format!(
        "run `{}` to accept {}",
        options.accept_command(&tier.name),
        output_table::RESULTS.path(&options.out_dir).display()
    );
    let baseline = store::read(&tier.baseline, &accept_hint)?;
    decision::check_baseline_tier(&baseline, &tier.name, &tier.baseline)?;
    Ok(baseline)
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
    let cache = match config.cache.mode {
        CacheMode::Off => None,
        mode => Some(JudgeCache::open(&config.cache.path, mode)?),
    };
    let with = Rejudging {
        config,
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
fn add_run_notes(
    report: &mut GateReport,
    evaluated: &Evaluated,
    figures: &operational::Figures,
    baseline: &Results,
    current: &Results,
) {
    if let Some(noise) = &evaluated.noise {
        report
            .notes
            .extend(repeats::describe(noise, baseline, current));
    }
    if let Some(consistency) = &evaluated.judge_consistency {
        report.notes.extend(consistency.describe());
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
        report.notes.push(note);
    }
    report.notes.extend(operational::describe(figures));
}
