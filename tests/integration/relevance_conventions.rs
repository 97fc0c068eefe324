//! The relevance level (`relevance_level`, `eval --relevance-level`) and what a judged query
//! without a relevant document scores (`no_relevant`, `eval --no-relevant`): their values, their
//! config keys, their record in the results' provenance, and the refusal of a baseline made
//! with other ones.

use std::path::Path;

use serde_json::Value;

use crate::{Outcome, Ragate, accept_baseline, ragate_in};

/// Graded TREC qrels: at level 2, q1 and q2 have their relevant doc at rank 2 and q3 has none.
const QRELS: &str = "# graded 0..2\n\
q1 0 d1 2\nq1 0 d2 1\n\
q2 0 d3 1\nq2 0 d4 2\n\
q3 0 d5 1\nq3 0 d6 0\n\
q4 0 d7 2\n";

const RUN: &str = "q1 Q0 d2 1 3 t\nq1 Q0 d1 2 2 t\n\
q2 Q0 d3 1 3 t\nq2 Q0 d4 2 2 t\n\
q3 Q0 d5 1 3 t\n\
q4 Q0 d7 1 3 t\n";

fn write_inputs(dir: &Path) {
    std::fs::write(dir.join("qrels.txt"), QRELS).unwrap();
    std::fs::write(dir.join("run.txt"), RUN).unwrap();
}

/// `ragate eval --format json --per-query -m mrr -m ndcg_linear` with `flags`.
fn eval(dir: &Path, flags: &[&str]) -> Outcome {
    let mut args = vec![
        "eval",
        "--qrels",
        "qrels.txt",
        "--run",
        "run.txt",
        "--format",
        "json",
        "--per-query",
        "-m",
        "mrr",
        "-m",
        "ndcg_linear",
    ];
    args.extend_from_slice(flags);
    ragate_in(dir, &args)
}

fn json(outcome: &Outcome) -> Value {
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    serde_json::from_str(&outcome.stdout).unwrap()
}

#[test]
fn eval_at_a_relevance_level_and_with_no_relevant_zero() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write_inputs(dir);
    let default = json(&eval(dir, &[]));
    assert_eq!(default["metrics"]["mrr"], 1.0);
    assert_eq!(default["queries"], 4);
    // Level 1 is the default, byte for byte.
    let level_1 = eval(dir, &["--relevance-level", "1", "--no-relevant", "exclude"]);
    assert_eq!(level_1.stdout, eval(dir, &[]).stdout);

    // At level 2 the grade-1 docs at rank 1 no longer count; q3 has no relevant doc left.
    let level_2 = json(&eval(dir, &["--relevance-level", "2"]));
    assert_eq!(level_2["per_query"]["q1"]["mrr"], 0.5);
    assert_eq!(level_2["per_query"]["q4"]["mrr"], 1.0);
    assert!(level_2["per_query"].get("q3").is_none());
    assert_eq!(level_2["excluded_no_relevant"], 1);
    assert_eq!(level_2["metrics"]["mrr"], 2.0 / 3.0);
    // nDCG keeps the graded gains: q1's grades in rank order 1, 2 against the ideal 2, 1.
    let ndcg_q1 = (1.0 + 2.0 / 3f64.log2()) / (2.0 + 1.0 / 3f64.log2());
    let ours = level_2["per_query"]["q1"]["ndcg_linear"].as_f64().unwrap();
    assert!((ours - ndcg_q1).abs() < 1e-12, "{ours} vs {ndcg_q1}");
    assert_eq!(
        level_2["per_query"]["q1"]["ndcg_linear"],
        default["per_query"]["q1"]["ndcg_linear"]
    );

    // no_relevant zero: q3 stays in the means with 0 in every metric.
    let zero = json(&eval(
        dir,
        &["--relevance-level", "2", "--no-relevant", "zero"],
    ));
    assert_eq!(zero["queries"], 4);
    assert_eq!(zero["excluded_no_relevant"], 0);
    assert_eq!(zero["per_query"]["q3"]["mrr"], 0.0);
    assert_eq!(zero["per_query"]["q3"]["ndcg_linear"], 0.0);
    assert_eq!(zero["metrics"]["mrr"], 0.5);

    // No grade reaches 3: the error says which grade it looked for.
    let none = eval(dir, &["--relevance-level", "3"]);
    assert_eq!(none.code, 2);
    assert!(
        none.stderr.contains(
            "qrels.txt: none of the 4 queries has a relevant document: expected at least one judged relevant (grade >= 3 or in gold_doc_ids with that grade)"
        ),
        "{}",
        none.stderr
    );

    // The comment line of the qrels is skipped and said once.
    let outcome = eval(dir, &[]);
    assert!(
        outcome
            .stderr
            .contains("qrels.txt: 1 comment lines (starting with `#`) were skipped"),
        "{}",
        outcome.stderr
    );

    for (flags, message) in [
        (
            ["--relevance-level", "0"],
            "invalid value '0' for '--relevance-level <L>': 0: expected an integer grade from 1 to 100",
        ),
        (
            ["--relevance-level", "2.5"],
            "invalid value '2.5' for '--relevance-level <L>': `2.5`: expected an integer grade from 1 to 100",
        ),
        (
            ["--no-relevant", "keep"],
            "invalid value 'keep' for '--no-relevant <HOW>'",
        ),
    ] {
        let outcome = eval(dir, &flags);
        assert_eq!(outcome.code, 2, "{flags:?}");
        assert!(outcome.stderr.contains(message), "{}", outcome.stderr);
    }
}

/// A config with one tier `smoke` on the TREC qrels, with `tier_keys` added to the tier.
fn write_config(dir: &Path, tier_keys: &str) {
    let config = format!(
        "version: 1
metrics: [mrr]
tiers:
  smoke:
    qrels: qrels.txt
    baseline: baseline.json
{tier_keys}gate:
  decision: point
  min_queries: 1
  rules:
    - {{ metric: mrr, max_drop: 0.6 }}
"
    );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
}

fn provenance(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("out/results.json")).unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["provenance"].clone()
}

#[test]
fn a_baseline_made_with_other_conventions_is_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write_inputs(dir);
    write_config(dir, "");
    Ragate::gate("smoke", "run.txt", "out")
        .status(2)
        .run_in(dir); // no baseline yet
    let defaults = provenance(dir);
    assert!(defaults.get("relevance_level").is_none(), "{defaults}");
    assert!(defaults.get("no_relevant").is_none(), "{defaults}");
    accept_baseline(dir, "smoke", "out/results.json", &[]);
    Ragate::gate("smoke", "run.txt", "out")
        .status(0)
        .run_in(dir);

    // The tier now evaluates at level 2: refused, exit 2, both levels named; the results are
    // written to accept as the new baseline.
    write_config(dir, "    relevance_level: 2\n");
    let refused = Ragate::gate("smoke", "run.txt", "out")
        .status(2)
        .run_in(dir);
    assert!(
        refused.stderr.contains(
            "baseline.json: relevance_level 1 (the baseline) vs 2 (these results): values computed with another relevance_level or no_relevant are not comparable; run `ragate baseline accept"
        ),
        "{}",
        refused.stderr
    );
    assert_eq!(provenance(dir)["relevance_level"], 2);
    accept_baseline(dir, "smoke", "out/results.json", &[]);
    Ragate::gate("smoke", "run.txt", "out")
        .status(0)
        .run_in(dir);

    // no_relevant is recorded and compared the same way.
    write_config(dir, "    relevance_level: 2\n    no_relevant: zero\n");
    let refused = Ragate::gate("smoke", "run.txt", "out")
        .status(2)
        .run_in(dir);
    assert!(
        refused
            .stderr
            .contains("no_relevant exclude (the baseline) vs zero (these results)"),
        "{}",
        refused.stderr
    );
    assert!(!refused.stderr.contains("relevance_level 2 (the baseline)"));
    assert_eq!(provenance(dir)["no_relevant"], "zero");
}

#[test]
fn the_tier_keys_are_checked_where_they_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write_inputs(dir);
    for (keys, message) in [
        (
            "    relevance_level: 0\n",
            "eval-config.yaml:7:22: tiers.smoke.relevance_level: 0: expected an integer grade from 1 to 100",
        ),
        (
            "    no_relevant: keep\n",
            "eval-config.yaml:7:18: tiers.smoke.no_relevant: unknown variant `keep`, expected `exclude` or `zero`",
        ),
        (
            "    relevance: 2\n",
            "eval-config.yaml:7:5: tiers.smoke.relevance: unknown field `relevance`",
        ),
    ] {
        write_config(dir, keys);
        let outcome = ragate_in(dir, &["validate"]);
        assert_eq!(outcome.code, 2, "{keys}: {}", outcome.stdout);
        let output = outcome.stderr + &outcome.stdout;
        assert!(output.contains(message), "{keys}: {output}");
    }
    write_config(dir, "    relevance_level: 3\n    no_relevant: zero\n");
    let outcome = ragate_in(dir, &["validate"]);
    assert_eq!(outcome.code, 0, "{}{}", outcome.stdout, outcome.stderr);
}
