//! `ragate report`: one self-contained HTML page about a tier's gate run. The checks are decided
//! again from the run's results.json and the tier's baseline (the decision the gate made from the
//! same files), with the drift checks and trend charts of `--history DIR`.

use std::path::{Path, PathBuf};

use crate::baseline::results::{Results, RunStatus};
use crate::baseline::store;
use crate::cli::HtmlReportArgs;
use crate::commands::history;
use crate::config::{self, Config, Tier};
use crate::error::{Error, Result};
use crate::exit_code;
use crate::gate::GateReport;
use crate::gate::calibration::Calibration;
use crate::gate::decision::{self, DecisionInputs, MismatchHint, NextStep};
use crate::outputs::output_files;
use crate::outputs::output_place;
use crate::outputs::output_table;
use crate::outputs::stdout::write_human;
use crate::report::html::{self, History, Page};
use crate::run::history_series::{self, Series};
use crate::run::judged_depth;
use crate::run::rejudge::{self, Identities};
use crate::run::tier_baseline::{self, Baseline};
use crate::run::tier_labels;

/// `--from`: a folder means its results.json; none means the tier's default output folder.
fn results_path(from: Option<PathBuf>) -> Option<PathBuf> {
    from.map(|path| {
        if path.is_dir() {
            output_table::RESULTS.path(&path)
        } else {
            path
        }
    })
}

/// Removes an older report at `out` (one this command wrote), so that a report that fails leaves
/// none behind for CI to upload as current; any other file there is left alone until written.
fn remove_older_report(out: &Path) -> Result<()> {
    let out = &store::resolve_links(out);
    // Only a regular file can be an older report: opening a FIFO or a terminal to read would wait.
    if !out.is_file() {
        return Ok(());
    }
    let Ok(file) = std::fs::File::open(out) else {
        return Ok(());
    };
    let mut start = Vec::with_capacity(1024);
    std::io::Read::read_to_end(&mut std::io::Read::take(file, 1024), &mut start)
        .map_err(|e| Error::io(out, e))?;
    if html::is_report(&String::from_utf8_lossy(&start)) {
        std::fs::remove_file(out).map_err(|e| Error::write(out, e).named_by("--out"))?;
    }
    Ok(())
}

pub(super) fn run(args: HtmlReportArgs) -> Result<i32> {
    remove_older_report(&args.out)?;
    let config = config::load(&args.config)?;
    let tier = config.tier(&args.tier)?;
    let (from, current) = super::baseline::read_tier_results(
        &config.path,
        &tier.name,
        results_path(args.from.clone()),
    )?;
    refuse_inputs(&config, tier, &args, &from)?;
    history::same_config(&config, tier, &from, &current)?;
    let accept = format!(
        "run `ragate baseline accept --tier {} --from {}` to accept these results as the first baseline",
        tier.name,
        from.display()
    );
    let labels = tier_labels::read(tier)?;
    let calibrations = tier_labels::calibrations(labels.as_deref(), &tier.metrics, &current);
    let Some(baseline) = tier_baseline::load(tier, &accept)? else {
        let error = tier_baseline::missing(tier, &accept);
        return first_run(&args, tier, (&from, &current), &calibrations, error);
    };
    refuse_other_judges(tier, &baseline.results, &current, &from)?;
    let series = match &args.history {
        Some(dir) => Some((dir, history_series::read_series(dir, tier, &current)?)),
        None => None,
    };
    let decided = Decided {
        config: &config,
        tier,
        from: &from,
        baseline: &baseline,
        current: &current,
        calibrations: &calibrations,
    };
    let report = decided.report(series.as_ref().map(|(_, series)| series));
    let history = series.map(|(dir, series)| History {
        dir: dir.to_path_buf(),
        now: history_series::current_record(tier, &current),
        records: series.records,
        after_break: series.after_break,
    });
    let page = Page {
        results_path: &from,
        current: &current,
        baseline: Some(&baseline.results),
        no_baseline: None,
        report: &report,
        calibrations: &calibrations,
        history: history.as_ref(),
    };
    write(&args.out, &page)
}

/// A tier's first run: the page shows what was measured and how to accept it (`error`, the
/// missing baseline's).
fn first_run(
    args: &HtmlReportArgs,
    tier: &Tier,
    (from, current): (&Path, &Results),
    calibrations: &[Calibration],
    error: Error,
) -> Result<i32> {
    let report =
        GateReport::without_checks(&tier.name, RunStatus::NoBaseline, tier.gate.inconclusive);
    let page = Page {
        results_path: from,
        current,
        baseline: None,
        no_baseline: Some(match args.history {
            Some(_) => {
                format!(
                    "{error}. The run history (--history) is shown once a baseline is accepted."
                )
            }
            None => error.to_string(),
        }),
        report: &report,
        calibrations,
        history: None,
    };
    write(&args.out, &page)
}

/// A baseline judged by other judges than the results cannot decide the checks again.
fn refuse_other_judges(
    tier: &Tier,
    baseline: &Results,
    current: &Results,
    from: &Path,
) -> Result<()> {
    let changes = rejudge::differences(&Identities::of(baseline), &Identities::of(current));
    if changes.is_empty() {
        return Ok(());
    }
    Err(Error::input(
        &tier.baseline,
        format!(
            "judged by other judges than {} ({}): the report cannot decide the checks again; \
             accept a baseline judged by the current judges first",
            from.display(),
            changes.join("; ")
        ),
    ))
}

/// `--out` may be none of the run's inputs, nor inside a history folder.
fn refuse_inputs(config: &Config, tier: &Tier, args: &HtmlReportArgs, from: &Path) -> Result<()> {
    let mut inputs = output_files::inputs(config, tier, None);
    inputs.push(output_files::Input {
        path: from.to_path_buf(),
        named_by: "the results (--from)".to_string(),
    });
    if let Some(dir) = &args.history {
        inputs.extend(output_files::history_inputs(dir, &tier.name));
    }
    output_files::refuse_input("--out", &args.out, &inputs)?;
    let folder = output_place::parent_dir(&args.out);
    for history in [args.history.as_deref(), config.history_dir.as_deref()] {
        output_place::refuse_history_folder("--out", &args.out, folder, history)?;
    }
    Ok(())
}

/// What the checks are decided again from: the run's results (`from`) and the tier's baseline.
struct Decided<'a> {
    config: &'a Config,
    tier: &'a Tier,
    from: &'a Path,
    baseline: &'a Baseline,
    current: &'a Results,
    calibrations: &'a [Calibration],
}

impl Decided<'_> {
    /// The checks decided again, with the drift checks of the history `series`.
    fn report(&self, series: Option<&Series>) -> GateReport {
        let tier = self.tier;
        let accept_command = format!(
            "ragate baseline accept --tier {} --from {}",
            tier.name,
            self.from.display()
        );
        let (judged_at_k, model_judged_at_k) = judged_depth::of_stored(tier, self.current);
        decision::decide(DecisionInputs {
            config: self.config,
            tier,
            baseline: &self.baseline.results,
            current: self.current,
            calibrations: self.calibrations,
            judged_at_k,
            model_judged_at_k,
            drift: series.map(|series| series.drift(tier, &self.baseline.sha256)),
            run_notes: Vec::new(),
            mismatch: Some(MismatchHint {
                path: &tier.baseline,
                // As the gate said it: the results record whether accepting them would replace
                // the baseline.
                next_step: NextStep::Accept {
                    command: &accept_command,
                    recorded: Some(self.current.baseline_mismatch.is_some()),
                },
            }),
        })
        .report
    }
}

/// Renders `page` into `out` and says so.
fn write(out: &Path, page: &Page<'_>) -> Result<i32> {
    let text = html::render(page)?;
    store::write_atomic(out, &text).map_err(|e| e.named_by("--out"))?;
    write_human(&format!(
        "wrote {} (tier `{}`: {})\n",
        out.display(),
        page.report.tier,
        page.report.verdict().word()
    ))?;
    Ok(exit_code::SUCCESS)
}
