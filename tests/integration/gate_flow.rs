//! The gate's whole flow on generated data: no baseline (exit 2, results written), accept, the
//! same run (exit 0), a clear recall regression on one slice (exit 1, JUnit failure naming metric
//! and slice), small symmetric noise (exit 0).

use std::fmt::Write as _;
use std::path::Path;

use crate::json_schema::Schema;
use crate::{Outcome, Ragate, accept_baseline, path_str, ragate_env, ragate_in};

const QUERIES_PER_CLASS: usize = 40;
const CLASSES: [&str; 3] = ["literal", "paraphrased", "multi-topic"];

const CONFIG: &str = "version: 1
metrics: [recall@5, mrr, ndcg@10]
slices: [class]
tiers:
  regression: { qrels: qrels.jsonl, baseline: baselines/regression.json }
gate:
  decision: significant
  alpha: 0.05
  min_queries: 5
  rules:
    - { metric: recall@5, max_drop: 0.02 }
    - { metric: mrr, max_drop: 0.05 }
";

/// Every query has gold docs g0, g1; the run ranks them at `ranks` (1-based) among fillers.
pub(crate) fn write_run(path: &Path, rank_of: impl Fn(usize, &str) -> [usize; 2]) {
    let mut text = String::new();
    for class in CLASSES {
        for i in 0..QUERIES_PER_CLASS {
            let qid = format!("{class}-{i:02}");
            let ranks = rank_of(i, class);
            let docs: Vec<String> = (1..=20)
                .map(|rank| match ranks.iter().position(|&r| r == rank) {
                    Some(g) => format!("{{\"doc_id\":\"{qid}-g{g}\"}}"),
                    None => format!("{{\"doc_id\":\"filler-{rank}\"}}"),
                })
                .collect();
            writeln!(
                text,
                "{{\"qid\":\"{qid}\",\"retrieved\":[{}]}}",
                docs.join(",")
            )
            .unwrap();
        }
    }
    std::fs::write(path, text).unwrap();
}

pub(crate) fn setup(dir: &Path) {
    let mut qrels = String::new();
    for class in CLASSES {
        for i in 0..QUERIES_PER_CLASS {
            let qid = format!("{class}-{i:02}");
            writeln!(
                qrels,
                "{{\"qid\":\"{qid}\",\"query\":\"question {i} of {class}\",\"gold_doc_ids\":[\"{qid}-g0\",\"{qid}-g1\"],\"class\":\"{class}\"}}"
            )
            .unwrap();
        }
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("eval-config.yaml"), CONFIG).unwrap();
    // baseline quality: gold at ranks 1 and 2..4 depending on the query
    write_run(&dir.join("base.jsonl"), |i, _| [1, 2 + i % 3]);
    // regression: for 3 of 4 paraphrased queries both gold docs fall below rank 5
    write_run(&dir.join("regressed.jsonl"), |i, class| {
        if class == "paraphrased" && i % 4 != 0 {
            [7, 9]
        } else {
            [1, 2 + i % 3]
        }
    });
    // noise: the second gold doc moves one rank up or down in alternate queries, staying in the top 5
    write_run(&dir.join("noisy.jsonl"), |i, _| {
        let second = 2 + i % 3;
        [
            1,
            if i % 2 == 0 {
                (second + 1).min(5)
            } else {
                (second - 1).max(2)
            },
        ]
    });
}

/// The XML of the testcase named `name`, up to the next testcase.
fn testcase<'a>(junit: &'a str, name: &str) -> &'a str {
    let start = junit
        .find(&format!("<testcase name=\"{name}\""))
        .unwrap_or_else(|| panic!("no testcase {name} in {junit}"));
    let rest = &junit[start + 1..];
    &rest[..rest.find("<testcase").unwrap_or(rest.len())]
}

#[test]
fn no_baseline_then_accept_then_pass_regress_and_noise() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);

    let first = Ragate::gate("regression", "base.jsonl", "out")
        .status(2)
        .run_in(dir); // no baseline is an error
    assert!(
        first
            .stderr
            .contains("ragate baseline accept --tier regression"),
        "{}",
        first.stderr
    );
    let results = std::fs::read_to_string(dir.join("out/results.json")).unwrap();
    assert!(results.contains("\"status\": \"no-baseline\""), "{results}");

    let accepted = accept_baseline(dir, "regression", "out/results.json", &[]);
    assert!(
        accepted.stdout.contains("+all"),
        "a diff of the summary: {}",
        accepted.stdout
    );
    assert!(dir.join("baselines/regression.json").is_file());
    let again = ragate_in(
        dir,
        &[
            "baseline",
            "accept",
            "--tier",
            "regression",
            "--from",
            "out/results.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(again.code, 0, "{}", again.stderr);
    let document: serde_json::Value = serde_json::from_str(&again.stdout).unwrap();
    assert_eq!(
        document["changed"], false,
        "the same results again: {document:#}"
    );
    assert_eq!(document["tier"], "regression");

    Ragate::gate("regression", "base.jsonl", "out")
        .status(0)
        .run_in(dir); // same run passes
    let again = std::fs::read(dir.join("out/results.json")).unwrap();
    let same_twice = Ragate::gate("regression", "base.jsonl", "out").run_in(dir);
    assert_eq!(same_twice.code, 0);
    assert_eq!(
        std::fs::read(dir.join("out/results.json")).unwrap(),
        again,
        "results.json is byte-identical"
    );

    Ragate::gate("regression", "regressed.jsonl", "out")
        .status(1)
        .run_in(dir); // a clear regression fails
    let junit = std::fs::read_to_string(dir.join("out/junit.xml")).unwrap();
    let paraphrased = testcase(&junit, "recall@5 [class=paraphrased]");
    assert!(
        paraphrased.contains(
            "<failure type=\"regression\" message=\"recall@5 [class=paraphrased] regressed"
        ),
        "{junit}"
    );
    assert!(
        !testcase(&junit, "recall@5 [class=literal]").contains("<failure"),
        "{junit}"
    );
    assert!(
        !testcase(&junit, "mrr [class=multi-topic]").contains("<failure"),
        "{junit}"
    );

    Ragate::gate("regression", "noisy.jsonl", "out")
        .status(0)
        .run_in(dir); // symmetric noise passes
}

#[test]
fn accept_refuses_in_ci_without_force() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    // GitHub and GitLab set CI=true; other services CI=1 or CI=True.
    for value in ["true", "1", "True"] {
        let output = ragate_env(
            dir.path(),
            &["baseline", "accept", "--tier", "regression"],
            &[("CI", value)],
        );
        assert_eq!(output.code, 2, "CI={value}");
        assert!(
            output
                .stderr
                .contains("refusing to accept a baseline in CI"),
            "CI={value}: {}",
            output.stderr
        );
    }
    // CI=false is not CI: accept goes on to the next check (here, no results yet).
    let output = ragate_env(
        dir.path(),
        &["baseline", "accept", "--tier", "regression"],
        &[("CI", "false")],
    );
    assert!(
        !output
            .stderr
            .contains("refusing to accept a baseline in CI"),
        "{}",
        output.stderr
    );
}

/// Fails with every schema error of `document`.
pub(crate) fn assert_schema(name: &str, document: &serde_json::Value) {
    let errors = Schema::published(name).errors(document);
    assert!(errors.is_empty(), "{name}: {errors:#?}");
}

#[test]
fn results_and_trace_match_the_published_schemas() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    Ragate::gate("regression", "base.jsonl", "out")
        .status(2)
        .run_in(dir.path());
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/results.json")).unwrap(),
    )
    .unwrap();
    let ungated = ragate_in(
        dir.path(),
        &[
            "gate",
            "--tier",
            "regression",
            "--run",
            "base.jsonl",
            "--out",
            "out",
            "--format",
            "json",
        ],
    );
    assert_eq!(ungated.code, 2, "{}", ungated.stderr);
    let document: serde_json::Value = serde_json::from_str(&ungated.stdout).unwrap();
    assert_schema("gate.schema.json", &document);
    assert_eq!(document["status"], "no-baseline");
    assert_eq!(document["checks"], serde_json::json!([]));
    assert_eq!(
        document["results"], results,
        "the measured results, as written"
    );
    let results_schema = Schema::published("results.schema.json");
    let errors = results_schema.errors(&results);
    assert!(errors.is_empty(), "{errors:?}");
    // the schema is strict: an unknown field is rejected
    let mut extra = results.clone();
    extra["surprise"] = serde_json::json!(1);
    assert!(!results_schema.is_valid(&extra));

    let trace_schema = Schema::published("trace.schema.json");
    let trace = std::fs::read_to_string(dir.path().join("out/trace.jsonl")).unwrap();
    assert_eq!(trace.lines().count(), 3 * QUERIES_PER_CLASS);
    for line in trace.lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        let errors = trace_schema.errors(&value);
        assert!(errors.is_empty(), "{line}: {errors:?}");
    }
}

#[test]
fn compare_and_validate() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    // No baseline yet: a warning (the gate exits 2 until one is accepted), not an error.
    let before = ragate_in(dir, &["validate"]);
    assert_eq!(before.code, 0, "no baseline yet: {}", before.stderr);
    let before_json = ragate_in(dir, &["validate", "--format", "json"]);
    assert_eq!(before_json.code, 0);
    let findings: serde_json::Value = serde_json::from_str(&before_json.stdout).unwrap();
    assert_eq!(findings["errors"], serde_json::json!([]), "{findings:#}");
    assert!(
        findings["warnings"][0]
            .as_str()
            .unwrap()
            .starts_with("tier `regression`: no baseline yet"),
        "{findings:#}"
    );
    assert!(
        before
            .stderr
            .contains("warning: tier `regression`: no baseline yet"),
        "{}",
        before.stderr
    );
    // A baseline that exists but cannot be read stays an error.
    std::fs::create_dir_all(dir.join("baselines")).unwrap();
    std::fs::write(dir.join("baselines/regression.json"), "{").unwrap();
    assert_eq!(ragate_in(dir, &["validate"]).code, 2);
    std::fs::remove_file(dir.join("baselines/regression.json")).unwrap();
    Ragate::gate("regression", "base.jsonl", "out")
        .status(2)
        .run_in(dir);
    std::fs::rename(dir.join("out/results.json"), dir.join("base.json")).unwrap();
    accept_baseline(dir, "regression", "base.json", &[]);
    let after = ragate_in(dir, &["validate"]);
    assert_eq!(after.code, 0, "{}", after.stdout);
    // Found from a subdirectory (upward search), or named by RAGATE_CONFIG from anywhere.
    let nested = dir.join("nested/deeper");
    std::fs::create_dir_all(&nested).unwrap();
    let from_below = ragate_in(&nested, &["validate"]);
    assert_eq!(from_below.code, 0, "{}", from_below.stdout);
    assert!(
        from_below
            .stdout
            .starts_with("../../eval-config.yaml: 1 tiers"),
        "{}",
        from_below.stdout
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let config = dir.join("eval-config.yaml");
    let named = ragate_env(
        elsewhere.path(),
        &["validate"],
        &[("RAGATE_CONFIG", path_str(&config))],
    );
    assert_eq!(named.code, 0, "{}", named.stdout);
    let as_json = ragate_in(dir, &["validate", "--format", "json"]);
    let findings: serde_json::Value = serde_json::from_str(&as_json.stdout).unwrap();
    assert_eq!(
        findings["errors"],
        serde_json::json!([]),
        "{}",
        as_json.stdout
    );
    assert_eq!(findings["tiers"], serde_json::json!(["regression"]));
    let shown = ragate_in(
        dir,
        &[
            "baseline",
            "show",
            "--tier",
            "regression",
            "--format",
            "json",
        ],
    );
    let shown: serde_json::Value = serde_json::from_str(&shown.stdout).unwrap();
    assert_eq!(shown["queries"], 3 * QUERIES_PER_CLASS);
    assert!(
        shown["summary"]["all"]["recall@5"]["mean"].is_number(),
        "{shown:#}"
    );
    assert!(
        after.stdout.ends_with("1 tiers, 0 errors, 0 warnings\n"),
        "{}",
        after.stdout
    );

    Ragate::gate("regression", "regressed.jsonl", "out")
        .status(1)
        .run_in(dir);
    let compared = ragate_in(
        dir,
        &[
            "compare",
            "base.json",
            "out/results.json",
            "--junit",
            "compare.xml",
        ],
    );
    assert_eq!(compared.code, 1, "{}", compared.stdout);
    assert!(
        compared.stdout.contains("recall@5 [class=paraphrased]"),
        "{}",
        compared.stdout
    );
    assert!(
        std::fs::read_to_string(dir.join("compare.xml"))
            .unwrap()
            .contains("<failure")
    );
    let reversed = ragate_in(dir, &["compare", "out/results.json", "base.json"]);
    assert_eq!(
        reversed.code, 0,
        "B better than A is not a regression: {}",
        reversed.stdout
    );
    let as_json = ragate_in(
        dir,
        &[
            "compare",
            "base.json",
            "out/results.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(as_json.code, 1, "{}", as_json.stderr);
    let document: serde_json::Value = serde_json::from_str(&as_json.stdout).unwrap();
    assert_schema("gate.schema.json", &document);
    assert!(document["results"].is_null(), "compare reads results files");
    assert!(
        document["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "recall@5 [class=paraphrased]" && c["status"] == "fail"),
        "{document:#}"
    );
}

/// A run whose answers are built from their contexts, or with an unsupported sentence added to
/// the answers of `injected` queries.
fn write_answer_run(path: &Path, injected: impl Fn(usize) -> bool) {
    let mut text = String::new();
    for i in 0..30 {
        let context = format!(
            "Bucket policy {i} keeps objects for {} days before deletion.",
            10 + i
        );
        let mut answer = context.clone();
        if injected(i) {
            answer.push_str(" Invoices are printed on recycled paper in Lisbon.");
        }
        let line = serde_json::json!({
            "qid": format!("q{i:02}"),
            "retrieved": [{"doc_id": format!("q{i:02}-g0")}],
            "answer": answer,
            "contexts": [context],
        });
        writeln!(text, "{line}").unwrap();
    }
    std::fs::write(path, text).unwrap();
}

/// A tier of 30 answered queries with a faithfulness rule, a calibrated floor and 10 human labels
/// (plus a stale one); `base.jsonl` answers faithfully, `unfaithful.jsonl` adds an unsupported
/// sentence to two thirds of the answers.
pub(crate) fn setup_answer_tier(dir: &Path) {
    let mut qrels = String::new();
    for i in 0..30 {
        writeln!(
            qrels,
            "{{\"qid\":\"q{i:02}\",\"query\":\"how long does bucket policy {i} keep objects\",\"gold_doc_ids\":[\"q{i:02}-g0\"]}}"
        )
        .unwrap();
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(
        dir.join("eval-config.yaml"),
        "version: 1
metrics: [recall@5, { name: faithfulness, empty_answer: zero }, answer_relevance, answer_length]
tiers:
  smoke: { qrels: qrels.jsonl, baseline: baseline.json, labels: labels.jsonl }
gate:
  rules:
    - { metric: recall@5, max_drop: 0.02 }
    - { metric: faithfulness, max_drop: 0.05 }
    - { metric: faithfulness_ppi, min: 0.5 }
",
    )
    .unwrap();
    write_answer_run(&dir.join("base.jsonl"), |_| false);
    // human labels for 10 answers (the humans find 2 of them unfaithful), and one stale label
    let mut labels = String::new();
    for i in 0..10 {
        let answer = format!(
            "Bucket policy {i} keeps objects for   {} days before deletion.",
            10 + i
        );
        let human = if i < 2 { 0 } else { 1 };
        writeln!(
            labels,
            "{}",
            serde_json::json!({"qid": format!("q{i:02}"), "answer": answer, "faithfulness": human})
        )
        .unwrap();
    }
    writeln!(
        labels,
        "{}",
        serde_json::json!({"qid": "q11", "answer": "an older answer", "faithfulness": 1})
    )
    .unwrap();
    std::fs::write(dir.join("labels.jsonl"), labels).unwrap();
    write_answer_run(&dir.join("unfaithful.jsonl"), |i| i % 3 != 0);
}

#[test]
fn a_faithfulness_drop_fails_the_gate_and_the_trace_shows_claims() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_answer_tier(dir);
    let gate = |run: &str| Ragate::gate("smoke", run, "out").run_in(dir);
    assert_eq!(gate("base.jsonl").code, 2);
    let baseline: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/results.json")).unwrap())
            .unwrap();
    assert_eq!(
        baseline["summary"]["all"]["faithfulness"]["mean"], 1.0,
        "answers built from contexts are faithful"
    );
    accept_baseline(dir, "smoke", "out/results.json", &[]);
    assert_eq!(gate("base.jsonl").code, 0);
    let run_stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/run-stats.json")).unwrap())
            .unwrap();
    let calibration = &run_stats["calibration"][0];
    assert_eq!(calibration["metric"], "faithfulness");
    assert_eq!(
        (
            calibration["labelled"].clone(),
            calibration["queries"].clone(),
            calibration["stale_labels"].clone()
        ),
        (10.into(), 30.into(), 1.into())
    );
    // the judge says 1.0 everywhere, the humans 0.8 on their sample: PPI corrects by 0.2
    assert!(
        (calibration["ppi"].as_f64().unwrap() - 0.8).abs() < 1e-12,
        "{calibration}"
    );
    assert_eq!(calibration["judge_mean"], 1.0);
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(
        summary.contains("faithfulness calibrated on 10 human labels of 30 queries: PPI 0.8000"),
        "{summary}"
    );
    assert!(
        summary.contains("judging: 60 tasks, 0 sent to judges, 60 answered from the cache"),
        "{summary}"
    );
    // The judge of each judged metric is named, with its agreement with the labels: it calls
    // all 10 labelled answers faithful, the humans 8, so it agrees on 8 with a kappa of 0.
    assert!(
        summary.contains(
            "judged metrics: faithfulness, answer_relevance by `default` (lexical-2 threshold=0.4 \
             stem=true claims=sentences-1); faithfulness: judge agrees with 8 of 10 labels \
             (values ≥ 0.5 positive), Cohen's kappa 0.00"
        ),
        "{summary}"
    );
    let agreement = &calibration["agreement"];
    assert_eq!(
        (&agreement["agree"], &agreement["labels"]),
        (&8.into(), &10.into())
    );
    assert!(
        agreement["kappa"].as_f64().unwrap().abs() < 1e-12,
        "{agreement}"
    );
    let junit = std::fs::read_to_string(dir.join("out/junit.xml")).unwrap();
    let ppi = testcase(&junit, "faithfulness_ppi [all]");
    assert!(
        !ppi.contains("<failure") && !ppi.contains("<error"),
        "{ppi}"
    );

    let failed = gate("unfaithful.jsonl");
    assert_eq!(failed.code, 1, "{}\n{}", failed.stdout, failed.stderr);
    let junit = std::fs::read_to_string(dir.join("out/junit.xml")).unwrap();
    let failure = testcase(&junit, "faithfulness [all]");
    assert!(failure.contains("<failure"), "{junit}");
    assert!(
        failure.contains(
            "unsupported claim (new, grade 0): Invoices are printed on recycled paper in Lisbon."
        ),
        "the failing claims are in the failure body: {failure}"
    );
    assert!(
        failure.contains(" {+Invoices are printed on recycled paper in Lisbon.+}"),
        "the answer diff: {failure}"
    );
    assert!(
        !testcase(&junit, "recall@5 [all]").contains("<failure"),
        "{junit}"
    );
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(
        summary.contains("answer_length vs faithfulness over 30 queries: Pearson r = -1.000, Spearman rho = -1.000"),
        "{summary}"
    );
    let trace = std::fs::read_to_string(dir.join("out/trace.jsonl")).unwrap();
    let second: serde_json::Value = serde_json::from_str(trace.lines().nth(1).unwrap()).unwrap();
    assert_eq!(
        second["claims"][1]["claim"],
        "Invoices are printed on recycled paper in Lisbon."
    );
    assert_eq!(second["claims"][1]["supported"], false);
    assert_eq!(second["claims"][0]["supported"], true);
    assert_eq!(second["metrics"]["faithfulness"], 0.5);
    let trace_schema = Schema::published("trace.schema.json");
    for line in trace.lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(trace_schema.is_valid(&value), "{line}");
    }

    // A different judge makes the baseline incomparable.
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    std::fs::write(
        dir.join("eval-config.yaml"),
        format!("{config}judges:\n  default: {{ kind: lexical, threshold: 0.6 }}\n"),
    )
    .unwrap();
    let changed = gate("base.jsonl");
    assert_eq!(changed.code, 2, "{}", changed.stderr);
    assert!(changed.stderr.contains("judge `default` differs from the baseline's (lexical-2 threshold=0.4 stem=true claims=sentences-1 -> lexical-2 threshold=0.6"), "{}", changed.stderr);
    let allowed = ragate_in(
        dir,
        &[
            "gate",
            "--tier",
            "smoke",
            "--run",
            "base.jsonl",
            "--out",
            "out",
            "--allow-judge-change",
        ],
    );
    // The run carries its contexts and the config names no corpus: the baseline's contexts
    // cannot be rebuilt for re-judging (tests/integration/judge_change.rs re-judges).
    assert_eq!(allowed.code, 2, "{}", allowed.stderr);
    assert!(
        allowed.stderr.contains("cannot be re-judged"),
        "{}",
        allowed.stderr
    );
}

#[test]
fn github_actions_gets_annotations_and_the_step_summary() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let summary = dir.join("step-summary.md");
    let summary_path = path_str(&summary);
    let output = regressed_after_accept(
        dir,
        &[],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", summary_path),
        ],
        || std::fs::write(&summary, "earlier step\n").unwrap(),
    );
    assert_eq!(output.code, 1);
    let stdout = output.stdout;
    let annotations: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("::error "))
        .collect();
    assert!(
        !annotations.is_empty() && annotations.len() <= 10,
        "{stdout}"
    );
    assert!(
        annotations[0].starts_with("::error title=ragate%3A recall@5 [class=paraphrased]::"),
        "{stdout}"
    );
    let appended = std::fs::read_to_string(&summary).unwrap();
    assert!(
        appended.starts_with("earlier step\n"),
        "appended, not replaced"
    );
    assert!(
        appended.starts_with("earlier step\n**❌ 4 of 8 checks failed: worst recall@5"),
        "the summary's headline follows: {appended}"
    );
}

/// Sets up the regression tier, accepts the base run, calls `before`, then gates the regressed
/// run with `extra` arguments and `env`.
fn regressed_after_accept(
    dir: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
    before: impl FnOnce(),
) -> Outcome {
    setup(dir);
    Ragate::gate("regression", "base.jsonl", "out")
        .status(2)
        .run_in(dir);
    accept_baseline(dir, "regression", "out/results.json", &[]);
    before();
    Ragate::gate("regression", "regressed.jsonl", "out")
        .args(extra)
        .envs(env)
        .run_in(dir)
}

#[test]
fn json_output_stays_one_document_on_github_actions() {
    let dir = tempfile::tempdir().unwrap();
    let output = regressed_after_accept(
        dir.path(),
        &["--format", "json"],
        &[("GITHUB_ACTIONS", "true")],
        || {},
    );
    assert_eq!(output.code, 1, "{}", output.stderr);
    let parsed: serde_json::Value = serde_json::from_str(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {}", output.stdout));
    assert_schema("gate.schema.json", &parsed);
    assert_eq!(parsed["status"], "regression");
    assert_eq!(parsed["exit_code"], 1);
    let failing: Vec<&str> = parsed["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "fail")
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(!failing.is_empty(), "{parsed:#}");
    assert_eq!(
        parsed["results"]["status"], "regression",
        "the run's results ride along"
    );
    assert!(
        output
            .stderr
            .lines()
            .any(|l| l.starts_with("::error title=ragate%3A ")),
        "{}",
        output.stderr
    );
}

/// The README's pipeline command in `eval-config.yaml`, replaced by the built binary in tests.
pub(crate) const README_PIPELINE: &str = r#"["cargo", "run", "--release", "-p", "ragate-example-pipeline", "--", "--variant", "${RAGATE_VARIANT:-hybrid}"]"#;

/// The example pipeline as `cargo test --workspace` builds it (its own integration test needs the
/// binary), and returns its path. `cargo test --no-run --workspace` again, a no-op after the
/// outer `cargo test --workspace`: a `cargo build` would build the proc-macro crates under
/// another profile (dev, where a test build uses test) and everything above them a second time
/// (1.5 min on 2 cores), and `-p ragate-example-pipeline` alone would change shared crates'
/// features. `RAGATE_EXAMPLE_PIPELINE=PATH` names a binary already built instead (.ci/run, whose
/// test build made it): then no cargo runs, so these tests do not wait for the build directory's
/// lock while another cargo command holds it beside the tests.
pub(crate) fn built_example_pipeline(repo: &Path) -> std::path::PathBuf {
    if let Some(built) = std::env::var_os("RAGATE_EXAMPLE_PIPELINE") {
        let built = std::path::PathBuf::from(built);
        assert!(
            built.is_file(),
            "RAGATE_EXAMPLE_PIPELINE={}: no such file",
            built.display()
        );
        return built;
    }
    // This test binary is <target>/<profile>/deps/integration-<hash>.
    let exe = std::env::current_exe().unwrap();
    let target = exe
        .ancestors()
        .nth(3)
        .expect("<target>/<profile>/deps/<exe>");
    let mut cargo = std::process::Command::new(env!("CARGO"));
    // Without what cargo sets for a test process: ring's build script reads CARGO_MANIFEST_DIR,
    // and a value the outer build did not have would rebuild ring and all above it, twice.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let set_for_tests = [
            "CARGO_MANIFEST_",
            "CARGO_PKG_",
            "CARGO_BIN_",
            "CARGO_CRATE_NAME",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
            || [
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
                "CARGO_RUSTC_CURRENT_DIR",
                "OUT_DIR",
            ]
            .contains(&&*name);
        if set_for_tests {
            cargo.env_remove(&*name);
        }
    }
    cargo.args(["test", "--no-run", "--quiet", "--locked", "--workspace"]);
    // The outer build's features (the README's command turns on `nli`).
    if cfg!(feature = "nli") {
        cargo.args(["--features", "nli"]);
    }
    let built = cargo
        .arg("--target-dir")
        .arg(target)
        .current_dir(repo)
        .output()
        .expect("cargo runs");
    assert!(
        built.status.success(),
        "building the example pipeline failed: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let binary = target
        .join("debug")
        .join(format!("pipeline{}", std::env::consts::EXE_SUFFIX));
    assert!(binary.is_file(), "{}", binary.display());
    binary
}

/// Copies the files of `dir` (not recursive) into `to`.
pub(crate) fn copy_files(dir: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
        }
    }
}

/// The README's `[RAGATE_VARIANT=VARIANT] cargo run --release -- gate --tier smoke --out out` on
/// the repository's own config, corpus, qrels and baselines, copied so that nothing (the judge
/// cache, the outputs) is written into the working tree; the pipeline command's `cargo run` is
/// replaced by the same program, built. Returns the work directory (outputs in `out/`).
pub(crate) fn run_readme_example(variant: &str) -> (tempfile::TempDir, Outcome) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = tempfile::tempdir().unwrap();
    for dir in ["corpus", "qrels", "baselines"] {
        copy_files(&repo.join(dir), &work.path().join(dir));
    }
    let config = std::fs::read_to_string(repo.join("eval-config.yaml")).unwrap();
    assert!(config.contains(README_PIPELINE), "{config}");
    let pipeline = built_example_pipeline(repo);
    let command = format!(
        r#"["{}", "--variant", "${{RAGATE_VARIANT:-hybrid}}"]"#,
        path_str(&pipeline)
    );
    std::fs::write(
        work.path().join("eval-config.yaml"),
        config.replace(README_PIPELINE, &command),
    )
    .unwrap();
    let out = ragate_env(
        work.path(),
        &["gate", "--tier", "smoke", "--out", "out"],
        &[("RAGATE_VARIANT", variant)],
    );
    (work, out)
}

#[test]
fn the_readme_gate_command_passes_on_the_repo_example() {
    let (work, out) = run_readme_example("hybrid");
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("30 checks: 30 passed, 0 failed, 0 inconclusive, 0 skipped, 0 errors"),
        "{}",
        out.stdout
    );
    // The pipeline's run is saved beside the results, one line per smoke query.
    let run = std::fs::read_to_string(work.path().join("out/run.jsonl")).unwrap();
    assert_eq!(run.lines().count(), 20);
    assert!(work.path().join(".ragate/judge-cache.sqlite").is_file());
    // What the pipeline is doing is said before its first answer.
    assert!(
        out.stderr.starts_with("ragate: pipeline: started `"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("waiting for its first answer\n"),
        "{}",
        out.stderr
    );
}
