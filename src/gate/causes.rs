//! Likely causes of a change against the baseline (issue 48): per slice, which metrics moved
//! together and in which direction (the checks' paired estimates against their limits, not the
//! levels), mapped to the failure modes of a change, each with the paired queries that show it.
//!
//! - recall down (nDCG not up) -> retrieval lost evidence: queries whose baseline's top relevant
//!   document is no longer retrieved;
//! - nDCG or reciprocal rank down with recall flat -> ranking pushed evidence down: queries whose
//!   top relevant document is still retrieved, lower;
//! - faithfulness down -> the generator left its context: queries whose faithfulness fell while
//!   their retrieval held (most of the faithfulness drops);
//! - answer relevance down with faithfulness flat -> answers dodge the question.
//!
//! A cause is named only when the metrics it reads moved as it says and queries show it, so no
//! metric shown contradicts it; at most [`MOST`] are kept, the most queries first. The
//! level-based matrix (`gate::diagnosis`) stays for a first run and the HTML report.

use std::collections::{BTreeMap, BTreeSet};

use crate::baseline::results::{QueryRecord, Results};
use crate::gate::verdict::{CheckOutcome, Family};

/// The most causes a run names.
pub const MOST: usize = 3;

/// A mean change smaller than this (in a metric's [0, 1] units) is flat, for a metric no rule
/// limits; a ruled metric is flat within its limit.
pub const FLAT: f64 = 0.01;

/// A per-query change smaller than this is no change (rounding).
const EPSILON: f64 = 1e-9;

/// A failure mode of a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CauseKind {
    /// Recall fell: relevant documents are no longer retrieved.
    RetrievalLostEvidence,
    /// nDCG or the reciprocal rank fell while recall held: relevant documents are ranked lower.
    RankingPushedEvidenceDown,
    /// Faithfulness fell where retrieval held.
    GeneratorLeftContext,
    /// Answer relevance fell while faithfulness held.
    AnswersDodgeQuestion,
}

impl CauseKind {
    /// The cause's id in gate.json.
    pub fn id(self) -> &'static str {
        match self {
            CauseKind::RetrievalLostEvidence => "retrieval_lost_evidence",
            CauseKind::RankingPushedEvidenceDown => "ranking_pushed_evidence_down",
            CauseKind::GeneratorLeftContext => "generator_left_context",
            CauseKind::AnswersDodgeQuestion => "answers_dodge_question",
        }
    }

    /// The cause in words.
    pub fn title(self) -> &'static str {
        match self {
            CauseKind::RetrievalLostEvidence => "retrieval lost evidence",
            CauseKind::RankingPushedEvidenceDown => "ranking pushed evidence down",
            CauseKind::GeneratorLeftContext => "the generator left its context",
            CauseKind::AnswersDodgeQuestion => "answers dodge the question",
        }
    }

    /// What usually fixes it.
    pub fn fix(self) -> &'static str {
        match self {
            CauseKind::RetrievalLostEvidence => {
                "hybrid retrieval (BM25 + dense), query expansion, chunk overlap"
            }
            CauseKind::RankingPushedEvidenceDown => "add or tune a reranker",
            CauseKind::GeneratorLeftContext => {
                "lower temperature, tighter grounding instructions, abstain when unsupported"
            }
            CauseKind::AnswersDodgeQuestion => {
                "answer the question asked (prompt), check query understanding"
            }
        }
    }
}

/// Which way a metric moved against the baseline, in its better direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    /// Worse by more than its limit (or [`FLAT`] without one), on the point estimate.
    Down,
    /// Within that.
    Flat,
    /// Better by more than that.
    Up,
}

impl Move {
    /// The word gate.json and the sentences use.
    pub fn word(self) -> &'static str {
        match self {
            Move::Down => "down",
            Move::Flat => "flat",
            Move::Up => "up",
        }
    }
}

/// One metric's change in a slice, as a cause cites it.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricMove {
    /// The metric's name.
    pub metric: String,
    /// The paired mean change, `current - baseline`.
    pub delta: f64,
    /// The rule's tolerated worsening, when a rule limits it.
    pub limit: Option<f64>,
    /// Which way it moved.
    pub direction: Move,
}

/// One likely cause of the change.
#[derive(Debug, Clone, PartialEq)]
pub struct Cause {
    /// The slice (`all` or `field=value`).
    pub slice: String,
    /// The failure mode.
    pub kind: CauseKind,
    /// The metrics it reads and how they moved.
    pub moves: Vec<MetricMove>,
    /// The paired queries of the slice that show it.
    pub queries: usize,
    /// The paired queries of the slice.
    pub paired: usize,
    /// What those queries show (`lost their top relevant document`).
    pub evidence: &'static str,
    /// For an `all` cause: the slice value holding most of those queries, and how many.
    pub top_slice: Option<(String, usize)>,
}

impl Cause {
    /// `[all] retrieval lost evidence: recall@5 -0.1583, ndcg@10 -0.1500 down; faithfulness
    /// -0.0100 flat · 7 of 20 queries lost their top relevant document; 4 of them in
    /// class=literal -> hybrid retrieval (BM25 + dense), query expansion, chunk overlap`.
    pub fn describe(&self) -> String {
        let mut groups = Vec::new();
        for direction in [Move::Down, Move::Flat, Move::Up] {
            let named: Vec<String> = self
                .moves
                .iter()
                .filter(|m| m.direction == direction)
                .map(|m| format!("{} {}", m.metric, signed(m.delta)))
                .collect();
            if !named.is_empty() {
                groups.push(format!("{} {}", named.join(", "), direction.word()));
            }
        }
        let within = self
            .top_slice
            .as_ref()
            .map(|(slice, count)| format!("; {count} of them in {slice}"))
            .unwrap_or_default();
        format!(
            "[{}] {}: {} · {} of {} queries {}{within} -> {}",
            self.slice,
            self.kind.title(),
            groups.join("; "),
            self.queries,
            self.paired,
            self.evidence,
            self.kind.fix()
        )
    }
}

/// `+0.0100`, `-0.1583` (no negative zero).
fn signed(value: f64) -> String {
    let value = if value == 0.0 { 0.0 } else { value };
    format!("{value:+.4}")
}

/// The metrics a family of causes reads, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Recall,
    Ndcg,
    ReciprocalRank,
    Faithfulness,
    Relevance,
}

impl Kind {
    fn of(metric: &str) -> Option<Kind> {
        let base = metric.split('@').next().unwrap_or(metric);
        match base {
            "recall" => Some(Kind::Recall),
            "ndcg" => Some(Kind::Ndcg),
            "mrr" => Some(Kind::ReciprocalRank),
            "faithfulness" => Some(Kind::Faithfulness),
            "answer_relevance" => Some(Kind::Relevance),
            _ => None,
        }
    }
}

/// What the causes read: the paired queries and the checks.
pub struct CauseInputs<'a> {
    /// The baseline.
    pub baseline: &'a Results,
    /// The current run.
    pub current: &'a Results,
    /// Every check decided (the metric checks' paired estimates and limits).
    pub outcomes: &'a [CheckOutcome],
    /// The tier's slice fields.
    pub slice_fields: &'a [String],
    /// Retrieved ids `doc#chunk` count as `doc` with this separator.
    pub chunk_separator: Option<&'a str>,
}

/// The likely causes of the change, at most [`MOST`], the most queries first (ties: `all`
/// first, then by slice and kind).
pub fn likely_causes(inputs: &CauseInputs<'_>) -> Vec<Cause> {
    let paired: Vec<Paired<'_>> = inputs
        .current
        .queries
        .iter()
        .filter_map(|(qid, now)| {
            let before = inputs.baseline.queries.get(qid)?;
            Some(Paired::of(before, now, inputs.chunk_separator))
        })
        .collect();
    let mut slices = vec!["all".to_string()];
    slices.extend(
        inputs
            .current
            .summary
            .keys()
            .filter(|s| *s != "all")
            .cloned(),
    );
    let mut found: Vec<Cause> = Vec::new();
    for slice in &slices {
        let members: Vec<&Paired<'_>> = paired.iter().filter(|q| q.is_in(slice)).collect();
        if members.is_empty() {
            continue;
        }
        let moves = slice_moves(inputs.outcomes, slice, &members);
        for mut cause in causes_of(slice, &moves, &members) {
            if slice == "all" {
                cause.top_slice = top_slice(&cause, &members, inputs.slice_fields);
            } else if found
                .iter()
                .any(|c| c.slice == "all" && c.kind == cause.kind)
            {
                continue;
            }
            found.push(cause);
        }
    }
    found.sort_by(|a, b| {
        b.queries
            .cmp(&a.queries)
            .then_with(|| (a.slice != "all").cmp(&(b.slice != "all")))
            .then_with(|| a.slice.cmp(&b.slice))
            .then_with(|| a.kind.cmp(&b.kind))
    });
    found.truncate(MOST);
    found
}

/// One paired query: its values before and now, its slices, and what happened to its ranking.
struct Paired<'a> {
    before: &'a QueryRecord,
    now: &'a QueryRecord,
    /// Whether the current ranking still has the baseline's top relevant document (then lower):
    /// None when it kept its rank, or it is not known ([`fallen_top_document`]).
    top_document: Option<bool>,
}

impl<'a> Paired<'a> {
    fn of(before: &'a QueryRecord, now: &'a QueryRecord, separator: Option<&str>) -> Paired<'a> {
        let top_document = fallen_top_document(before, now, separator);
        Paired {
            before,
            now,
            top_document,
        }
    }

    fn is_in(&self, slice: &str) -> bool {
        if slice == "all" {
            return true;
        }
        slice
            .split_once('=')
            .is_some_and(|(field, value)| self.now.slices.get(field).is_some_and(|v| v == value))
    }

    /// The metrics of `kind` this query has in both runs, with their change.
    fn changes(&self, kind: Kind) -> impl Iterator<Item = f64> + '_ {
        self.now.metrics.iter().filter_map(move |(name, now)| {
            (Kind::of(name) == Some(kind)).then_some(())?;
            Some(now - self.before.metrics.get(name)?)
        })
    }

    fn fell(&self, kind: Kind) -> bool {
        self.changes(kind).any(|d| d < -EPSILON)
    }

    fn retrieval_held(&self) -> bool {
        [Kind::Recall, Kind::Ndcg, Kind::ReciprocalRank]
            .iter()
            .all(|&kind| !self.fell(kind))
    }

    fn lost_top_document(&self) -> bool {
        self.top_document == Some(false)
    }

    fn top_document_lower(&self) -> bool {
        self.top_document == Some(true)
    }
}

/// Where the baseline's top relevant document went (the document at rank `1 / rr` of the
/// baseline's ranking, chunks of one document counted once, as the retrieval metrics count
/// them): `Some(false)` when the current ranking no longer has it, `Some(true)` when it has it
/// lower. None when it kept its rank or better, when the baseline had no relevant document
/// ranked (or no reciprocal rank), or when that rank is past the stored ranking.
fn fallen_top_document(
    before: &QueryRecord,
    now: &QueryRecord,
    separator: Option<&str>,
) -> Option<bool> {
    let rr_before = *before.metrics.get("mrr")?;
    if rr_before <= 0.0 {
        return None;
    }
    let rank = (1.0 / rr_before).round() as usize;
    let top = documents(&before.retrieved, separator)
        .into_iter()
        .nth(rank.checked_sub(1)?)?;
    match documents(&now.retrieved, separator)
        .iter()
        .position(|doc| *doc == top)
    {
        None => Some(false),
        Some(position) if position + 1 > rank => Some(true),
        Some(_) => None,
    }
}

/// The documents of a ranking in order, each once.
fn documents<'r>(retrieved: &'r [String], separator: Option<&str>) -> Vec<&'r str> {
    let mut seen = BTreeSet::new();
    retrieved
        .iter()
        .map(|id| {
            let bytes = crate::evaluate::document_of(id.as_bytes(), separator);
            &id[..bytes.len()]
        })
        .filter(|doc| seen.insert(*doc))
        .collect()
}

/// How each family of metrics moved in `slice`: its checks' paired estimates against their
/// limits, and the metrics no check covers from the paired queries against [`FLAT`].
fn slice_moves(
    outcomes: &[CheckOutcome],
    slice: &str,
    members: &[&Paired<'_>],
) -> BTreeMap<&'static str, Vec<MetricMove>> {
    let mut moves: BTreeMap<&'static str, Vec<MetricMove>> = BTreeMap::new();
    let mut covered = BTreeSet::new();
    for o in outcomes.iter().filter(|o| {
        o.slice == slice
            && matches!(o.family, Family::Primary | Family::Slices)
            && o.delta.is_finite()
    }) {
        let Some(kind) = Kind::of(&o.metric) else {
            continue;
        };
        covered.insert(o.metric.clone());
        let tolerance = o.limit.unwrap_or(FLAT);
        moves.entry(key(kind)).or_default().push(MetricMove {
            metric: o.metric.clone(),
            delta: o.delta,
            limit: o.limit,
            direction: direction(o.delta, tolerance),
        });
    }
    let mut names: BTreeSet<&str> = BTreeSet::new();
    for q in members {
        names.extend(q.now.metrics.keys().map(String::as_str));
    }
    for name in names.into_iter().filter(|n| !covered.contains(*n)) {
        let Some(kind) = Kind::of(name) else {
            continue;
        };
        // As `gate::reported` computes a reported metric's change: the difference of the means.
        let (mut n, mut before, mut now) = (0usize, 0.0, 0.0);
        for q in members {
            if let (Some(b), Some(c)) = (q.before.metrics.get(name), q.now.metrics.get(name)) {
                (n, before, now) = (n + 1, before + b, now + c);
            }
        }
        if n == 0 {
            continue;
        }
        let delta = now / n as f64 - before / n as f64;
        moves.entry(key(kind)).or_default().push(MetricMove {
            metric: name.to_string(),
            delta,
            limit: None,
            direction: direction(delta, FLAT),
        });
    }
    moves
}

fn key(kind: Kind) -> &'static str {
    match kind {
        Kind::Recall => "recall",
        Kind::Ndcg => "ndcg",
        Kind::ReciprocalRank => "mrr",
        Kind::Faithfulness => "faithfulness",
        Kind::Relevance => "answer_relevance",
    }
}

fn direction(delta: f64, tolerance: f64) -> Move {
    if delta < -tolerance - EPSILON {
        Move::Down
    } else if delta > tolerance + EPSILON {
        Move::Up
    } else {
        Move::Flat
    }
}

/// A family's direction when its metrics agree: `Down` when some fell and none rose, `Up` the
/// other way, `Flat` when all held; None when absent or split (then no cause reads it either
/// way).
fn family_move(moves: &BTreeMap<&'static str, Vec<MetricMove>>, kind: Kind) -> Option<Move> {
    let metrics = moves.get(key(kind))?;
    let any = |d: Move| metrics.iter().any(|m| m.direction == d);
    match (any(Move::Down), any(Move::Up)) {
        (true, true) => None,
        (true, false) => Some(Move::Down),
        (false, true) => Some(Move::Up),
        (false, false) => Some(Move::Flat),
    }
}

/// The causes of one slice whose metrics moved as they say and whose queries show them.
fn causes_of(
    slice: &str,
    moves: &BTreeMap<&'static str, Vec<MetricMove>>,
    members: &[&Paired<'_>],
) -> Vec<Cause> {
    let state = |kind| family_move(moves, kind);
    let count = |kind| members.iter().filter(|q| shows(kind, q)).count();
    let has_rank = members.iter().any(|q| q.now.metrics.contains_key("mrr"));
    let flat_or_up = |kind| matches!(state(kind), Some(Move::Flat | Move::Up));
    // Each candidate: the kind, the metrics it cites (those it says moved, then those it says
    // held, cited only when flat) and what its queries show.
    let mut candidates: Vec<(CauseKind, Vec<Kind>, Vec<Kind>, &'static str)> = Vec::new();
    if state(Kind::Recall) == Some(Move::Down) && state(Kind::Ndcg) != Some(Move::Up) {
        let evidence = if has_rank {
            "lost their top relevant document"
        } else {
            "retrieve fewer relevant documents"
        };
        let (moved, held) = (vec![Kind::Recall, Kind::Ndcg], vec![Kind::Faithfulness]);
        candidates.push((CauseKind::RetrievalLostEvidence, moved, held, evidence));
    }
    let ranking_fell =
        state(Kind::Ndcg) == Some(Move::Down) || state(Kind::ReciprocalRank) == Some(Move::Down);
    if ranking_fell && flat_or_up(Kind::Recall) {
        let evidence = if has_rank {
            "rank their top relevant document lower"
        } else {
            "rank their relevant documents lower"
        };
        let (moved, held) = (vec![Kind::Ndcg, Kind::ReciprocalRank], vec![Kind::Recall]);
        candidates.push((CauseKind::RankingPushedEvidenceDown, moved, held, evidence));
    }
    // Most of the faithfulness drops are where retrieval held; else retrieval explains them.
    let faithfulness_fell = members
        .iter()
        .filter(|q| q.fell(Kind::Faithfulness))
        .count();
    if state(Kind::Faithfulness) == Some(Move::Down)
        && 2 * count(CauseKind::GeneratorLeftContext) >= faithfulness_fell
    {
        let (moved, held) = (vec![Kind::Faithfulness], vec![Kind::Recall, Kind::Ndcg]);
        let evidence = "lost faithfulness while their retrieval held";
        candidates.push((CauseKind::GeneratorLeftContext, moved, held, evidence));
    }
    if state(Kind::Relevance) == Some(Move::Down) && flat_or_up(Kind::Faithfulness) {
        let (moved, held) = (vec![Kind::Relevance], vec![Kind::Faithfulness]);
        let evidence = "lost answer relevance while their faithfulness held";
        candidates.push((CauseKind::AnswersDodgeQuestion, moved, held, evidence));
    }
    candidates
        .into_iter()
        .filter_map(|(kind, moved, held, evidence)| {
            let queries = count(kind);
            let flat = held.into_iter().filter(|&k| state(k) == Some(Move::Flat));
            (queries > 0).then(|| Cause {
                slice: slice.to_string(),
                kind,
                moves: moved
                    .into_iter()
                    .chain(flat)
                    .flat_map(|k| moves.get(key(k)).into_iter().flatten().cloned())
                    .collect(),
                queries,
                paired: members.len(),
                evidence,
                top_slice: None,
            })
        })
        .collect()
}

/// The slice value (over the tier's slice fields) holding most of the queries that show an
/// `all` cause, and how many; None without slice fields.
fn top_slice(cause: &Cause, members: &[&Paired<'_>], fields: &[String]) -> Option<(String, usize)> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for q in members.iter().filter(|q| shows(cause.kind, q)) {
        for field in fields {
            if let Some(value) = q.now.slices.get(field) {
                *counts.entry(format!("{field}={value}")).or_default() += 1;
            }
        }
    }
    let best = counts.values().copied().max()?;
    counts.into_iter().find(|(_, count)| *count == best)
}

/// Whether a query shows `kind` (as [`causes_of`] counted it).
fn shows(kind: CauseKind, q: &Paired<'_>) -> bool {
    let has_rank = q.now.metrics.contains_key("mrr");
    match kind {
        CauseKind::RetrievalLostEvidence if has_rank => q.lost_top_document(),
        CauseKind::RetrievalLostEvidence => q.fell(Kind::Recall),
        CauseKind::RankingPushedEvidenceDown if has_rank => q.top_document_lower(),
        CauseKind::RankingPushedEvidenceDown => q.fell(Kind::Ndcg) && !q.fell(Kind::Recall),
        CauseKind::GeneratorLeftContext => q.fell(Kind::Faithfulness) && q.retrieval_held(),
        CauseKind::AnswersDodgeQuestion => q.fell(Kind::Relevance) && !q.fell(Kind::Faithfulness),
    }
}

#[cfg(test)]
#[path = "causes_tests.rs"]
mod tests;
