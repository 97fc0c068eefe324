//! `ragate eval --format trec_eval` prints what trec_eval prints: against trec_eval's own expected
//! output (`../shared/data/trec_eval_test/out.test.aq`, skipped where that folder is absent) and
//! against the committed pytrec_eval values of `tests/fixtures/random`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::{fixture, path_str, ragate};

/// trec_eval's measures that ragate computes, as `-m` takes them, at trec_eval's default cut-offs.
fn trec_eval_measures(cuts: &[usize]) -> Vec<String> {
    // `ndcg` is ragate's own nDCG (gain 2^g - 1): trec_eval's is asked for as ir_measures' `nDCG`.
    let mut names: Vec<String> = ["map", "Rprec", "recip_rank", "nDCG"]
        .iter()
        .map(ToString::to_string)
        .collect();
    for base in ["P", "recall", "ndcg_cut", "map_cut"] {
        names.extend(cuts.iter().map(|k| format!("{base}_{k}")));
    }
    names
}

/// `ragate eval --format trec_eval --per-query` of `qrels` and `run` with `measures`: its stdout.
fn trec_eval_lines(qrels: &str, run: &str, measures: &[String]) -> String {
    let mut args = vec!["eval", "--qrels", qrels, "--run", run];
    for measure in measures {
        args.extend(["-m", measure.as_str()]);
    }
    args.extend(["--format", "trec_eval", "--per-query"]);
    let out = ragate(&args);
    assert_eq!(out.code, 0, "stderr: {}", out.stderr);
    out.stdout
}

#[test]
fn lines_equal_trec_eval_s_own_expected_output() {
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/trec_eval_test");
    if !folder.is_dir() {
        eprintln!("trec_eval_format: skipped (../shared/data/trec_eval_test not found)");
        return;
    }
    let mut measures = trec_eval_measures(&[5, 10, 15, 20, 30, 100, 200, 500, 1000]);
    // ir_measures' spelling and trec_eval's `-m` spelling print as trec_eval's names too.
    measures.extend(["success.1", "success_5", "Success@10"].map(String::from));
    let ours = trec_eval_lines(
        path_str(&folder.join("qrels.test")),
        path_str(&folder.join("results.test")),
        &measures,
    );
    let printed: std::collections::BTreeSet<&str> = ours
        .lines()
        .filter_map(|line| line.split('\t').next())
        .map(str::trim_end)
        .collect();
    assert_eq!(printed.len(), 4 + 4 * 9 + 3 + 1, "{printed:?}");
    let expected = std::fs::read_to_string(folder.join("out.test.aq")).unwrap();
    let theirs: Vec<&str> = expected
        .lines()
        .filter(|line| {
            let measure = line.split('\t').next().unwrap_or("").trim_end();
            printed.contains(measure)
        })
        .collect();
    let ours: Vec<&str> = ours.lines().collect();
    assert_eq!(ours, theirs, "the lines and their order equal trec_eval's");
    assert!(
        ours.len() > 100,
        "{} lines compared: every query's and the means",
        ours.len()
    );
}

#[test]
fn lines_carry_pytrec_eval_s_values_to_four_decimals_in_trec_eval_s_order() {
    let cuts = [1, 3, 5, 10, 20, 50];
    let mut measures = trec_eval_measures(&cuts);
    measures.extend(cuts.iter().map(|k| format!("success_{k}")));
    let text = trec_eval_lines(
        path_str(&fixture("random/qrels.trec")),
        path_str(&fixture("random/run.trec")),
        &measures,
    );
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("random/expected.json")).unwrap())
            .unwrap();
    // trec_eval's name of each ragate metric in the fixture.
    let ours_of = |theirs: &str| -> String {
        let (base, cut) = match theirs.rsplit_once('_') {
            Some((base, cut)) if cut.bytes().all(|b| b.is_ascii_digit()) => (base, Some(cut)),
            _ => (theirs, None),
        };
        let ours = match base {
            "map" => "map",
            "Rprec" => "r_precision",
            "recip_rank" => "mrr",
            "ndcg" => "ndcg_linear",
            "P" => "precision",
            "recall" => "recall",
            "ndcg_cut" => "ndcg_linear",
            "map_cut" => "map",
            "success" => "hit_rate",
            other => panic!("unexpected measure {other}"),
        };
        cut.map_or(ours.to_string(), |k| format!("{ours}@{k}"))
    };
    let mut per_query: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut compared = 0;
    for line in text.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields.len(), 3, "{line}");
        assert_eq!(fields[0].len(), 22, "trec_eval pads names to 22: {line}");
        let (measure, qid, value) = (fields[0].trim_end(), fields[1], fields[2]);
        if measure == "num_q" {
            assert_eq!(qid, "all");
            assert_eq!(value, expected["queries"].to_string());
            continue;
        }
        let metric = ours_of(measure);
        let want = if qid == "all" {
            &expected["metrics"][&metric]
        } else {
            per_query
                .entry(qid.to_string())
                .or_default()
                .push(measure.to_string());
            &expected["per_query"][qid][&metric]
        };
        let want = want.as_f64().unwrap_or_else(|| panic!("{metric} of {qid}"));
        assert_eq!(value, format!("{want:.4}"), "{measure} of {qid}");
        compared += 1;
    }
    let queries = expected["queries"].as_u64().unwrap() as usize;
    assert_eq!(per_query.len(), queries);
    assert_eq!(compared, (queries + 1) * (4 + 5 * cuts.len()));
    // Queries in byte order of their ids, each with the measures in trec_eval's order.
    let qids: Vec<&str> = text
        .lines()
        .map(|line| line.split('\t').nth(1).unwrap())
        .filter(|qid| *qid != "all")
        .collect();
    assert!(qids.windows(2).all(|pair| pair[0] <= pair[1]));
    let order: Vec<&str> = per_query
        .values()
        .next()
        .unwrap()
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(
        &order[..6],
        ["map", "Rprec", "recip_rank", "P_1", "P_3", "P_5"]
    );
    assert_eq!(order[order.len() - 1], "success_50");
    assert!(
        per_query
            .values()
            .all(|measures| measures == per_query.values().next().unwrap())
    );
}

#[test]
fn metrics_without_a_trec_eval_measure_are_an_error_and_aliases_are_noted() {
    let qrels = fixture("random/qrels.trec");
    let run = fixture("random/run.trec");
    let base = ["eval", "--qrels", path_str(&qrels), "--run", path_str(&run)];
    let mut args = base.to_vec();
    args.extend(["--format", "trec_eval"]);
    let out = ragate(&args);
    assert_eq!(
        out.code, 2,
        "the default metrics include ndcg@10 (gain 2^g - 1)"
    );
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr
            .contains("`ndcg@10` (its gain is 2^g - 1; trec_eval's ndcg_cut_10 uses gain g"),
        "{}",
        out.stderr
    );
    let mut args = base.to_vec();
    args.extend([
        "-m", "nDCG@10", "-m", "nDCG@10", "-m", "P_5", "--format", "json",
    ]);
    let out = ragate(&args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stderr
            .matches(
                "note: nDCG@10 is read as ndcg_linear@10 (gain g, as ir_measures and trec_eval)"
            )
            .count(),
        1,
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("note: P_5 is read as precision@5"));
    let json: Value = serde_json::from_str(&out.stdout).unwrap();
    let names: Vec<&String> = json["metrics"].as_object().unwrap().keys().collect();
    assert!(names.contains(&&"ndcg_linear@10".to_string()), "{names:?}");
    assert!(names.contains(&&"precision@5".to_string()), "{names:?}");
}
