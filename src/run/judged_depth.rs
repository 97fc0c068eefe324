//! judged@k of a run: the share of its top-k retrieved docs (k = [`JUDGED_DEPTH`]) that the qrels
//! judge, against the qrels the run was evaluated with, for the decision's warning and the
//! summary.

use crate::baseline::results::Results;
use crate::config::Tier;
use crate::gate;
use crate::input::qrels::Qrels;
use crate::tier;

/// The depth of the judged@k coverage report.
pub(crate) const JUDGED_DEPTH: usize = 10;

/// judged@k of `results` evaluated against `qrels`: (k, share), None when nothing was retrieved.
pub(crate) fn of_run(results: &Results, qrels: &Qrels) -> Option<(usize, f64)> {
    gate::judged_at_k(results, qrels, JUDGED_DEPTH).map(|share| (JUDGED_DEPTH, share))
}

/// The share of the same top-k docs that model judgments judge (None when the qrels hold none).
pub(crate) fn model_of_run(results: &Results, qrels: &Qrels) -> Option<f64> {
    gate::model_judged_at_k(results, qrels, JUDGED_DEPTH)
}

/// judged@k of stored `results` of `tier` (`compare`, `report`) and its model share (as
/// [`model_of_run`]), against the tier's qrels when they are still the ones the results were
/// evaluated with; (None, None) otherwise (the qrels changed or cannot be read: then the measure
/// would be of other judgments, and no check depends on it).
pub(crate) fn of_stored(tier: &Tier, results: &Results) -> (Option<(usize, f64)>, Option<f64>) {
    match tier::load_source(tier) {
        Ok(queries) if queries.file_sha256 == results.provenance.qrels_sha256 => (
            of_run(results, &queries.qrels),
            model_of_run(results, &queries.qrels),
        ),
        _ => (None, None),
    }
}
