//! trec_eval's own test suite (`quicktest`, its repository's `test/` folder, kept in
//! `../shared/data/trec_eval_test/` with SOURCE.md, never copied into this repository): every
//! case whose measures ragate has, run as users run ragate (`ragate eval --format json
//! --per-query`), each value compared with trec_eval's expected output to its 4 printed
//! decimals, per query and `all`. Skipped with a visible line where the folder is absent.
//!
//! Out of scope: `-M100` (ragate has no depth cap), custom gain maps (`ndcg.1=3,2=9,4=4.5`),
//! preferences, judgment groups and z-scores, and the measures ragate does not have (bpref,
//! iprec_at_recall, set_*, ...).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::{path_str, ragate};

/// Where the suite is, or None (with the skip line printed) where it is absent.
fn suite() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/trec_eval_test");
    if dir.join("quicktest.original.mk").is_file() {
        Some(dir)
    } else {
        eprintln!("trec_eval_suite: skipped (../shared/data/trec_eval_test not found)");
        None
    }
}

/// The ragate metric a trec_eval measure is, when ragate has it (same conventions: linear gain
/// for nDCG).
fn ragate_metric(measure: &str) -> Option<String> {
    let at = |prefix: &str, metric: &str| {
        let k: usize = measure.strip_prefix(prefix)?.parse().ok()?;
        Some(format!("{metric}@{k}"))
    };
    match measure {
        "map" => Some("map".to_string()),
        "Rprec" | "Rprec_mult_1.00" => Some("r_precision".to_string()),
        "recip_rank" => Some("mrr".to_string()),
        "ndcg" => Some("ndcg_linear".to_string()),
        _ => at("P_", "precision")
            .or_else(|| at("recall_", "recall"))
            .or_else(|| at("ndcg_cut_", "ndcg_linear"))
            .or_else(|| at("map_cut_", "map"))
            .or_else(|| at("success_", "hit_rate")),
    }
}

/// One expected value: the ragate metric, the qid (or `all`) and trec_eval's printed value.
struct Expected {
    metric: String,
    qid: String,
    value: String,
}

/// The values of `out_file` (`measure<TAB>qid|all<TAB>value`) whose measure ragate has.
fn expected(out_file: &Path) -> Vec<Expected> {
    let text =
        std::fs::read_to_string(out_file).unwrap_or_else(|e| panic!("{}: {e}", out_file.display()));
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            let [measure, qid, value] = fields[..] else {
                panic!("{}: unexpected line `{line}`", out_file.display())
            };
            Some(Expected {
                metric: ragate_metric(measure.trim_end())?,
                qid: qid.to_string(),
                value: value.to_string(),
            })
        })
        .collect()
}

/// Runs `ragate eval` on `qrels` and `run` (in the suite) with the metrics of `expected` and
/// `flags`; returns its JSON output and its stderr.
fn evaluate(
    dir: &Path,
    qrels: &str,
    run: &str,
    metrics: &[&str],
    flags: &[&str],
) -> (Value, String) {
    let (qrels, run) = (dir.join(qrels), dir.join(run));
    let mut args = vec![
        "eval",
        "--qrels",
        path_str(&qrels),
        "--run",
        path_str(&run),
        "--format",
        "json",
        "--per-query",
    ];
    for metric in metrics {
        args.extend(["-m", metric]);
    }
    args.extend_from_slice(flags);
    let outcome = ragate(&args);
    assert_eq!(outcome.code, 0, "{args:?}: {}", outcome.stderr);
    let json =
        serde_json::from_str(&outcome.stdout).unwrap_or_else(|e| panic!("{e}: {}", outcome.stdout));
    (json, outcome.stderr)
}

/// Compares every value of `out_file` whose measure ragate has with ragate's on `qrels` and
/// `run` with `flags`: equal when printed with 4 decimals. Returns how many were compared and
/// ragate's stderr.
fn compare(dir: &Path, qrels: &str, run: &str, out_file: &str, flags: &[&str]) -> (usize, String) {
    let expected = expected(&dir.join(out_file));
    let metrics: Vec<&str> = expected
        .iter()
        .map(|e| e.metric.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert!(!metrics.is_empty(), "{out_file}: no measure ragate has");
    let (ours, stderr) = evaluate(dir, qrels, run, &metrics, flags);
    let mut differences = BTreeMap::new();
    for e in &expected {
        let value = if e.qid == "all" {
            &ours["metrics"][&e.metric]
        } else {
            &ours["per_query"][&e.qid][&e.metric]
        };
        let value = value.as_f64().unwrap_or_else(|| {
            panic!(
                "{out_file}: ragate has no {} of `{}`: {ours}",
                e.metric, e.qid
            )
        });
        let printed = format!("{value:.4}");
        if printed != e.value {
            differences.insert(
                (e.metric.clone(), e.qid.clone()),
                (printed, e.value.clone()),
            );
        }
    }
    assert!(
        differences.is_empty(),
        "{out_file} ({flags:?}): {} of {} values differ, (metric, qid) -> (ragate, trec_eval): {differences:?}",
        differences.len(),
        expected.len()
    );
    (expected.len(), stderr)
}

#[test]
fn ragate_matches_trec_eval_on_its_own_test_suite() {
    let Some(dir) = suite() else {
        return;
    };
    let dir = dir.as_path();
    let mut compared = BTreeMap::new();
    // -m all_trec -q: 3 queries and `all`
    let (n, _) = compare(dir, "qrels.test", "results.test", "out.test.aq", &[]);
    compared.insert("out.test.aq", n);
    let (n, _) = compare(dir, "qrels.test", "results.test", "out.test.a", &[]);
    compared.insert("out.test.a", n);
    // the default measures, averaged
    let (n, _) = compare(dir, "qrels.test", "results.test", "out.test", &[]);
    compared.insert("out.test", n);
    // `#` comment lines in the qrels: skipped, the same values, and said once
    let (n, stderr) = compare(
        dir,
        "qrels.test.with-comments",
        "results.test",
        "out.test.aq",
        &[],
    );
    compared.insert("out.test.aq (qrels with comments)", n);
    assert!(
        stderr
            .contains("qrels.test.with-comments: 3 comment lines (starting with `#`) were skipped"),
        "{stderr}"
    );
    let (n, _) = compare(
        dir,
        "qrels.test.with-comments",
        "results.test",
        "out.test",
        &[],
    );
    compared.insert("out.test (qrels with comments)", n);
    // 31 judged queries, one without a relevant document: averaged over 31, as trec_eval does
    let (n, _) = compare(
        dir,
        "qrels.comment.test",
        "results.comment.test",
        "out.comment.test",
        &["--no-relevant", "zero"],
    );
    compared.insert("out.comment.test", n);
    // -c: a query missing from the run scores 0; run lines with fields after the sixth
    let (n, stderr) = compare(dir, "qrels.test", "results.trunc", "out.test.aqc", &[]);
    compared.insert("out.test.aqc", n);
    assert!(
        stderr.contains(
            "results.trunc: 5 lines have fields after the sixth (`tag`), which were ignored"
        ),
        "{stderr}"
    );
    // -l2: relevant with a grade of at least 2; nDCG keeps the graded gains
    let (n, _) = compare(
        dir,
        "qrels.rel_level",
        "results.test",
        "out.test.aql",
        &["--relevance-level", "2"],
    );
    compared.insert("out.test.aql", n);
    // measure parameters: P.5,7,3, recall.20,2000, ndcg_cut.10,20,23.4, success.2,5,20
    let (n, _) = compare(
        dir,
        "qrels.test",
        "results.test",
        "out.test.meas_params",
        &[],
    );
    compared.insert("out.test.meas_params", n);
    eprintln!("trec_eval_suite: values compared: {compared:?}");
    // Per file: the measures in common (44 of all_trec: map, Rprec, recip_rank, ndcg, 9 each
    // of P, recall, map_cut and ndcg_cut, 3 success, Rprec_mult_1.00; 12 of the default
    // measures; 11 parameters) x 3 queries and `all` with -q, `all` alone without.
    let expected_counts = BTreeMap::from([
        ("out.comment.test", 12),
        ("out.test", 12),
        ("out.test (qrels with comments)", 12),
        ("out.test.a", 44),
        ("out.test.aq", 176),
        ("out.test.aq (qrels with comments)", 176),
        ("out.test.aqc", 176),
        ("out.test.aql", 176),
        ("out.test.meas_params", 44),
    ]);
    assert_eq!(compared, expected_counts);
}

/// Without the suite, the mapping still holds: the names trec_eval prints map to ragate's.
#[test]
fn trec_eval_measures_map_to_ragate_metrics() {
    let cases = [
        ("P_5", Some("precision@5")),
        ("recall_2000", Some("recall@2000")),
        ("ndcg_cut_10", Some("ndcg_linear@10")),
        ("ndcg", Some("ndcg_linear")),
        ("map_cut_100", Some("map@100")),
        ("success_1", Some("hit_rate@1")),
        ("Rprec", Some("r_precision")),
        ("recip_rank", Some("mrr")),
        ("bpref", None),
        ("ndcg_rel", None),
        ("P_avg", None),
    ];
    for (measure, metric) in cases {
        assert_eq!(ragate_metric(measure).as_deref(), metric, "{measure}");
    }
}
