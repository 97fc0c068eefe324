//! Inputs and baselines that cannot be trusted fail closed (exit 2, naming the file, the query
//! and what was expected): out-of-range baseline values, unreadable baselines on accept,
//! questions missing for judges, ids that would break line formats, config that a `${VAR}` could
//! rewrite.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use crate::{Outcome, Ragate, accept_baseline, path_str, ragate, ragate_env, ragate_in};

const CONFIG: &str = "version: 1
metrics: [recall@5, faithfulness, answer_relevance]
tiers:
  smoke: { qrels: qrels.jsonl, baseline: baselines/smoke.json }
gate:
  rules:
    - { metric: faithfulness, max_drop: 0.05 }
";

/// Twelve judged queries with answers supported by the retrieved text.
fn setup(dir: &Path) {
    std::fs::write(dir.join("eval-config.yaml"), CONFIG).unwrap();
    let (mut qrels, mut run) = (String::new(), String::new());
    for i in 0..12 {
        writeln!(
            qrels,
            "{{\"qid\":\"q{i:02}\",\"query\":\"which region stores backups {i}\",\"gold_doc_ids\":[\"d{i}\"]}}"
        )
        .unwrap();
        let line = serde_json::json!({
            "qid": format!("q{i:02}"),
            "retrieved": [{"doc_id": format!("d{i}"), "text": format!("Backups for tenant {i} stay in the Frankfurt region.")}],
            "answer": "Backups stay in the Frankfurt region.",
        });
        writeln!(run, "{line}").unwrap();
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("run.jsonl"), run).unwrap();
}

/// `setup`, a first gate (no baseline yet) and its results accepted.
fn setup_with_baseline(dir: &Path) {
    setup(dir);
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(2)
        .run_in(dir); // no baseline yet
    accept_baseline(dir, "smoke", "out/results.json", &[]);
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut value);
    std::fs::write(path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
}

fn assert_fails_with(outcome: &Outcome, expected: &[&str]) {
    assert_eq!(outcome.code, 2, "stderr: {}", outcome.stderr);
    for text in expected {
        assert!(
            outcome.stderr.contains(text),
            "expected `{text}` in:\n{}",
            outcome.stderr
        );
    }
    assert!(!outcome.stderr.contains("panicked"), "{}", outcome.stderr);
}

#[test]
fn baseline_values_outside_their_metric_range_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_with_baseline(dir);
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(0)
        .run_in(dir); // the same run passes
    let baseline = dir.join("baselines/smoke.json");
    let pristine = std::fs::read_to_string(&baseline).unwrap();
    edit_json(&baseline, |b| {
        b["queries"]["q03"]["metrics"]["faithfulness"] = 5.0.into();
    });
    assert_fails_with(
        &Ragate::gate("smoke", "run.jsonl", "out").run_in(dir),
        &["smoke.json: query `q03`: metric `faithfulness` is 5: expected a number in [0, 1]"],
    );
    std::fs::write(&baseline, &pristine).unwrap();
    edit_json(&baseline, |b| {
        b["summary"]["all"]["recall@5"]["mean"] = (-3.0).into();
    });
    assert_fails_with(
        &Ragate::gate("smoke", "run.jsonl", "out").run_in(dir),
        &["smoke.json: summary `all`: the mean of `recall@5` is -3: expected a number in [0, 1]"],
    );
    // An unusable baseline stops the gate before the run: nothing was evaluated.
    assert!(!dir.join("out/results.json").exists());
    // The results to accept are read the same way.
    std::fs::write(&baseline, &pristine).unwrap();
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(0)
        .run_in(dir);
    let results = dir.join("out/results.json");
    edit_json(&results, |r| {
        r["queries"]["q01"]["metrics"]["answer_relevance"] = 1.5.into();
    });
    let accept = ragate_in(
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
    assert_fails_with(
        &accept,
        &[
            "results.json: query `q01`: metric `answer_relevance` is 1.5: expected a number in [0, 1]",
        ],
    );
}

#[test]
fn accept_refuses_an_unreadable_baseline_unless_forced_and_removes_stale_temporaries() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_with_baseline(dir);
    let baseline = dir.join("baselines/smoke.json");
    let accept = |force: bool| {
        let mut args = vec![
            "baseline",
            "accept",
            "--tier",
            "smoke",
            "--from",
            "out/results.json",
        ];
        if force {
            args.push("--force");
        }
        ragate_in(dir, &args)
    };
    for unreadable in [
        "{\"format\":\"ragate-results/2\",\"queries\":{}}",
        "{ truncated",
    ] {
        std::fs::write(&baseline, unreadable).unwrap();
        assert_fails_with(
            &accept(false),
            &[
                "the existing baseline cannot be read, so accepting would overwrite it unseen",
                "or pass --force to replace it",
            ],
        );
        assert_eq!(
            std::fs::read_to_string(&baseline).unwrap(),
            unreadable,
            "left as it was"
        );
    }
    // What a killed accept leaves beside the baseline.
    let stale = dir.join("baselines/.smoke.json.ragate-tmp-Xy12Ab");
    std::fs::write(&stale, "partial").unwrap();
    let forced = accept(true);
    assert_eq!(forced.code, 0, "{}", forced.stderr);
    assert!(
        forced
            .stderr
            .contains("overwriting a baseline that cannot be read"),
        "{}",
        forced.stderr
    );
    assert!(
        !stale.exists(),
        "stale temporary file removed: {}",
        forced.stderr
    );
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(0)
        .run_in(dir); // the new baseline is readable
    let names: Vec<String> = std::fs::read_dir(dir.join("baselines"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["smoke.json"]);
}

#[test]
fn accept_refuses_results_that_could_not_be_evaluated() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(2)
        .run_in(dir);
    edit_json(&dir.join("out/results.json"), |r| {
        r["status"] = "error".into()
    });
    let accept = ragate_in(
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
    assert_fails_with(&accept, &["could not be fully evaluated (status error)"]);
    assert!(!dir.join("baselines/smoke.json").exists());
}

#[test]
fn a_judge_that_needs_the_question_gets_one_or_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    // TREC qrels carry no query text; --queries would give it.
    std::fs::write(dir.join("qrels.txt"), "q00 0 d0 1\nq01 0 d1 1\n").unwrap();
    let eval = |extra: &[&str]| {
        let mut args = vec![
            "eval",
            "--qrels",
            "qrels.txt",
            "--run",
            "run.jsonl",
            "--metric",
            "answer_relevance",
        ];
        args.extend_from_slice(extra);
        ragate_in(dir, &args)
    };
    assert_fails_with(
        &eval(&[]),
        &[
            "qrels.txt: query `q00` has no text, but its judge of answer_relevance needs the question",
            "--queries FILE",
        ],
    );
    std::fs::write(
        dir.join("queries.tsv"),
        "q00\twhich region stores backups\nq01\twhich region stores backups\n",
    )
    .unwrap();
    let with_queries = eval(&["--queries", "queries.tsv"]);
    assert_eq!(with_queries.code, 0, "{}", with_queries.stderr);
}

/// `ragate eval` in `dir` (set up) after writing `file` with `text`.
fn eval_with(dir: &Path, file: &str, text: &str, args: &[&str]) -> Outcome {
    std::fs::write(dir.join(file), text).unwrap();
    ragate_in(dir, args)
}

#[test]
fn an_empty_chunk_separator_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let outcome = ragate_in(
        dir.path(),
        &[
            "eval",
            "--qrels",
            "qrels.jsonl",
            "--run",
            "run.jsonl",
            "--chunk-separator",
            "",
        ],
    );
    assert_eq!(outcome.code, 2, "{}", outcome.stderr);
    assert!(
        outcome.stderr.contains("expected a separator such as `#`"),
        "{}",
        outcome.stderr
    );
}

#[test]
fn a_tab_in_a_native_qid_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    // A tab inside a qid would split the row of `--format tsv`.
    let outcome = eval_with(
        dir.path(),
        "tab.jsonl",
        "{\"qid\":\"q\\t1\",\"query\":\"x\",\"gold_doc_ids\":[\"d1\"]}\n",
        &[
            "eval",
            "--qrels",
            "tab.jsonl",
            "--run",
            "run.jsonl",
            "--format",
            "tsv",
            "--per-query",
        ],
    );
    assert_fails_with(
        &outcome,
        &["tab.jsonl:1: qid \"q\\t1\" contains the control character U+0009"],
    );
}

#[test]
fn an_empty_context_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let outcome = eval_with(
        dir.path(),
        "contexts.jsonl",
        "{\"qid\":\"q00\",\"retrieved\":[],\"answer\":\"a\",\"contexts\":[\"\"]}\n",
        &[
            "eval",
            "--qrels",
            "qrels.jsonl",
            "--run",
            "contexts.jsonl",
            "--metric",
            "faithfulness",
        ],
    );
    assert_fails_with(
        &outcome,
        &["contexts.jsonl:1: contexts[0] of query `q00` is empty"],
    );
}

#[test]
fn a_nul_byte_in_a_trec_run_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let run = dir.path().join("nul.txt");
    std::fs::write(&run, "q00 Q0 d0 1 2.0 t\nq01 Q0 d\u{0}1 1 2.0 t\n").unwrap();
    let outcome = ragate(&[
        "eval",
        "--qrels",
        path_str(&dir.path().join("qrels.jsonl")),
        "--run",
        path_str(&run),
    ]);
    assert_fails_with(&outcome, &["nul.txt:2: control byte 0x00 in the line"]);
}

#[test]
fn a_doc_graded_twice_in_one_line_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let outcome = eval_with(
        dir.path(),
        "dup.jsonl",
        "{\"qid\":\"q00\",\"query\":\"x\",\"graded_relevance\":{\"d0\":3,\"d0\":0}}\n",
        &["eval", "--qrels", "dup.jsonl", "--run", "run.jsonl"],
    );
    assert_fails_with(
        &outcome,
        &["dup.jsonl:1:", "key `d0` appears twice in one object"],
    );
}

#[test]
fn a_grade_beyond_the_bound_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    // 2^1024 - 1 overflows: nDCG would be inf / inf.
    let outcome = eval_with(
        dir.path(),
        "qrels.tsv",
        "q00\td0\t1024\n",
        &[
            "eval",
            "--qrels",
            "qrels.tsv",
            "--run",
            "run.jsonl",
            "--metric",
            "ndcg@10",
        ],
    );
    assert_fails_with(
        &outcome,
        &[
            "qrels.tsv:1: grade 1024 of doc `d0` is out of range: expected an integer grade in -100..=100",
        ],
    );
}

#[test]
fn a_misspelt_label_metric_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_with_baseline(dir);
    let config = CONFIG.replace(
        "baseline: baselines/smoke.json }",
        "baseline: baselines/smoke.json, labels: labels.jsonl }",
    );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
    std::fs::write(
        dir.join("labels.jsonl"),
        "{\"qid\":\"q00\",\"answer\":\"Backups stay in the Frankfurt region.\",\"faithfullness\":1}\n",
    )
    .unwrap();
    assert_fails_with(
        &Ragate::gate("smoke", "run.jsonl", "out").run_in(dir),
        &[
            "labels.jsonl:1: `faithfullness` is not a judged metric",
            "(did you mean `faithfulness`?)",
        ],
    );
}

#[test]
fn a_config_with_a_byte_order_mark_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    std::fs::write(dir.join("eval-config.yaml"), format!("\u{feff}{CONFIG}")).unwrap();
    let outcome = Ragate::gate("smoke", "run.jsonl", "out")
        .status(2)
        .run_in(dir);
    assert!(
        outcome.stderr.contains("no such file") && !outcome.stderr.contains("missing field"),
        "evaluated, then stopped only for the missing baseline: {}",
        outcome.stderr
    );
    assert!(dir.join("out/results.json").exists());
}

#[test]
fn pipeline_errors_print_the_command_as_written_never_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    let config = CONFIG.replace(
        "tiers:",
        "pipeline:\n  command: [python3, -c, \"import sys; sys.exit(3)\", \"${API_TOKEN}\"]\ntiers:",
    );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
    let outcome = ragate_env(
        dir,
        &["gate", "--tier", "smoke", "--out", "out"],
        &[("API_TOKEN", "s3cr3t-value")],
    );
    assert_fails_with(
        &outcome,
        &["pipeline (command): `python3 -c import sys; sys.exit(3) ${API_TOKEN}`: exited with"],
    );
    assert!(!outcome.stderr.contains("s3cr3t"), "{}", outcome.stderr);
    // A value cannot add YAML lines (here: a second `metrics` key, or a new rule).
    let injected = ragate_env(
        dir,
        &["gate", "--tier", "smoke", "--out", "out"],
        &[("API_TOKEN", "x\"\ngate: { rules: [] }\n#")],
    );
    assert_fails_with(
        &injected,
        &["the value of `${API_TOKEN}` contains a line break"],
    );
    assert!(
        !injected.stderr.contains("rules: []"),
        "{}",
        injected.stderr
    );
}

#[test]
fn a_missing_qrels_file_names_the_tier_key_that_named_it() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    std::fs::write(
        dir.join("eval-config.yaml"),
        CONFIG.replace("qrels: qrels.jsonl", "qrels: qrel.jsonl"),
    )
    .unwrap();
    assert_fails_with(
        &Ragate::gate("smoke", "run.jsonl", "out").run_in(dir),
        &["cannot read qrel.jsonl (named by tiers.smoke.qrels)"],
    );
}
