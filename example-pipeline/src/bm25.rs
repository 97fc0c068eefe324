//! Okapi BM25 over title + text (k1 = 1.2, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5))).

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};

use crate::corpus::Document;
use crate::text;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// An inverted index: term -> (document index, term frequency), in document order.
pub struct Index {
    postings: HashMap<String, Vec<(usize, u32)>>,
    lengths: Vec<f64>,
    average_length: f64,
}

/// A document index with its score; rankings are sorted by score, then by doc_id.
pub type Ranking = Vec<(usize, f64)>;

impl Index {
    pub fn build(docs: &[Document]) -> Index {
        let mut postings: HashMap<String, Vec<(usize, u32)>> = HashMap::new();
        let mut lengths = Vec::with_capacity(docs.len());
        for (index, doc) in docs.iter().enumerate() {
            let mut counts: BTreeMap<String, u32> = BTreeMap::new();
            let mut length = 0usize;
            for source in [&doc.title, &doc.text] {
                for token in text::tokens(source) {
                    *counts.entry(token).or_default() += 1;
                    length += 1;
                }
            }
            for (term, count) in counts {
                postings.entry(term).or_default().push((index, count));
            }
            lengths.push(length as f64);
        }
        let total: f64 = lengths.iter().sum();
        let average_length = if total > 0.0 {
            total / lengths.len() as f64
        } else {
            1.0
        };
        Index {
            postings,
            lengths,
            average_length,
        }
    }

    /// BM25 of every document that contains a query term, best first (ties: doc_id order).
    /// A term repeated in the query counts once per occurrence.
    pub fn search(&self, terms: &[String], docs: &[Document]) -> Ranking {
        let mut frequencies: BTreeMap<&str, f64> = BTreeMap::new();
        for term in terms {
            *frequencies.entry(term.as_str()).or_default() += 1.0;
        }
        let n = self.lengths.len() as f64;
        let mut scores = vec![0.0f64; self.lengths.len()];
        let mut matched = vec![false; self.lengths.len()];
        for (term, query_frequency) in frequencies {
            let Some(list) = self.postings.get(term) else {
                continue;
            };
            let df = list.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in list {
                let tf = f64::from(tf);
                let norm = K1 * (1.0 - B + B * self.lengths[doc] / self.average_length);
                scores[doc] += query_frequency * idf * tf * (K1 + 1.0) / (tf + norm);
                matched[doc] = true;
            }
        }
        let mut ranking: Ranking = (0..scores.len())
            .filter(|&doc| matched[doc])
            .map(|doc| (doc, scores[doc]))
            .collect();
        sort_ranking(&mut ranking, docs);
        ranking
    }
}

/// Best score first; equal scores in doc_id order, so the output never depends on hashing.
pub fn sort_ranking(ranking: &mut Ranking, docs: &[Document]) {
    ranking.sort_by(|a, b| match b.1.total_cmp(&a.1) {
        Ordering::Equal => docs[a.0].doc_id.cmp(&docs[b.0].doc_id),
        order => order,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(id: &str, text: &str) -> Document {
        Document {
            doc_id: id.into(),
            title: String::new(),
            text: text.into(),
        }
    }

    #[test]
    fn matches_a_hand_computed_score() {
        // Lengths 3, 2, 4 (avgdl 3); "bucket" in d1 (tf 2) and d3 (tf 1): df 2, N 3.
        let docs = [
            doc("d1", "bucket bucket policy"),
            doc("d2", "lifecycle rule"),
            doc("d3", "bucket versioning lock retention"),
        ];
        let index = Index::build(&docs);
        let ranking = index.search(&text::tokens("bucket"), &docs);
        let idf = (1.0f64 + (3.0 - 2.0 + 0.5) / (2.0 + 0.5)).ln(); // ln 1.6
        let d1 = idf * 2.0 * 2.2 / (2.0 + 1.2 * (0.25 + 0.75 * 3.0 / 3.0));
        let d3 = idf * 1.0 * 2.2 / (1.0 + 1.2 * (0.25 + 0.75 * 4.0 / 3.0));
        assert_eq!(ranking.len(), 2);
        assert_eq!((ranking[0].0, ranking[1].0), (0, 2));
        assert!((ranking[0].1 - d1).abs() < 1e-12 && (ranking[1].1 - d3).abs() < 1e-12);
        assert!((d1 - 0.6463).abs() < 1e-4, "{d1}"); // ln 1.6 * 4.4 / 3.2
    }

    #[test]
    fn ties_go_in_doc_id_order() {
        let docs = [doc("b", "quota"), doc("a", "quota")];
        let index = Index::build(&docs);
        let ranking = index.search(&text::tokens("quota"), &docs);
        assert_eq!(ranking.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 0]);
    }
}
