//! Seeded generator of a synthetic TREC qrels + run pair for benchmarking `ragate eval`.
//!
//! Standalone on purpose: it does not use the `ragate` library, only `rand` and
//! `rand_chacha` (dev-dependencies), so the benchmark data can be produced even while the
//! library is being changed.
//!
//! ```text
//! cargo run --release --example gen_bench -- --out DIR [--queries 10000] [--docs 1000]
//!     [--seed 42] [--tag ragate-bench] [--ungrouped]
//! ```
//!
//! Writes:
//! * `DIR/qrels.trec`: `qid 0 doc_id grade`, 20..=60 judged docs per query, sorted by qid
//!   then doc id (as NIST qrels are), grades 0..=3 skewed toward 0/1; about 3% of the
//!   queries have only grade-0 judgments (no relevant doc).
//! * `DIR/run.trec`: `qid Q0 doc_id rank score tag`, exactly `--docs` lines per query,
//!   grouped by qid, ranks 1..=N in order of descending score (as real systems write them).
//!   Each query uses a fixed number of decimals (4, 5 or 6) for its scores, and about 1% of
//!   adjacent ranks have exactly equal scores. Judged docs are placed at random ranks that
//!   are more likely near the top (relevant ones more so); the other ranks are filled with
//!   unjudged doc ids drawn from a pool of 1,000,000 ids (`D0000000`..`D0999999`), with no
//!   duplicate doc id within a query. Qids are `q00000`, `q00001`, ...
//!
//! `--ungrouped` writes the run lines in a seeded random order instead (the same lines as the
//! grouped file for the same seed, only permuted). It holds the whole run in memory, so use
//! it for correctness checks on small sizes only (e.g. `--queries 200 --docs 100`).
//!
//! Deterministic: the same arguments give byte-identical files. The size of a line depends
//! on the fields above: for 10,000 x 1,000 the run is about 10M lines, ~45 bytes each with
//! the default tag (~450 MB); a shorter `--tag` shrinks it by one byte per character.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Size of the doc id pool: ids are `D` followed by 7 digits.
const DOC_POOL: u32 = 1_000_000;
const BUF_SIZE: usize = 8 << 20;

struct Args {
    out: PathBuf,
    queries: u32,
    docs: u32,
    seed: u64,
    tag: String,
    ungrouped: bool,
}

const USAGE: &str = "usage: gen_bench --out DIR [--queries 10000] [--docs 1000] [--seed 42] \
[--tag ragate-bench] [--ungrouped]\n\
  --ungrouped  write run lines in a seeded shuffled order (holds the run in memory: small sizes only)";

fn parse_args() -> Result<Args, String> {
    let mut out = None;
    let mut queries = 10_000u32;
    let mut docs = 1_000u32;
    let mut seed = 42u64;
    let mut tag = String::from("ragate-bench");
    let mut ungrouped = false;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| -> Result<String, String> {
            match inline.clone().or_else(|| it.next()) {
                Some(v) => Ok(v),
                None => Err(format!("{name} needs a value")),
            }
        };
        match name.as_str() {
            "--out" => out = Some(PathBuf::from(value("--out")?)),
            "--queries" => {
                queries = value("--queries")?
                    .parse()
                    .map_err(|e| format!("--queries: {e}"))?
            }
            "--docs" => {
                docs = value("--docs")?
                    .parse()
                    .map_err(|e| format!("--docs: {e}"))?
            }
            "--seed" => {
                seed = value("--seed")?
                    .parse()
                    .map_err(|e| format!("--seed: {e}"))?
            }
            "--tag" => {
                tag = value("--tag")?;
                if tag.is_empty() || tag.contains(char::is_whitespace) {
                    return Err("--tag must be one non-empty word".into());
                }
            }
            "--ungrouped" => ungrouped = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let out = out.ok_or("--out DIR is required")?;
    if docs == 0 || docs > DOC_POOL / 2 {
        return Err(format!("--docs must be in 1..={}", DOC_POOL / 2));
    }
    Ok(Args {
        out,
        queries,
        docs,
        seed,
        tag,
        ungrouped,
    })
}

/// Appends `n` in decimal, left-padded with zeros to at least `width` digits.
#[inline]
fn push_u64(buf: &mut Vec<u8>, mut n: u64, width: usize) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    while tmp.len() - i < width {
        i -= 1;
        tmp[i] = b'0';
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// Appends a fixed-point score `units / 10^decimals` with exactly `decimals` decimals.
#[inline]
fn push_score(buf: &mut Vec<u8>, units: u64, decimals: u32) {
    let scale = 10u64.pow(decimals);
    push_u64(buf, units / scale, 1);
    buf.push(b'.');
    push_u64(buf, units % scale, decimals as usize);
}

/// Uniform f64 in [0, 1).
#[inline]
fn unit(rng: &mut ChaCha8Rng) -> f64 {
    rng.random::<f64>()
}

/// Grade distribution skewed toward 0/1: P(0)=.50, P(1)=.30, P(2)=.14, P(3)=.06.
fn draw_grade(rng: &mut ChaCha8Rng) -> u8 {
    let u = unit(rng);
    if u < 0.50 {
        0
    } else if u < 0.80 {
        1
    } else if u < 0.94 {
        2
    } else {
        3
    }
}

/// Everything generated for one query.
struct Query {
    /// (doc, grade), sorted by doc id.
    judged: Vec<(u32, u8)>,
    /// Doc at each rank (index 0 = rank 1).
    ranking: Vec<u32>,
    /// Score of each rank in units of 10^-decimals, non-increasing.
    scores: Vec<u64>,
    decimals: u32,
}

struct Generator {
    rng: ChaCha8Rng,
    docs: u32,
    /// `stamp[doc] == epoch` means the doc id is already used in the current query.
    stamp: Vec<u32>,
    epoch: u32,
    /// Scratch: slot free marker for rank placement.
    taken: Vec<bool>,
    weights: Vec<f64>,
}

impl Generator {
    fn new(seed: u64, docs: u32) -> Self {
        Generator {
            rng: ChaCha8Rng::seed_from_u64(seed),
            docs,
            stamp: vec![0; DOC_POOL as usize],
            epoch: 0,
            taken: vec![false; docs as usize],
            weights: vec![0.0; docs as usize],
        }
    }

    /// A doc id not yet used in the current query.
    fn fresh_doc(&mut self) -> u32 {
        loop {
            let d = self.rng.random_range(0..DOC_POOL);
            if self.stamp[d as usize] != self.epoch {
                self.stamp[d as usize] = self.epoch;
                return d;
            }
        }
    }

    fn query(&mut self, q: &mut Query) {
        let n = self.docs as usize;
        self.epoch += 1;
        let rng_judged = self.rng.random_range(20..=60usize);
        let no_relevant = self.rng.random_bool(0.03);

        // Judgments.
        q.judged.clear();
        for _ in 0..rng_judged {
            let d = self.fresh_doc();
            let g = if no_relevant {
                0
            } else {
                draw_grade(&mut self.rng)
            };
            q.judged.push((d, g));
        }

        // Place judged docs in the ranking: retrieved with some probability, at a rank
        // drawn as n * u^k (k larger = more concentrated near the top). Relevant docs are
        // retrieved more often and nearer the top than judged non-relevant ones (which in
        // a pooled collection also tend to come from the top of the runs).
        const EMPTY: u32 = u32::MAX;
        q.ranking.clear();
        q.ranking.resize(n, EMPTY);
        self.taken.iter_mut().for_each(|t| *t = false);
        let mut placed = 0usize;
        for &(d, g) in &q.judged {
            if placed == n {
                break;
            }
            let (p_ret, k) = match g {
                0 => (0.70, 1.6),
                1 => (0.85, 2.6),
                2 => (0.90, 3.2),
                _ => (0.95, 4.0),
            };
            if !self.rng.random_bool(p_ret) {
                continue;
            }
            let mut pos = ((n as f64) * unit(&mut self.rng).powf(k)) as usize;
            pos = pos.min(n - 1);
            // Nearest free slot at or below `pos`, wrapping to the top.
            while self.taken[pos] {
                pos = (pos + 1) % n;
            }
            self.taken[pos] = true;
            q.ranking[pos] = d;
            placed += 1;
        }
        for i in 0..n {
            if q.ranking[i] == EMPTY {
                q.ranking[i] = self.fresh_doc();
            }
        }
        q.judged.sort_unstable_by_key(|&(d, _)| d);

        // Scores: a BM25-like curve, steep at the top and flat in the tail, in integer
        // units of 10^-decimals so that ties are exact in the written text.
        q.decimals = self.rng.random_range(4..=6u32);
        let scale = 10f64.powi(q.decimals as i32);
        let top = self.rng.random_range(12.0..38.0f64);
        let drop = top * self.rng.random_range(0.45..0.85f64);
        let mut total = 0.0;
        for i in 0..n {
            let w = unit(&mut self.rng) / (1.0 + i as f64 / 20.0);
            self.weights[i] = w;
            total += w;
        }
        q.scores.clear();
        let mut s = (top * scale) as u64;
        let unit_drop = drop * scale / total;
        for i in 0..n {
            q.scores.push(s);
            // ~1% exact ties with the next rank.
            let gap = if self.rng.random_bool(0.01) {
                0
            } else {
                ((self.weights[i] * unit_drop) as u64).max(1)
            };
            s = s.saturating_sub(gap);
        }
    }
}

fn write_run_line(
    line: &mut Vec<u8>,
    qid: u32,
    doc: u32,
    rank: u32,
    score: u64,
    dec: u32,
    tag: &[u8],
) {
    line.push(b'q');
    push_u64(line, qid as u64, 5);
    line.extend_from_slice(b" Q0 D");
    push_u64(line, doc as u64, 7);
    line.push(b' ');
    push_u64(line, rank as u64, 1);
    line.push(b' ');
    push_score(line, score, dec);
    line.push(b' ');
    line.extend_from_slice(tag);
    line.push(b'\n');
}

fn run(args: &Args) -> io::Result<()> {
    let start = Instant::now();
    std::fs::create_dir_all(&args.out)?;
    let qrels_path = args.out.join("qrels.trec");
    let run_path = args.out.join("run.trec");
    let mut qrels = BufWriter::with_capacity(BUF_SIZE, File::create(&qrels_path)?);
    let mut runw = BufWriter::with_capacity(BUF_SIZE, File::create(&run_path)?);

    let mut generator = Generator::new(args.seed, args.docs);
    let mut q = Query {
        judged: Vec::new(),
        ranking: Vec::new(),
        scores: Vec::new(),
        decimals: 4,
    };
    let tag = args.tag.as_bytes();
    let mut buf: Vec<u8> = Vec::with_capacity(64 * args.docs as usize);
    // For --ungrouped: every run line, and where each starts.
    let mut all: Vec<u8> = Vec::new();
    let mut starts: Vec<usize> = Vec::new();

    let (mut qrels_lines, mut qrels_bytes, mut run_lines, mut run_bytes) = (0u64, 0u64, 0u64, 0u64);
    for qi in 0..args.queries {
        generator.query(&mut q);

        buf.clear();
        for &(d, g) in &q.judged {
            buf.push(b'q');
            push_u64(&mut buf, qi as u64, 5);
            buf.extend_from_slice(b" 0 D");
            push_u64(&mut buf, d as u64, 7);
            buf.push(b' ');
            push_u64(&mut buf, g as u64, 1);
            buf.push(b'\n');
        }
        qrels.write_all(&buf)?;
        qrels_lines += q.judged.len() as u64;
        qrels_bytes += buf.len() as u64;

        buf.clear();
        for (i, (&d, &s)) in q.ranking.iter().zip(&q.scores).enumerate() {
            if args.ungrouped {
                starts.push(all.len());
                write_run_line(&mut all, qi, d, i as u32 + 1, s, q.decimals, tag);
            } else {
                write_run_line(&mut buf, qi, d, i as u32 + 1, s, q.decimals, tag);
            }
        }
        run_lines += q.ranking.len() as u64;
        if !args.ungrouped {
            runw.write_all(&buf)?;
            run_bytes += buf.len() as u64;
        }
    }

    if args.ungrouped {
        // A separate stream, so the lines are exactly those of the grouped file.
        let mut shuffle_rng = ChaCha8Rng::seed_from_u64(args.seed ^ 0x9E37_79B9_7F4A_7C15);
        let mut order: Vec<u32> = (0..starts.len() as u32).collect();
        order.shuffle(&mut shuffle_rng);
        starts.push(all.len());
        for &i in &order {
            let line = &all[starts[i as usize]..starts[i as usize + 1]];
            runw.write_all(line)?;
        }
        run_bytes = all.len() as u64;
    }

    qrels.into_inner().map_err(|e| e.into_error())?;
    runw.into_inner().map_err(|e| e.into_error())?;
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{}: {} lines, {} bytes",
        qrels_path.display(),
        qrels_lines,
        qrels_bytes
    );
    println!(
        "{}: {} lines, {} bytes ({:.1} bytes/line{})",
        run_path.display(),
        run_lines,
        run_bytes,
        run_bytes as f64 / run_lines.max(1) as f64,
        if args.ungrouped { ", ungrouped" } else { "" }
    );
    println!(
        "queries={} docs={} seed={} in {:.2}s",
        args.queries, args.docs, args.seed, secs
    );
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("gen_bench: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen_bench: {e}");
            ExitCode::FAILURE
        }
    }
}
