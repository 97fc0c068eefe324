//! `ragate validate`'s lint of model judgments (qrels rot made visible): judgments a model
//! proposed and `ragate qrels apply` wrote (`judged_by`) more than the tier's
//! `model_judgments_max_age_days` ago, which no person has reviewed since. A reviewed one has its
//! `judged_by` entry (or sidecar line) deleted: it is a human judgment from then on.

use std::time::{Duration, SystemTime};

use crate::config::Tier;
use crate::error::shorten;
use crate::input::qrels::Qrels;

const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// The warning about `qrels`' model judgments older than the tier's limit at `now` (one without
/// a readable `at` counts as old: its age is unknown); None without a limit or such a judgment.
pub(crate) fn stale_warning(tier: &Tier, qrels: &Qrels, now: SystemTime) -> Option<String> {
    let days = tier.model_judgments_max_age_days?;
    let limit = now.checked_sub(DAY * u32::try_from(days).unwrap_or(u32::MAX));
    let mut stale: Vec<(Option<SystemTime>, String, &str)> = Vec::new();
    for query in qrels.queries() {
        for (doc, judgment) in &query.judged_by {
            let at = judgment
                .at
                .as_deref()
                .and_then(|at| humantime::parse_rfc3339_weak(at).ok());
            let old = match (at, limit) {
                (Some(at), Some(limit)) => at < limit,
                (Some(_), None) => false,
                (None, _) => true,
            };
            if old {
                let label = format!("{}/{}", shorten(&query.qid), shorten(doc));
                stale.push((at, label, judgment.at.as_deref().unwrap_or("no `at`")));
            }
        }
    }
    // The oldest first; one of unknown age before any dated one.
    stale.sort();
    let (_, label, at) = stale.first()?;
    Some(format!(
        "tier `{}`: {} model judgment(s) were applied more than {days} days ago and no person has \
         reviewed them since (model_judgments_max_age_days), the oldest: {label} ({}); review \
         them, then delete their `judged_by` entries (or sidecar lines) to make them human judgments",
        tier.name,
        stale.len(),
        shorten(at)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{native_qrels, text_file::TextFile};

    fn tier(days: Option<u64>) -> Tier {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("eval-config.yaml");
        std::fs::write(
            &path,
            "version: 1\nmetrics: [recall@5]\ntiers:\n  t: { qrels: q.jsonl, baseline: b.json }\ngate: { rules: [{ metric: recall@5, max_drop: 0.1 }] }\n",
        )
        .unwrap();
        let config = crate::config::load(&path).unwrap();
        let mut tier = config.tiers["t"].clone();
        tier.model_judgments_max_age_days = days;
        tier
    }

    #[test]
    fn model_judgments_older_than_the_limit_or_undated_are_listed_oldest_first() {
        let qrels = native_qrels::read(
            &TextFile::from_bytes(
                "q.jsonl",
                br#"{"qid":"q1","query":"x","graded_relevance":{"a":1,"b":2,"c":0},"judged_by":{"a":{"judge":"m","at":"2026-11-30T00:00:00Z"},"b":{"judge":"m","at":"2026-01-01T00:00:00Z"}}}"#.to_vec(),
            )
            .unwrap(),
        )
        .unwrap();
        let now = humantime::parse_rfc3339("2026-12-03T00:00:00Z").unwrap();
        assert_eq!(stale_warning(&tier(None), &qrels, now), None, "no limit");
        assert_eq!(
            stale_warning(&tier(Some(90)), &qrels, now).map(|w| w[..60].to_string()),
            Some("tier `t`: 1 model judgment(s) were applied more than 90 days".to_string())
        );
        let warning = stale_warning(&tier(Some(1)), &qrels, now).unwrap();
        assert!(warning.contains(": 2 model judgment(s)"), "{warning}");
        assert!(
            warning.contains("the oldest: q1/b (2026-01-01T00:00:00Z)"),
            "{warning}"
        );
        let recent = stale_warning(&tier(Some(9)), &qrels, now).unwrap();
        assert!(recent.contains(": 1 model judgment(s)"), "{recent}");
    }
}
