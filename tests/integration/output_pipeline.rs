//! The output pipeline under attack: secrets of every shape (`_`, `-`, `.`, hex runs of 7 and 64
//! digits, base64url, a short word next to Markdown link syntax) in the environment and inside
//! answers, contexts, queries, slice values, a qid and a pipeline's stderr, with the hostile
//! corpus beside them, driven through gate (first run, pass, inconclusive, fail, exit 2; table
//! and JSON), report, compare, merge, history, baseline show, holes and judge-eval, with GitHub
//! Actions' step summary and annotations on. Every file written under the test folder, every
//! stdout and stderr and the step summary is checked:
//! - no secret in any form: raw, escaped (Markdown, JSON, HTML entities), split by word joiners or
//!   zero-width characters (each text is compared with every secret on its letters and digits
//!   only), nor in the strings of any JSON document once parsed;
//! - no link, image or mention from input in summary.md or the step summary as GitHub renders
//!   them (cmark-gfm's extensions, autolinks on);
//! - every JSON and JSON Lines output parses, every XML and HTML output parses.
//!
//! Moving the redaction after the encoding (redacting summary.md's text where it is written)
//! makes it fail: the Markdown escaping splits the keys first.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::hostile_strings::{assert_markdown_inert, assert_streams_inert, corpus};
use crate::{Outcome, fixture, path_str, ragate_env};

/// Variables whose names look secret, so ragate registers their values.
const SECRETS: [(&str, &str); 6] = [
    ("CI_TOKEN", "sk-SECRET-canary-7f3a9b12cd_-x"),
    ("HEX7_TOKEN", "7f3a9b1"),
    (
        "HEX64_SECRET",
        "9f3e71b2d05a6e4c8b1a2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6",
    ),
    ("DOT_PASSWORD", "p4ss.w0rd.with.dots-and_under"),
    ("B64URL_KEY", "QmFzZTY0dXJsX3NoYXBl-_Zm9vYmFy"),
    ("SORT_KEY", "qualitycheck"),
];

/// A secret's letters and digits: what survives any escaping, splitting or joining.
fn core(text: &str) -> String {
    text.chars().filter(|c| c.is_alphanumeric()).collect()
}

/// Every secret whose letters and digits occur in `text`'s.
fn secrets_in(text: &str) -> Vec<&'static str> {
    let text = core(text);
    SECRETS
        .iter()
        .map(|(_, secret)| *secret)
        .filter(|secret| text.contains(&core(secret)))
        .collect()
}

fn assert_no_secret(text: &str, what: &str) {
    let found = secrets_in(text);
    assert!(found.is_empty(), "{what}: holds {found:?}: {text}");
}

/// Every string (keys and values) of a JSON value.
fn strings_of(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings_of(v, out)),
        Value::Object(map) => {
            for (key, v) in map {
                out.push(key.clone());
                strings_of(v, out);
            }
        }
        _ => {}
    }
}

/// A JSON document (or JSON Lines, one per line) parsed, and its strings free of secrets.
fn assert_json(text: &str, lines: bool, what: &str) {
    let values: Vec<Value> = if lines {
        text.lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| {
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("{what}: a line is no JSON ({e}): {line}"))
            })
            .collect()
    } else {
        vec![serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: no JSON ({e}): {text}"))]
    };
    let mut strings = Vec::new();
    values.iter().for_each(|v| strings_of(v, &mut strings));
    for string in strings {
        assert_no_secret(&string, &format!("{what} (a parsed string)"));
    }
}

fn assert_xml(text: &str, what: &str) {
    let mut reader = quick_xml::Reader::from_str(text);
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(_) => {}
            Err(error) => panic!("{what}: no XML: {error}"),
        }
    }
}

/// Every file under `dir` but the test's own inputs, recursively.
fn written_files(dir: &Path, inputs: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if !inputs.contains(&path) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Checks every output of `outcome` and every file written so far (see the module doc).
fn assert_outputs(dir: &Path, inputs: &[PathBuf], outcome: &Outcome, what: &str) {
    assert_no_secret(&outcome.stdout, &format!("{what}: stdout"));
    assert_no_secret(&outcome.stderr, &format!("{what}: stderr"));
    assert_streams_inert(outcome, what);
    // A document (pretty, `{` alone on its first line) or JSON Lines (`--format jsonl`).
    if outcome.stdout.starts_with("{\n") {
        assert_json(&outcome.stdout, false, &format!("{what}: stdout"));
    } else if outcome.stdout.starts_with('{') {
        assert_json(&outcome.stdout, true, &format!("{what}: stdout"));
    }
    for path in written_files(dir, inputs) {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let what = format!("{what}: {}", path.display());
        assert_no_secret(&name, &what);
        assert_no_secret(&text, &what);
        match path.extension().and_then(|e| e.to_str()) {
            Some("json") => assert_json(&text, false, &what),
            Some("jsonl") => assert_json(&text, true, &what),
            Some("xml") => assert_xml(&text, &what),
            Some("md") => assert_markdown_inert(&text, &what),
            Some("html") => {
                let document = scraper::Html::parse_document(&text);
                assert!(document.errors.is_empty(), "{what}: {:?}", document.errors);
            }
            _ => {}
        }
    }
}

const CONFIG: &str = "version: 1
metrics: [recall@5, faithfulness, answer_length]
slices: [class]
tiers:
  smoke: { qrels: qrels.jsonl, baseline: baseline.json }
gate:
  min_queries: 5
  rules:
    - { metric: recall@5, max_drop: 0.02 }
    - { metric: faithfulness, max_drop: 0.05 }
";

const QUERIES: usize = 40;

/// The text planted in query `i`: a secret (raw, next to link syntax, with its neighbours) and a
/// string of the hostile corpus.
fn planted(strings: &[String], i: usize) -> String {
    let (_, secret) = SECRETS[i % SECRETS.len()];
    let hostile = &strings[i % (strings.len() - 1)];
    format!(
        "{secret} and qualitycheck(//evil.example/x) !qualitycheck(//evil.example/p.png) \
         [qualitycheck](//evil.example/y) `{secret}` _{secret}_ {hostile}"
    )
}

/// qrels and three runs: `base` (gold found, answers from the context), `drop_some` (the gold
/// document lost on 3 queries: beyond the limit without proof at this size), `regressed` (lost on
/// every other query, answers rewritten).
fn setup(dir: &Path, strings: &[String]) -> Vec<PathBuf> {
    let (mut qrels, mut base, mut some, mut regressed) =
        (String::new(), String::new(), String::new(), String::new());
    for i in 0..QUERIES {
        let text = planted(strings, i);
        // One qid holds a secret itself (ids may not hold control characters).
        let qid = if i == 7 {
            format!("q{i:02}-{}", SECRETS[0].1)
        } else {
            format!("q{i:02}")
        };
        let gold = format!("doc-{i}");
        let class = if i % 2 == 0 {
            format!("even {}", SECRETS[3].1)
        } else {
            "odd ##[group]x".to_string()
        };
        writeln!(
            qrels,
            "{}",
            json!({"qid": qid, "query": format!("question {i}: {text}"), "gold_doc_ids": [gold], "class": class})
        )
        .unwrap();
        let context = format!("Policy {i} keeps objects for {} days. {text}", 10 + i);
        let line = |retrieved: &str, answer: String| json!({"qid": qid, "retrieved": [{"doc_id": retrieved}], "answer": answer, "contexts": [context]});
        writeln!(base, "{}", line(&gold, context.clone())).unwrap();
        let lost = format!("filler-{i}");
        writeln!(
            some,
            "{}",
            line(if i % 13 == 1 { &lost } else { &gold }, context.clone())
        )
        .unwrap();
        let changed = if i % 2 == 0 {
            line(
                &lost,
                format!("Different words. {text} Unsupported claim {i}."),
            )
        } else {
            line(&gold, context.clone())
        };
        writeln!(regressed, "{changed}").unwrap();
    }
    let mut inputs = Vec::new();
    for (name, text) in [
        ("qrels.jsonl", qrels),
        ("base.jsonl", base),
        ("some.jsonl", some),
        ("regressed.jsonl", regressed),
        ("eval-config.yaml", CONFIG.to_string()),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
        inputs.push(dir.join(name));
    }
    inputs
}

/// Runs ragate in `dir` with the secrets and GitHub Actions' step summary and annotations.
fn run(dir: &Path, args: &[&str]) -> Outcome {
    let summary = dir.join("step-summary.md");
    let mut env: Vec<(&str, &str)> = SECRETS.to_vec();
    env.push(("GITHUB_ACTIONS", "true"));
    env.push(("GITHUB_STEP_SUMMARY", path_str(&summary)));
    ragate_env(dir, args, &env)
}

#[test]
fn no_output_of_any_command_holds_a_secret_a_link_or_broken_json() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let strings = corpus();
    let inputs = setup(dir, &strings);
    let check = |outcome: &Outcome, code: i32, what: &str| {
        assert_eq!(
            outcome.code, code,
            "{what}: {}{}",
            outcome.stdout, outcome.stderr
        );
        assert_outputs(dir, &inputs, outcome, what);
    };
    let gate = |run_file: &str, format: &str| {
        run(
            dir,
            &[
                "gate", "--tier", "smoke", "--run", run_file, "--out", "out", "--format", format,
            ],
        )
    };

    check(&gate("base.jsonl", "table"), 2, "a first run");
    check(&gate("base.jsonl", "json"), 2, "a first run, JSON");
    let accept = run(
        dir,
        &[
            "baseline",
            "accept",
            "--tier",
            "smoke",
            "--from",
            "out/results.json",
        ],
    );
    check(&accept, 0, "baseline accept");
    check(&gate("base.jsonl", "table"), 0, "a passing run");
    let inconclusive = gate("some.jsonl", "table");
    check(&inconclusive, 0, "an inconclusive run");
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(summary.starts_with("**❓"), "{summary}");
    // The report of the same run says the same: inconclusive, never PASS.
    let report = [
        "report",
        "--tier",
        "smoke",
        "--from",
        "out",
        "--out",
        "report.html",
    ];
    let reported = run(dir, &report);
    check(&reported, 0, "ragate report of an inconclusive run");
    assert!(
        reported.stdout.contains(": inconclusive)"),
        "{}",
        reported.stdout
    );
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        html.contains(r#"class="badge run-inconclusive">INCONCLUSIVE<"#),
        "{html}"
    );
    assert!(!html.contains(">PASS<"), "{html}");
    check(&gate("some.jsonl", "json"), 0, "an inconclusive run, JSON");
    check(&gate("regressed.jsonl", "json"), 1, "a failing run, JSON");
    let failing = gate("regressed.jsonl", "table");
    check(&failing, 1, "a failing run");
    assert!(
        failing.stdout.contains("::error title=ragate"),
        "{}",
        failing.stdout
    );
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(
        summary.contains("[redacted]"),
        "the secrets were there: {summary}"
    );

    let report = [
        "report",
        "--tier",
        "smoke",
        "--from",
        "out",
        "--out",
        "report.html",
    ];
    check(&run(dir, &report), 0, "ragate report");
    let compare = ["compare", "baseline.json", "out/results.json"];
    check(&run(dir, &compare), 1, "compare");
    check(
        &run(dir, &[&compare[..], &["--format", "json"]].concat()),
        1,
        "compare, JSON",
    );
    for shard in ["1/2", "2/2"] {
        let out = format!("shards/{}", &shard[..1]);
        let args = [
            "gate",
            "--tier",
            "smoke",
            "--run",
            "regressed.jsonl",
            "--out",
            &out,
            "--shard",
            shard,
        ];
        check(&run(dir, &args), 0, "a shard");
    }
    let merge = [
        "merge", "--tier", "smoke", "shards/1", "shards/2", "--out", "merged",
    ];
    // A qid that holds a secret is redacted in shard.json as everywhere, so the merge finds the
    // shard's queries changed and refuses (exit 2): it never passes without that query.
    let merged = run(dir, &merge);
    check(&merged, 2, "merge");
    assert!(
        merged.stderr.contains("qids sha256 differs"),
        "{}",
        merged.stderr
    );
    let history = [
        "history",
        "add",
        "--tier",
        "smoke",
        "--from",
        "out/results.json",
        "--dir",
        "hist",
        "--with-queries",
    ];
    check(&run(dir, &history), 0, "history add");
    let show = [
        "history", "show", "--tier", "smoke", "--dir", "hist", "--format", "json",
    ];
    check(&run(dir, &show), 0, "history show");
    let show = ["baseline", "show", "--tier", "smoke", "--format", "json"];
    check(&run(dir, &show), 0, "baseline show");
    let holes = [
        "holes",
        "--tier",
        "smoke",
        "--run",
        "regressed.jsonl",
        "--format",
        "jsonl",
    ];
    check(&run(dir, &holes), 0, "holes");

    // Judge-eval items with secrets in their ids, claims and contexts.
    let items: String = (0..6)
        .map(|i| {
            let text = planted(&strings, i);
            format!(
                "{}\n",
                json!({"id": format!("item {text}"), "claim": format!("Objects stay {i} days. {text}"),
                       "context": format!("Objects stay {i} days. {text}"), "label": "supported", "class": "c ##[x]"})
            )
        })
        .collect();
    std::fs::write(dir.join("items.jsonl"), items).unwrap();
    let mut inputs_with_items = inputs.clone();
    inputs_with_items.push(dir.join("items.jsonl"));
    let judge_eval = run(
        dir,
        &["judge-eval", "--items", "items.jsonl", "--format", "json"],
    );
    assert_eq!(judge_eval.code, 0, "{}", judge_eval.stderr);
    assert_outputs(dir, &inputs_with_items, &judge_eval, "judge-eval");

    // Exit 2: a pipeline that prints every secret (and the corpus) on stderr, then fails.
    let lines: String = SECRETS
        .iter()
        .map(|(_, s)| {
            format!(
                "print('Traceback: key {s} and qualitycheck(//evil.example/x)', file=sys.stderr)\n"
            )
        })
        .collect();
    std::fs::write(
        dir.join("pipeline.py"),
        format!("import sys\nsys.stdin.read()\n{lines}sys.exit(1)\n"),
    )
    .unwrap();
    std::fs::write(
        dir.join("eval-config.yaml"),
        CONFIG.replace(
            "slices: [class]\n",
            "slices: [class]\npipeline:\n  command: [python3, pipeline.py]\n",
        ),
    )
    .unwrap();
    let mut inputs_with_pipeline = inputs_with_items;
    inputs_with_pipeline.push(dir.join("pipeline.py"));
    for format in ["table", "json"] {
        let crashed = run(
            dir,
            &[
                "gate", "--tier", "smoke", "--out", "out", "--format", format,
            ],
        );
        assert_eq!(crashed.code, 2, "{}", crashed.stderr);
        assert_outputs(dir, &inputs_with_pipeline, &crashed, "a crashed pipeline");
        let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
        assert!(summary.contains("Traceback: key [redacted]"), "{summary}");
    }
    assert!(fixture("hostile/strings.json").exists());
}

/// `ragate synth`: a generator that writes answers from documents holding the secrets (and link
/// syntax beside a registered word); the draft tier file and the review sheet hold none of them.
#[test]
fn synth_drafts_and_their_review_sheet_hold_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let corpus: String = SECRETS
        .iter()
        .enumerate()
        .map(|(i, (_, secret))| {
            let text = format!(
                "Rule {i} keeps key {secret} for 3 days next to qualitycheck(//evil.example/x) and \
                 !qualitycheck(//evil.example/p.png). Ask the desk about the {secret} rule."
            );
            format!(
                "{}\n",
                json!({"doc_id": format!("d{i}"), "title": format!("Doc {i}"), "text": text})
            )
        })
        .collect();
    std::fs::write(dir.join("corpus.jsonl"), corpus).unwrap();
    let script = fixture("judges/draft_generator.py");
    std::fs::write(
        dir.join("eval-config.yaml"),
        format!(
            "version: 1\ncorpus: corpus.jsonl\nmetrics: [recall@5]\njudges:\n  gen: {{ kind: command, command: [python3, \"{}\", ok] }}\ncache: {{ mode: off }}\ntiers:\n  smoke: {{ qrels: q.jsonl, baseline: b.json }}\ngate:\n  decision: point\n  min_queries: 1\n  rules:\n    - {{ metric: recall@5, max_drop: 0.1 }}\n",
            path_str(&script)
        ),
    )
    .unwrap();
    let inputs = vec![dir.join("corpus.jsonl"), dir.join("eval-config.yaml")];
    let outcome = run(dir, &["synth", "--generator", "gen", "--out", "drafts"]);
    assert_eq!(outcome.code, 0, "{}{}", outcome.stdout, outcome.stderr);
    assert_outputs(dir, &inputs, &outcome, "synth");
    let review = std::fs::read_to_string(dir.join("drafts/review.md")).unwrap();
    assert!(
        review.contains("[redacted]"),
        "the secrets were there: {review}"
    );
}
