//! Seeded generator of a synthetic TREC qrels + run pair for benchmarking `ragate eval`.
//!
//! Usage: `cargo run --release --example gen_bench -- --out DIR` (`--help` lists the options).
//! Writes two files into `DIR`:
//! * `qrels.trec`: `qid 0 doc_id grade`, 20..=60 judged docs per query, sorted by qid then
//!   doc id (as NIST qrels are), grades 0..=3 skewed toward 0/1; about 3% of the queries
//!   have only grade-0 judgments (no relevant doc).
//! * `run.trec`: `qid Q0 doc_id rank score tag`, exactly `--docs` lines per query, grouped by
//!   qid, ranks 1..=N by descending score. Each query writes its scores with a fixed number of
//!   decimals (4, 5 or 6), and about 1% of adjacent ranks have exactly equal scores. Judged
//!   docs land at random ranks that are more likely near the top (relevant ones more so); the
//!   other ranks hold unjudged doc ids from a pool of 1,000,000 (`D0000000`..`D0999999`), never
//!   repeated within a query. Qids are `q00000`, `q00001`, ...
//!
//! `--shuffled` keeps each query's lines together but writes them in a seeded random order
//! (ranks and scores stay on their lines), as a run concatenated from unsorted shards is.
//! `--ungrouped` writes the same run lines in a seeded random order over the whole file. It holds
//! the whole run in memory, so use it on small sizes only (e.g. `--queries 200 --docs 100`).
//!
//! The same arguments give byte-identical files. With the defaults (10,000 queries x 1,000
//! docs, tag `rgate`) the run has 10M lines of about 37.5 bytes, 375 MB, and the qrels
//! 400,000 lines, 8 MB; each extra tag character adds 10 MB to the run.
//!
//! Standalone on purpose: it uses only `clap`, `rand` and `rand_chacha`, not the `ragate`
//! library, so the data can be produced while the library is being changed.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Number of distinct doc ids: `D` followed by 7 digits.
const DOC_POOL: u32 = 1_000_000;

/// Seeded generator of a synthetic TREC qrels + run pair.
#[derive(Parser)]
struct Args {
    /// Output directory (created if missing); receives qrels.trec and run.trec.
    #[arg(long)]
    out: PathBuf,
    /// Number of queries.
    #[arg(long, default_value_t = 10_000)]
    queries: u32,
    /// Ranked docs per query (at most half the doc id pool).
    #[arg(long, default_value_t = 1_000)]
    #[arg(value_parser = clap::value_parser!(u32).range(1..=i64::from(DOC_POOL / 2)))]
    docs: u32,
    /// Random seed.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Run tag written at the end of every run line.
    #[arg(long, default_value = "rgate", value_parser = parse_tag)]
    tag: String,
    /// Write the run lines in a seeded random order (holds the run in memory: small sizes only).
    #[arg(long, conflicts_with = "shuffled")]
    ungrouped: bool,
    /// Write each query's lines in a seeded random order (queries stay grouped).
    #[arg(long)]
    shuffled: bool,
}

fn parse_tag(tag: &str) -> Result<String, &'static str> {
    let one_word = !tag.is_empty() && !tag.contains(char::is_whitespace);
    one_word
        .then(|| tag.to_string())
        .ok_or("the tag must be one non-empty word")
}

/// One generated query.
struct Query {
    /// Judged docs as (doc, grade), sorted by doc.
    judgments: Vec<(u32, u8)>,
    /// Doc at each rank (index 0 is rank 1).
    ranking: Vec<u32>,
    /// Score at each rank in units of 10^-decimals, non-increasing.
    scores: Vec<u64>,
    decimals: u32,
}

struct Generator {
    rng: ChaCha8Rng,
    /// Doc ids already used by the current query.
    used: HashSet<u32>,
}

impl Generator {
    /// A doc id the current query has not used yet.
    fn fresh_doc(&mut self) -> u32 {
        loop {
            let doc = self.rng.random_range(0..DOC_POOL);
            if self.used.insert(doc) {
                return doc;
            }
        }
    }

    /// Grade skewed toward 0/1: P(0) = .50, P(1) = .30, P(2) = .14, P(3) = .06.
    fn grade(&mut self) -> u8 {
        let u: f64 = self.rng.random();
        [0.50, 0.80, 0.94].iter().filter(|&&edge| u >= edge).count() as u8
    }

    /// The next query, ranking `n` docs.
    fn next_query(&mut self, n: usize) -> Query {
        self.used.clear();
        let judged = self.rng.random_range(20..=60usize);
        let no_relevant = self.rng.random_bool(0.03);
        let mut judgments: Vec<(u32, u8)> = (0..judged)
            .map(|_| {
                let doc = self.fresh_doc();
                (doc, if no_relevant { 0 } else { self.grade() })
            })
            .collect();

        // A judged doc is retrieved with probability `p`, at rank n * u^k: the higher the
        // grade, the likelier and nearer the top. Collisions move down to the next free rank.
        const FREE: u32 = u32::MAX;
        let mut ranking = vec![FREE; n];
        let mut placed = 0;
        for &(doc, grade) in &judgments {
            if placed == n {
                break;
            }
            let (p, k) = [(0.70, 1.6), (0.85, 2.6), (0.90, 3.2), (0.95, 4.0)][grade as usize];
            if self.rng.random_bool(p) {
                let u: f64 = self.rng.random();
                let mut rank = ((n as f64 * u.powf(k)) as usize).min(n - 1);
                while ranking[rank] != FREE {
                    rank = (rank + 1) % n;
                }
                ranking[rank] = doc;
                placed += 1;
            }
        }
        for slot in ranking.iter_mut().filter(|doc| **doc == FREE) {
            *slot = self.fresh_doc();
        }
        judgments.sort_unstable_by_key(|&(doc, _)| doc);

        // BM25-like scores, steep at the top and flat in the tail, in integer units of
        // 10^-decimals so that ties are exact in the text.
        let decimals = self.rng.random_range(4..=6u32);
        let scale = 10f64.powi(decimals as i32);
        let top = self.rng.random_range(12.0..38.0f64);
        let fall = top * self.rng.random_range(0.45..0.85f64);
        let weights: Vec<f64> = (0..n)
            .map(|i| self.rng.random::<f64>() / (1.0 + i as f64 / 20.0))
            .collect();
        let fall_per_weight = fall * scale / weights.iter().sum::<f64>();
        let mut score = (top * scale) as u64;
        let mut scores = Vec::with_capacity(n);
        for w in weights {
            scores.push(score);
            // About 1% of adjacent ranks tie exactly.
            if !self.rng.random_bool(0.01) {
                score = score.saturating_sub(((w * fall_per_weight) as u64).max(1));
            }
        }
        Query {
            judgments,
            ranking,
            scores,
            decimals,
        }
    }
}

/// Prefixes an I/O error with the path it concerns.
fn at(path: &Path) -> impl FnOnce(io::Error) -> io::Error + '_ {
    move |e| io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

fn create(path: &Path) -> io::Result<BufWriter<File>> {
    let file = File::create(path).map_err(at(path))?;
    Ok(BufWriter::with_capacity(8 << 20, file))
}

fn generate(args: &Args) -> io::Result<()> {
    fs::create_dir_all(&args.out).map_err(at(&args.out))?;
    let qrels_path = args.out.join("qrels.trec");
    let run_path = args.out.join("run.trec");
    let mut qrels = create(&qrels_path)?;
    let mut run = create(&run_path)?;
    let mut generator = Generator {
        rng: ChaCha8Rng::seed_from_u64(args.seed),
        used: HashSet::new(),
    };
    let tag = &args.tag;
    let mut line = Vec::with_capacity(64);
    let mut shuffled: Vec<Vec<u8>> = Vec::new();
    let mut qrels_lines = 0;
    // Separate random streams, so the lines are exactly those of the grouped file.
    let mut within = ChaCha8Rng::seed_from_u64(args.seed ^ 0x5851_F42D_4C95_7F2D);
    let mut query_lines: Vec<Vec<u8>> = Vec::new();

    for qid in 0..args.queries {
        let q = generator.next_query(args.docs as usize);
        for &(doc, grade) in &q.judgments {
            writeln!(qrels, "q{qid:05} 0 D{doc:07} {grade}")?;
        }
        qrels_lines += q.judgments.len() as u64;
        let (scale, w) = (10u64.pow(q.decimals), q.decimals as usize);
        for (rank, (&doc, &score)) in (1..).zip(q.ranking.iter().zip(&q.scores)) {
            line.clear();
            let (whole, frac) = (score / scale, score % scale);
            writeln!(
                line,
                "q{qid:05} Q0 D{doc:07} {rank} {whole}.{frac:0w$} {tag}"
            )?;
            if args.ungrouped {
                shuffled.push(line.clone());
            } else if args.shuffled {
                query_lines.push(line.clone());
            } else {
                run.write_all(&line)?;
            }
        }
        if args.shuffled {
            query_lines.shuffle(&mut within);
            query_lines.drain(..).try_for_each(|l| run.write_all(&l))?;
        }
    }
    if args.ungrouped {
        let mut rng = ChaCha8Rng::seed_from_u64(args.seed ^ 0x9E37_79B9_7F4A_7C15);
        shuffled.shuffle(&mut rng);
        shuffled.iter().try_for_each(|l| run.write_all(l))?;
    }
    qrels.flush().map_err(at(&qrels_path))?;
    run.flush().map_err(at(&run_path))?;
    let run_lines = u64::from(args.queries) * u64::from(args.docs);
    for (path, lines) in [(&qrels_path, qrels_lines), (&run_path, run_lines)] {
        let bytes = fs::metadata(path)?.len();
        let (name, per_line) = (path.display(), bytes as f64 / lines.max(1) as f64);
        println!("{name}: {lines} lines, {bytes} bytes ({per_line:.1} bytes/line)");
    }
    Ok(())
}

fn main() -> ExitCode {
    if let Err(e) = generate(&Args::parse()) {
        eprintln!("gen_bench: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
