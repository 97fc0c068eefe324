//! Generator of the deep tier: `qrels/regression.jsonl` expanded with seeded, deterministic
//! query variants into `qrels/deep.jsonl`.
//!
//! ```text
//! cargo run --release --example gen_deep -- [--input qrels/regression.jsonl]
//!     [--output qrels/deep.jsonl] [--total 2000 | --variants N] [--seed 20251130] [--check]
//! ```
//!
//! Every source query is written unchanged (`"variant": "original"`) followed by N rewrites
//! with qid `<source>-v1`, `<source>-v2`, ... N is `--variants`, else the smallest count that
//! brings the tier to about `--total` queries: ceil(total / sources) - 1 (294 sources: 6 each,
//! 2,058 queries; 200 sources: 9 each, 2,000). The rewrites walk [`TRANSFORMS`] in order from a
//! seeded starting point per query, so every transformation gets about the same share of the
//! tier. When one does not apply (no clause to swap, no stop word to drop) or repeats an
//! earlier text, a typo, a context prefix or a filler is used instead. `variant` names the transformation actually applied. Every other field (gold
//! ids, graded relevance, answers, `class`, ...) is copied from the source, in its order.
//!
//! Randomness: a self-written splitmix64 per source query, seeded with `--seed` XOR the FNV-1a
//! hash of its qid, so editing one query changes only its own variants. The same input and
//! seed give byte-identical output. `--check` writes nothing: it exits 1 when `--output`
//! differs from what would be generated (CI uses it), 0 when it is current. Errors (unreadable
//! input, a line that is not a query object, a repeated qid) exit 2 and name the file and line.

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use serde_json::{Map, Value};

/// The transformations, in the order a query's variants use them (from a seeded start).
const TRANSFORMS: [&str; 9] = [
    "clause-swap",
    "question-frame",
    "drop-stopword",
    "synonym",
    "typo",
    "context-prefix",
    "word-swap",
    "keywords-only",
    "filler",
];

/// Used when the intended transformation does not apply: always applicable ones.
const FALLBACKS: [&str; 3] = ["typo", "context-prefix", "filler"];

/// Writes the deep tier from the regression tier (see the module documentation).
#[derive(Debug, Parser)]
#[command(name = "gen_deep")]
struct Args {
    /// Source queries (native qrels JSONL).
    #[arg(long, default_value = "qrels/regression.jsonl", value_name = "FILE")]
    input: PathBuf,
    /// The generated tier.
    #[arg(long, default_value = "qrels/deep.jsonl", value_name = "FILE")]
    output: PathBuf,
    /// Variants per source query (default: enough to reach about --total queries).
    #[arg(long, value_name = "N")]
    variants: Option<usize>,
    /// The tier size to aim at when --variants is not given.
    #[arg(long, default_value_t = 2000, value_name = "N")]
    total: usize,
    /// Seed of the variant generator.
    #[arg(long, default_value_t = 20251130)]
    seed: u64,
    /// Write nothing; exit 1 when --output differs from what would be generated.
    #[arg(long)]
    check: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let generated = match read_sources(&args).and_then(|sources| generate(&sources, &args)) {
        Ok(generated) => generated,
        Err(message) => {
            eprintln!("gen_deep: error: {message}");
            return ExitCode::from(2);
        }
    };
    let lines = generated.iter().filter(|&&byte| byte == b'\n').count();
    let output = args.output.display();
    if args.check {
        let regenerate = "regenerate it: cargo run --release --example gen_deep";
        let current = match fs::read(&args.output) {
            Ok(current) => current,
            Err(err) => {
                eprintln!("gen_deep: {output}: cannot read: {err}; {regenerate}");
                return ExitCode::from(1);
            }
        };
        if current == generated {
            eprintln!("gen_deep: {output} is up to date ({lines} queries)");
            return ExitCode::SUCCESS;
        }
        let first = first_difference(&current, &generated);
        eprintln!(
            "gen_deep: {output} differs from the generated tier (first at line {first}); {regenerate}"
        );
        return ExitCode::from(1);
    }
    if let Err(err) = fs::write(&args.output, &generated) {
        eprintln!("gen_deep: error: {output}: cannot write: {err}");
        return ExitCode::from(2);
    }
    eprintln!("gen_deep: wrote {lines} queries to {output}");
    ExitCode::SUCCESS
}

/// One source query: its JSON object (field order kept), qid and text.
struct Source {
    fields: Map<String, Value>,
    qid: String,
    query: String,
}

fn read_sources(args: &Args) -> Result<Vec<Source>, String> {
    let path = args.input.display();
    let text =
        fs::read_to_string(&args.input).map_err(|err| format!("{path}: cannot read: {err}"))?;
    let mut sources = Vec::new();
    let mut seen = BTreeSet::new();
    for (index, line) in text.lines().enumerate() {
        let at = format!("{path}:{}", index + 1);
        let line = line.trim_start_matches('\u{feff}');
        if line.trim().is_empty() {
            continue;
        }
        let value: Value =
            serde_json::from_str(line).map_err(|err| format!("{at}: not JSON: {err}"))?;
        let Value::Object(fields) = value else {
            return Err(format!(
                "{at}: expected a JSON object {{\"qid\", \"query\", ...}}"
            ));
        };
        let (Some(Value::String(qid)), Some(Value::String(query))) =
            (fields.get("qid"), fields.get("query"))
        else {
            return Err(format!(
                "{at}: expected string fields \"qid\" and \"query\""
            ));
        };
        let (qid, query) = (qid.clone(), query.clone());
        if !seen.insert(qid.clone()) {
            return Err(format!("{at}: qid {qid:?} appears twice"));
        }
        sources.push(Source { fields, qid, query });
    }
    if sources.is_empty() {
        return Err(format!("{path}: no queries"));
    }
    Ok(sources)
}

fn generate(sources: &[Source], args: &Args) -> Result<Vec<u8>, String> {
    let variants = args
        .variants
        .unwrap_or_else(|| args.total.div_ceil(sources.len()).saturating_sub(1).max(1));
    let mut out = Vec::new();
    for source in sources {
        let mut original = source.fields.clone();
        original.insert("variant".into(), Value::from("original"));
        push_line(&mut out, original);
        let mut rng = SplitMix64(args.seed ^ fnv1a(&source.qid));
        let mut seen = BTreeSet::from([normalise(&source.query)]);
        let start = rng.below(TRANSFORMS.len());
        for number in 1..=variants {
            let intended = TRANSFORMS[(start + number - 1) % TRANSFORMS.len()];
            let first_fallback = rng.below(FALLBACKS.len());
            let fallbacks = FALLBACKS
                .iter()
                .copied()
                .cycle()
                .skip(first_fallback)
                .take(30);
            let candidates = std::iter::once(intended).chain(fallbacks);
            let found = candidates.into_iter().find_map(|name| {
                let text = transform(name, &source.query, &mut rng)?;
                seen.insert(normalise(&text)).then_some((name, text))
            });
            let Some((name, text)) = found else {
                return Err(format!(
                    "qid {:?}: no new variant {number} found",
                    source.qid
                ));
            };
            let mut fields = source.fields.clone();
            fields.insert(
                "qid".into(),
                Value::from(format!("{}-v{number}", source.qid)),
            );
            fields.insert("query".into(), Value::from(text));
            fields.insert("variant".into(), Value::from(name));
            push_line(&mut out, fields);
        }
    }
    Ok(out)
}

fn push_line(out: &mut Vec<u8>, fields: Map<String, Value>) {
    out.extend_from_slice(Value::Object(fields).to_string().as_bytes());
    out.push(b'\n');
}

fn normalise(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn first_difference(a: &[u8], b: &[u8]) -> usize {
    let same = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    1 + a[..same].iter().filter(|&&byte| byte == b'\n').count()
}

/// Applies one named transformation; None when it does not apply to this query.
fn transform(name: &str, query: &str, rng: &mut SplitMix64) -> Option<String> {
    // A trailing question mark stays at the end whatever happens to the words.
    let (body, mark) = match query.trim().strip_suffix('?') {
        Some(body) => (body.trim_end(), "?"),
        None => (query.trim(), ""),
    };
    let words: Vec<&str> = body.split_whitespace().collect();
    let text = match name {
        "clause-swap" => clause_swap(&words)?,
        "question-frame" => question_frame(body),
        "drop-stopword" => {
            let positions: Vec<usize> = (0..words.len())
                .filter(|&i| is_stop_word(words[i]))
                .collect();
            if positions.is_empty() || words.len() < 3 {
                return None;
            }
            let drop = positions[rng.below(positions.len())];
            join_except(&words, drop)
        }
        "synonym" => {
            let positions: Vec<usize> = (0..words.len())
                .filter(|&i| synonym(words[i]).is_some())
                .collect();
            if positions.is_empty() {
                return None;
            }
            let at = positions[rng.below(positions.len())];
            let mut words: Vec<String> = words.iter().map(|word| word.to_string()).collect();
            words[at] = synonym(&words[at])?.to_string();
            words.join(" ")
        }
        "typo" => typo(&words, rng)?,
        "context-prefix" => {
            const PREFIXES: [&str; 7] = [
                "in the CLI,",
                "using the API,",
                "from the web console,",
                "on a production bucket,",
                "for our team,",
                "quick question:",
                "in the SDK,",
            ];
            format!("{} {body}", PREFIXES[rng.below(PREFIXES.len())])
        }
        "word-swap" => {
            if words.len() < 2 {
                return None;
            }
            let at = rng.below(words.len() - 1);
            let mut words = words.clone();
            words.swap(at, at + 1);
            words.join(" ")
        }
        "keywords-only" => {
            let kept: Vec<&str> = words
                .iter()
                .copied()
                .filter(|word| {
                    !is_stop_word(word) && !QUESTION_WORDS.contains(&word.to_lowercase().as_str())
                })
                .collect();
            if kept.is_empty() || kept.len() == words.len() {
                return None;
            }
            kept.join(" ")
        }
        "filler" => {
            const FILLERS: [&str; 5] = ["please", "thanks", "asap", "in short", "any ideas"];
            format!("{body} {}", FILLERS[rng.below(FILLERS.len())])
        }
        _ => unreachable!("unknown transformation {name}"),
    };
    let text = format!("{}{mark}", text.trim());
    (normalise(&text) != normalise(query) && !text.trim().is_empty()).then_some(text)
}

/// "A when B" -> "when B, A"; "A and B" -> "B and A". The split word is the first of its kind
/// that leaves at least two words on each side.
fn clause_swap(words: &[&str]) -> Option<String> {
    const JOINERS: [&str; 4] = ["and", "or", "but", "then"];
    const SUBORDINATES: [&str; 11] = [
        "when", "after", "before", "if", "while", "because", "without", "during", "until", "for",
        "with",
    ];
    let at = (2..words.len().saturating_sub(1)).find(|&i| {
        let word = words[i].to_lowercase();
        JOINERS.contains(&word.as_str()) || SUBORDINATES.contains(&word.as_str())
    })?;
    let (head, tail) = (words[..at].join(" "), words[at + 1..].join(" "));
    let head = head.trim_end_matches(',');
    Some(if JOINERS.contains(&words[at].to_lowercase().as_str()) {
        format!("{tail} {} {head}", words[at])
    } else {
        format!("{} {tail}, {head}", words[at])
    })
}

/// Rewrites the question's opening ("how do i X" -> "what is the way to X"); a query without a
/// known opening becomes "tell me about X".
fn question_frame(body: &str) -> String {
    const FRAMES: [(&str, &str); 16] = [
        ("how do i ", "what is the way to "),
        ("how can i ", "what is the way to "),
        ("how do you ", "what is the way to "),
        ("how to ", "what are the steps to "),
        ("what happens when ", "what is the effect when "),
        ("what happens if ", "what occurs if "),
        ("how many ", "what number of "),
        ("how long ", "for how much time "),
        ("is it possible to ", "can i "),
        ("can i ", "is it possible to "),
        ("what is ", "explain "),
        ("what are ", "explain "),
        ("why ", "for what reason "),
        ("where ", "in which place "),
        ("which ", "what "),
        ("does ", "is it true that it "),
    ];
    let lower = body.to_lowercase();
    for (opening, replacement) in FRAMES {
        if lower.starts_with(opening) {
            return format!("{replacement}{}", &body[opening.len()..]);
        }
    }
    format!("tell me about {body}")
}

/// One typo in a word of four or more letters: two letters swapped, one dropped or one doubled.
fn typo(words: &[&str], rng: &mut SplitMix64) -> Option<String> {
    let positions: Vec<usize> = (0..words.len())
        .filter(|&i| words[i].chars().filter(|c| c.is_alphabetic()).count() >= 4)
        .collect();
    if positions.is_empty() {
        return None;
    }
    let at = positions[rng.below(positions.len())];
    let mut chars: Vec<char> = words[at].chars().collect();
    let i = 1 + rng.below(chars.len() - 2); // never the first letter
    match rng.below(3) {
        0 => chars.swap(i, i + 1),
        1 => {
            chars.remove(i);
        }
        _ => chars.insert(i, chars[i]),
    }
    let typo: String = chars.into_iter().collect();
    let mut words: Vec<String> = words.iter().map(|word| word.to_string()).collect();
    words[at] = typo;
    Some(words.join(" "))
}

fn join_except(words: &[&str], skip: usize) -> String {
    let kept: Vec<&str> = words
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != skip)
        .map(|(_, w)| *w)
        .collect();
    kept.join(" ")
}

const QUESTION_WORDS: [&str; 9] = [
    "how", "what", "why", "when", "where", "which", "who", "does", "can",
];

fn is_stop_word(word: &str) -> bool {
    const STOP_WORDS: [&str; 30] = [
        "a", "an", "and", "are", "as", "at", "be", "by", "do", "for", "from", "i", "in", "is",
        "it", "my", "of", "on", "or", "our", "that", "the", "there", "this", "to", "was", "we",
        "with", "you", "your",
    ];
    STOP_WORDS.contains(&word.to_lowercase().as_str())
}

/// A small hand-written table of near-synonyms for the example product's vocabulary.
fn synonym(word: &str) -> Option<&'static str> {
    const TABLE: [(&str, &str); 40] = [
        ("access", "permission"),
        ("big", "large"),
        ("bucket", "container"),
        ("buckets", "containers"),
        ("copy", "duplicate"),
        ("cost", "price"),
        ("create", "make"),
        ("delete", "remove"),
        ("deleted", "removed"),
        ("disable", "turn off"),
        ("download", "fetch"),
        ("enable", "turn on"),
        ("error", "failure"),
        ("errors", "failures"),
        ("expire", "lapse"),
        ("failed", "broken"),
        ("fast", "quick"),
        ("file", "object"),
        ("files", "objects"),
        ("key", "credential"),
        ("keys", "credentials"),
        ("large", "big"),
        ("limit", "cap"),
        ("limits", "caps"),
        ("list", "enumerate"),
        ("maximum", "largest"),
        ("object", "file"),
        ("objects", "files"),
        ("old", "previous"),
        ("policy", "rule"),
        ("price", "cost"),
        ("private", "restricted"),
        ("public", "open"),
        ("remove", "delete"),
        ("show", "display"),
        ("slow", "sluggish"),
        ("start", "begin"),
        ("stop", "halt"),
        ("upload", "put"),
        ("version", "revision"),
    ];
    let lower = word.to_lowercase();
    TABLE
        .iter()
        .find(|(from, _)| *from == lower)
        .map(|(_, to)| *to)
}

/// FNV-1a, 64 bits.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// splitmix64 (Steele, Lea, Flood 2014): tiny, seedable, the same on every platform.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in 0..n (n > 0); the modulo bias is irrelevant at these sizes.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_reference_sequence() {
        // First outputs for seed 1234567, computed independently (Python, the published constants).
        let mut rng = SplitMix64(1234567);
        assert_eq!(rng.next(), 6457827717110365317);
        assert_eq!(rng.next(), 3203168211198807973);
    }

    #[test]
    fn rewrites_read_as_intended() {
        let words: Vec<&str> = "delete old versions when the bucket is full"
            .split(' ')
            .collect();
        assert_eq!(
            clause_swap(&words).unwrap(),
            "when the bucket is full, delete old versions"
        );
        assert_eq!(
            question_frame("how do i rotate a key"),
            "what is the way to rotate a key"
        );
        assert_eq!(
            question_frame("object lock modes"),
            "tell me about object lock modes"
        );
        let mut rng = SplitMix64(7);
        let keywords = transform("keywords-only", "how do I delete a bucket?", &mut rng).unwrap();
        assert_eq!(keywords, "delete bucket?");
    }

    #[test]
    fn same_sources_same_bytes_and_distinct_variants() {
        let line = |qid: &str, query: &str| {
            serde_json::from_str::<Value>(&format!(
                "{{\"qid\":\"{qid}\",\"query\":\"{query}\",\"class\":\"literal\"}}"
            ))
            .unwrap()
        };
        let sources: Vec<Source> = [
            line("r1", "how do i delete a bucket with objects in it"),
            line("r2", "tls"),
        ]
        .into_iter()
        .map(|value| {
            let Value::Object(fields) = value else {
                unreachable!()
            };
            let qid = fields["qid"].as_str().unwrap().to_string();
            let query = fields["query"].as_str().unwrap().to_string();
            Source { fields, qid, query }
        })
        .collect();
        let args = Args::parse_from(["gen_deep", "--total", "20"]); // 9 variants each
        let a = generate(&sources, &args).unwrap();
        assert_eq!(a, generate(&sources, &args).unwrap());
        let lines: Vec<Value> = a
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 20);
        let queries: BTreeSet<&str> = lines.iter().map(|l| l["query"].as_str().unwrap()).collect();
        assert_eq!(queries.len(), 20, "{queries:?}");
        assert_eq!(lines[1]["qid"], "r1-v1");
        assert_eq!(lines[1]["class"], "literal");
        assert!(lines.iter().all(|l| l["variant"].is_string()));
    }
}
