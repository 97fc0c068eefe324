//! `ragate report`: the HTML page of a failing answer tier with a history, parsed by a real HTML5
//! parser (no parse error), self-contained (nothing to load), with hostile query and answer texts
//! escaped, every section present, identical on a second run; and its errors (no baseline, no
//! results, a corrupt history) leave no older report behind.

use std::path::Path;

use scraper::{Html, Selector};

use crate::gate_flow::setup_answer_tier;
use crate::{Outcome, Ragate, accept_baseline, ragate_env};

const SHA: &str = "89abcdef0123456789abcdef0123456789abcdef";
const HOSTILE_QUERY: &str =
    r#"</title><script>alert("q")</script><img src=x onerror=alert(1)> & "quoted""#;
const HOSTILE_ANSWER: &str =
    r#"<script>alert('a')</script> <a href="https://evil.example/">click</a>"#;

fn report(dir: &Path, extra: &[&str]) -> Outcome {
    let mut args = vec!["report", "--tier", "smoke", "--out", "report.html"];
    args.extend_from_slice(extra);
    ragate_env(dir, &args, &[])
}

/// The answer tier, a hostile query text, a run whose unfaithful answers carry markup, a
/// baseline and three recorded nights of the baseline run; out/ holds the failing run.
fn failing_tier_with_history(dir: &Path) {
    setup_answer_tier(dir);
    let qrels = std::fs::read_to_string(dir.join("qrels.jsonl")).unwrap();
    let hostile = serde_json::to_string(HOSTILE_QUERY).unwrap();
    std::fs::write(
        dir.join("qrels.jsonl"),
        qrels.replacen(
            "\"how long does bucket policy 1 keep objects\"",
            &hostile,
            1,
        ),
    )
    .unwrap();
    let unfaithful = std::fs::read_to_string(dir.join("unfaithful.jsonl")).unwrap();
    let mut lines: Vec<serde_json::Value> = unfaithful
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let answer = lines[1]["answer"].as_str().unwrap().to_string();
    lines[1]["answer"] = format!("{answer} {HOSTILE_ANSWER}").into();
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("unfaithful.jsonl"), text).unwrap();

    Ragate::gate("smoke", "base.jsonl", "out")
        .sha(SHA)
        .status(2)
        .run_in(dir); // no baseline yet
    accept_baseline(dir, "smoke", "out/results.json", &[]);
    for night in 1..=3u64 {
        // Another commit each night (the same run recorded twice would count once).
        let sha = format!("{night}{}", &SHA[1..]);
        Ragate::gate("smoke", "base.jsonl", "out")
            .sha(&sha)
            .status(0)
            .run_in(dir);
        let added = ragate_env(
            dir,
            &[
                "history",
                "add",
                "--tier",
                "smoke",
                "--from",
                "out/results.json",
                "--dir",
                "hist",
            ],
            &[("SOURCE_DATE_EPOCH", &(night * 86_400).to_string())],
        );
        assert_eq!(added.code, 0, "{}", added.stderr);
    }
    Ragate::gate("smoke", "unfaithful.jsonl", "out")
        .sha(SHA)
        .status(1)
        .run_in(dir);
}

fn select<'a>(page: &'a Html, css: &str) -> Vec<scraper::ElementRef<'a>> {
    page.select(&Selector::parse(css).unwrap()).collect()
}

fn text_of(element: &scraper::ElementRef<'_>) -> String {
    element.text().collect()
}

#[test]
fn a_failing_tier_gives_a_valid_self_contained_escaped_page_with_every_section() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    failing_tier_with_history(dir);
    let written = report(dir, &["--from", "out", "--history", "hist"]);
    assert_eq!(written.code, 0, "{}", written.stderr);
    assert!(
        written
            .stdout
            .contains("wrote report.html (tier `smoke`: regression)"),
        "{}",
        written.stdout
    );
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let page = Html::parse_document(&html);
    assert!(
        page.errors.is_empty(),
        "HTML5 parse errors: {:?}",
        page.errors
    );

    // Self-contained: nothing that loads or runs anything.
    for css in [
        "script", "link", "img", "iframe", "object", "embed", "base", "image", "use", "[src]",
    ] {
        assert!(select(&page, css).is_empty(), "{css} in the page");
    }
    for link in select(&page, "[href]") {
        let href = link.value().attr("href").unwrap();
        assert!(href.starts_with('#'), "a link out of the page: {href}");
    }
    let style = text_of(&select(&page, "style")[0]);
    assert!(!style.contains("url(") && !style.contains("@import"));
    let without_data = html.replace("https://evil.example/", "");
    assert!(
        !without_data.contains("http://") && !without_data.contains("https://"),
        "no URL in the page but the answer's text"
    );
    assert!(select(&page, "[onerror], [onload], [onclick]").is_empty());

    // The hostile texts are text, shown as written.
    let body = text_of(&select(&page, "body")[0]);
    assert!(body.contains(HOSTILE_QUERY), "the query text, escaped");
    assert!(
        body.contains("<script>alert('a')</script>"),
        "the answer's markup shown as text"
    );
    assert!(html.contains("&lt;script&gt;alert("));

    // The sections.
    assert_eq!(
        text_of(&select(&page, "h1 .badge")[0]),
        "REGRESSION",
        "the run's status"
    );
    let checks = select(&page, "#checks table.checks tbody tr");
    let names: Vec<String> = checks
        .iter()
        .map(|row| text_of(&select_in(row, "td code")[0]))
        .collect();
    for name in [
        "recall@5 [all]",
        "faithfulness [all]",
        "faithfulness_ppi [all]",
        "drift faithfulness [all]",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    let failing = select(&page, "#failing details.check");
    let faithfulness = failing
        .iter()
        .find(|d| text_of(&select_in(d, "summary code")[0]) == "faithfulness [all]")
        .expect("the failing faithfulness check has its block");
    assert!(faithfulness.value().attr("open").is_some(), "open");
    assert_eq!(
        select_in(faithfulness, "svg.chart").len(),
        1,
        "deltas chart"
    );
    let worst = select_in(faithfulness, "table.worst tbody tr");
    assert!(!worst.is_empty());
    assert!(
        !select_in(faithfulness, ".diff ins").is_empty(),
        "the added sentences are marked"
    );

    // Trends: the three recorded nights and this run, per gated check.
    let trends = select(&page, "#trends figure");
    let trend = trends
        .iter()
        .find(|f| text_of(&select_in(f, "figcaption.title code")[0]) == "faithfulness [all]")
        .expect("a trend of faithfulness [all]");
    assert!(text_of(trend).contains("4 runs; now"), "{}", text_of(trend));
    let svg = select_in(trend, "svg.chart")[0].html();
    for label in ["01-02", "01-03", "01-04", "now"] {
        assert!(svg.contains(&format!(">\n{label}\n<")), "x label {label}");
    }
    assert_eq!(select(&page, "#calibration svg.chart").len(), 1);
    assert_eq!(select(&page, "#length svg.chart").len(), 1);
    assert!(text_of(&select(&page, "#length figcaption")[0]).contains("Pearson r"));
    // The judge of each judged metric, with its agreement with the labels, as in summary.md.
    let calibration: String = select(&page, "#calibration figcaption")
        .iter()
        .map(text_of)
        .collect();
    assert!(
        calibration.contains("judge agrees with 3 of 4 labels"),
        "{calibration}"
    );
    let notes = text_of(&select(&page, "#notes")[0]);
    assert!(
        notes.contains("judged metrics: faithfulness, answer_relevance by `default` (lexical-2"),
        "{notes}"
    );

    // The same inputs give the same bytes.
    assert_eq!(report(dir, &["--from", "out", "--history", "hist"]).code, 0);
    assert_eq!(
        std::fs::read_to_string(dir.join("report.html")).unwrap(),
        html
    );
}

fn select_in<'a>(element: &scraper::ElementRef<'a>, css: &str) -> Vec<scraper::ElementRef<'a>> {
    element.select(&Selector::parse(css).unwrap()).collect()
}

#[test]
fn a_report_that_fails_names_why_and_leaves_no_older_report() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_answer_tier(dir);
    // No results yet.
    let none = report(dir, &[]);
    assert_eq!(none.code, 2, "{}", none.stdout);
    assert!(
        none.stderr.contains(".ragate/out/smoke/results.json")
            && none.stderr.contains("ragate gate --tier smoke"),
        "{}",
        none.stderr
    );
    // Results, no baseline (a first run): the measured means and the accept command.
    Ragate::gate("smoke", "base.jsonl", "out")
        .sha(SHA)
        .status(2)
        .run_in(dir);
    let unbaselined = report(dir, &["--from", "out"]);
    assert_eq!(unbaselined.code, 0, "{}", unbaselined.stderr);
    assert!(
        unbaselined.stdout.contains("(tier `smoke`: no baseline)"),
        "{}",
        unbaselined.stdout
    );
    let page = Html::parse_document(&std::fs::read_to_string(dir.join("report.html")).unwrap());
    assert!(page.errors.is_empty(), "{:?}", page.errors);
    assert_eq!(text_of(&select(&page, "h1 .badge")[0]), "NO BASELINE");
    let problem = text_of(&select(&page, ".problem")[0]);
    assert!(
        problem.contains("baseline.json")
            && problem.contains("ragate baseline accept --tier smoke --from out/results.json"),
        "{problem}"
    );
    let measured = select(&page, "table.measured tbody tr");
    let first: Vec<String> = select_in(&measured[0], "td").iter().map(text_of).collect();
    assert_eq!(
        first,
        ["recall@5", "1.0000n = 30"],
        "recall@5 over all 30 queries"
    );
    assert!(select(&page, "table.checks").is_empty(), "nothing gated");
    accept_baseline(dir, "smoke", "out/results.json", &[]);
    assert_eq!(report(dir, &["--from", "out"]).code, 0);
    assert!(dir.join("report.html").exists());

    // A corrupt history file: named, and the older report is gone.
    std::fs::create_dir_all(dir.join("hist/smoke")).unwrap();
    std::fs::write(dir.join("hist/smoke/19700102T000000Z-unknown.json"), "{").unwrap();
    let corrupt = report(dir, &["--from", "out", "--history", "hist"]);
    assert_eq!(corrupt.code, 2);
    assert!(
        corrupt.stderr.contains("19700102T000000Z-unknown.json"),
        "{}",
        corrupt.stderr
    );
    assert!(
        !dir.join("report.html").exists(),
        "a failed report leaves no older one to upload"
    );

    // --out naming an input (the baseline, the results) is refused before anything is written.
    for input in ["baseline.json", "out/results.json", "eval-config.yaml"] {
        let before = std::fs::read(dir.join(input)).unwrap();
        let refused = ragate_env(
            dir,
            &["report", "--tier", "smoke", "--from", "out", "--out", input],
            &[],
        );
        assert_eq!(refused.code, 2, "{input}: {}", refused.stdout);
        assert!(
            refused.stderr.contains("refusing to overwrite an input"),
            "{input}: {}",
            refused.stderr
        );
        assert_eq!(std::fs::read(dir.join(input)).unwrap(), before, "{input}");
    }

    // A file at --out that is not a report is left alone when the report fails.
    std::fs::write(dir.join("report.html"), "my notes").unwrap();
    assert_eq!(report(dir, &["--from", "out", "--history", "hist"]).code, 2);
    assert_eq!(
        std::fs::read_to_string(dir.join("report.html")).unwrap(),
        "my notes"
    );
}
