//! A tier's own `slices:` and `metrics:` (issue 44): a team config sliced by `length` and `form`
//! with answer metrics keeps a tier of drafted queries that carry only `class` (its own
//! `slices: [class]`) and a retrieval-only TREC tier (its own `metrics: [recall@10, ndcg@10]`):
//! `validate` passes and the gate decides every tier. `ragate synth --slice FIELD=VALUE` gives
//! every draft the fields the config's slices name.

use std::path::Path;

use serde_json::Value;

use crate::{Ragate, accept_baseline, fixture, path_str};

/// Top level: answer metrics, sliced by `length` and `form`. The drafted tier is sliced by
/// `class` alone; the TREC tier computes retrieval metrics alone, under rules of its own.
const CONFIG: &str = "version: 1
metrics: [recall@5, answer_f1, faithfulness]
slices: [length, form]
tiers:
  regression: { qrels: qrels/regression.jsonl, baseline: baselines/regression.json }
  drafted:
    qrels: qrels/drafted.jsonl
    baseline: baselines/drafted.json
    slices: [class]
  trec:
    qrels: qrels/trec.txt
    baseline: baselines/trec.json
    metrics: [recall@10, ndcg@10]
    slices: []
    gate: { rules: [ { metric: ndcg@10, max_drop: 0.05 }, { metric: recall@10, max_drop: 0.05 } ] }
gate:
  decision: point
  min_queries: 1
  rules:
    - { metric: recall@5, max_drop: 0.05 }
    - { metric: faithfulness, max_drop: 0.05 }
    - { metric: answer_f1, max_drop: 0.05 }
";

const TOPICS: [(&str, &str); 6] = [
    (
        "bikes",
        "A bicycle needs its own ticket, which costs 5 euros.",
    ),
    ("pets", "Dogs may travel in the outdoor lounge on a lead."),
    ("cabins", "Cabins must be booked together with the ticket."),
    ("food", "The restaurant serves breakfast, lunch and dinner."),
    (
        "wifi",
        "Free wireless internet is available in the lounges.",
    ),
    ("lost", "Items left on board are kept for three months."),
];

/// Native qrels of `prefix` queries, each line with `fields` besides its gold and answer.
fn native_qrels(prefix: &str, fields: impl Fn(usize) -> Value) -> String {
    TOPICS
        .iter()
        .enumerate()
        .map(|(i, (doc, text))| {
            let mut line = serde_json::json!({
                "qid": format!("{prefix}{i}"),
                "query": format!("what about {doc}?"),
                "gold_doc_ids": [doc],
                "reference_answer": text,
            });
            line.as_object_mut()
                .unwrap()
                .extend(fields(i).as_object().unwrap().clone());
            format!("{line}\n")
        })
        .collect()
}

/// A native run answering every `prefix` query from its gold document's text.
fn native_run(prefix: &str) -> String {
    TOPICS
        .iter()
        .enumerate()
        .map(|(i, (doc, text))| {
            let line = serde_json::json!({
                "qid": format!("{prefix}{i}"),
                "retrieved": [{"doc_id": doc, "text": text}, {"doc_id": "other", "text": "Ask the crew."}],
                "answer": text,
            });
            format!("{line}\n")
        })
        .collect()
}

/// The team's files: three tiers' qrels and a run for each.
fn setup(dir: &Path) {
    let files = [
        ("eval-config.yaml", CONFIG.to_string()),
        (
            "qrels/regression.jsonl",
            native_qrels("r", |i| {
                serde_json::json!({
                    "length": if i % 2 == 0 { "short" } else { "long" },
                    "form": if i < 3 { "question" } else { "keywords" },
                })
            }),
        ),
        (
            "qrels/drafted.jsonl",
            native_qrels(
                "synth-",
                |i| serde_json::json!({"class": if i % 2 == 0 { "literal" } else { "paraphrased" }}),
            ),
        ),
        (
            "qrels/trec.txt",
            (0..6)
                .map(|i| format!("t{i} 0 d{i} 1\nt{i} 0 e{i} 2\n"))
                .collect(),
        ),
        ("regression.jsonl", native_run("r")),
        ("drafted.jsonl", native_run("synth-")),
        (
            "trec.txt",
            (0..6)
                .map(|i| {
                    format!("t{i} Q0 e{i} 1 3 run\nt{i} Q0 x{i} 2 2 run\nt{i} Q0 d{i} 3 1 run\n")
                })
                .collect(),
        ),
    ];
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

fn results(dir: &Path, tier: &str) -> Value {
    let text = std::fs::read_to_string(dir.join(format!("out-{tier}/results.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_team_config_keeps_a_drafted_tier_and_a_retrieval_only_tier_with_their_own_lists() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    Ragate::new(["validate"]).status(0).run_in(dir);
    for (tier, run) in [
        ("regression", "regression.jsonl"),
        ("drafted", "drafted.jsonl"),
        ("trec", "trec.txt"),
    ] {
        let out = format!("out-{tier}");
        Ragate::gate(tier, run, &out)
            .status(2)
            .stderr_has("has no baseline yet")
            .run_in(dir);
        accept_baseline(dir, tier, &format!("{out}/results.json"), &[]);
        Ragate::gate(tier, run, &out).status(0).run_in(dir);
    }
    let metrics = |tier: &str| results(dir, tier)["metrics"].clone();
    assert_eq!(
        metrics("regression"),
        serde_json::json!(["recall@5", "answer_f1", "faithfulness", "empty_answers"])
    );
    assert_eq!(metrics("drafted"), metrics("regression"));
    assert_eq!(metrics("trec"), serde_json::json!(["recall@10", "ndcg@10"]));
    let slices = |tier: &str, qid: &str| results(dir, tier)["queries"][qid]["slices"].clone();
    assert_eq!(
        slices("regression", "r0"),
        serde_json::json!({"length": "short", "form": "question"})
    );
    assert_eq!(
        slices("drafted", "synth-1"),
        serde_json::json!({"class": "paraphrased"})
    );
    // Each tier's checks are over its own slices: `class=...` for the drafted tier only.
    let junit =
        |tier: &str| std::fs::read_to_string(dir.join(format!("out-{tier}/junit.xml"))).unwrap();
    assert!(junit("drafted").contains("class=paraphrased"));
    assert!(!junit("drafted").contains("length="));
    assert!(junit("regression").contains("length=short"));
    assert!(!junit("trec").contains("faithfulness"));
}

#[test]
fn without_their_own_lists_the_same_tiers_fail_validate_at_the_top_level_lists() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    let drafted_without = CONFIG.replace("    slices: [class]\n", "");
    Ragate::new(["validate"])
        .file("eval-config.yaml", &drafted_without)
        .status(2)
        .stderr_has("error: tier `drafted`: eval-config.yaml:3:10: slices[0]: no query of qrels/drafted.jsonl has a `length` field")
        .run_in(dir);
    // The TREC tier under the top-level metrics and rules: no slice fields, no answers.
    let trec_without = CONFIG
        .replace("    metrics: [recall@10, ndcg@10]\n    slices: []\n", "")
        .replace(
            "    gate: { rules: [ { metric: ndcg@10, max_drop: 0.05 }, { metric: recall@10, max_drop: 0.05 } ] }\n",
            "",
        );
    Ragate::new(["validate"])
        .file("eval-config.yaml", &trec_without)
        .status(2)
        .stderr_has("error: tier `trec`: eval-config.yaml:3:10: slices[0]: no query of qrels/trec.txt has a `length` field")
        .run_in(dir);
    // Its own metrics under the top-level rules: the rules name what it does not compute.
    let rules_without = CONFIG.replace(
        "    gate: { rules: [ { metric: ndcg@10, max_drop: 0.05 }, { metric: recall@10, max_drop: 0.05 } ] }\n",
        "",
    );
    Ragate::new(["validate"])
        .file("eval-config.yaml", &rules_without)
        .status(2)
        .stderr_has("eval-config.yaml:19:17: gate.rules[0].metric: `recall@5` is not computed: expected one of the tier's own metrics list `tiers.trec.metrics` (recall@10, ndcg@10)")
        .stderr_has("`tiers.trec.gate.rules`")
        .run_in(dir);
}

#[test]
fn synth_gives_every_draft_the_slice_fields_of_its_slice_options() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let script = fixture("judges/draft_generator.py");
    let config = format!(
        "version: 1
corpus: corpus.jsonl
metrics: [recall@5]
slices: [length, form]
judges:
  gen: {{ kind: command, command: [python3, \"{}\", ok] }}
cache: {{ path: cache/judge.sqlite }}
tiers:
  smoke: {{ qrels: qrels/smoke.jsonl, baseline: baseline.json }}
gate: {{ rules: [ {{ metric: recall@5, max_drop: 0.1 }} ] }}
",
        path_str(&script)
    );
    let synth = |slices: &[&str]| {
        let mut args = vec![
            "synth",
            "--generator",
            "gen",
            "--out",
            "drafts",
            "--count",
            "4",
        ];
        for slice in slices {
            args.extend(["--slice", slice]);
        }
        Ragate::new(args)
            .file("eval-config.yaml", &config)
            .file("corpus.jsonl", crate::synth::CORPUS)
    };
    for (bad, says) in [
        ("class=x", "synth sets `class`"),
        ("qid=x", "`qid` is a field of the qrels format"),
        ("all=x", "`all` is the slice of every query"),
        ("length", "expected FIELD=VALUE"),
        ("length=", "expected FIELD=VALUE"),
    ] {
        synth(&[bad]).status(2).stderr_has(says).run_in(dir);
    }
    synth(&["length=short", "length=long"])
        .status(2)
        .stderr_has("`length` is given twice")
        .run_in(dir);
    assert!(!dir.join("drafts/draft.jsonl").exists(), "nothing drafted");
    synth(&["length=short", "form=question"])
        .status(0)
        .run_in(dir);
    let drafted = std::fs::read_to_string(dir.join("drafts/draft.jsonl")).unwrap();
    assert!(drafted.lines().count() >= 1, "{drafted}");
    for line in drafted.lines() {
        let draft: Value = serde_json::from_str(line).unwrap();
        assert_eq!(draft["length"], "short", "{draft}");
        assert_eq!(draft["form"], "question", "{draft}");
        assert!(draft["class"].is_string(), "{draft}");
    }
}
