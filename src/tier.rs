//! A tier's queries: its own qrels file, or a seeded, stratified sample of a larger one.

use std::collections::BTreeMap;
use std::path::Path;

use crate::config::{Tier, TierSource};
use crate::error::{Error, Result};
use crate::input::{self, qrels::Qrels};
use crate::stats;

/// The qrels of a tier and the sha256 of the file they come from.
pub struct TierQueries {
    pub qrels: Qrels,
    pub file_sha256: String,
}

pub fn load(tier: &Tier) -> Result<TierQueries> {
    let (path, sample, key) = match &tier.source {
        TierSource::Qrels(path) => (path.as_path(), None, "qrels"),
        TierSource::Sample {
            from,
            size,
            stratify,
            seed,
        } => (
            from.as_path(),
            Some((*size, stratify.as_deref(), *seed)),
            "from",
        ),
    };
    let bytes = std::fs::read(path)
        .map_err(|e| Error::io(path, e).named_by(&format!("tiers.{}.{key}", tier.name)))?;
    let qrels = input::load_qrels(path, None, "test", None)?;
    let qrels = match sample {
        None => qrels,
        Some((size, stratify, seed)) => sample_qrels(path, qrels, size, stratify, seed)?,
    };
    Ok(TierQueries {
        qrels,
        file_sha256: crate::digest::sha256_hex(&bytes),
    })
}

/// Picks `size` queries: each stratum (value of the `stratify` field, `<none>` when absent) gets
/// its share by largest remainder, filled from a seeded shuffle (`stats::shuffle`, Fisher-Yates on
/// the pinned ChaCha8 stream); the result keeps file order.
fn sample_qrels(
    path: &Path,
    qrels: Qrels,
    size: usize,
    stratify: Option<&str>,
    seed: u64,
) -> Result<Qrels> {
    if size > qrels.len() {
        return Err(Error::input(
            path,
            format!(
                "a sample of {size} queries was asked for, but the file has {}: expected sample <= {}",
                qrels.len(),
                qrels.len()
            ),
        ));
    }
    let mut strata: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (position, query) in qrels.queries().iter().enumerate() {
        let key = stratify
            .and_then(|field| query.attributes.get(field))
            .cloned()
            .unwrap_or_else(|| "<none>".to_string());
        strata.entry(key).or_default().push(position);
    }
    let total = qrels.len();
    let mut shares: Vec<(String, usize, usize)> = strata
        .iter()
        .map(|(key, members)| {
            (
                key.clone(),
                members.len() * size / total,
                members.len() * size % total,
            )
        })
        .collect();
    let assigned: usize = shares.iter().map(|s| s.1).sum();
    let mut by_remainder: Vec<usize> = (0..shares.len()).collect();
    by_remainder.sort_by(|&a, &b| {
        shares[b]
            .2
            .cmp(&shares[a].2)
            .then_with(|| shares[a].0.cmp(&shares[b].0))
    });
    for &index in by_remainder.iter().take(size - assigned) {
        shares[index].1 += 1;
    }
    let mut chosen: Vec<usize> = Vec::with_capacity(size);
    for (key, count, _) in shares {
        let mut members = strata[&key].clone();
        let mut rng = stats::rng_for(seed, &format!("sample {key}"));
        stats::shuffle(&mut members, &mut rng);
        chosen.extend(members.into_iter().take(count));
    }
    chosen.sort_unstable();
    Ok(qrels.select(&chosen))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::text_file::TextFile;

    fn qrels(n: usize) -> Qrels {
        let mut text = String::new();
        for i in 0..n {
            let class = if i % 4 == 0 { "rare" } else { "common" };
            text.push_str(&format!("{{\"qid\":\"q{i:03}\",\"query\":\"x\",\"gold_doc_ids\":[\"d\"],\"class\":\"{class}\"}}\n"));
        }
        input::native_qrels::read(&TextFile::from_bytes("q.jsonl", text.into_bytes()).unwrap())
            .unwrap()
    }

    fn qids(q: &Qrels) -> Vec<String> {
        q.queries().iter().map(|q| q.qid.clone()).collect()
    }

    #[test]
    fn stratified_sample_is_proportional_seeded_and_in_file_order() {
        let sample = sample_qrels(Path::new("q"), qrels(100), 20, Some("class"), 7).unwrap();
        assert_eq!(sample.len(), 20);
        let rare = sample
            .queries()
            .iter()
            .filter(|q| q.attributes["class"] == "rare")
            .count();
        assert_eq!(rare, 5, "25% of the file, 25% of the sample");
        let ids = qids(&sample);
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted, "file order kept");
        assert_eq!(
            ids,
            qids(&sample_qrels(Path::new("q"), qrels(100), 20, Some("class"), 7).unwrap())
        );
        assert_ne!(
            ids,
            qids(&sample_qrels(Path::new("q"), qrels(100), 20, Some("class"), 8).unwrap())
        );
        // Pinned: the same file and seed pick these queries after any dependency upgrade.
        assert_eq!(ids, PINNED_SAMPLE);
        assert!(
            sample_qrels(Path::new("q"), qrels(10), 11, None, 1)
                .unwrap_err()
                .to_string()
                .contains("expected sample <= 10")
        );
    }

    const PINNED_SAMPLE: [&str; 20] = [
        "q008", "q009", "q010", "q026", "q040", "q041", "q047", "q049", "q050", "q052", "q055",
        "q057", "q060", "q063", "q064", "q071", "q075", "q083", "q085", "q090",
    ];
}
