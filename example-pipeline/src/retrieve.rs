//! The retrieval variants: plain BM25, hybrid (RRF of BM25 and a synonym-expanded BM25, plus a
//! title bonus), rerank (hybrid re-ordered by title and phrase matches) and degraded; any of them
//! optionally stochastic (seeded score noise, as approximate indexes and sampled rerankers are).

use std::collections::BTreeSet;

use crate::bm25::{self, Index, Ranking};
use crate::corpus::{Document, Synonyms};
use crate::text;

/// Reciprocal Rank Fusion constant: a document at rank r of a ranking adds 1 / (K0 + r).
pub const RRF_K0: f64 = 60.0;
/// How deep each ranking goes into the fusion (at least the requested k).
const FUSION_DEPTH: usize = 100;
/// The title bonus for a title holding every query term: worth a first place in one ranking.
const TITLE_BONUS: f64 = 1.0 / (RRF_K0 + 1.0);
/// How many of the hybrid's documents the rerank step re-orders.
const RERANK_DEPTH: usize = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Variant {
    /// Plain Okapi BM25 over title + text.
    Bm25,
    /// BM25 fused with a synonym-expanded BM25 by RRF (k0 = 60), plus a title bonus.
    Hybrid,
    /// Hybrid, its top 20 re-ordered by title and phrase matches.
    Rerank,
    /// Hybrid that loses the best document for a third of the queries (a demo regression).
    Degraded,
}

/// The corpus, its index and the synonym table: everything a query needs.
pub struct Retriever {
    pub docs: Vec<Document>,
    index: Index,
    synonyms: Synonyms,
    titles: Vec<BTreeSet<String>>,
    noise: Option<Noise>,
}

/// Seeded multiplicative score noise: every (query, document) score is multiplied by
/// `exp(sigma z)`, `z` a standard normal drawn from a hash of (seed, qid, doc_id), and the ranking
/// re-sorted. Same seed, same output; another seed is another run of a nondeterministic retriever.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Noise {
    pub sigma: f64,
    pub seed: u64,
}

impl Noise {
    /// The factor for one (query, document) pair.
    fn factor(&self, qid: &str, doc_id: &str) -> f64 {
        const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;
        let key =
            mix(self.seed.wrapping_add(GOLDEN)) ^ qid_hash(qid) ^ qid_hash(doc_id).rotate_left(17);
        let first = mix(key.wrapping_add(GOLDEN));
        let second = mix(first.wrapping_add(GOLDEN));
        // Box-Muller on two uniforms in (0, 1].
        let uniform = |bits: u64| ((bits >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        let z = (-2.0 * uniform(first).ln()).sqrt()
            * (2.0 * std::f64::consts::PI * uniform(second)).cos();
        (self.sigma * z).exp()
    }
}

impl Retriever {
    pub fn new(docs: Vec<Document>, synonyms: Synonyms) -> Retriever {
        let index = Index::build(&docs);
        let titles = docs
            .iter()
            .map(|doc| text::tokens(&doc.title).into_iter().collect())
            .collect();
        Retriever {
            docs,
            index,
            synonyms,
            titles,
            noise: None,
        }
    }

    /// The same retriever with seeded score noise on every variant.
    pub fn with_noise(mut self, noise: Noise) -> Retriever {
        self.noise = Some(noise);
        self
    }

    /// The top `k` documents for `query`, best first.
    pub fn retrieve(&self, qid: &str, query: &str, variant: Variant, k: usize) -> Ranking {
        let terms = text::tokens(query);
        let mut ranking = match variant {
            Variant::Bm25 => self.index.search(&terms, &self.docs),
            Variant::Hybrid => self.hybrid(&terms, k),
            Variant::Rerank => self.rerank(&terms, self.hybrid(&terms, k.max(RERANK_DEPTH))),
            Variant::Degraded => {
                let mut ranking = self.hybrid(&terms, k + 1);
                if drops_best_document(qid) && !ranking.is_empty() {
                    ranking.remove(0);
                }
                ranking
            }
        };
        if let Some(noise) = self.noise {
            for (doc, score) in &mut ranking {
                *score *= noise.factor(qid, &self.docs[*doc].doc_id);
            }
            bm25::sort_ranking(&mut ranking, &self.docs);
        }
        ranking.truncate(k);
        ranking
    }

    fn hybrid(&self, terms: &[String], k: usize) -> Ranking {
        let depth = FUSION_DEPTH.max(k);
        let extra = self.synonyms.expansions(terms);
        let plain = self.index.search(terms, &self.docs);
        let expanded = self.index.search(&[terms, &extra[..]].concat(), &self.docs);
        let mut fused = vec![0.0f64; self.docs.len()];
        let mut candidates = BTreeSet::new();
        for ranking in [&plain, &expanded] {
            for (rank, &(doc, _)) in ranking.iter().take(depth).enumerate() {
                fused[doc] += 1.0 / (RRF_K0 + rank as f64 + 1.0);
                candidates.insert(doc);
            }
        }
        let mut ranking: Ranking = candidates
            .into_iter()
            .map(|doc| {
                (
                    doc,
                    fused[doc] + TITLE_BONUS * self.title_share(doc, terms, &extra),
                )
            })
            .collect();
        bm25::sort_ranking(&mut ranking, &self.docs);
        ranking
    }

    /// Share of the query's distinct terms found in the document's title, counting the synonym
    /// table's alternatives (`extra`) as found terms too; at most 1.
    fn title_share(&self, doc: usize, terms: &[String], extra: &[String]) -> f64 {
        let distinct: BTreeSet<&String> = terms.iter().collect();
        let title = &self.titles[doc];
        if distinct.is_empty() || title.is_empty() {
            return 0.0;
        }
        let found: BTreeSet<&String> = terms
            .iter()
            .chain(extra)
            .filter(|term| title.contains(*term))
            .collect();
        (found.len() as f64 / distinct.len() as f64).min(1.0)
    }

    /// Re-orders the hybrid's top 20 by title share + phrase share + half the normalised
    /// hybrid score; the rest keeps its order below them.
    fn rerank(&self, terms: &[String], hybrid: Ranking) -> Ranking {
        let best = hybrid.first().map_or(1.0, |&(_, score)| score);
        let normalised = |score: f64| if best > 0.0 { 0.5 * score / best } else { 0.0 };
        let depth = hybrid.len().min(RERANK_DEPTH);
        let extra = self.synonyms.expansions(terms);
        let mut head: Ranking = hybrid[..depth]
            .iter()
            .map(|&(doc, score)| {
                let rerank = self.title_share(doc, terms, &extra) + self.phrase_share(doc, terms);
                (doc, rerank + normalised(score))
            })
            .collect();
        // A stable sort: equal rerank scores keep the hybrid order.
        head.sort_by(|a, b| b.1.total_cmp(&a.1));
        head.extend(
            hybrid[depth..]
                .iter()
                .map(|&(doc, score)| (doc, normalised(score))),
        );
        head
    }

    /// Share of the query's adjacent term pairs that occur as adjacent terms in the document.
    fn phrase_share(&self, doc: usize, terms: &[String]) -> f64 {
        if terms.len() < 2 {
            return 0.0;
        }
        let doc = &self.docs[doc];
        let words: Vec<String> = text::tokens(&format!("{}\n{}", doc.title, doc.text));
        let pairs: BTreeSet<(&str, &str)> = words
            .windows(2)
            .map(|pair| (pair[0].as_str(), pair[1].as_str()))
            .collect();
        let found = terms
            .windows(2)
            .filter(|pair| pairs.contains(&(pair[0].as_str(), pair[1].as_str())))
            .count();
        found as f64 / (terms.len() - 1) as f64
    }
}

/// FNV-1a, 64 bits: a stable hash of a qid (no random state, same on every platform).
pub fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A well-mixed 64-bit hash of a qid: FNV-1a, then the splitmix64 finalizer, so that every bit
/// depends on every byte (similar qids like "q1", "q2" land far apart).
pub fn qid_hash(qid: &str) -> u64 {
    mix(fnv1a(qid))
}

/// The splitmix64 finalizer.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The degraded variant drops the best document for the queries whose hash is 0 mod 3.
pub fn drops_best_document(qid: &str) -> bool {
    qid_hash(qid).is_multiple_of(3)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(id: &str, title: &str, text: &str) -> Document {
        Document {
            doc_id: id.into(),
            title: title.into(),
            text: text.into(),
        }
    }

    fn retriever() -> Retriever {
        let docs = vec![
            doc(
                "upload-limits",
                "Upload limits",
                "A multipart upload is aborted after three failed parts.",
            ),
            doc(
                "dropped-packets",
                "Network",
                "Dropped packets are dropped, dropped and dropped again.",
            ),
            doc("quotas", "Quotas", "Each bucket has a storage quota."),
        ];
        let mut synonyms = Synonyms::default();
        synonyms.add("dropped", "aborted").unwrap();
        Retriever::new(docs, synonyms)
    }

    #[test]
    fn rrf_fuses_the_plain_and_the_expanded_ranking() {
        let retriever = retriever();
        let query = "upload dropped";
        let plain = retriever.retrieve("q", query, Variant::Bm25, 10);
        let hybrid = retriever.retrieve("q", query, Variant::Hybrid, 10);
        let ids = |ranking: &Ranking| {
            ranking
                .iter()
                .map(|&(doc, _)| retriever.docs[doc].doc_id.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(&plain), ["dropped-packets", "upload-limits"]);
        // Expanded: upload-limits first (upload + aborted); fused with a title bonus it wins.
        assert_eq!(ids(&hybrid), ["upload-limits", "dropped-packets"]);
        let expected = 1.0 / 62.0 + 1.0 / 61.0 + TITLE_BONUS * 0.5;
        assert!((hybrid[0].1 - expected).abs() < 1e-12);
    }

    #[test]
    fn degraded_drops_the_best_document_for_a_third_of_the_queries() {
        let dropped = (0..300)
            .filter(|i| drops_best_document(&format!("q{i}")))
            .count();
        assert!((80..=120).contains(&dropped), "{dropped}");
        let retriever = retriever();
        let qid = (0..)
            .map(|i| format!("q{i}"))
            .find(|qid| drops_best_document(qid))
            .unwrap();
        let hybrid = retriever.retrieve(&qid, "upload dropped", Variant::Hybrid, 10);
        let degraded = retriever.retrieve(&qid, "upload dropped", Variant::Degraded, 10);
        assert_eq!(degraded, hybrid[1..]);
    }

    #[test]
    fn noise_is_seeded_lognormal_and_reorders_close_scores() {
        let noise = |seed| Noise { sigma: 0.1, seed };
        // The factors' logs are N(0, 0.1^2): mean near 0, sd near 0.1 over many pairs.
        let logs: Vec<f64> = (0..4000)
            .map(|i| {
                noise(7)
                    .factor(&format!("q{}", i % 40), &format!("d{i}"))
                    .ln()
            })
            .collect();
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        let sd = (logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 3999.0).sqrt();
        assert!(mean.abs() < 0.01 && (sd - 0.1).abs() < 0.01, "{mean} {sd}");
        // Same seed, same factor; another seed or qid, another factor.
        assert_eq!(noise(7).factor("q1", "d1"), noise(7).factor("q1", "d1"));
        assert_ne!(noise(7).factor("q1", "d1"), noise(8).factor("q1", "d1"));
        assert_ne!(noise(7).factor("q1", "d1"), noise(7).factor("q2", "d1"));
        // Two documents with equal scores: some seeds swap them, the plain retriever never does.
        let docs = vec![
            Document {
                doc_id: "a".into(),
                title: String::new(),
                text: "quota".into(),
            },
            Document {
                doc_id: "b".into(),
                title: String::new(),
                text: "quota".into(),
            },
        ];
        let first =
            |retriever: &Retriever| retriever.retrieve("q", "quota", Variant::Bm25, 10)[0].0;
        let plain = Retriever::new(docs.clone(), Synonyms::default());
        assert_eq!(first(&plain), 0);
        let swapped = (0..20)
            .filter(|&seed| first(&plain_with(&docs, seed)) == 1)
            .count();
        assert!((4..=16).contains(&swapped), "{swapped}");
        assert_eq!(first(&plain_with(&docs, 3)), first(&plain_with(&docs, 3)));
    }

    fn plain_with(docs: &[Document], seed: u64) -> Retriever {
        Retriever::new(docs.to_vec(), Synonyms::default()).with_noise(Noise { sigma: 0.1, seed })
    }

    #[test]
    fn fnv1a_is_the_published_function() {
        assert_eq!(fnv1a(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a("a"), 0xaf63_dc4c_8601_ec8c);
    }
}
