//! The likely causes of a change and the inconclusive headline (issue 48), on the repository's
//! example: its `degraded` variant drops the best document for a third of the queries and adds an
//! unsupported sentence to about half of the answers; gated against its baseline, the summary
//! names the lost top documents with their count, and no cause that a metric shown contradicts.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::gate_flow::run_readme_example;
use crate::ragate_env;

/// The queries whose current ranking no longer has the baseline's first relevant document (at
/// rank 1 / reciprocal rank of the baseline's ranking), read from the two results files (the
/// example's ids are whole documents).
fn lost_top_documents(baseline: &Value, current: &Value) -> BTreeSet<String> {
    let mut lost = BTreeSet::new();
    for (qid, now) in current["queries"].as_object().unwrap() {
        let before = &baseline["queries"][qid];
        let Some(rr) = before["metrics"]["mrr"].as_f64().filter(|rr| *rr > 0.0) else {
            continue;
        };
        let top = &before["retrieved"][(1.0 / rr).round() as usize - 1];
        let retrieved = now["retrieved"].as_array().unwrap();
        if !retrieved.contains(top) {
            lost.insert(qid.clone());
        }
    }
    lost
}

/// The summary's folded causes: the `<details>` titled `Likely causes`, up to its end.
fn causes_fold(summary: &str) -> &str {
    let start = summary
        .find("<details><summary>Likely causes")
        .unwrap_or_else(|| panic!("no folded causes:\n{summary}"));
    let end = start + summary[start..].find("</details>").unwrap();
    &summary[start..end]
}

#[test]
fn the_degraded_example_names_its_lost_top_documents_and_no_contradicted_cause() {
    let (work, out) = run_readme_example("degraded");
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let summary = std::fs::read_to_string(work.path().join("out/summary.md")).unwrap();
    let read = |path: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(work.path().join(path)).unwrap()).unwrap()
    };
    let lost = lost_top_documents(&read("baselines/smoke.json"), &read("out/results.json"));
    assert!(!lost.is_empty(), "the degraded variant drops top documents");
    // Folded below the checks, not the level-based lines above them.
    let fold = causes_fold(&summary);
    assert!(
        summary.find("| check |").unwrap() < summary.find(fold).unwrap(),
        "{summary}"
    );
    assert!(!summary.contains("is low while"), "{summary}");
    let count = format!(
        "{} of 20 queries lost their top relevant document",
        lost.len()
    );
    assert!(
        fold.contains("retrieval lost evidence") && fold.contains(&count),
        "{count}:\n{fold}"
    );

    // The same causes in gate.json, each move as the checks and reported metrics show it.
    let json = ragate_env(
        work.path(),
        &[
            "gate", "--tier", "smoke", "--out", "out-json", "--format", "json",
        ],
        &[("RAGATE_VARIANT", "degraded")],
    );
    assert_eq!(json.code, 1, "{}", json.stderr);
    let document: Value = serde_json::from_str(&json.stdout).unwrap();
    crate::gate_flow::assert_schema("gate.schema.json", &document);
    let causes = document["causes"].as_array().unwrap();
    assert!((1..=3).contains(&causes.len()), "{causes:#?}");
    let retrieval = causes
        .iter()
        .find(|c| c["cause"] == "retrieval_lost_evidence" && c["slice"] == "all")
        .expect("the lost evidence, over all queries");
    assert_eq!(retrieval["queries"], lost.len());
    for cause in causes {
        for moved in cause["moves"].as_array().unwrap() {
            let shown = shown_delta(&document, cause["slice"].as_str().unwrap(), moved);
            let (delta, limit) = (moved["delta"].as_f64().unwrap(), moved["limit"].as_f64());
            assert_eq!(Some(delta), shown, "{moved} is the delta shown");
            let tolerance = limit.unwrap_or(0.01);
            let direction = if delta < -tolerance {
                "down"
            } else if delta > tolerance {
                "up"
            } else {
                "flat"
            };
            assert_eq!(moved["direction"], direction, "{cause:#}");
        }
    }
    // answer_relevance did not fall (reported, not gated): no "dodge" cause.
    let relevance = document["reported"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "answer_relevance")
        .unwrap();
    if relevance["delta"].as_f64().unwrap() >= -0.01 {
        assert!(!summary.contains("dodge"), "{summary}");
        assert!(
            causes
                .iter()
                .all(|c| c["cause"] != "answers_dodge_question")
        );
    }
}

/// The delta gate.json shows for a move's metric in `slice`: its check's, else (a metric
/// without a rule, over all queries) its reported one; None when neither shows it.
fn shown_delta(document: &Value, slice: &str, moved: &Value) -> Option<f64> {
    let metric = &moved["metric"];
    let check = document["checks"]
        .as_array()?
        .iter()
        .find(|c| c["metric"] == *metric && c["slice"] == slice);
    match check {
        Some(check) => check["delta"].as_f64(),
        None if slice == "all" => document["reported"]
            .as_array()?
            .iter()
            .find(|r| r["metric"] == *metric)?["delta"]
            .as_f64(),
        // A slice's metric without a rule: from the paired queries, not shown as a check.
        None => moved["delta"].as_f64(),
    }
}

/// The example's regression tier gated on `ndcg@10 [all]` alone (no slices), its limit `past`
/// below the worsening a first run measured: an inconclusive check too close to its limit for
/// any realistic tier. The headline says how far past the limit the point estimate is, the bound,
/// the capped queries-needed figure, and that `decision: point` decides it.
#[test]
fn an_inconclusive_check_says_how_far_past_its_limit_and_what_would_decide_it() {
    let (work, first) = run_readme_example("hybrid");
    assert_eq!(first.code, 0, "{}", first.stderr);
    let config_path = work.path().join("eval-config.yaml");
    let config = std::fs::read_to_string(&config_path).unwrap();
    let rules_at = config.find("  rules:\n").unwrap();
    let one_rule = |max_drop: f64| {
        format!(
            "{}  rules:\n    - {{ metric: ndcg@10, max_drop: {max_drop:.6} }}\n",
            config[..rules_at].replace("slices: [class]\n", "")
        )
    };
    let gate = |out: &str| {
        let run = ragate_env(
            work.path(),
            &[
                "gate",
                "--tier",
                "regression",
                "--out",
                out,
                "--format",
                "json",
            ],
            &[("RAGATE_VARIANT", "degraded")],
        );
        let document: Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout, run.stderr));
        (run.code, document)
    };
    // The worsening measured with a wide limit, then a limit 0.0005 below it.
    std::fs::write(&config_path, one_rule(0.5)).unwrap();
    let (_, wide) = gate("out-wide");
    let worsening = -ndcg(&wide)["delta"].as_f64().unwrap();
    assert!(worsening > 0.01, "{wide:#}");
    std::fs::write(&config_path, one_rule(worsening - 0.0005)).unwrap();
    let (code, document) = gate("out");
    assert_eq!(code, 0, "inconclusive passes by default: {document:#}");
    let check = ndcg(&document);
    assert_eq!(check["status"], "inconclusive", "{check:#}");
    assert_eq!(check["queries_needed_over"], 100_000, "{check:#}");
    let (delta, limit) = (
        check["delta"].as_f64().unwrap(),
        check["limit"].as_f64().unwrap(),
    );
    let past = check["undecided"]["past_limit_by"].as_f64().unwrap();
    assert!(
        (past - (-delta - limit)).abs() < 1e-12 && past > 0.0,
        "{check:#}"
    );
    let bound = -check["bound"]["delta"].as_f64().unwrap();
    assert!(
        bound < limit,
        "the evidence stops short of the limit: {check:#}"
    );

    let summary = std::fs::read_to_string(work.path().join("out/summary.md")).unwrap();
    let headline = summary.lines().next().unwrap();
    let said = format!(
        "ndcg@10 [all] {delta:+.4} is past its limit -{limit:.4} by {past:.4} on the point \
         estimate; the evidence shows a worsening of at least {bound:.4} ("
    );
    assert!(
        headline.starts_with("**❓ ")
            && headline.contains(" checks passed, 1 inconclusive: ")
            && headline.contains(&said),
        "{said}\n{headline}"
    );
    assert!(
        headline.contains(
            "no realistic tier decides a change this close to its limit (it would take over \
             100000 paired queries): only `decision: point` for this tier decides it"
        ),
        "{headline}"
    );
    assert_eq!(check["undecided"]["text"].as_str().unwrap(), {
        let start = headline.find(&format!("{delta:+.4} is past")).unwrap();
        headline[start..].trim_end_matches(|c| c != ')').to_string()
    });
}

/// The check `ndcg@10 [all]` of a gate.json document.
fn ndcg(document: &Value) -> &Value {
    document["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "ndcg@10 [all]")
        .unwrap_or_else(|| panic!("{document:#}"))
}
