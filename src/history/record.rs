//! One run of a tier as the history keeps it: when and from what it ran (time, commit, config
//! hash, judges), per gated metric and slice the mean with its 95% interval and n, and every
//! check's status, delta and standard error against the baseline of the day. Compact: no
//! per-query values unless asked (`--with-queries`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::baseline::results::{Results, RunStatus, check_value};
use crate::error::shorten;
use crate::metrics::metric::{Metric, UnknownMetric};
use crate::stats::{self, normal};

/// The format tag of a history record.
pub const FORMAT: &str = "ragate-history/1";

/// A slice's mean of one metric, with its 95% interval (normal approximation over the queries:
/// mean ± 1.96 sd / sqrt(n)) and n.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SliceMean {
    /// The mean over the slice's queries that have a value.
    pub mean: f64,
    /// `[low, high]`; the mean twice when n < 2.
    pub interval: [f64; 2],
    /// How many queries the mean is over.
    pub n: usize,
}

/// One check of the run, decided against the tier's baseline when the record was added.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedCheck {
    /// `metric [slice]`, as the gate names it.
    pub name: String,
    /// The metric's name.
    pub metric: String,
    /// `all` or `field=value`.
    pub slice: String,
    /// The gate's status word (`pass`, `fail`, `inconclusive`, `improved`, `skipped`, `error`).
    pub status: String,
    /// Paired queries.
    pub n: usize,
    /// `current - baseline` over the paired queries (absent when not evaluated).
    pub delta: Option<f64>,
    /// Standard error of the mean paired worsening (absent when not evaluated).
    pub se: Option<f64>,
    /// The tolerated worsening, when the rule limits the change.
    pub limit: Option<f64>,
}

/// One run of a tier, as stored in `<dir>/<tier>/<time>-<commit>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// [`FORMAT`].
    pub format: String,
    /// The tier the run evaluated.
    pub tier: String,
    /// UTC, RFC 3339 in whole seconds (`2026-12-01T03:00:00Z`).
    pub time: String,
    /// The commit the run evaluated (full hash), when known.
    pub commit: Option<String>,
    /// The ragate version that ran the gate.
    pub ragate_version: String,
    /// The tier's config hash: a change starts a new series.
    pub config_hash: String,
    /// The judges behind the answer metrics (name -> identity): a change starts a new series.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub judges: BTreeMap<String, String>,
    /// The embeddings endpoint behind answer_relevance, when any: a change starts a new series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<String>,
    /// The run's status as the gate decided it.
    pub status: RunStatus,
    /// sha256 of the baseline file the checks were decided against (absent: no baseline).
    pub baseline_sha256: Option<String>,
    /// Gated metric -> slice (`all`, `class=literal`) -> mean, interval, n.
    pub metrics: BTreeMap<String, BTreeMap<String, SliceMean>>,
    /// The checks, in the gate's order.
    pub checks: Vec<RecordedCheck>,
    /// qid -> metric -> value (`--with-queries` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queries: Option<BTreeMap<String, BTreeMap<String, f64>>>,
}

/// The status words a record may hold (the gate's, lower case).
pub const STATUS_WORDS: [&str; 7] = [
    "pass",
    "improved",
    "inconclusive",
    "fail",
    "skipped",
    "error",
    "warn",
];

/// The values `name` takes (None: unbounded), or why the name is not a metric.
fn value_range(name: &str) -> Result<Option<std::ops::RangeInclusive<f64>>, String> {
    let metric: Metric = name
        .parse()
        .map_err(|e: UnknownMetric| format!("{e}: expected a metric ragate computes"))?;
    Ok(metric.value_range())
}

/// The mean, 95% interval and n of `values`.
pub fn slice_mean(values: &[f64]) -> SliceMean {
    let mean = stats::mean(values);
    let half = if values.len() < 2 {
        0.0
    } else {
        normal::quantile(0.975) * stats::sample_sd(values) / (values.len() as f64).sqrt()
    };
    SliceMean {
        mean,
        interval: [mean - half, mean + half],
        n: values.len(),
    }
}

/// What a record is made of besides the results.
pub struct RecordInputs<'a> {
    /// The gated metrics, in config order.
    pub gated: &'a [String],
    /// When the run ran: UTC, RFC 3339 in whole seconds.
    pub time: String,
    /// sha256 of the baseline the checks were decided against.
    pub baseline_sha256: Option<String>,
    /// The run's checks against that baseline (none without one), as the gate records them.
    pub checks: Vec<RecordedCheck>,
    /// Keep every query's metric values.
    pub with_queries: bool,
}

impl Record {
    /// The record of `results`: means per slice of every gated metric, from the per-query values.
    pub fn of(results: &Results, inputs: RecordInputs<'_>) -> Record {
        let mut metrics: BTreeMap<String, BTreeMap<String, SliceMean>> = BTreeMap::new();
        for metric in inputs.gated {
            let mut slices: BTreeMap<String, Vec<f64>> = BTreeMap::new();
            for record in results.queries.values() {
                let Some(&value) = record.metrics.get(metric) else {
                    continue;
                };
                slices.entry("all".to_string()).or_default().push(value);
                for (field, slice_value) in &record.slices {
                    slices
                        .entry(format!("{field}={slice_value}"))
                        .or_default()
                        .push(value);
                }
            }
            let means = slices
                .into_iter()
                .map(|(slice, values)| (slice, slice_mean(&values)))
                .collect();
            metrics.insert(metric.clone(), means);
        }
        let queries = inputs.with_queries.then(|| {
            results
                .queries
                .iter()
                .map(|(qid, q)| (qid.clone(), q.metrics.clone()))
                .collect()
        });
        Record {
            format: FORMAT.to_string(),
            tier: results.tier.clone(),
            time: inputs.time,
            commit: results.provenance.git_commit.clone(),
            ragate_version: results.provenance.ragate_version.clone(),
            config_hash: results.provenance.config_hash.clone(),
            judges: results.provenance.judges.clone(),
            embeddings: results.provenance.embeddings.clone(),
            status: results.status,
            baseline_sha256: inputs.baseline_sha256,
            metrics,
            checks: inputs.checks,
            queries,
        }
    }

    /// Pretty JSON with a final newline: the bytes written.
    pub fn to_json(&self) -> String {
        let mut text = crate::json_text::pretty(self);
        text.push('\n');
        text
    }

    /// Checks what serde cannot: the format, the time, the status words, finite numbers.
    pub fn check(&self) -> Result<(), String> {
        if self.format != FORMAT {
            return Err(format!(
                "format `{}`: expected `{FORMAT}` (a record written by another ragate version, or \
                 not a ragate history record)",
                crate::error::shorten(&self.format)
            ));
        }
        humantime::parse_rfc3339(&self.time).map_err(|e| {
            format!(
                "time `{}`: {e}: expected UTC RFC 3339 such as 2026-12-01T03:00:00Z",
                crate::error::shorten(&self.time)
            )
        })?;
        for (metric, slices) in &self.metrics {
            self.check_metric(metric, slices)?;
        }
        for (qid, values) in self.queries.iter().flatten() {
            for (name, &value) in values {
                let at = || format!("queries.{}.{}", shorten(qid), shorten(name));
                let range = value_range(name).map_err(|m| format!("{}: {m}", at()))?;
                check_value(value, range.as_ref())
                    .map_err(|m| format!("{}: the value {m}", at()))?;
            }
        }
        for check in &self.checks {
            if !STATUS_WORDS.contains(&check.status.as_str()) {
                return Err(format!(
                    "check `{}` has status `{}`: expected one of {}",
                    crate::error::shorten(&check.name),
                    crate::error::shorten(&check.status),
                    STATUS_WORDS.join(", ")
                ));
            }
            let numbers = [check.delta, check.se, check.limit];
            if numbers.iter().flatten().any(|v| !v.is_finite()) {
                return Err(format!(
                    "check `{}`: expected finite numbers",
                    crate::error::shorten(&check.name)
                ));
            }
        }
        Ok(())
    }

    /// One metric's slices: a mean in the metric's values inside its interval, and an n that
    /// fits (at least 1, no slice over more queries than `all`, `all` over no more queries than
    /// the record lists when it lists them).
    fn check_metric(
        &self,
        metric: &str,
        slices: &BTreeMap<String, SliceMean>,
    ) -> Result<(), String> {
        let range = value_range(metric).map_err(|m| format!("metrics.{}: {m}", shorten(metric)))?;
        let all_n = slices.get("all").map(|m| m.n);
        let listed = self.queries.as_ref().map(BTreeMap::len);
        for (slice, m) in slices {
            let at = format!("metrics.{}.{}", shorten(metric), shorten(slice));
            if !(m.mean.is_finite() && m.interval.iter().all(|v| v.is_finite())) {
                return Err(format!("{at}: expected finite numbers"));
            }
            check_value(m.mean, range.as_ref()).map_err(|e| format!("{at}: the mean {e}"))?;
            if !(m.interval[0] <= m.mean && m.mean <= m.interval[1]) {
                return Err(format!(
                    "{at}: the interval [{}, {}] does not hold the mean {}: expected low <= mean <= high",
                    m.interval[0], m.interval[1], m.mean
                ));
            }
            let most = if slice == "all" { listed } else { all_n };
            if m.n == 0 || most.is_some_and(|most| m.n > most) {
                let bound = match (slice == "all", most) {
                    (_, None) => String::new(),
                    (true, Some(most)) => {
                        format!(" and at most the {most} queries the record lists")
                    }
                    (false, Some(most)) => format!(" and at most the `all` n, {most}"),
                };
                return Err(format!("{at}: n is {}: expected at least 1{bound}", m.n));
            }
        }
        Ok(())
    }

    /// The `all` mean of `metric`, when the record has it.
    pub fn mean_all(&self, metric: &str) -> Option<f64> {
        Some(self.metrics.get(metric)?.get("all")?.mean)
    }

    /// The recorded check of `metric` on `slice`.
    pub fn check_of(&self, metric: &str, slice: &str) -> Option<&RecordedCheck> {
        self.checks
            .iter()
            .find(|c| c.metric == metric && c.slice == slice)
    }

    /// Whether `other` records the same run: the same commit (known), config hash and means.
    pub fn is_same_run(&self, other: &Record) -> bool {
        self.commit.is_some()
            && self.commit == other.commit
            && self.config_hash == other.config_hash
            && self.metrics == other.metrics
    }

    /// The first 8 characters of the commit, or `unknown`.
    pub fn short_commit(&self) -> String {
        self.commit
            .as_deref()
            .map_or("unknown".to_string(), |c| c.chars().take(8).collect())
    }

    /// What makes runs comparable: config hash, judges and embeddings. A change is a series
    /// break; the text says what changed.
    pub fn break_from(&self, previous: &Record) -> Option<String> {
        let mut changes = Vec::new();
        if self.config_hash != previous.config_hash {
            changes.push(format!(
                "config hash {} -> {}",
                crate::format::short_hash(&previous.config_hash),
                crate::format::short_hash(&self.config_hash)
            ));
        }
        let names: std::collections::BTreeSet<&String> =
            self.judges.keys().chain(previous.judges.keys()).collect();
        for name in names {
            let (before, now) = (previous.judges.get(name), self.judges.get(name));
            if before != now {
                changes.push(format!(
                    "judge `{name}` {} -> {}",
                    before.map_or("(none)", String::as_str),
                    now.map_or("(none)", String::as_str)
                ));
            }
        }
        if self.embeddings != previous.embeddings {
            changes.push(format!(
                "embeddings {} -> {}",
                previous.embeddings.as_deref().unwrap_or("(none)"),
                self.embeddings.as_deref().unwrap_or("(none)")
            ));
        }
        (!changes.is_empty()).then(|| changes.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_mean_gives_a_normal_interval_and_a_point_for_one_value() {
        let m = slice_mean(&[0.0, 1.0, 0.0, 1.0]);
        assert_eq!(m.n, 4);
        assert!((m.mean - 0.5).abs() < 1e-12);
        // sd = 0.57735, se = 0.288675, half-width 1.95996 * se = 0.565789
        assert!((m.interval[0] - (0.5 - 0.565_789)).abs() < 1e-5, "{m:?}");
        assert!((m.interval[1] - (0.5 + 0.565_789)).abs() < 1e-5, "{m:?}");
        assert_eq!(slice_mean(&[0.3]).interval, [0.3, 0.3]);
    }

    fn record(metric: &str, slices: &[(&str, f64, usize)]) -> Record {
        let means = slices
            .iter()
            .map(|&(slice, mean, n)| {
                (
                    slice.to_string(),
                    SliceMean {
                        mean,
                        interval: [mean, mean],
                        n,
                    },
                )
            })
            .collect();
        Record {
            format: FORMAT.to_string(),
            tier: "smoke".into(),
            time: "2026-12-01T03:00:00Z".into(),
            commit: None,
            ragate_version: "0".into(),
            config_hash: "h".into(),
            judges: BTreeMap::new(),
            embeddings: None,
            status: RunStatus::Pass,
            baseline_sha256: None,
            metrics: BTreeMap::from([(metric.to_string(), means)]),
            checks: Vec::new(),
            queries: None,
        }
    }

    #[test]
    fn recorded_means_must_lie_in_the_metric_values_with_an_n_that_fits() {
        assert_eq!(
            record("recall@5", &[("all", 0.5, 4), ("class=a", 1.0, 2)]).check(),
            Ok(())
        );
        assert_eq!(record("latency_ms", &[("all", 1500.0, 4)]).check(), Ok(()));
        let cases = [
            (
                record("recall@5", &[("all", 1.5, 4)]),
                "metrics.recall@5.all: the mean is 1.5: expected a number in [0, 1]",
            ),
            (
                record("latency_ms", &[("all", -3.0, 4)]),
                "metrics.latency_ms.all: the mean is -3: expected a finite number >= 0",
            ),
            (
                record("recall@5", &[("all", 0.5, 0)]),
                "metrics.recall@5.all: n is 0: expected at least 1",
            ),
            (
                record("recall@5", &[("all", 0.5, 4), ("class=a", 0.5, 9)]),
                "metrics.recall@5.class=a: n is 9: expected at least 1 and at most the `all` n, 4",
            ),
            (
                record("recal@5", &[("all", 0.5, 4)]),
                "metrics.recal@5: unknown metric `recal@5`",
            ),
        ];
        for (record, expected) in cases {
            let message = record.check().unwrap_err();
            assert!(
                message.contains(expected),
                "expected `{expected}` in `{message}`"
            );
        }
        let mut outside = record("recall@5", &[("all", 0.5, 2)]);
        outside
            .metrics
            .get_mut("recall@5")
            .unwrap()
            .get_mut("all")
            .unwrap()
            .interval = [0.6, 0.7];
        assert!(
            outside
                .check()
                .unwrap_err()
                .contains("does not hold the mean 0.5")
        );
        let mut listed = record("recall@5", &[("all", 0.5, 2)]);
        listed.queries = Some(BTreeMap::from([(
            "q1".to_string(),
            BTreeMap::from([("recall@5".to_string(), 2.0)]),
        )]));
        let message = listed.check().unwrap_err();
        assert!(
            message.contains("metrics.recall@5.all: n is 2: expected at least 1 and at most the 1 queries the record lists"),
            "{message}"
        );
        listed
            .metrics
            .get_mut("recall@5")
            .unwrap()
            .get_mut("all")
            .unwrap()
            .n = 1;
        let message = listed.check().unwrap_err();
        assert!(
            message.contains("queries.q1.recall@5: the value is 2: expected a number in [0, 1]"),
            "{message}"
        );
    }
}
