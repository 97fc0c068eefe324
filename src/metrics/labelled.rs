//! Which metrics human labels can calibrate: the judged ones (the labels reader,
//! `input::labels`, checks every label key with [`check_label_metric`]).

use crate::metrics::metric::{JudgedMetric, Metric};
use crate::suggest;

/// The metrics a judge decides, which are the ones human labels can calibrate.
const JUDGED_METRICS: &str =
    "faithfulness, faithfulness_graded, answer_relevance or context_precision@K";

/// Accepts `name` when it names a judged metric; else an error with the closest name, so that a
/// misspelt key (`faithfullness`) cannot drop every label of the file silently.
pub fn check_label_metric(name: &str) -> Result<(), String> {
    let judged = match name.parse::<Metric>() {
        Ok(metric) => matches!(
            metric,
            Metric::Judged(JudgedMetric::Faithfulness)
                | Metric::Judged(JudgedMetric::FaithfulnessGraded)
                | Metric::Judged(JudgedMetric::AnswerRelevance)
                | Metric::ContextPrecision(_)
        ),
        Err(_) => false,
    };
    if judged {
        return Ok(());
    }
    let context_precision = match name.rsplit_once('@') {
        Some((_, k)) => format!("context_precision@{k}"),
        None => "context_precision@5".to_string(),
    };
    let candidates = [
        "faithfulness",
        "faithfulness_graded",
        "answer_relevance",
        context_precision.as_str(),
    ];
    Err(suggest::did_you_mean(
        format!(
            "`{}` is not a judged metric: expected {JUDGED_METRICS} (every key besides `qid` \
             and `answer` is a metric label)",
            crate::error::shorten(name)
        ),
        name,
        candidates,
    ))
}
