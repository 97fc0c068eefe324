//! `ragate history add` and `ragate history show`, and what `gate --history DIR` adds to a run:
//! the history series that its drift checks and trends are made of.

use std::path::{Path, PathBuf};

use crate::baseline::results::Results;
use crate::cli::{GateFormat, HistoryAddArgs, HistoryShowArgs};
use crate::config::{self, Config, Tier};
use crate::error::{Error, Result};
use crate::exit_code;
use crate::gate::GateReport;
use crate::gate::decision::{self, DecisionInputs};
use crate::gate::drift::{self, DriftInputs};
use crate::gate::verdict::CheckOutcome;
use crate::history::record::{Record, RecordInputs};
use crate::history::sparkline::Trend;
use crate::history::{store, table};
use crate::metrics::metric::Metric;
use crate::outputs::stdout::write_document;
use crate::outputs::stdout::write_human;
use crate::outputs::stdout::write_stdout;
use crate::run::rejudge::{self, Identities};
use crate::run::tier_baseline;
use crate::run::tier_labels;

/// The gated metrics of `tier` (those its rules name, calibrated estimates aside), in rule order.
fn gated_metrics(tier: &Tier) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for rule in &tier.gate.rules {
        let name = rule.metric.to_string();
        if !matches!(rule.metric, Metric::Ppi(_)) && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// `--dir`, else the config's `history: { dir }`, else an error saying how to give one.
fn history_dir(
    given: Option<&Path>,
    config: Option<&Config>,
    config_path: &Path,
) -> Result<PathBuf> {
    if let Some(dir) = given {
        return Ok(dir.to_path_buf());
    }
    config.and_then(|c| c.history_dir.clone()).ok_or_else(|| {
        Error::Usage(format!(
            "no history directory: pass --dir DIR, or set `history: {{ dir: ... }}` in {}",
            config_path.display()
        ))
    })
}

/// The history directory must exist (a mistyped path must not read as an empty history).
fn existing_dir(dir: &Path, next_step: &str) -> Result<()> {
    if dir.is_dir() {
        Ok(())
    } else {
        Err(Error::missing(
            dir,
            format!("no history directory here: {next_step}"),
        ))
    }
}

/// Results made with another config than `config` cannot have their checks decided again.
pub(crate) fn same_config(
    config: &Config,
    tier: &Tier,
    from: &Path,
    results: &Results,
) -> Result<()> {
    if results.provenance.config_hash != tier.config_hash {
        return Err(Error::input(
            from,
            format!(
                "these results were made with another config (config hash {}, {} has {}): the \
                 checks cannot be decided again with it; use the config the gate ran with",
                crate::report::format::short_hash(&results.provenance.config_hash),
                config.path.display(),
                crate::report::format::short_hash(&tier.config_hash)
            ),
        ));
    }
    Ok(())
}

pub(crate) fn add(args: HistoryAddArgs) -> Result<i32> {
    let config = config::load(&args.config)?;
    let tier = config.tier(&args.tier)?;
    let dir = history_dir(args.dir.as_deref(), Some(&config), &args.config)?;
    let (from, results) = super::baseline::read_tier_results(&config.path, &tier.name, args.from)?;
    same_config(&config, tier, &from, &results)?;
    let (checks, baseline_sha256) = checks_against_baseline(&config, tier, &results)?;
    let source_date_epoch = crate::env::source_date_epoch()?;
    let time = store::record_time(
        source_date_epoch.as_deref(),
        results.provenance.accepted_utc.as_deref(),
    )?;
    let record = Record::of(
        &results,
        RecordInputs {
            gated: &gated_metrics(tier),
            time,
            baseline_sha256,
            checks: &checks,
            with_queries: args.with_queries,
        },
    );
    let path = store::add(&dir, &record)?;
    write_human(&format!("recorded {}\n", path.display()))?;
    Ok(exit_code::SUCCESS)
}

/// The run's checks decided against the tier's baseline as it is now, and the baseline file's
/// sha256; none without a baseline, or when the baseline was judged by other judges (a warning
/// says so).
fn checks_against_baseline(
    config: &Config,
    tier: &Tier,
    results: &Results,
) -> Result<(Vec<CheckOutcome>, Option<String>)> {
    let Some(baseline) = tier_baseline::load(tier, "")? else {
        crate::term::warning(format!(
            "tier `{}` has no baseline ({}): the record holds means, not checks",
            tier.name,
            tier.baseline.display()
        ));
        return Ok((Vec::new(), None));
    };
    let changes =
        rejudge::differences(&Identities::of(&baseline.results), &Identities::of(results));
    if !changes.is_empty() {
        crate::term::warning(format!(
            "the baseline was judged by other judges than these results ({}): the record \
             holds means, not checks",
            changes.join("; ")
        ));
        return Ok((Vec::new(), None));
    }
    let labels = tier_labels::read(tier)?;
    let calibrations = tier_labels::calibrations(labels.as_deref(), &config.metrics, results);
    let decision = decision::decide(DecisionInputs {
        config,
        tier,
        baseline: &baseline.results,
        current: results,
        calibrations: &calibrations,
        judged_at_k: None,
        model_judged_at_k: None,
        drift: None,
        run_notes: Vec::new(),
        mismatch: None,
    });
    Ok((decision.report.outcomes, Some(baseline.sha256)))
}

pub(crate) fn show(args: HistoryShowArgs) -> Result<i32> {
    let config = match &args.dir {
        Some(_) => None,
        None => Some(config::load(&args.config)?),
    };
    let dir = history_dir(args.dir.as_deref(), config.as_ref(), &args.config)?;
    existing_dir(
        &dir,
        "pass the directory `ragate history add` writes to (--dir, or `history: { dir }`)",
    )?;
    let records = store::read_tier(&dir, &args.tier)?;
    match args.format {
        GateFormat::Table => write_stdout(&table::render_table(&args.tier, &records, args.last))?,
        GateFormat::Json => write_document(&table::render_json(&args.tier, &records, args.last))?,
    }
    Ok(exit_code::SUCCESS)
}

/// The runs of the current run's series in a history directory (`--history DIR`): what its drift
/// checks and trends are made of.
pub(crate) struct Series {
    /// The records of the series, oldest first (the current run left out when it was recorded
    /// already).
    pub records: Vec<Record>,
    /// Whether older runs were left out at a series break.
    pub after_break: bool,
}

impl Series {
    /// The drift inputs of a run compared with the baseline whose file has `baseline_sha256`.
    pub(crate) fn drift<'a>(&'a self, tier: &Tier, baseline_sha256: &'a str) -> DriftInputs<'a> {
        DriftInputs {
            series: &self.records,
            baseline_sha256,
            policy: tier.drift,
        }
    }

    /// The trends (sparkline values) of the decided run's `all` checks.
    pub(crate) fn trends(&self, tier: &Tier, current: &Results, report: &GateReport) -> Vec<Trend> {
        let now = current_record(tier, current);
        drift::trends(&report.outcomes, &self.records, self.after_break, &now)
    }
}

/// The series of `current` in the history directory `dir`, which must exist.
pub(crate) fn read_series(dir: &Path, tier: &Tier, current: &Results) -> Result<Series> {
    existing_dir(
        dir,
        "create it (an empty directory starts the history), or pass the directory `ragate history add` writes to",
    )
    .map_err(|e| e.named_by("--history"))?;
    let records = store::read_tier(dir, &tier.name)?;
    let now = current_record(tier, current);
    let (records, after_break) = drift::series_of(&records, current, &now);
    Ok(Series {
        records,
        after_break,
    })
}

/// The current run as a record (its means; no time, checks or baseline).
pub(crate) fn current_record(tier: &Tier, current: &Results) -> Record {
    Record::of(
        current,
        RecordInputs {
            gated: &gated_metrics(tier),
            time: String::new(),
            baseline_sha256: None,
            checks: &[],
            with_queries: false,
        },
    )
}
