//! Embedding-based `answer_relevance` with the anisotropy correction.
//!
//! Embedding spaces are anisotropic: any two texts have a clearly positive cosine, so a raw
//! cosine of 0.8 between a question and its answer says little by itself. Each query's cosine is
//! therefore measured against the cosines of its question with the answers to the OTHER queries
//! of the tier, which are (almost always) unrelated to it.
//!
//! For the n queries of a tier that have a non-empty answer, with question embedding q_i and
//! answer embedding a_i (f32 components, computed in f64), unit vectors q̂ = q/|q|, â = a/|a|:
//!
//! - cosine      c_i = q̂_i · â_i, clamped to [-1, 1];
//! - baseline    b_i = mean over j != i of q̂_i · â_j = (q̂_i · A − q̂_i · â_i) / (n − 1), where
//!   A = sum of â_j over all n queries, summed in qid order; clamped to [-1, 1];
//! - score       s_i = 0 when c_i <= b_i, else min(1, (c_i − b_i) / (1 − b_i)).
//!
//! c_i > b_i implies b_i < 1, so the division is always defined: an answer no closer to its
//! question than the unrelated answers scores 0, an answer identical in direction to its question
//! scores 1. Fewer than 2 such queries, a zero or non-finite vector, or vectors of different
//! lengths are errors (fail closed): there is nothing to normalise against.
//!
//! The per-query parts (c_i, b_i, n − 1) are stored in the results; since b_i depends on every
//! answer of the tier, the vectors themselves go to `embeddings.jsonl` beside the results, and
//! [`normalise`] over the union of the shards' vectors gives exactly the values of an unsharded
//! run (same inputs, same qid order, same arithmetic).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One query's embeddings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddedQuery {
    /// The query's id.
    pub qid: String,
    /// The embedding of the question.
    pub question: Vec<f32>,
    /// The embedding of the answer.
    pub answer: Vec<f32>,
}

/// The stored parts of one query's embedding relevance.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelevanceParts {
    /// cos(question, answer).
    pub cosine: f64,
    /// Mean cos(question, answer of another query) over the other queries.
    pub others_mean: f64,
    /// How many other queries.
    pub others: usize,
}

impl RelevanceParts {
    /// The normalised score in [0, 1].
    pub fn score(&self) -> f64 {
        if self.cosine <= self.others_mean {
            0.0
        } else {
            ((self.cosine - self.others_mean) / (1.0 - self.others_mean)).min(1.0)
        }
    }
}

fn unit(vector: &[f32], qid: &str, what: &str) -> Result<Vec<f64>, String> {
    let values: Vec<f64> = vector.iter().map(|&x| f64::from(x)).collect();
    let norm = values.iter().map(|x| x * x).sum::<f64>().sqrt();
    if !(norm.is_finite() && norm > 0.0) {
        return Err(format!(
            "the {what} embedding of query `{qid}` has norm {norm}: expected a non-zero finite vector"
        ));
    }
    Ok(values.iter().map(|x| x / norm).collect())
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The parts of every query, by qid (see the module doc for the formulas).
pub fn normalise(queries: &[EmbeddedQuery]) -> Result<BTreeMap<String, RelevanceParts>, String> {
    let mut sorted: Vec<&EmbeddedQuery> = queries.iter().collect();
    sorted.sort_by(|a, b| a.qid.cmp(&b.qid));
    if let Some(pair) = sorted.windows(2).find(|w| w[0].qid == w[1].qid) {
        return Err(format!("query `{}` has two embeddings", pair[0].qid));
    }
    let n = sorted.len();
    if n < 2 {
        return Err(format!(
            "embedding answer relevance needs at least 2 queries with answers to normalise against, found {n}"
        ));
    }
    let dims = sorted[0].question.len();
    let mut questions = Vec::with_capacity(n);
    let mut answers = Vec::with_capacity(n);
    for query in &sorted {
        if query.question.len() != dims || query.answer.len() != dims {
            return Err(format!(
                "the embeddings of query `{}` have {} and {} dimensions, those of `{}` {dims}: expected one model's vectors",
                query.qid,
                query.question.len(),
                query.answer.len(),
                sorted[0].qid
            ));
        }
        questions.push(unit(&query.question, &query.qid, "question")?);
        answers.push(unit(&query.answer, &query.qid, "answer")?);
    }
    let mut sum = vec![0.0; dims];
    for answer in &answers {
        for (total, x) in sum.iter_mut().zip(answer) {
            *total += x;
        }
    }
    let others = n - 1;
    Ok(sorted
        .iter()
        .zip(questions.iter().zip(&answers))
        .map(|(query, (question, answer))| {
            let own = dot(question, answer);
            let others_mean = ((dot(question, &sum) - own) / others as f64).clamp(-1.0, 1.0);
            let parts = RelevanceParts {
                cosine: own.clamp(-1.0, 1.0),
                others_mean,
                others,
            };
            (query.qid.clone(), parts)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(qid: &str, question: &[f32], answer: &[f32]) -> EmbeddedQuery {
        EmbeddedQuery {
            qid: qid.into(),
            question: question.to_vec(),
            answer: answer.to_vec(),
        }
    }

    #[test]
    fn parts_and_scores_by_hand() {
        // q1 = (1,0), a1 = (1,1)/√2; q2 = (0,1) scaled by 2, a2 = (0,1); q3 = (1,0), a3 = (1,0).
        let queries = [
            query("q2", &[0.0, 2.0], &[0.0, 1.0]),
            query("q1", &[1.0, 0.0], &[1.0, 1.0]),
            query("q3", &[1.0, 0.0], &[3.0, 0.0]),
        ];
        let parts = normalise(&queries).unwrap();
        let h = std::f64::consts::FRAC_1_SQRT_2;
        // q1: c = h; others: cos(q1, a2) = 0, cos(q1, a3) = 1 -> b = 0.5.
        let q1 = parts["q1"];
        assert!((q1.cosine - h).abs() < 1e-15);
        assert!((q1.others_mean - 0.5).abs() < 1e-15);
        assert_eq!(q1.others, 2);
        assert!((q1.score() - (h - 0.5) / 0.5).abs() < 1e-15);
        // q2: c = 1; others: cos(q2, a1) = h, cos(q2, a3) = 0 -> b = h/2; score 1.
        let q2 = parts["q2"];
        assert!((q2.others_mean - h / 2.0).abs() < 1e-15);
        assert_eq!(q2.score(), 1.0);
        // q3: c = 1; others: cos(q3, a1) = h, cos(q3, a2) = 0.
        assert!((parts["q3"].others_mean - h / 2.0).abs() < 1e-15);
        let order: Vec<&String> = parts.keys().collect();
        assert_eq!(order, ["q1", "q2", "q3"]);
    }

    #[test]
    fn an_answer_no_closer_than_unrelated_ones_scores_zero() {
        let below = RelevanceParts {
            cosine: 0.7,
            others_mean: 0.8,
            others: 3,
        };
        assert_eq!(below.score(), 0.0);
        let degenerate = RelevanceParts {
            cosine: 1.0,
            others_mean: 1.0,
            others: 3,
        };
        assert_eq!(degenerate.score(), 0.0, "no division by zero");
        let above = RelevanceParts {
            cosine: 0.9,
            others_mean: 0.8,
            others: 3,
        };
        assert!((above.score() - 0.5).abs() < 1e-12);
    }

    #[test]
    fn unusable_inputs_are_errors() {
        let one = normalise(&[query("q", &[1.0], &[1.0])]).unwrap_err();
        assert!(one.contains("at least 2"), "{one}");
        let zero = normalise(&[
            query("a", &[1.0, 0.0], &[0.0, 0.0]),
            query("b", &[1.0, 0.0], &[1.0, 0.0]),
        ])
        .unwrap_err();
        assert!(zero.contains("answer embedding of query `a`"), "{zero}");
        let dims = normalise(&[
            query("a", &[1.0, 0.0], &[1.0, 0.0]),
            query("b", &[1.0], &[1.0]),
        ])
        .unwrap_err();
        assert!(dims.contains("dimensions"), "{dims}");
        let twice =
            normalise(&[query("a", &[1.0], &[1.0]), query("a", &[1.0], &[1.0])]).unwrap_err();
        assert!(twice.contains("two embeddings"), "{twice}");
    }

    #[test]
    fn input_order_does_not_matter() {
        let queries: Vec<EmbeddedQuery> = (0..7)
            .map(|i| {
                let x = i as f32;
                query(&format!("q{i}"), &[1.0, x, 0.5 * x], &[x, 1.0, 0.3])
            })
            .collect();
        let mut reversed = queries.clone();
        reversed.reverse();
        assert_eq!(normalise(&queries), normalise(&reversed));
    }
}
