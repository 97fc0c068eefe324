//! Whether a baseline still pairs with its tier: how many of the tier's queries it has and which
//! gated metrics it lacks. Shared by `validate` (the tier's qrels, after sampling) and the gate
//! (the run's results), so both say the same thing and name the same next step.

use std::collections::BTreeSet;

pub use crate::baseline::results::Pairing;
use crate::baseline::results::{Provenance, Results};
use crate::config::Tier;
use crate::format::short_hash;
use crate::metrics::metric::Metric;

/// The metrics the tier's rules compare with the baseline, in rule order, each once (calibrated
/// floors need no baseline).
pub fn gated_metrics(tier: &Tier) -> Vec<String> {
    let mut seen = BTreeSet::new();
    tier.gate
        .rules
        .iter()
        .filter(|rule| !matches!(rule.metric, Metric::Ppi(_)))
        .map(|rule| rule.metric.to_string())
        .filter(|name| seen.insert(name.clone()))
        .collect()
}

impl Pairing {
    /// How `baseline` pairs with a tier whose queries are `tier_qids`, whose rules gate `gated`
    /// (see [`gated_metrics`]) and whose gate settings are `settings` (its `min_queries` and
    /// `min_share`).
    pub fn of<'a>(
        baseline: &Results,
        tier_qids: impl IntoIterator<Item = &'a str>,
        gated: &[String],
        settings: (usize, f64),
    ) -> Pairing {
        let (min_queries, min_share) = settings;
        let tier_qids: BTreeSet<&str> = tier_qids.into_iter().collect();
        Pairing {
            shared_queries: tier_qids
                .iter()
                .filter(|qid| baseline.queries.contains_key(**qid))
                .count(),
            queries: tier_qids.len(),
            baseline_queries: baseline.queries.len(),
            min_queries,
            min_share,
            missing_metrics: gated
                .iter()
                .filter(|name| !baseline.metrics.contains(name))
                .cloned()
                .collect(),
        }
    }

    /// Too few queries pair to decide the run, while a baseline of the tier's own queries would
    /// pair more: fewer than `min_queries` (no check could compare), or fewer than the floor
    /// share of the tier ([`Pairing::floor_share`]: a verdict on a minority of the tier's
    /// queries is not a verdict on the tier).
    pub fn too_few(&self) -> bool {
        let below_min = self.shared_queries < self.min_queries;
        let below_floor = (self.shared_queries as f64) < self.floor_share() * self.queries as f64;
        (below_min || below_floor) && self.shared_queries < self.queries
    }

    /// The least share of the tier's queries that must pair for the run to be decided: half, or
    /// `min_share` when that is lower.
    pub fn floor_share(&self) -> f64 {
        self.min_share.min(0.5)
    }

    /// `compared 25 of 40 queries` when the baseline pairs with fewer than `min_share` of the
    /// tier's queries yet enough to decide: what every output says beside the verdict, so that
    /// a reviewer sees it first. None when enough pair, or when the baseline is
    /// [`broken`](Self::broken) (then the run is not decided and says why).
    pub fn compared(&self) -> Option<String> {
        let short = (self.shared_queries as f64) < self.min_share * self.queries as f64;
        (short && !self.broken()).then(|| {
            format!(
                "compared {} of {} queries",
                self.shared_queries, self.queries
            )
        })
    }

    /// The baseline no longer fits the tier: too few queries pair, or a gated metric is missing.
    /// Only a new baseline mends it.
    pub fn broken(&self) -> bool {
        self.too_few() || !self.missing_metrics.is_empty()
    }

    /// What does not pair, for a baseline that is [`broken`](Self::broken) (None otherwise):
    /// `the baseline shares 0 of 6 queries with tier `smoke` (the qrels changed since it was
    /// accepted), so no check can compare them`. `changed` is what [`changes`] found.
    pub fn problem(&self, tier: &str, changed: Option<&str>) -> Option<String> {
        if !self.broken() {
            return None;
        }
        let since = changed.map(|c| format!(" ({c})")).unwrap_or_default();
        let mut parts = Vec::new();
        if self.too_few() {
            let fewer = if self.shared_queries == 0 {
                String::new()
            } else if self.shared_queries < self.min_queries {
                format!(", fewer than min_queries {}", self.min_queries)
            } else {
                format!(", fewer than {:.0}% of them", 100.0 * self.floor_share())
            };
            parts.push(format!(
                "the baseline shares {} of {} queries with tier `{tier}`{since}{fewer}, so no \
                 check can compare them",
                self.shared_queries, self.queries
            ));
        }
        if !self.missing_metrics.is_empty() {
            let names: Vec<String> = self
                .missing_metrics
                .iter()
                .map(|m| format!("`{m}`"))
                .collect();
            let (subject, since) = if parts.is_empty() {
                ("the baseline", since.as_str())
            } else {
                ("it", "")
            };
            parts.push(format!(
                "{subject} has no values of {}, which the rules of tier `{tier}` gate{since}",
                names.join(", ")
            ));
        }
        Some(parts.join("; "))
    }

    /// For a baseline that pairs with only part of the tier, yet enough to compare:
    /// `the baseline shares 3 of 6 queries with tier `smoke`: the checks compare those 3`.
    pub fn partial(&self, tier: &str) -> Option<String> {
        if self.broken() || self.shared_queries == self.queries {
            return None;
        }
        let others = match self.queries - self.shared_queries {
            1 => "the other one is compared once a baseline that has it is accepted".to_string(),
            n => format!("the other {n} are compared once a baseline that has them is accepted"),
        };
        Some(format!(
            "the baseline shares {} of {} queries with tier `{tier}`: the checks compare those {}; \
             {others}",
            self.shared_queries, self.queries, self.shared_queries,
        ))
    }
}

/// The next step after a baseline that does not fit a run: accept the run (`accept_command`)
/// when `acceptable` (its results record the mismatch, or it is no error), else fix its other
/// errors first, since `baseline accept` refuses results that errored otherwise.
pub fn next_step(accept_command: &str, acceptable: bool) -> String {
    if acceptable {
        format!(
            "if this run's numbers are what the tier should hold, replace the baseline with \
             `{accept_command}` (it shows what the new baseline drops)"
        )
    } else {
        format!(
            "fix the run's other errors (listed with the checks), run the gate again, then \
             replace the baseline with `{accept_command}`"
        )
    }
}

/// What changed since the baseline was accepted, from its provenance and the tier's current
/// hashes and sample (`sample`: `tier::sample_description`): `the qrels changed since it
/// was accepted, qrels sha256 b9d978b55f6e -> 3da6128ade67`, `the sample changed since it was
/// accepted (40 queries, seed 1, stable-v2 -> 40 queries, seed 2, stable-v2), so it is a new
/// sample`; None when nothing did.
pub fn changes(
    baseline: &Provenance,
    qrels_sha256: &str,
    config_hash: &str,
    sample: Option<&str>,
) -> Option<String> {
    let qrels = baseline.qrels_sha256 != qrels_sha256;
    let config = baseline.config_hash != config_hash;
    let mut parts = Vec::new();
    let what = match (qrels, config) {
        (false, false) => None,
        (true, false) => Some("the qrels"),
        (false, true) => Some("the config"),
        (true, true) => Some("the qrels and the config"),
    };
    if let Some(what) = what {
        let sha = if qrels {
            format!(
                ", qrels sha256 {} -> {}",
                short_hash(&baseline.qrels_sha256),
                short_hash(qrels_sha256)
            )
        } else {
            String::new()
        };
        parts.push(format!("{what} changed since it was accepted{sha}"));
    }
    if let Some(now) = sample
        && baseline.sample.as_deref() != Some(now)
    {
        let before = baseline
            .sample
            .as_deref()
            .unwrap_or("drawn by a ragate whose samples were redrawn as the qrels grew");
        parts.push(format!(
            "the sample changed since it was accepted ({before} -> {now}), so it is a new sample"
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::results::{QueryRecord, RunStatus};

    fn baseline(qids: &[&str], metrics: &[&str]) -> Results {
        Results {
            format: String::new(),
            tier: "smoke".into(),
            status: RunStatus::Pass,
            provenance: Provenance::default(),
            metrics: metrics.iter().map(|m| m.to_string()).collect(),
            summary: Default::default(),
            noise: None,
            baseline_mismatch: None,
            queries: qids
                .iter()
                .map(|q| (q.to_string(), QueryRecord::default()))
                .collect(),
        }
    }

    fn gated(names: &[&str]) -> Vec<String> {
        names.iter().map(|m| m.to_string()).collect()
    }

    #[test]
    fn no_shared_query_is_broken_and_says_so_with_the_counts() {
        let old = baseline(&["q1", "q2", "q3", "q4", "q5", "q6"], &["mrr"]);
        let pairing = Pairing::of(&old, ["x1", "x2", "x3", "x4"], &gated(&["mrr"]), (3, 0.9));
        assert_eq!(
            (
                pairing.shared_queries,
                pairing.queries,
                pairing.baseline_queries
            ),
            (0, 4, 6)
        );
        assert!(pairing.too_few() && pairing.broken());
        assert_eq!(
            pairing
                .problem("smoke", Some("the qrels changed since it was accepted"))
                .unwrap(),
            "the baseline shares 0 of 4 queries with tier `smoke` (the qrels changed since it \
             was accepted), so no check can compare them"
        );
        assert_eq!(pairing.partial("smoke"), None);
    }

    #[test]
    fn fewer_shared_queries_than_min_queries_is_broken_unless_the_tier_has_no_more() {
        let old = baseline(&["q1", "q2", "x3"], &["mrr"]);
        let two_of_six = Pairing::of(
            &old,
            ["q1", "q2", "x3", "x4", "x5", "x6"],
            &gated(&["mrr"]),
            (5, 0.9),
        );
        assert_eq!(two_of_six.shared_queries, 3);
        assert!(two_of_six.broken());
        let problem = two_of_six.problem("smoke", None).unwrap();
        assert_eq!(
            problem,
            "the baseline shares 3 of 6 queries with tier `smoke`, fewer than min_queries 5, \
             so no check can compare them"
        );
        // A tier of 3 queries, all in the baseline: a new baseline would pair no more.
        let small = Pairing::of(&old, ["q1", "q2", "x3"], &gated(&["mrr"]), (5, 0.9));
        assert!(!small.broken(), "{small:?}");
        assert_eq!(small.problem("smoke", None), None);
    }

    #[test]
    fn enough_shared_queries_is_partial_not_broken() {
        let old = baseline(&["q1", "q2", "q3", "q4", "q5", "q6"], &["mrr"]);
        let half = Pairing::of(
            &old,
            ["q1", "q2", "q3", "x4", "x5", "x6"],
            &gated(&["mrr"]),
            (3, 0.9),
        );
        assert!(!half.broken());
        assert_eq!(half.problem("smoke", None), None);
        assert_eq!(
            half.partial("smoke").unwrap(),
            "the baseline shares 3 of 6 queries with tier `smoke`: the checks compare those 3; \
             the other 3 are compared once a baseline that has them is accepted"
        );
        let all = Pairing::of(&old, ["q1", "q2", "q3"], &gated(&["mrr"]), (3, 0.9));
        assert_eq!(all.partial("smoke"), None, "every query of the tier pairs");
    }

    #[test]
    fn fewer_than_half_of_the_tier_is_broken_and_below_min_share_is_said_beside_the_verdict() {
        let old = baseline(
            &["q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9"],
            &["mrr"],
        );
        let tier: Vec<String> = (1..=20).map(|i| format!("q{i}")).collect();
        let nine_of_twenty = Pairing::of(
            &old,
            tier.iter().map(String::as_str),
            &gated(&["mrr"]),
            (5, 0.9),
        );
        assert!(nine_of_twenty.too_few(), "9 of 20 is below half");
        assert_eq!(
            nine_of_twenty.compared(),
            None,
            "not decided, so not compared"
        );
        assert!(
            nine_of_twenty.problem("smoke", None).unwrap().starts_with(
                "the baseline shares 9 of 20 queries with tier `smoke`, fewer than 50% of them, so"
            ),
            "{:?}",
            nine_of_twenty.problem("smoke", None)
        );
        // With a lower min_share the floor follows it.
        let low = Pairing::of(
            &old,
            tier.iter().map(String::as_str),
            &gated(&["mrr"]),
            (5, 0.4),
        );
        assert!(!low.broken());
        assert_eq!(low.compared(), None, "9 of 20 is at least 40%");
        let ten_of_twenty = Pairing::of(
            &baseline(
                &["q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9", "q10"],
                &["mrr"],
            ),
            tier.iter().map(String::as_str),
            &gated(&["mrr"]),
            (5, 0.9),
        );
        assert!(!ten_of_twenty.broken());
        assert_eq!(
            ten_of_twenty.compared().unwrap(),
            "compared 10 of 20 queries"
        );
        let eighteen: Vec<String> = (1..=18).map(|i| format!("q{i}")).collect();
        let most = Pairing::of(
            &baseline(
                &eighteen.iter().map(String::as_str).collect::<Vec<_>>(),
                &["mrr"],
            ),
            tier.iter().map(String::as_str),
            &gated(&["mrr"]),
            (5, 0.9),
        );
        assert_eq!(most.compared(), None, "18 of 20 is 90%");
    }

    #[test]
    fn a_gated_metric_the_baseline_lacks_is_broken() {
        let old = baseline(&["q1", "q2", "q3"], &["mrr"]);
        let pairing = Pairing::of(
            &old,
            ["q1", "q2", "q3"],
            &gated(&["mrr", "ndcg@3", "recall@3"]),
            (3, 0.9),
        );
        assert!(!pairing.too_few());
        assert_eq!(pairing.missing_metrics, ["ndcg@3", "recall@3"]);
        assert_eq!(
            pairing
                .problem("smoke", Some("the config changed since it was accepted"))
                .unwrap(),
            "the baseline has no values of `ndcg@3`, `recall@3`, which the rules of tier \
             `smoke` gate (the config changed since it was accepted)"
        );
        let both = Pairing::of(&old, ["x1", "x2", "x3"], &gated(&["ndcg@3"]), (3, 0.9));
        assert_eq!(
            both.problem("smoke", None).unwrap(),
            "the baseline shares 0 of 3 queries with tier `smoke`, so no check can compare them; \
             it has no values of `ndcg@3`, which the rules of tier `smoke` gate"
        );
    }

    #[test]
    fn a_sample_drawn_otherwise_is_a_new_sample() {
        let a = "a".repeat(64);
        let drawn = Provenance {
            qrels_sha256: a.clone(),
            config_hash: a.clone(),
            sample: Some("40 queries, seed 1, stable-v2".into()),
            ..Provenance::default()
        };
        assert_eq!(
            changes(&drawn, &a, &a, Some("40 queries, seed 1, stable-v2")),
            None
        );
        assert_eq!(
            changes(&drawn, &a, &a, Some("40 queries, seed 2, stable-v2")).unwrap(),
            "the sample changed since it was accepted (40 queries, seed 1, stable-v2 -> 40 \
             queries, seed 2, stable-v2), so it is a new sample"
        );
        let older = Provenance {
            sample: None,
            ..drawn
        };
        assert!(
            changes(&older, &a, &a, Some("40 queries, seed 1, stable-v2"))
                .unwrap()
                .contains("drawn by a ragate whose samples were redrawn as the qrels grew")
        );
        assert_eq!(
            changes(&older, &a, &a, None),
            None,
            "a tier of its own qrels"
        );
    }

    #[test]
    fn changes_name_what_moved_since_the_baseline() {
        let (a, b) = ("a".repeat(64), "b".repeat(64));
        let provenance = Provenance {
            qrels_sha256: a.clone(),
            config_hash: a.clone(),
            ..Provenance::default()
        };
        assert_eq!(changes(&provenance, &a, &a, None), None);
        assert_eq!(
            changes(&provenance, &b, &a, None).unwrap(),
            "the qrels changed since it was accepted, qrels sha256 aaaaaaaaaaaa -> bbbbbbbbbbbb"
        );
        assert_eq!(
            changes(&provenance, &a, &b, None).unwrap(),
            "the config changed since it was accepted"
        );
        assert!(
            changes(&provenance, &b, &b, None)
                .unwrap()
                .starts_with("the qrels and the config changed")
        );
    }

    #[test]
    fn the_stored_form_reads_back_and_omits_an_empty_metric_list() {
        let pairing = Pairing {
            shared_queries: 0,
            queries: 6,
            baseline_queries: 6,
            min_queries: 3,
            min_share: 0.9,
            missing_metrics: Vec::new(),
        };
        let json = serde_json::to_string(&pairing).unwrap();
        assert_eq!(
            json,
            r#"{"shared_queries":0,"queries":6,"baseline_queries":6,"min_queries":3,"min_share":0.9}"#
        );
        assert_eq!(serde_json::from_str::<Pairing>(&json).unwrap(), pairing);
        // Written before `min_share`: the default.
        let older = r#"{"shared_queries":0,"queries":6,"baseline_queries":6,"min_queries":3}"#;
        assert_eq!(serde_json::from_str::<Pairing>(older).unwrap(), pairing);
    }
}
