//! Latency, tokens and cost per slice: median and 95th percentile for the summary and
//! run-stats.json. Percentiles interpolate linearly between closest ranks (numpy's default,
//! Hyndman and Fan type 7): p = v[floor(h)] + (h - floor(h)) (v[floor(h)+1] - v[floor(h)]) with
//! h = (n - 1) q over the sorted values.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::baseline::results::Results;
use crate::evaluate::operational::Operational;

/// One figure over one slice.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    /// Queries with the figure.
    pub n: usize,
    /// Median (linear interpolation, as numpy).
    pub p50: f64,
    /// 95th percentile (linear interpolation, as numpy).
    pub p95: f64,
    /// Mean.
    pub mean: f64,
}

/// figure name -> slice -> spread, for the figures some query carries.
pub type Figures = BTreeMap<&'static str, BTreeMap<String, Spread>>;

/// The `q` quantile (0..=1) of sorted, non-empty `values`.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let low = h.floor() as usize;
    let high = (low + 1).min(sorted.len() - 1);
    sorted[low] + (h - low as f64) * (sorted[high] - sorted[low])
}

fn spread(mut values: Vec<f64>) -> Spread {
    values.sort_by(f64::total_cmp);
    Spread {
        n: values.len(),
        p50: quantile(&values, 0.5),
        p95: quantile(&values, 0.95),
        mean: values.iter().sum::<f64>() / values.len() as f64,
    }
}

/// The spread of every operational figure over `all` and every slice of `results`.
pub fn by_slice(results: &Results, operational: &BTreeMap<String, Operational>) -> Figures {
    type Reader = fn(&Operational) -> Option<f64>;
    let readers: [(&'static str, Reader); 3] = [
        ("latency_ms", |o| o.latency_ms),
        ("tokens", |o| o.tokens.map(|t| t as f64)),
        ("cost", |o| o.cost),
    ];
    let mut figures = Figures::new();
    for (name, read) in readers {
        let mut members: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for (qid, record) in &results.queries {
            let Some(value) = operational.get(qid).and_then(read) else {
                continue;
            };
            members.entry("all".to_string()).or_default().push(value);
            for (field, slice) in &record.slices {
                members
                    .entry(format!("{field}={slice}"))
                    .or_default()
                    .push(value);
            }
        }
        if !members.is_empty() {
            figures.insert(
                name,
                members.into_iter().map(|(s, v)| (s, spread(v))).collect(),
            );
        }
    }
    figures
}

/// One summary note per figure: `latency_ms (p50 / p95): all 12.0 / 30.5 (n 20); ...`.
pub fn describe(figures: &Figures) -> Vec<String> {
    figures
        .iter()
        .map(|(name, slices)| {
            let parts: Vec<String> = slices
                .iter()
                .map(|(slice, s)| format!("{slice} {:.1} / {:.1} (n {})", s.p50, s.p95, s.n))
                .collect();
            format!("{name} (p50 / p95): {}", parts.join("; "))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_numpy_linear_interpolation() {
        // numpy.percentile([1, 2, 3, 4, 10], [50, 95]) = [3.0, 8.8]
        let values = [1.0, 2.0, 3.0, 4.0, 10.0];
        assert_eq!(quantile(&values, 0.5), 3.0);
        assert!((quantile(&values, 0.95) - 8.8).abs() < 1e-12);
        // numpy.percentile([5, 1], [50, 95]) on the sorted [1, 5] = [3.0, 4.8]
        assert!((quantile(&[1.0, 5.0], 0.95) - 4.8).abs() < 1e-12);
        assert_eq!(quantile(&[7.0], 0.95), 7.0);
    }

    #[test]
    fn spreads_per_slice_only_for_carried_figures() {
        let results: Results = serde_json::from_str(
            r#"{"format":"ragate-results/1","tier":"t","status":"pass",
                "provenance":{"ragate_version":"0","qrels_sha256":"","config_hash":""},
                "metrics":[],"summary":{},
                "queries":{
                  "q1":{"slices":{"class":"a"},"metrics":{},"retrieved":[]},
                  "q2":{"slices":{"class":"b"},"metrics":{},"retrieved":[]},
                  "q3":{"slices":{"class":"b"},"metrics":{},"retrieved":[]}}}"#,
        )
        .unwrap();
        let latency = |ms: f64| Operational {
            latency_ms: Some(ms),
            ..Operational::default()
        };
        let operational = BTreeMap::from([
            ("q1".to_string(), latency(10.0)),
            ("q2".to_string(), latency(20.0)),
            ("q3".to_string(), latency(40.0)),
        ]);
        let figures = by_slice(&results, &operational);
        assert_eq!(figures.keys().copied().collect::<Vec<_>>(), ["latency_ms"]);
        let b = figures["latency_ms"]["class=b"];
        assert_eq!((b.n, b.p50, b.mean), (2, 30.0, 30.0));
        assert_eq!(figures["latency_ms"]["all"].p50, 20.0);
        assert_eq!(
            describe(&figures),
            [
                "latency_ms (p50 / p95): all 20.0 / 38.0 (n 3); class=a 10.0 / 10.0 (n 1); class=b 30.0 / 39.0 (n 2)"
            ]
        );
    }
}
