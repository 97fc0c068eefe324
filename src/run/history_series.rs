//! What `gate --history DIR` (and `report --history DIR`) adds to a run: the history series of
//! the tier that its drift checks and trends are made of, and the run as a record of it.

use std::path::Path;

use crate::baseline::results::Results;
use crate::config::Tier;
use crate::error::{Error, Result};
use crate::gate::GateReport;
use crate::gate::drift::{self, DriftInputs};
use crate::history::record::{Record, RecordInputs};
use crate::history::sparkline::Trend;
use crate::history::store;
use crate::metrics::metric::Metric;

/// The gated metrics of `tier` (those its rules name, calibrated estimates aside), in rule order.
pub(crate) fn gated_metrics(tier: &Tier) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for rule in &tier.gate.rules {
        let name = rule.metric.to_string();
        if !matches!(rule.metric, Metric::Ppi(_)) && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The history directory must exist (a mistyped path must not read as an empty history).
pub(crate) fn existing_dir(dir: &Path, next_step: &str) -> Result<()> {
    if dir.is_dir() {
        Ok(())
    } else {
        Err(Error::missing(
            dir,
            format!("no history directory here: {next_step}"),
        ))
    }
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
            checks: Vec::new(),
            with_queries: false,
        },
    )
}
