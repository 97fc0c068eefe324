//! Sharding a tier over CI jobs: query `qid` belongs to shard 1 + (the first 8 bytes of
//! sha256(qid) as a big-endian integer) mod N, so every job can tell its queries apart without
//! coordination, and the split does not depend on the order of the qrels.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::input::qrels::Qrels;

/// The most shards a tier may be split into (far more CI jobs than one workflow runs): a bound
/// that keeps `merge`'s bookkeeping small whatever a shard file says.
pub(crate) const MAX_SHARDS: u64 = 1000;

/// Shard `index` of `count` (1-based, as written on the command line: `--shard 2/4`), with
/// `1 <= index <= count <= MAX_SHARDS`, also when read from a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "UncheckedShard")]
pub(crate) struct Shard {
    pub index: u64,
    pub count: u64,
}

/// A shard as written in a file, before its bounds are checked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UncheckedShard {
    index: u64,
    count: u64,
}

impl TryFrom<UncheckedShard> for Shard {
    type Error = String;

    fn try_from(shard: UncheckedShard) -> Result<Self, Self::Error> {
        Shard::new(shard.index, shard.count)
            .ok_or_else(|| format!("shard {}/{}: {}", shard.index, shard.count, BOUNDS))
    }
}

const BOUNDS: &str = "expected I/N with 1 <= I <= N <= 1000 (e.g. 2/4)";

impl Shard {
    /// Shard `index` of `count`, when `1 <= index <= count <= MAX_SHARDS`.
    pub(crate) fn new(index: u64, count: u64) -> Option<Shard> {
        (1 <= index && index <= count && count <= MAX_SHARDS).then_some(Shard { index, count })
    }

    /// The shard (1..=count) that `qid` belongs to.
    pub(crate) fn of(qid: &str, count: u64) -> u64 {
        let digest = Sha256::digest(qid.as_bytes());
        let first: [u8; 8] = digest[..8].try_into().expect("sha256 has 32 bytes");
        1 + u64::from_be_bytes(first) % count
    }

    pub(crate) fn contains(&self, qid: &str) -> bool {
        Shard::of(qid, self.count) == self.index
    }

    /// The queries of `qrels` in this shard, in qrels order.
    pub(crate) fn select(&self, qrels: Qrels) -> Qrels {
        let positions: Vec<usize> = qrels
            .queries()
            .iter()
            .enumerate()
            .filter(|(_, q)| self.contains(&q.qid))
            .map(|(p, _)| p)
            .collect();
        qrels.select(&positions)
    }
}

/// The queries a shard is to hold, recorded in `shard.json` when the shard is written so that
/// `merge` can tell a complete shard from one that lost (or gained) queries since.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShardQueries {
    /// How many queries the shard scores (those with at least one relevant document).
    pub count: u64,
    /// sha256 of the JSON array of their qids, sorted.
    pub qids_sha256: String,
}

impl ShardQueries {
    /// The record of exactly `qids` (in any order).
    pub(crate) fn of<'a>(qids: impl IntoIterator<Item = &'a str>) -> Self {
        let mut qids: Vec<&str> = qids.into_iter().collect();
        qids.sort_unstable();
        let json = serde_json::to_vec(&qids).expect("strings serialise");
        ShardQueries {
            count: qids.len() as u64,
            qids_sha256: crate::digest::sha256_hex(&json),
        }
    }

    /// The queries of `qrels` that `shard` scores: in the shard, with a relevant document
    /// (the others are excluded from results, sharded or not).
    pub(crate) fn expected(shard: Shard, qrels: &Qrels) -> Self {
        ShardQueries::of(
            qrels
                .queries()
                .iter()
                .filter(|q| q.num_relevant() > 0 && shard.contains(&q.qid))
                .map(|q| q.qid.as_str()),
        )
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = || format!("`{}`: {BOUNDS}", crate::error::shorten(text));
        let (index, count) = text.split_once('/').ok_or_else(invalid)?;
        let index: u64 = index.trim().parse().map_err(|_| invalid())?;
        let count: u64 = count.trim().parse().map_err(|_| invalid())?;
        Shard::new(index, count).ok_or_else(invalid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shard_is_the_first_eight_bytes_of_sha256_mod_n() {
        // Expected values from Python's hashlib:
        // 1 + int.from_bytes(hashlib.sha256(qid.encode()).digest()[:8], "big") % 4
        assert_eq!(Shard::of("q1", 4), 3);
        assert_eq!(Shard::of("ex01", 4), 4);
        assert_eq!(Shard::of("r001", 4), 1);
        assert_eq!(Shard::of("q1", 1), 1);
        // Every query lands in exactly one shard, and the shards are roughly balanced.
        let mut sizes = [0usize; 4];
        for i in 0..4000 {
            let qid = format!("q{i}");
            let owners: Vec<u64> = (1..=4)
                .filter(|&index| Shard { index, count: 4 }.contains(&qid))
                .collect();
            assert_eq!(owners.len(), 1);
            sizes[owners[0] as usize - 1] += 1;
        }
        assert!(sizes.iter().all(|&n| (850..1150).contains(&n)), "{sizes:?}");
    }

    #[test]
    fn parses_i_of_n_and_rejects_the_rest() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        assert_eq!("2/4".parse::<Shard>().unwrap().to_string(), "2/4");
        assert_eq!(
            "1000/1000".parse::<Shard>(),
            Ok(Shard {
                index: 1000,
                count: 1000
            })
        );
        for bad in [
            "0/4",
            "5/4",
            "1/0",
            "2",
            "a/b",
            "1/-2",
            "1/1001",
            "1/18446744073709551615",
        ] {
            let message = bad.parse::<Shard>().unwrap_err();
            assert!(message.contains("expected I/N"), "{bad}: {message}");
        }
    }

    #[test]
    fn a_shard_read_from_a_file_is_checked_like_the_command_line() {
        // `count: 0` divided by zero in `Shard::of`; a huge count listed every missing shard.
        for bad in [
            r#"{"index":1,"count":0}"#,
            r#"{"index":0,"count":0}"#,
            r#"{"index":3,"count":2}"#,
            r#"{"index":1,"count":18446744073709551615}"#,
        ] {
            let error = serde_json::from_str::<Shard>(bad).unwrap_err().to_string();
            assert!(
                error.contains("expected I/N with 1 <= I <= N <= 1000"),
                "{bad}: {error}"
            );
        }
        let shard: Shard = serde_json::from_str(r#"{"index":2,"count":4}"#).unwrap();
        assert_eq!(shard, Shard { index: 2, count: 4 });
        assert_eq!(
            serde_json::to_string(&shard).unwrap(),
            r#"{"index":2,"count":4}"#
        );
    }

    #[test]
    fn shard_queries_depend_on_the_set_of_qids_only() {
        let a = ShardQueries::of(["q2", "q1"]);
        assert_eq!(a, ShardQueries::of(["q1", "q2"]));
        assert_eq!(a.count, 2);
        assert_eq!(a.qids_sha256.len(), 64);
        assert_ne!(a, ShardQueries::of(["q1"]));
        assert_ne!(a, ShardQueries::of(["q1", "q3"]));
    }
}
