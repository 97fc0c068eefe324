//! Sharding a tier over CI jobs: query `qid` belongs to shard 1 + (the first 8 bytes of
//! sha256(qid) as a big-endian integer) mod N, so every job can tell its queries apart without
//! coordination, and the split does not depend on the order of the qrels.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::input::qrels::Qrels;

/// Shard `index` of `count` (1-based, as written on the command line: `--shard 2/4`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// The shard (1..=count) that `qid` belongs to.
    pub fn of(qid: &str, count: u64) -> u64 {
        let digest = Sha256::digest(qid.as_bytes());
        let first: [u8; 8] = digest[..8].try_into().expect("sha256 has 32 bytes");
        1 + u64::from_be_bytes(first) % count
    }

    pub fn contains(&self, qid: &str) -> bool {
        Shard::of(qid, self.count) == self.index
    }

    /// The queries of `qrels` in this shard, in qrels order.
    pub fn select(&self, qrels: Qrels) -> Qrels {
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

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = || format!("`{text}`: expected I/N with 1 <= I <= N (e.g. 2/4)");
        let (index, count) = text.split_once('/').ok_or_else(invalid)?;
        let index: u64 = index.trim().parse().map_err(|_| invalid())?;
        let count: u64 = count.trim().parse().map_err(|_| invalid())?;
        if index == 0 || count == 0 || index > count {
            return Err(invalid());
        }
        Ok(Shard { index, count })
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
        for bad in ["0/4", "5/4", "1/0", "2", "a/b", "1/-2"] {
            let message = bad.parse::<Shard>().unwrap_err();
            assert!(message.contains("expected I/N"), "{bad}: {message}");
        }
    }
}
