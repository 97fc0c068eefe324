//! Which judges and embeddings endpoint a tier's metrics call, and how they are described in
//! the results' provenance (used by `gate`, `compare` and the preflight checks).

use std::collections::BTreeMap;

use crate::config::{Config, EmbeddingsSpec, Tier};
use crate::judge;
use crate::judge::embeddings::EmbeddingClient;
use crate::metrics::claims::ClaimSplitter;
use crate::metrics::metric::{JudgedMetric, Metric, MetricSpec};

/// The judges that the tier's answer metrics use, described for provenance; a judge that
/// also decomposes answers (`claims: llm`) gets ` claims=llm:<prompt version>`.
pub(crate) fn judges_used(config: &Config, tier: &Tier) -> BTreeMap<String, String> {
    let mut used: BTreeMap<String, String> = judged_by_judges(config, tier)
        .map(|spec| {
            let judge = judge::build(&config.judges[&spec.judge]);
            (spec.judge.clone(), judge.describe())
        })
        .collect();
    for spec in &tier.metrics {
        if spec.claims == ClaimSplitter::Llm
            && let Some(description) = used.get_mut(&spec.judge)
        {
            let part = format!(" claims={}", ClaimSplitter::Llm.id());
            if !description.contains(&part) {
                description.push_str(&part);
            }
        }
    }
    used
}

/// The embeddings endpoint, described, when answer_relevance is embedding-based.
pub(crate) fn embeddings_used(config: &Config, tier: &Tier) -> Option<String> {
    embeddings_called(config, tier).map(|spec| EmbeddingClient::from_spec(spec).describe())
}

/// The judged metrics a judge decides (answer relevance goes to the embeddings endpoint when one
/// is configured).
pub(crate) fn judged_by_judges<'a>(
    config: &'a Config,
    tier: &'a Tier,
) -> impl Iterator<Item = &'a MetricSpec> {
    tier.metrics
        .iter()
        .filter(|spec| spec.is_judged())
        .filter(|spec| {
            !(spec.metric == Metric::Judged(JudgedMetric::AnswerRelevance)
                && config.embeddings.is_some())
        })
}

/// The embeddings endpoint, when answer relevance is computed with it.
pub(crate) fn embeddings_called<'a>(config: &'a Config, tier: &Tier) -> Option<&'a EmbeddingsSpec> {
    let relevance = tier
        .metrics
        .iter()
        .any(|spec| spec.metric == Metric::Judged(JudgedMetric::AnswerRelevance));
    config.embeddings.as_ref().filter(|_| relevance)
}
