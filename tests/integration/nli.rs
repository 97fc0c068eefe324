//! The `nli` judge through the binary (cargo feature `nli`; `.ci/nli-check` runs these with ONNX
//! Runtime from the onnxruntime wheel in `ORT_DYLIB_PATH`): the tiny committed model judges
//! labelled items and gates a tier, offline, with cached verdicts on the second run; the tiny
//! two-label model (supported / not supported) fails a tier whose answers are made unsupported.

use std::fmt::Write as _;
use std::path::Path;

use regex_lite::Regex;

use crate::{accept_baseline, fixture, path_str, ragate_env, ragate_in};

/// A config whose `nli` judge is the tiny model and judges faithfulness.
fn write_config(dir: &Path) {
    std::fs::write(
        dir.join("eval-config.yaml"),
        format!(
            "version: 1
metrics: [recall@5, {{ name: faithfulness, judge: nli }}]
judges:
  nli: {{ kind: nli, model: \"{}\", batch_size: 4 }}
tiers:
  smoke: {{ qrels: qrels.jsonl, baseline: baseline.json }}
gate:
  rules:
    - {{ metric: faithfulness, max_drop: 0.05 }}
",
            path_str(&fixture("nli/tiny"))
        ),
    )
    .unwrap();
}

#[test]
#[ignore = "needs ONNX Runtime in ORT_DYLIB_PATH: .ci/nli-check runs it with --ignored"]
fn judge_eval_measures_the_nli_judge_and_caches_its_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    write_config(dir.path());
    let items = fixture("judge_eval/items.jsonl");
    let args = [
        "judge-eval",
        "--items",
        path_str(&items),
        "--judge",
        "nli",
        "--format",
        "json",
    ];
    let first = ragate_in(dir.path(), &args);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(
        first
            .stderr
            .contains("judge `nli`: asking about 8 of 8 tasks"),
        "{}",
        first.stderr
    );
    let document: serde_json::Value = serde_json::from_str(&first.stdout).unwrap();
    let judge = &document["judges"][0];
    assert!(
        judge["judge"].as_str().unwrap().starts_with("nli-1 model=")
            && judge["judge"].as_str().unwrap().contains(" sha256="),
        "{judge}"
    );
    // Random weights: plumbing only. Every item is scored, so AUC and the best threshold exist.
    assert_eq!(judge["scores"]["n"], 6);
    assert!(judge["scores"]["auc"]["value"].is_number(), "{judge}");
    assert!(
        judge["scores"]["best_threshold"]["at"].is_number(),
        "{judge}"
    );
    let again = ragate_in(dir.path(), &args);
    assert_eq!(
        again.stdout, first.stdout,
        "the same verdicts from the cache"
    );
    assert!(!again.stderr.contains("asking about"), "{}", again.stderr);
}

#[test]
#[ignore = "needs ONNX Runtime in ORT_DYLIB_PATH: .ci/nli-check runs it with --ignored"]
fn a_tier_gates_on_the_nli_judge() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write_config(dir);
    let (mut qrels, mut run) = (String::new(), String::new());
    for i in 0..12 {
        writeln!(
            qrels,
            "{{\"qid\":\"q{i}\",\"query\":\"what does the man eat {i}\",\"gold_doc_ids\":[\"d{i}\"]}}"
        )
        .unwrap();
        let line = serde_json::json!({
            "qid": format!("q{i}"),
            "retrieved": [{"doc_id": format!("d{i}")}],
            "answer": "A man eats bread. The children played outside.",
            "contexts": ["A man is eating bread in the kitchen. The children played in the garden all morning."],
        });
        writeln!(run, "{line}").unwrap();
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("run.jsonl"), run).unwrap();
    let gate = || crate::Ragate::gate("smoke", "run.jsonl", "out").run_in(dir);
    assert_eq!(gate().code, 2, "no baseline yet");
    accept_baseline(dir, "smoke", "out/results.json", &[]);
    let passed = gate();
    assert_eq!(passed.code, 0, "{}\n{}", passed.stdout, passed.stderr);
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/results.json")).unwrap())
            .unwrap();
    assert!(
        results["provenance"]["judges"]["nli"]
            .as_str()
            .unwrap()
            .starts_with("nli-1 model="),
        "{}",
        results["provenance"]
    );
    let trace = std::fs::read_to_string(dir.join("out/trace.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(trace.lines().next().unwrap()).unwrap();
    let claims = first["claims"].as_array().unwrap();
    assert_eq!(claims.len(), 2, "{first}");
    assert!(claims.iter().all(|c| c["score"].is_number()), "{first}");
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(
        summary.contains("faithfulness by `nli` (nli-1 model="),
        "{summary}"
    );
}

#[test]
#[ignore = "needs ONNX Runtime in ORT_DYLIB_PATH: .ci/nli-check runs it with --ignored"]
fn a_missing_onnx_runtime_is_an_exit_2_naming_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    write_config(dir.path());
    let items = fixture("judge_eval/items.jsonl");
    let out = ragate_env(
        dir.path(),
        &["judge-eval", "--items", path_str(&items), "--judge", "nli"],
        &[("ORT_DYLIB_PATH", "/nonexistent/libonnxruntime.so")],
    );
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr.contains(
            "judge `nli`: the ONNX Runtime library /nonexistent/libonnxruntime.so does not exist"
        ),
        "{}",
        out.stderr
    );
}

/// A config whose `nli` judge is the tiny two-label model (LABEL_1 supported) and judges
/// faithfulness.
fn write_two_label_config(dir: &Path) {
    std::fs::write(
        dir.join("eval-config.yaml"),
        format!(
            "version: 1
metrics: [recall@5, {{ name: faithfulness, judge: nli }}]
judges:
  nli: {{ kind: nli, model: \"{}\", entailment_label: LABEL_1, batch_size: 3 }}
tiers:
  smoke: {{ qrels: qrels.jsonl, baseline: baseline.json }}
gate:
  rules:
    - {{ metric: faithfulness, max_drop: 0.05 }}
",
            path_str(&fixture("nli/tiny_two_label"))
        ),
    )
    .unwrap();
}

/// A run of 12 queries over the same context, each answered with `answer`.
fn write_run(dir: &Path, file: &str, answer: &str) {
    let mut run = String::new();
    for i in 0..12 {
        let line = serde_json::json!({
            "qid": format!("q{i}"),
            "retrieved": [{"doc_id": format!("d{i}")}],
            "answer": answer,
            "contexts": ["The man is eating bread in the house. The children played in the street all morning."],
        });
        writeln!(run, "{line}").unwrap();
    }
    std::fs::write(dir.join(file), run).unwrap();
}

#[test]
#[ignore = "needs ONNX Runtime in ORT_DYLIB_PATH: .ci/nli-check runs it with --ignored"]
fn a_two_label_checker_fails_a_tier_whose_answers_are_made_unsupported() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write_two_label_config(dir);
    let mut qrels = String::new();
    for i in 0..12 {
        writeln!(
            qrels,
            "{{\"qid\":\"q{i}\",\"query\":\"what does the man eat {i}\",\"gold_doc_ids\":[\"d{i}\"]}}"
        )
        .unwrap();
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    // Sentences of the context: the tiny model scores them 0.99 (tests/fixtures/nli, its
    // overlap term); sentences that share only "the" and "." with it score under 0.5.
    write_run(
        dir,
        "supported.jsonl",
        "The man is eating bread in the house. The children played in the street.",
    );
    write_run(
        dir,
        "unsupported.jsonl",
        "Two dogs ran to paris! The woman drinks coffee.",
    );
    let gate = |run: &str, out: &str| crate::Ragate::gate("smoke", run, out).run_in(dir);
    assert_eq!(gate("supported.jsonl", "out").code, 2, "no baseline yet");
    accept_baseline(dir, "smoke", "out/results.json", &[]);
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/results.json")).unwrap())
            .unwrap();
    let identity = results["provenance"]["judges"]["nli"].as_str().unwrap();
    assert!(
        identity.starts_with("nli-1 model=")
            && identity.ends_with(" two-label supported_output=1 supported>=0.5"),
        "{identity}"
    );
    let passed = gate("supported.jsonl", "out-supported");
    assert_eq!(passed.code, 0, "{}\n{}", passed.stdout, passed.stderr);

    let failed = gate("unsupported.jsonl", "out-unsupported");
    assert_eq!(failed.code, 1, "{}\n{}", failed.stdout, failed.stderr);
    let junit = std::fs::read_to_string(dir.join("out-unsupported/junit.xml")).unwrap();
    let failure = |metric: &str| {
        Regex::new(&format!(
            r#"<testcase name="{metric} \[all\]"[^>]*>\s*<failure"#
        ))
        .unwrap()
        .is_match(&junit)
    };
    assert!(failure("faithfulness") && !failure("recall@5"), "{junit}");
    let summary = std::fs::read_to_string(dir.join("out-unsupported/summary.md")).unwrap();
    assert!(summary.contains("(not supported (score 0."), "{summary}");
    let trace = std::fs::read_to_string(dir.join("out-unsupported/trace.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(trace.lines().next().unwrap()).unwrap();
    let claims = first["claims"].as_array().unwrap();
    assert_eq!(claims.len(), 2, "{first}");
    for claim in claims {
        let reason = claim["reason"].as_str().unwrap_or_default();
        let score = claim["score"].as_f64().unwrap();
        assert!(
            score < 0.5 && reason == format!("not supported (score {score:.2})"),
            "{claim}"
        );
        assert!(!reason.contains("contradict"), "{claim}");
    }
    // The supported answers pass again against the same baseline, from the cache.
    let again = gate("supported.jsonl", "out-again");
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    assert!(!again.stderr.contains("asking about"), "{}", again.stderr);
}

#[test]
#[ignore = "needs ONNX Runtime in ORT_DYLIB_PATH: .ci/nli-check runs it with --ignored"]
fn judge_eval_reports_a_two_label_checker() {
    let dir = tempfile::tempdir().unwrap();
    write_two_label_config(dir.path());
    let items = fixture("judge_eval/items.jsonl");
    let args = [
        "judge-eval",
        "--items",
        path_str(&items),
        "--judge",
        "nli",
        "--format",
        "json",
    ];
    let out = ragate_in(dir.path(), &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let document: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let judge = &document["judges"][0];
    assert!(
        judge["judge"]
            .as_str()
            .unwrap()
            .ends_with(" two-label supported_output=1 supported>=0.5"),
        "{judge}"
    );
    assert_eq!(judge["scores"]["n"], 6);
    assert!(judge["scores"]["auc"]["value"].is_number(), "{judge}");
    // The tiny model's overlap term: claims copied from the context are judged supported, the
    // claim that shares no word with it is not (the rest of its verdicts mean nothing).
    let classes = &judge["classes"];
    assert_eq!(
        classes["verbatim"]["confusion"]["true_positive"], 2,
        "{classes}"
    );
    assert_eq!(
        classes["unrelated"]["confusion"]["true_negative"], 1,
        "{classes}"
    );
}
