//! The hostile-strings corpus (`tests/fixtures/hostile/strings.json`, plus a string over 64 KiB)
//! through answers, claims, queries, qids, slice values and endpoint and pipeline replies, in real
//! gates (a first run, a pass and a regression against a baseline, so worst queries and answer
//! diffs appear), `ragate report`, a loopback HTTP pipeline answering 500 with a hostile body and
//! a subprocess pipeline writing hostile lines. Every output is checked: summary.md (rendered
//! with comrak as GitHub renders it) has no element ragate does not write, no image or link and
//! no mention, reference, URL or emoji outside code; no stdout or stderr line starts a workflow
//! command but ragate's escaped annotations; no raw control character reaches the terminal, the
//! annotations or junit.xml; report.html parses without an error.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;

use serde_json::{Value, json};

use crate::{Outcome, accept_baseline, fixture, path_str, ragate_env};

/// The corpus, with a string of more than 64 KiB.
pub(crate) fn corpus() -> Vec<String> {
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("hostile/strings.json")).unwrap())
            .unwrap();
    let mut strings: Vec<String> = file["strings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    strings.push(format!(
        "{} ::add-mask::end \u{1b}[2J",
        "@octocat ![x](https://evil.example/p.png) ".repeat(1700)
    ));
    assert!(strings.last().unwrap().len() > 64 * 1024);
    strings
}

const CONFIG: &str = "version: 1
metrics: [recall@5, faithfulness, answer_length]
slices: [class]
tiers:
  smoke: { qrels: qrels.jsonl, baseline: baseline.json }
gate:
  min_queries: 5
  decision: point
  rules:
    - { metric: recall@5, max_drop: 0.02 }
    - { metric: faithfulness, max_drop: 0.05 }
";

/// The hostile string each query gets.
fn hostile(strings: &[String], i: usize) -> &str {
    &strings[i % strings.len()]
}

/// Slice values: three hostile classes of 10 queries each.
fn class(strings: &[String], i: usize) -> String {
    let picks = [0, 3, 13];
    format!("c{} {}", i % 3, strings[picks[i % 3]])
}

/// A qid with the string's first 200 characters (ragate refuses control characters in ids).
fn qid(strings: &[String], i: usize) -> String {
    let text: String = hostile(strings, i)
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect();
    format!("q{i:02} {text}")
}

const QUERIES: usize = 30;

/// qrels (hostile queries, qids and slice values) and two runs: `base.jsonl` answers from its
/// contexts (which carry the hostile text, so claims with it are supported), `regressed.jsonl`
/// loses the gold document for the even queries and rewrites their answers.
fn setup(dir: &Path, strings: &[String]) {
    let (mut qrels, mut base, mut regressed) = (String::new(), String::new(), String::new());
    for i in 0..QUERIES {
        let (qid, text) = (qid(strings, i), hostile(strings, i));
        let gold = format!("doc {}", &qid[..3]);
        writeln!(
            qrels,
            "{}",
            json!({"qid": qid, "query": format!("question {i}: {text}"), "gold_doc_ids": [gold], "class": class(strings, i)})
        )
        .unwrap();
        let context = format!("Policy {i} keeps objects for {} days. {text}", 10 + i);
        let line = |retrieved: Vec<String>, answer: String| {
            json!({"qid": qid, "retrieved": retrieved.iter().map(|d| json!({"doc_id": d})).collect::<Vec<_>>(),
                   "answer": answer, "contexts": [context]})
        };
        writeln!(base, "{}", line(vec![gold.clone()], context.clone())).unwrap();
        let changed = if i % 2 == 0 {
            line(
                vec![format!("filler {i} {text}")],
                format!("Completely different words here. {text} Unsupported claim {i}."),
            )
        } else {
            line(vec![gold], context.clone())
        };
        writeln!(regressed, "{changed}").unwrap();
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("base.jsonl"), base).unwrap();
    std::fs::write(dir.join("regressed.jsonl"), regressed).unwrap();
    std::fs::write(dir.join("eval-config.yaml"), CONFIG).unwrap();
}

/// `markdown` rendered as GitHub renders it (cmark-gfm's extensions; raw HTML through the tag
/// filter).
fn gfm(markdown: &str) -> String {
    let mut options = comrak::Options::default();
    options.extension.autolink = true;
    options.extension.table = true;
    options.extension.strikethrough = true;
    options.extension.footnotes = true;
    options.extension.tasklist = true;
    options.extension.math_dollars = true;
    // GitHub filters these tags; comrak deprecates its option, but it is what GitHub does.
    #[allow(deprecated)]
    {
        options.extension.tagfilter = true;
    }
    options.render.r#unsafe = true;
    comrak::markdown_to_html(markdown, &options)
}

/// The elements ragate's summaries are made of (`br` ends a line of an error message or of a
/// failed pipeline's stderr; `h1` heads `synth`'s review sheet).
const RAGATE_ELEMENTS: [&str; 22] = [
    "h1", "h4", "h2", "h3", "html", "head", "body", "p", "strong", "table", "thead", "tbody", "tr",
    "th", "td", "ul", "li", "details", "summary", "code", "pre", "br",
];

/// Patterns GitHub turns into a link, a mention or an emoji in text outside code.
const GITHUB_PATTERNS: [&str; 8] = [
    r"(^|[^\w])@[A-Za-z0-9]",
    r"\w@[A-Za-z0-9][A-Za-z0-9-]*\.",
    r"(^|[^\w])#[0-9]",
    r"(?i)\bGH-[0-9]",
    r"(?i)(https?|ftp)://",
    r"(?i)(^|[^\w])www\.",
    r":[a-z0-9_+-]+:",
    r"(^|[^\w])[0-9a-f]{7,40}([^\w]|$)",
];

fn is_hazard(c: char) -> bool {
    (c < ' ' && !matches!(c, '\n' | '\t'))
        || ('\u{7f}'..='\u{9f}').contains(&c)
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// summary.md is inert: only ragate's elements, no link or image, no GitHub pattern outside
/// code, no control character, and bounded.
pub(crate) fn assert_markdown_inert(markdown: &str, what: &str) {
    assert!(
        markdown.len() < 1024 * 1024,
        "{what}: {} bytes",
        markdown.len()
    );
    assert!(!markdown.chars().any(is_hazard), "{what}: {markdown:?}");
    let html = gfm(markdown);
    let document = scraper::Html::parse_document(&html);
    for node in document.tree.root().descendants() {
        if let Some(element) = node.value().as_element() {
            assert!(
                RAGATE_ELEMENTS.contains(&element.name()),
                "{what}: a <{}> ragate did not write: {html}",
                element.name()
            );
        }
        let Some(text) = node.value().as_text() else {
            continue;
        };
        let in_code = node.ancestors().any(|a| {
            a.value()
                .as_element()
                .is_some_and(|e| matches!(e.name(), "code" | "pre"))
        });
        if in_code {
            continue;
        }
        for pattern in GITHUB_PATTERNS {
            let regex = regex_lite::Regex::new(pattern).unwrap();
            assert!(
                !regex.is_match(text),
                "{what}: {pattern} outside code in {:?}",
                text.chars().take(500).collect::<String>()
            );
        }
    }
}

/// No raw control character, and no line that starts a workflow command but ragate's own
/// annotations, which are escaped per GitHub's rules.
pub(crate) fn assert_streams_inert(outcome: &Outcome, what: &str) {
    for (stream, text) in [("stdout", &outcome.stdout), ("stderr", &outcome.stderr)] {
        assert!(
            !text.chars().any(is_hazard),
            "{what}: a raw control character on {stream}: {text:?}"
        );
        for line in text.split(['\n', '\r']) {
            let trimmed = line.trim_start();
            if trimmed.contains("##[") {
                panic!("{what}: a legacy workflow command on {stream}: {line:?}");
            }
            if !trimmed.starts_with("::") {
                continue;
            }
            assert_annotation(line, &format!("{what} ({stream})"));
        }
    }
}

/// `::error title=ragate…::message` with `%`, CR, LF escaped everywhere and `:` and `,` in the
/// title.
fn assert_annotation(line: &str, what: &str) {
    let regex = regex_lite::Regex::new(r"^::(error|warning) title=(ragate[^:,]*)::(.*)$").unwrap();
    let captures = regex
        .captures(line)
        .unwrap_or_else(|| panic!("{what}: a workflow command ragate did not write: {line:?}"));
    let percent = regex_lite::Regex::new(r"%(?:25|0D|0A|3A|2C)").unwrap();
    for part in [&captures[2], &captures[3]] {
        assert!(
            !percent.replace_all(part, "").contains('%'),
            "{what}: an unescaped % in {line:?}"
        );
    }
}

fn run(dir: &Path, args: &[&str]) -> Outcome {
    let summary = dir.join("step-summary.md");
    std::fs::write(&summary, "").unwrap();
    ragate_env(
        dir,
        args,
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", path_str(&summary)),
        ],
    )
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// junit.xml parses as XML and holds no control character XML 1.0 forbids.
fn assert_junit_clean(dir: &Path, what: &str) {
    let junit = read(dir, "out/junit.xml");
    assert!(!junit.chars().any(is_hazard), "{what}: {junit:?}");
    let mut reader = quick_xml::Reader::from_str(&junit);
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(_) => {}
            Err(error) => panic!("{what}: junit.xml: {error}"),
        }
    }
}

fn assert_outputs_inert(dir: &Path, outcome: &Outcome, what: &str) {
    assert_streams_inert(outcome, what);
    assert_markdown_inert(&read(dir, "out/summary.md"), what);
    assert_markdown_inert(&read(dir, "step-summary.md"), what);
    assert_junit_clean(dir, what);
}

#[test]
fn hostile_strings_in_every_input_leave_every_output_inert() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let strings = corpus();
    setup(dir, &strings);
    let gate = |run_file: &str| {
        run(
            dir,
            &["gate", "--tier", "smoke", "--run", run_file, "--out", "out"],
        )
    };

    let first = gate("base.jsonl");
    assert_eq!(first.code, 2, "no baseline yet: {}", first.stderr);
    assert_outputs_inert(dir, &first, "the first run");
    accept_baseline(dir, "smoke", "out/results.json", &[]);

    let pass = gate("base.jsonl");
    assert_eq!(pass.code, 0, "{}", pass.stderr);
    assert_outputs_inert(dir, &pass, "a passing run");

    let fail = gate("regressed.jsonl");
    assert_eq!(fail.code, 1, "{}{}", fail.stdout, fail.stderr);
    assert_outputs_inert(dir, &fail, "a failing run");
    let summary = read(dir, "out/summary.md");
    // The sections the corpus went through are there: worst queries, answer changes.
    assert!(summary.contains("Regressed queries"), "{summary}");
    assert!(
        summary.contains("```diff") || summary.contains("- answer:"),
        "{summary}"
    );
    assert!(
        fail.stdout.contains("::error title=ragate"),
        "annotations: {}",
        fail.stdout
    );
    // The escapes are visible where the characters were.
    assert!(fail.stdout.contains("\\u{1b}"), "{}", fail.stdout);

    let report = run(
        dir,
        &[
            "report",
            "--tier",
            "smoke",
            "--from",
            "out",
            "--out",
            "report.html",
        ],
    );
    assert_eq!(report.code, 0, "{}", report.stderr);
    assert_streams_inert(&report, "ragate report");
    let html = read(dir, "report.html");
    assert!(!html.chars().any(is_hazard), "{html:?}");
    let document = scraper::Html::parse_document(&html);
    assert!(document.errors.is_empty(), "{:?}", document.errors);
    for tag in ["img", "script", "iframe"] {
        let selector = scraper::Selector::parse(tag).unwrap();
        assert_eq!(
            document.select(&selector).count(),
            0,
            "a <{tag}> in report.html"
        );
    }
    assert!(html.contains("\\u{202e}"), "bidi overrides shown escaped");
}

/// A loopback HTTP pipeline that answers every request with status 500 and `body`.
fn serve_error(body: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/query", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0usize;
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) == 0 {
                    break;
                }
                if header.trim().is_empty() {
                    break;
                }
                if let Some((name, value)) = header.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut request = vec![0; length];
            let _ = reader.read_exact(&mut request);
            let response = format!(
                "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let mut stream = stream;
            let _ = stream.write_all(response.as_bytes());
        }
    });
    url
}

#[test]
fn hostile_endpoint_and_pipeline_replies_are_shown_inert() {
    let strings = corpus();
    let error_body: String = strings[..strings.len() - 1].join("\n");

    // An HTTP pipeline whose service answers 500 with the corpus, one string a line.
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, &strings);
    let url = serve_error(error_body.clone());
    std::fs::write(
        dir.join("eval-config.yaml"),
        CONFIG.replace(
            "slices: [class]\n",
            &format!(
                "slices: [class]\npipeline: {{ http: {{ url: \"{url}\", max_retries: 0, timeout_s: 5 }} }}\n"
            ),
        ),
    )
    .unwrap();
    let outcome = run(dir, &["gate", "--tier", "smoke", "--out", "out"]);
    assert_eq!(outcome.code, 2, "{}", outcome.stderr);
    assert!(
        outcome.stderr.contains("500"),
        "the error is reported: {}",
        outcome.stderr
    );
    assert_outputs_inert(dir, &outcome, "an HTTP pipeline answering 500");

    // A command pipeline that writes the corpus instead of answers, then fails.
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, &strings);
    std::fs::write(dir.join("hostile.txt"), &error_body).unwrap();
    std::fs::write(
        dir.join("pipeline.py"),
        "import sys\nsys.stdin.read()\nsys.stdout.write(open('hostile.txt', encoding='utf-8').read())\nsys.exit(3)\n",
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
    let outcome = run(dir, &["gate", "--tier", "smoke", "--out", "out"]);
    assert_eq!(outcome.code, 2, "{}", outcome.stderr);
    assert_outputs_inert(dir, &outcome, "a command pipeline writing the corpus");
}
