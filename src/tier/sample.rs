//! Stable samples of a larger qrels file: a query's membership depends on the seed, its qid and
//! its stratum's share, never on the order or the number of the other queries.
//!
//! Two choices make a sample stay put as the qrels grow (docs/config.md, `sample:`):
//! - **Within a stratum, bottom-k of a keyed hash.** Each query gets the rank key
//!   `SHA-256("ragate-sample-v2" 0 seed 0 qid)` (first 8 bytes, big-endian); a stratum given `s`
//!   places takes its `s` queries of lowest key. A new query enters only when its key is below
//!   the stratum's current cut, and then pushes out one query; a removed query leaves alone.
//! - **Between strata, Webster's (Sainte-Laguë) divisor method.** Places go one at a time to the
//!   stratum of the highest `members / (2 * places + 1)`. A divisor method is population
//!   monotone: a stratum that grows while the others stay never loses a place, and the others
//!   never gain one (largest remainder, the method before, has the population paradox). It is
//!   also house monotone: raising `sample` from 40 to 50 keeps the 40.
//!
//! So adding k queries changes about k sampled queries (each new query in the sample pushes one
//! out; a place that moves to a growing stratum moves one more), and removing one removes only it.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap};

use sha2::{Digest, Sha256};

/// The sampler's name, recorded in a baseline's provenance with the sample's parameters: a
/// baseline drawn by another sampler is a different sample.
pub(crate) const SAMPLER: &str = "stable-v2";

/// The stratum of queries without the `stratify` field.
pub(crate) const NO_STRATUM: &str = "<none>";

/// The positions (in `strata`' member order) of a sample of `size`: `strata` maps each stratum to
/// its members as (position, qid). The result is sorted (file order). `size` is at most the
/// number of members (the caller checks it).
pub(crate) fn positions(
    strata: &BTreeMap<String, Vec<(usize, &str)>>,
    size: usize,
    seed: u64,
) -> Vec<usize> {
    let sizes: Vec<usize> = strata.values().map(Vec::len).collect();
    let places = webster_places(&sizes, size);
    let mut chosen: Vec<usize> = Vec::with_capacity(size);
    for (members, places) in strata.values().zip(places) {
        let mut keyed: Vec<(u64, &str, usize)> = members
            .iter()
            .map(|&(position, qid)| (rank_key(seed, qid), qid, position))
            .collect();
        keyed.sort_unstable();
        chosen.extend(keyed.into_iter().take(places).map(|(_, _, p)| p));
    }
    chosen.sort_unstable();
    chosen
}

/// The rank key of `qid` under `seed`: its place in every sample drawn with that seed (lower
/// keys first; ties, which need a SHA-256 collision in 64 bits, by qid).
fn rank_key(seed: u64, qid: &str) -> u64 {
    let mut hasher = Sha256::new();
    hasher.update(b"ragate-sample-v2\0");
    hasher.update(seed.to_string().as_bytes());
    hasher.update(b"\0");
    hasher.update(qid.as_bytes());
    let digest = hasher.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

/// A stratum's claim on the next place: `members / (2 * places + 1)`, compared exactly.
#[derive(PartialEq, Eq)]
struct Claim {
    members: usize,
    places: usize,
    /// The stratum's index (strata in name order): among equal claims the first name wins.
    index: usize,
}

impl Ord for Claim {
    fn cmp(&self, other: &Self) -> Ordering {
        let ours = self.members as u128 * (2 * other.places as u128 + 1);
        let theirs = other.members as u128 * (2 * self.places as u128 + 1);
        ours.cmp(&theirs).then_with(|| other.index.cmp(&self.index))
    }
}

impl PartialOrd for Claim {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Webster's apportionment of `size` places to strata of `sizes` members, no stratum given more
/// places than it has members. `size` is at most the sum of `sizes`.
fn webster_places(sizes: &[usize], size: usize) -> Vec<usize> {
    let mut places = vec![0; sizes.len()];
    let mut claims: BinaryHeap<Claim> = sizes
        .iter()
        .enumerate()
        .filter(|(_, members)| **members > 0)
        .map(|(index, &members)| Claim {
            members,
            places: 0,
            index,
        })
        .collect();
    for _ in 0..size {
        let Some(mut claim) = claims.pop() else {
            break;
        };
        claim.places += 1;
        places[claim.index] = claim.places;
        if claim.places < claim.members {
            claims.push(claim);
        }
    }
    places
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` qids `q0000`..
    fn qids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("q{i:04}")).collect()
    }

    /// A qid's stratum: its number's `length`, so that a query keeps its stratum whatever else
    /// the file holds.
    fn length(qid: &str) -> &'static str {
        let i: usize = qid[1..].parse().unwrap();
        ["short", "medium", "long"][(i * 7 + i / 3) % 3]
    }

    /// The sample of `size` with `seed` of a file of `qids` (in that order), stratified by
    /// [`length`].
    fn sampled(qids: &[String], size: usize, seed: u64) -> Vec<String> {
        let mut strata: BTreeMap<String, Vec<(usize, &str)>> = BTreeMap::new();
        for (i, qid) in qids.iter().enumerate() {
            strata
                .entry(length(qid).to_string())
                .or_default()
                .push((i, qid.as_str()));
        }
        positions(&strata, size, seed)
            .into_iter()
            .map(|p| qids[p].clone())
            .collect()
    }

    fn shared(a: &[String], b: &[String]) -> usize {
        a.iter().filter(|q| b.contains(q)).count()
    }

    #[test]
    fn webster_shares_are_proportional_and_capped_by_the_members() {
        assert_eq!(webster_places(&[75, 25], 20), [15, 5]);
        assert_eq!(webster_places(&[1, 1000], 10), [0, 10]);
        // 1.196 and 598.8 places: Webster rounds to the nearest.
        assert_eq!(webster_places(&[2, 1000], 600), [1, 599]);
        assert_eq!(webster_places(&[1, 3], 4), [1, 3]);
        assert_eq!(webster_places(&[3, 3, 3], 9), [3, 3, 3]);
        // Equal claims: the first stratum by name wins the odd place.
        assert_eq!(webster_places(&[5, 5], 3), [2, 1]);
        assert_eq!(webster_places(&[0, 4], 2), [0, 2]);
    }

    #[test]
    fn a_growing_stratum_never_loses_a_place_and_the_others_never_gain() {
        for grow in 0..3 {
            let mut sizes = vec![40, 33, 27];
            let mut before = webster_places(&sizes, 20);
            for _ in 0..60 {
                sizes[grow] += 1;
                let after = webster_places(&sizes, 20);
                for s in 0..3 {
                    if s == grow {
                        assert!(after[s] >= before[s], "{sizes:?}: {before:?} -> {after:?}");
                    } else {
                        assert!(after[s] <= before[s], "{sizes:?}: {before:?} -> {after:?}");
                    }
                }
                before = after;
            }
        }
    }

    #[test]
    fn appending_queries_keeps_the_sample_and_removing_one_removes_only_it() {
        let base = qids(225);
        let before = sampled(&base, 40, 1);
        assert_eq!(before.len(), 40);
        for added in [1, 5] {
            let after = sampled(&qids(225 + added), 40, 1);
            assert!(
                shared(&before, &after) >= 40 - added,
                "+{added}: {} of 40 shared",
                shared(&before, &after)
            );
        }
        // Removing a sampled query: the others stay (a place may go to its stratum's next).
        let removed = &before[7];
        let rest: Vec<String> = base.iter().filter(|q| *q != removed).cloned().collect();
        let after = sampled(&rest, 40, 1);
        assert_eq!(shared(&before, &after), 39, "only {removed} left");
        assert!(!after.contains(removed));
    }

    #[test]
    fn the_order_of_the_file_does_not_matter() {
        let forward = qids(120);
        let mut reversed = forward.clone();
        reversed.reverse();
        let picked = |qids: &[String]| {
            let mut picked = sampled(qids, 30, 1);
            picked.sort();
            picked
        };
        assert_eq!(picked(&forward), picked(&reversed));
    }

    #[test]
    fn a_larger_sample_keeps_the_smaller_one_and_a_new_seed_redraws() {
        let all = qids(300);
        let small = sampled(&all, 40, 1);
        assert_eq!(shared(&small, &sampled(&all, 50, 1)), 40);
        let other_seed = sampled(&all, 40, 2);
        assert!(
            shared(&small, &other_seed) < 20,
            "a new seed is a new sample: {} shared",
            shared(&small, &other_seed)
        );
    }

    #[test]
    fn the_rank_key_is_pinned() {
        // Pinned: the same seed and qid rank the same after any dependency upgrade.
        assert_eq!(rank_key(1, "q0001"), PINNED_KEY);
        assert_ne!(rank_key(2, "q0001"), PINNED_KEY);
    }

    /// `int.from_bytes(hashlib.sha256(b"ragate-sample-v2\x001\x00q0001").digest()[:8], "big")`.
    const PINNED_KEY: u64 = 9_417_338_486_790_979_911;
}
