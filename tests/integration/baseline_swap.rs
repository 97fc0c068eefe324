//! A team swaps its own queries (or metrics) in after `ragate init`: `validate` and the gate say
//! that the baseline no longer pairs and name the next step, one `baseline accept` replaces it
//! (listing what it drops), and the gate passes again. Results that errored for any other reason
//! are still refused.

use std::path::Path;

use serde_json::Value;

use crate::{Outcome, Ragate, ragate_in};

/// `ragate init` (the python stand-in), gate, accept, gate: a tier with a baseline that passes.
fn accepted_scaffold(dir: &Path) {
    let init = ragate_in(dir, &["init", "--pipeline", "python"]);
    assert_eq!(init.code, 0, "{}", init.stderr);
    assert!(
        init.stdout.contains(
            "and eval/qrels.jsonl with your queries (`ragate convert` reads TREC, TSV and BEIR \
             files; with none yet, `ragate synth --generator NAME --out drafts` drafts some from \
             your corpus for you to review and `ragate qrels accept`); `ragate validate` then \
             names the commands that replace the baseline.\n"
        ),
        "{}",
        init.stdout
    );
    Ragate::new(["gate", "--tier", "smoke"])
        .status(2)
        .run_in(dir); // no baseline yet
    let accepted = accept(dir);
    assert_eq!(accepted.code, 0, "{}", accepted.stderr);
    Ragate::new(["gate", "--tier", "smoke"])
        .status(0)
        .run_in(dir);
}

fn accept(dir: &Path) -> Outcome {
    ragate_in(dir, &["baseline", "accept", "--tier", "smoke"])
}

/// Renames the qids of eval/qrels.jsonl that `pick` selects (by their position in the file) to
/// `x` followed by their number: the team's own queries.
fn rename_qids(dir: &Path, pick: impl Fn(usize) -> bool) {
    let path = dir.join("eval/qrels.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut out = String::new();
    for (position, line) in text.lines().enumerate() {
        let mut query: Value = serde_json::from_str(line).unwrap();
        if pick(position) {
            let qid = query["qid"].as_str().unwrap().replacen('q', "x", 1);
            query["qid"] = qid.into();
        }
        out.push_str(&format!("{query}\n"));
    }
    std::fs::write(&path, out).unwrap();
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn qids(path: &Path) -> Vec<String> {
    json(path)["queries"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

/// Replaces `from` with `to` in the config (which must hold `from`).
fn edit_config(dir: &Path, from: &str, to: &str) {
    let path = dir.join("eval-config.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{from} not in the config");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn swapped_queries_name_the_next_step_and_one_accept_replaces_the_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    accepted_scaffold(dir);
    let old_qids = qids(&dir.join("baselines/smoke.json"));
    assert_eq!(old_qids.len(), 6, "{old_qids:?}");
    rename_qids(dir, |_| true);

    let validated = ragate_in(dir, &["validate"]);
    assert_eq!(validated.code, 2, "{}", validated.stderr);
    assert!(
        validated.stderr.contains(
            "error: tier `smoke`: baselines/smoke.json: the baseline shares 0 of 6 queries with \
             tier `smoke` (the qrels changed since it was accepted, qrels sha256 "
        ) && validated.stderr.contains(
            "so no check can compare them: run `ragate gate --tier smoke`, then `ragate baseline \
             accept --tier smoke` to replace it\n"
        ),
        "{}",
        validated.stderr
    );
    assert!(
        validated.stdout.contains("2 tiers, 1 errors"),
        "{}",
        validated.stdout
    );

    let unpaired = Ragate::new(["gate", "--tier", "smoke"])
        .status(2)
        .run_in(dir);
    let last = unpaired.stderr.trim_end().lines().last().unwrap();
    assert!(
        last.starts_with(
            "error: baselines/smoke.json: the baseline shares 0 of 6 queries with tier `smoke` \
             (the qrels changed since it was accepted"
        ) && last.ends_with(
            "replace the baseline with `ragate baseline accept --tier smoke` (it shows what the \
             new baseline drops)"
        ),
        "the last line says why and what next: {}",
        unpaired.stderr
    );
    assert!(
        !unpaired.stderr.contains("warning: baselines/smoke.json"),
        "said once, as the error: {}",
        unpaired.stderr
    );
    let summary = std::fs::read_to_string(dir.join(".ragate/out/smoke/summary.md")).unwrap();
    assert!(
        summary.contains("- ⚠️ baselines/smoke.json: the baseline shares 0 of 6 queries"),
        "in the warnings list: {summary}"
    );
    let results = json(&dir.join(".ragate/out/smoke/results.json"));
    assert_eq!(results["status"], "error");
    assert_eq!(
        results["baseline_mismatch"],
        serde_json::json!({"shared_queries": 0, "queries": 6, "baseline_queries": 6, "min_queries": 3, "min_share": 0.9})
    );
    let errors = crate::json_schema::Schema::published("results.schema.json").errors(&results);
    assert!(errors.is_empty(), "{errors:?}");

    let accepted = accept(dir);
    assert_eq!(accepted.code, 0, "{}", accepted.stderr);
    let listed: Vec<String> = old_qids.iter().take(5).map(|q| format!("`{q}`")).collect();
    assert!(
        accepted.stdout.contains(
            "replaced a baseline that no longer fit these results: the baseline shares 0 of 6 \
             queries with tier `smoke`, so no check can compare them\n"
        ) && accepted.stdout.contains(&format!(
            "dropped: 6 queries of the old baseline that the tier no longer has ({}, and 1 more)\n",
            listed.join(", ")
        )),
        "{}",
        accepted.stdout
    );
    // The sample of the renamed queries (a query's place in a sample depends on its qid).
    let new_qids = qids(&dir.join("baselines/smoke.json"));
    assert_eq!(new_qids.len(), 6);
    assert!(new_qids.iter().all(|q| q.starts_with('x')), "{new_qids:?}");

    let validated = ragate_in(dir, &["validate"]);
    assert_eq!(validated.code, 0, "{}", validated.stderr);
    assert!(!validated.stderr.contains("shares"), "{}", validated.stderr);
    let passed = Ragate::new(["gate", "--tier", "smoke"])
        .status(0)
        .run_in(dir);
    assert!(
        passed.stdout.contains("13 checks: 13 passed"),
        "{}",
        passed.stdout
    );
}

#[test]
fn a_baseline_that_shares_enough_queries_is_compared_on_them_and_says_how_many() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    accepted_scaffold(dir);
    let old_qids = qids(&dir.join("baselines/smoke.json"));
    // The first half of the file: half of the stratified sample of 6.
    rename_qids(dir, |position| position < 6);
    let kept = old_qids.iter().filter(|q| q.as_str() > "q06").count();
    assert_eq!(kept, 3, "{old_qids:?}");

    let validated = ragate_in(dir, &["validate"]);
    assert_eq!(validated.code, 0, "{}", validated.stderr);
    assert!(
        validated.stderr.contains(
            "warning: tier `smoke`: baselines/smoke.json: the baseline shares 3 of 6 queries with \
             tier `smoke`: the checks compare those 3; the other 3 are compared once a baseline \
             that has them is accepted\n"
        ),
        "{}",
        validated.stderr
    );
    let compared = Ragate::new(["gate", "--tier", "smoke"])
        .status(0)
        .run_in(dir);
    assert!(
        compared.stderr.contains(
            "warning: the baseline shares 3 of 6 queries with tier `smoke`: the checks compare \
             those 3; the other 3 are compared once a baseline that has them is accepted (the \
             qrels changed since the baseline, sha256 "
        ),
        "{}",
        compared.stderr
    );
    assert!(
        compared.stdout.contains("recall@3 [all]") && compared.stdout.contains("  3\n"),
        "the `all` checks over the 3 pairs: {}",
        compared.stdout
    );
    let results = json(&dir.join(".ragate/out/smoke/results.json"));
    assert_eq!(results["status"], "pass");
    assert!(results.get("baseline_mismatch").is_none(), "{results}");
}

#[test]
fn a_gated_metric_the_baseline_lacks_is_replaced_by_one_accept() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    accepted_scaffold(dir);
    edit_config(dir, "  - mrr ", "  - recall@5\n  - mrr ");
    edit_config(
        dir,
        "    - { metric: mrr, max_drop_pct: 10 }",
        "    - { metric: mrr, max_drop_pct: 10 }\n    - { metric: recall@5, max_drop: 0.05 }",
    );
    let validated = ragate_in(dir, &["validate"]);
    assert_eq!(validated.code, 2, "{}", validated.stderr);
    assert!(
        validated.stderr.contains(
            "error: tier `smoke`: baselines/smoke.json: the baseline has no values of \
             `recall@5`, which the rules of tier `smoke` gate (the config changed since it was \
             accepted): run `ragate gate --tier smoke`, then"
        ),
        "{}",
        validated.stderr
    );
    let missing = Ragate::new(["gate", "--tier", "smoke"])
        .status(2)
        .run_in(dir);
    assert!(
        missing
            .stderr
            .trim_end()
            .ends_with("replace the baseline with `ragate baseline accept --tier smoke` (it shows what the new baseline drops)"),
        "{}",
        missing.stderr
    );
    let results = json(&dir.join(".ragate/out/smoke/results.json"));
    assert_eq!(
        results["baseline_mismatch"]["missing_metrics"],
        serde_json::json!(["recall@5"])
    );
    let errors = crate::json_schema::Schema::published("results.schema.json").errors(&results);
    assert!(errors.is_empty(), "{errors:?}");
    let accepted = accept(dir);
    assert_eq!(accepted.code, 0, "{}", accepted.stderr);
    assert!(
        accepted
            .stdout
            .contains("+all                          recall@5 "),
        "{}",
        accepted.stdout
    );
    let passed = Ragate::new(["gate", "--tier", "smoke"])
        .status(0)
        .run_in(dir);
    assert!(
        passed.stdout.contains("16 checks: 16 passed"),
        "{}",
        passed.stdout
    );
}

#[test]
fn results_that_also_errored_for_another_reason_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    accepted_scaffold(dir);
    let before = std::fs::read(dir.join("baselines/smoke.json")).unwrap();
    rename_qids(dir, |_| true);
    // A rule on a slice value no query has: an error a new baseline would not mend.
    edit_config(
        dir,
        "    - { metric: mrr, max_drop_pct: 10 }",
        "    - { metric: mrr, max_drop_pct: 10 }\n    - { metric: mrr, slice: class=bogus, max_drop: 0.1 }",
    );
    let errored = Ragate::new(["gate", "--tier", "smoke"])
        .status(2)
        .run_in(dir);
    assert!(
        errored
            .stdout
            .contains("ERROR: mrr [class=bogus]: no query has class=bogus"),
        "{}",
        errored.stdout
    );
    assert!(
        errored.stderr.trim_end().ends_with(
            "so no check can compare them: fix the run's other errors (listed with the checks), \
             run the gate again, then replace the baseline with `ragate baseline accept --tier \
             smoke`"
        ),
        "{}",
        errored.stderr
    );
    let results = json(&dir.join(".ragate/out/smoke/results.json"));
    assert_eq!(results["status"], "error");
    assert!(results.get("baseline_mismatch").is_none(), "{results}");
    let refused = accept(dir);
    assert_eq!(refused.code, 2, "{}", refused.stdout);
    assert!(
        refused
            .stderr
            .contains("these results could not be fully evaluated (status error)"),
        "{}",
        refused.stderr
    );
    assert_eq!(
        std::fs::read(dir.join("baselines/smoke.json")).unwrap(),
        before,
        "the baseline is untouched"
    );
}

/// A BEIR folder (queries.jsonl and qrels/test.tsv) of the stand-in's own questions under new
/// ids, with their `class` and reference answers but no gold answer substring.
fn write_beir(dir: &Path, scaffold: &Path) {
    std::fs::create_dir_all(dir.join("qrels")).unwrap();
    let text = std::fs::read_to_string(scaffold.join("eval/qrels.jsonl")).unwrap();
    let (mut queries, mut qrels) = (String::new(), "query-id\tcorpus-id\tscore\n".to_string());
    for (i, line) in text.lines().enumerate() {
        let query: Value = serde_json::from_str(line).unwrap();
        let id = format!("beir-{}", i + 1);
        let beir = serde_json::json!({
            "_id": id,
            "text": query["query"],
            "metadata": {},
            "class": query["class"],
            "reference_answer": query["reference_answer"],
        });
        queries.push_str(&format!("{beir}\n"));
        for (doc, grade) in query["graded_relevance"].as_object().unwrap() {
            qrels.push_str(&format!("{id}\t{doc}\t{grade}\n"));
        }
    }
    std::fs::write(dir.join("queries.jsonl"), queries).unwrap();
    std::fs::write(dir.join("qrels/test.tsv"), qrels).unwrap();
}

#[test]
fn a_converted_beir_collection_gates_after_the_steps_ragate_names() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    accepted_scaffold(dir);
    let beir = tempfile::tempdir().unwrap();
    write_beir(beir.path(), dir);
    // Without `--keep class` the queries lose the slice field the config names: validate says
    // what each part of the config expects.
    let classless = ragate_in(
        dir,
        &[
            "convert",
            "--qrels",
            crate::path_str(beir.path()),
            "--out",
            "eval/qrels.jsonl",
        ],
    );
    assert_eq!(classless.code, 0, "{}", classless.stderr);
    assert!(
        classless
            .stderr
            .contains("fields not kept (--keep FIELD keeps one as a slice field): class"),
        "{}",
        classless.stderr
    );
    let validated = ragate_in(dir, &["validate"]);
    assert_eq!(validated.code, 2, "{}", validated.stderr);
    assert!(
        validated.stderr.contains(
            "error: tier `smoke`: the rule for answer_contains names class=literal, which no \
             query has (no query has a value of a `slices:` field)"
        ),
        "{}",
        validated.stderr
    );
    let converted = ragate_in(
        dir,
        &[
            "convert",
            "--qrels",
            crate::path_str(beir.path()),
            "--keep",
            "class",
            "--out",
            "eval/qrels.jsonl",
        ],
    );
    assert_eq!(converted.code, 0, "{}", converted.stderr);
    // No gold answer substrings: validate and the gate (before its pipeline) name the metric to
    // drop.
    let no_gold = "metrics[5]: no query of eval/qrels.jsonl has a `gold_answer_substring`, which \
                   answer_contains compares the answer with, so no query would have a value: add \
                   `gold_answer_substring` to the queries, or remove answer_contains from \
                   `metrics:` (and its rules)";
    Ragate::new(["validate"])
        .status(2)
        .stderr_has(no_gold)
        .run_in(dir);
    Ragate::new(["gate", "--tier", "smoke"])
        .status(2)
        .stderr_has(no_gold)
        .run_in(dir);
    edit_config(dir, "  - answer_contains ", "  # - answer_contains ");
    edit_config(
        dir,
        "    - { metric: answer_contains,",
        "    # - { metric: answer_contains,",
    );
    let unpaired = Ragate::new(["gate", "--tier", "smoke"])
        .status(2)
        .run_in(dir);
    assert!(
        unpaired.stderr.trim_end().ends_with(
            "so no check can compare them: if this run's numbers are what the tier should hold, \
             replace the baseline with `ragate baseline accept --tier smoke` (it shows what the \
             new baseline drops)"
        ),
        "{}",
        unpaired.stderr
    );
    let accepted = accept(dir);
    assert_eq!(accepted.code, 0, "{}", accepted.stderr);
    assert!(
        accepted
            .stdout
            .contains("dropped: 6 queries of the old baseline")
            && accepted
                .stdout
                .contains("dropped: metrics no longer measured: `answer_contains`\n"),
        "{}",
        accepted.stdout
    );
    Ragate::new(["gate", "--tier", "smoke"])
        .status(0)
        .run_in(dir);
    assert!(
        qids(&dir.join("baselines/smoke.json"))
            .iter()
            .all(|q| q.starts_with("beir-")),
        "the baseline holds the converted queries"
    );
}
