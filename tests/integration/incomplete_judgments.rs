//! `bpref`, `rbp@p`, `rbp_residual@p` and `judged@k` (issue 49): equal to trec_eval 10.0's own
//! expected output of its quicktest (`../shared/data/trec_eval_test/out.test.aq` and `.aql`,
//! read at run time, skipped with a message where that folder is absent), to the independent
//! values of `tests/fixtures/random/expected_incomplete.json` (tests/fixtures/
//! generate_incomplete.py) through every reader, and gated with a floor.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::{Ragate, accept_baseline, fixture, path_str, ragate};

const TOLERANCE: f64 = 1e-9;

/// A trec_eval measure, the ragate metric it is compared with, and how the metric's value
/// becomes the measure's.
type Reading = (&'static str, &'static str, fn(f64) -> f64);

/// The quicktest's folder, or None (said on stderr) where it is absent.
fn quicktest() -> Option<PathBuf> {
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/trec_eval_test");
    if folder.is_dir() {
        Some(folder)
    } else {
        eprintln!("incomplete_judgments: skipped (../shared/data/trec_eval_test not found)");
        None
    }
}

/// `ragate eval --format tsv --per-query` of `qrels` and `run` with `metrics` and `extra`
/// arguments: (metric, qid) to value.
fn tsv_values(
    qrels: &str,
    run: &str,
    metrics: &[&str],
    extra: &[&str],
) -> BTreeMap<(String, String), f64> {
    let mut args = vec!["eval", "--qrels", qrels, "--run", run];
    for metric in metrics {
        args.extend(["-m", metric]);
    }
    args.extend(["--format", "tsv", "--per-query"]);
    args.extend(extra);
    let out = ragate(&args);
    assert_eq!(out.code, 0, "stderr: {}", out.stderr);
    out.stdout
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            let value = fields.get(2)?.parse().ok()?;
            Some(((fields[0].to_string(), fields[1].to_string()), value))
        })
        .collect()
}

/// trec_eval's lines `measure \t qid \t value` of `file` for `measures`: (measure, qid) to the
/// value as printed (4 decimals).
fn trec_eval_lines(
    file: &std::path::Path,
    measures: &[&str],
) -> BTreeMap<(String, String), String> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            let measure = fields.first()?.trim_end();
            measures.contains(&measure).then(|| {
                (
                    (measure.to_string(), fields[1].to_string()),
                    fields[2].to_string(),
                )
            })
        })
        .collect()
}

/// Compares ragate's values with trec_eval's printed ones to 4 decimals: `ours` names the ragate
/// metric of each trec_eval measure and how its value becomes trec_eval's.
fn assert_four_decimals(
    ours: &BTreeMap<(String, String), f64>,
    theirs: &BTreeMap<(String, String), String>,
    reading: &[Reading],
) -> usize {
    let mut compared = 0;
    for ((measure, qid), printed) in theirs {
        let (_, metric, convert) = reading
            .iter()
            .find(|(name, _, _)| name == measure)
            .expect("a measure asked for");
        let value = ours
            .get(&(metric.to_string(), qid.clone()))
            .unwrap_or_else(|| panic!("{metric} of {qid} in {ours:?}"));
        assert_eq!(
            &format!("{:.4}", convert(*value)),
            printed,
            "{metric} of {qid} against trec_eval's {measure}"
        );
        compared += 1;
    }
    compared
}

#[test]
fn bpref_rbp_and_judged_equal_trec_eval_10_on_its_quicktest() {
    let Some(folder) = quicktest() else { return };
    let reading: [Reading; 6] = [
        ("bpref", "bpref", |v| v),
        ("rbp", "rbp@0.9", |v| v),
        ("rbp_resid", "rbp_residual@0.9", |v| v),
        ("unj_5", "judged@5", |v| 1.0 - v),
        ("unj_10", "judged@10", |v| 1.0 - v),
        ("unj_20", "judged@20", |v| 1.0 - v),
    ];
    let metrics: Vec<&str> = reading.iter().map(|(_, ours, _)| *ours).collect();
    let measures: Vec<&str> = reading.iter().map(|(theirs, _, _)| *theirs).collect();
    let ours = tsv_values(
        path_str(&folder.join("qrels.test")),
        path_str(&folder.join("results.test")),
        &metrics,
        &[],
    );
    let theirs = trec_eval_lines(&folder.join("out.test.aq"), &measures);
    // 3 queries and the mean, 6 measures
    assert_eq!(assert_four_decimals(&ours, &theirs, &reading), 24);

    // -l2 on grades -1..4: grade 1 is judged non-relevant for bpref, grade -1 (query 303) is
    // unjudged for the residual and judged@k. (trec_eval's rbp takes graded gains there and
    // ignores -l; ragate's is binary at the relevance level: docs/metrics.md.)
    let level = [reading[0], reading[2], reading[3], reading[4], reading[5]];
    let metrics: Vec<&str> = level.iter().map(|(_, ours, _)| *ours).collect();
    let measures: Vec<&str> = level.iter().map(|(theirs, _, _)| *theirs).collect();
    let ours = tsv_values(
        path_str(&folder.join("qrels.rel_level")),
        path_str(&folder.join("results.test")),
        &metrics,
        &["--relevance-level", "2"],
    );
    let theirs = trec_eval_lines(&folder.join("out.test.aql"), &measures);
    assert_eq!(assert_four_decimals(&ours, &theirs, &level), 20);
}

#[test]
fn bpref_and_rbp_print_as_trec_eval_prints_them() {
    let Some(folder) = quicktest() else { return };
    let out = ragate(&[
        "eval",
        "--qrels",
        path_str(&folder.join("qrels.test")),
        "--run",
        path_str(&folder.join("results.test")),
        "-m",
        "bpref",
        "-m",
        "rbp",
        "--format",
        "trec_eval",
        "--per-query",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let expected = std::fs::read_to_string(folder.join("out.test.aq")).unwrap();
    let theirs: Vec<&str> = expected
        .lines()
        .filter(|line| {
            let measure = line.split('\t').next().unwrap_or("").trim_end();
            matches!(measure, "bpref" | "rbp" | "num_q")
        })
        .collect();
    assert_eq!(out.stdout.lines().collect::<Vec<_>>(), theirs);
    assert!(
        out.stderr.contains("rbp is read as rbp@0.9"),
        "{}",
        out.stderr
    );
}

/// `ragate eval --format json --per-query` of the random fixture with `run`, every metric of
/// `expected`.
fn evaluate(expected: &Value, run: &str) -> Value {
    let (qrels, run) = (fixture("random/qrels.trec"), fixture(run));
    let mut args = vec!["eval", "--qrels", path_str(&qrels), "--run", path_str(&run)];
    for metric in expected["metrics"].as_object().unwrap().keys() {
        args.extend(["-m", metric.as_str()]);
    }
    args.extend(["--format", "json", "--per-query"]);
    let out = ragate(&args);
    assert_eq!(out.code, 0, "stderr: {}", out.stderr);
    serde_json::from_str(&out.stdout).expect("one JSON object")
}

#[test]
fn every_reader_gives_the_independent_values_of_the_random_fixture() {
    let text = std::fs::read_to_string(fixture("random/expected_incomplete.json")).unwrap();
    let expected: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(expected["metrics"].as_object().unwrap().len(), 9);
    for run in [
        "random/run.trec",
        "random/run_shuffled.trec",
        "random/run.jsonl",
    ] {
        let actual = evaluate(&expected, run);
        for count in ["queries", "excluded_no_relevant", "missing_from_run"] {
            assert_eq!(actual[count], expected[count], "{run}: {count}");
        }
        let mut compared = 0;
        let per_query = expected["per_query"].as_object().unwrap();
        let rows = per_query
            .iter()
            .map(|(qid, row)| (&actual["per_query"][qid], row, qid.as_str()))
            .chain(std::iter::once((
                &actual["metrics"],
                &expected["metrics"],
                "means",
            )));
        for (got, want, what) in rows {
            for (metric, value) in want.as_object().unwrap() {
                let (got, want) = (got[metric].as_f64().unwrap(), value.as_f64().unwrap());
                assert!(
                    (got - want).abs() <= TOLERANCE,
                    "{run}: {what} {metric}: got {got}, expected {want}"
                );
                compared += 1;
            }
        }
        assert_eq!(compared, 9 * 191, "{run}");
    }
}

#[test]
fn eval_reports_rbp_with_its_residual() {
    let (qrels, run) = (fixture("random/qrels.trec"), fixture("random/run.trec"));
    let values = tsv_values(path_str(&qrels), path_str(&run), &["rbp@0.8", "bpref"], &[]);
    // The metrics' lines, not the counts after them.
    let metrics: std::collections::BTreeSet<&str> = values
        .keys()
        .map(|(metric, _)| metric.as_str())
        .filter(|metric| metric.contains('@') || *metric == "bpref")
        .collect();
    assert_eq!(
        metrics.into_iter().collect::<Vec<_>>(),
        ["bpref", "rbp@0.8", "rbp_residual@0.8"]
    );
    let text = std::fs::read_to_string(fixture("random/expected_incomplete.json")).unwrap();
    let expected: Value = serde_json::from_str(&text).unwrap();
    let mean = values[&("rbp_residual@0.8".to_string(), "all".to_string())];
    let want = expected["metrics"]["rbp_residual@0.8"].as_f64().unwrap();
    assert!((mean - want).abs() <= TOLERANCE, "{mean} {want}");
}

const FLOOR_CONFIG: &str = "version: 1
metrics: [recall@5, judged@5]
tiers:
  regression: { qrels: qrels.jsonl, baseline: baselines/regression.json }
gate:
  rules:
    - { metric: judged@5, min: 0.8 }
";

/// 20 queries with gold `q{i}-g` at rank 1; the other four of the top 5 are judged non-relevant
/// (`q{i}-n{r}`) or unjudged (`other-{r}`) as `judged_ranks` says.
fn write_tier(dir: &std::path::Path, run: &str, judged_ranks: usize) {
    use std::fmt::Write as _;
    let (mut qrels, mut lines) = (String::new(), String::new());
    for i in 0..20 {
        let grades: Vec<String> = (2..=5).map(|r| format!("\"q{i}-n{r}\":0")).collect();
        writeln!(
            qrels,
            "{{\"qid\":\"q{i}\",\"query\":\"question {i}\",\"gold_doc_ids\":[\"q{i}-g\"],\"graded_relevance\":{{{}}}}}",
            grades.join(",")
        )
        .unwrap();
        let mut docs = vec![format!("{{\"doc_id\":\"q{i}-g\"}}")];
        docs.extend((2..=5).map(|r| {
            if r <= judged_ranks {
                format!("{{\"doc_id\":\"q{i}-n{r}\"}}")
            } else {
                format!("{{\"doc_id\":\"other-{r}\"}}")
            }
        }));
        writeln!(
            lines,
            "{{\"qid\":\"q{i}\",\"retrieved\":[{}]}}",
            docs.join(",")
        )
        .unwrap();
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("eval-config.yaml"), FLOOR_CONFIG).unwrap();
    std::fs::write(dir.join(run), lines).unwrap();
}

#[test]
fn a_judged_at_k_floor_fails_a_run_whose_top_k_went_unjudged() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write_tier(dir, "judged.jsonl", 5);
    Ragate::gate("regression", "judged.jsonl", "out")
        .status(2)
        .run_in(dir);
    accept_baseline(dir, "regression", "out/results.json", &[]);
    Ragate::gate("regression", "judged.jsonl", "out")
        .status(0)
        .run_in(dir);
    // ranks 4 and 5 unjudged: judged@5 = 3/5, below the floor; recall@5 is unchanged
    write_tier(dir, "unjudged.jsonl", 3);
    let failed = Ragate::gate("regression", "unjudged.jsonl", "out")
        .status(1)
        .run_in(dir);
    let junit = std::fs::read_to_string(dir.join("out/junit.xml")).unwrap();
    let case = &junit[junit
        .find("<testcase name=\"judged@5 [all]\"")
        .expect("a test case")..];
    let case = &case[..case.find("</testcase>").expect("closed")];
    assert!(
        case.contains("message=\"judged@5 [all] failed: 0.6000 is below min 0.8"),
        "{junit}"
    );
    assert!(failed.stdout.contains("judged@5"), "{}", failed.stdout);
}
