//! `ragate history add` and `ragate history show` (a run's history series, for `gate --history
//! DIR`, is read by [`crate::run::history_series`]).

use std::path::{Path, PathBuf};

use crate::baseline::results::Results;
use crate::cli::{GateFormat, HistoryAddArgs, HistoryShowArgs};
use crate::config::{self, Config, Tier};
use crate::error::{Error, Result};
use crate::exit_code;
use crate::gate::decision::{self, DecisionInputs};
use crate::gate::verdict::CheckOutcome;
use crate::history::record::{Record, RecordInputs};
use crate::history::{store, table};
use crate::outputs::stdout::write_document;
use crate::outputs::stdout::write_human;
use crate::outputs::stdout::write_stdout;
use crate::run::history_series::{existing_dir, gated_metrics};
use crate::run::rejudge::{self, Identities};
use crate::run::tier_baseline;
use crate::run::tier_labels;

/// `--history` (or its alias `--dir`), else the config's `history: { dir }`, else an error saying
/// how to give one.
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
            "no history directory: pass --history DIR, or set `history: {{ dir: ... }}` in {}",
            config_path.display()
        ))
    })
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
        &from,
        results.provenance.accepted_utc.as_deref(),
    )?;
    let record = Record::of(
        &results,
        RecordInputs {
            gated: &gated_metrics(tier),
            time,
            baseline_sha256,
            checks: checks.iter().map(CheckOutcome::recorded).collect(),
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
    let calibrations = tier_labels::calibrations(labels.as_deref(), &tier.metrics, results);
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
        "pass the directory `ragate history add` writes to (--history, or `history: { dir }`)",
    )?;
    let records = store::read_tier(&dir, &args.tier)?;
    match args.format {
        GateFormat::Table => write_stdout(&table::render_table(&args.tier, &records, args.last))?,
        GateFormat::Json => write_document(&table::render_json(&args.tier, &records, args.last))?,
    }
    Ok(exit_code::SUCCESS)
}
