//! `ragate judge-eval`: judges measured against hand-labelled items (tests/fixtures/judge_eval).

use crate::{fixture, path_str, ragate, ragate_in};

fn items() -> String {
    path_str(&fixture("judge_eval/items.jsonl")).to_string()
}

fn json_of(args: &[&str]) -> serde_json::Value {
    let out = ragate(args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_str(&out.stdout).expect("one JSON document")
}

#[test]
fn lexical_2_sees_what_lexical_1_misses_on_labelled_items() {
    let items = items();
    let document = json_of(&[
        "judge-eval",
        "--items",
        &items,
        "--judge",
        "lexical-1,lexical-2",
        "--format",
        "json",
    ]);
    assert_eq!(document["format"], "ragate-judge-eval/1");
    let schema = crate::json_schema::Schema::published("judge-eval.schema.json");
    assert_eq!(schema.errors(&document), Vec::<String>::new());
    assert_eq!(
        (document["items"].as_u64(), document["supported"].as_u64()),
        (Some(6), Some(2))
    );
    let [first, second] = document["judges"].as_array().unwrap().as_slice() else {
        panic!("two judges: {document}");
    };
    // lexical-1 cannot see a changed number or an inserted `not` when the claim's other words
    // are in the context (in a claim, or in one claim of an answer).
    assert_eq!(first["name"], "lexical-1");
    let misjudged: Vec<&str> = first["misjudged"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(misjudged, ["number", "negated", "answer-bad"]);
    let confusion = &first["scores"]["confusion"];
    assert_eq!(
        [
            &confusion["true_positive"],
            &confusion["false_negative"],
            &confusion["false_positive"],
            &confusion["true_negative"]
        ],
        [2, 0, 3, 1]
    );
    assert_eq!(first["scores"]["balanced_accuracy"]["value"], 0.625);
    // lexical-2 gets every item right, and names why each unsupported one is.
    assert_eq!(second["name"], "lexical-2");
    assert!(second["judge"].as_str().unwrap().starts_with("lexical-2 "));
    assert_eq!(second["misjudged"], serde_json::json!([]));
    assert_eq!(second["scores"]["balanced_accuracy"]["value"], 1.0);
    assert_eq!(second["scores"]["tnr"]["value"], 1.0);
    // Wilson's interval of 4/4 does not reach 1 at its lower end.
    assert!(second["scores"]["tnr"]["low"].as_f64().unwrap() < 0.6);
    let classes = &second["classes"];
    assert_eq!(classes["number_changed"]["n"], 2);
    assert_eq!(classes["verbatim"]["tpr"]["value"], 1.0);
}

#[test]
fn the_report_names_the_judge_and_a_floor_fails_a_weak_judge() {
    let items = items();
    let out = ragate(&["judge-eval", "--items", &items, "--judge", "lexical-1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("judge `lexical-1` (lexical-1 threshold=0.4")
            && out.stdout.contains("misjudged: 3 of 6 items")
            && out.stdout.contains(
                "- number (line 2, labelled unsupported): \"Buckets hold objects in 3 regions.\""
            ),
        "{}",
        out.stdout
    );
    let floor = ["--min-balanced-accuracy", "0.9"];
    let weak = ragate(
        &[
            &["judge-eval", "--items", &items, "--judge", "lexical-1"][..],
            &floor,
        ]
        .concat(),
    );
    assert_eq!(weak.code, 1, "{}", weak.stdout);
    assert!(
        weak.stdout
            .contains("FAIL: balanced accuracy below --min-balanced-accuracy 0.9")
    );
    let strong = ragate(
        &[
            &["judge-eval", "--items", &items, "--judge", "lexical-2"][..],
            &floor,
        ]
        .concat(),
    );
    assert_eq!(strong.code, 0, "{}", strong.stdout);
    assert!(
        strong
            .stdout
            .contains("PASS: balanced accuracy at or above")
    );
}

#[test]
fn a_configured_judge_is_measured_through_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let judge = fixture("judges/keyword_judge.py");
    std::fs::write(
        dir.path().join("eval-config.yaml"),
        format!(
            "version: 1\nmetrics: [faithfulness]\njudges:\n  ext: {{ kind: command, command: [python3, {}] }}\ntiers:\n  smoke: {{ qrels: q.jsonl, baseline: b.json }}\ngate:\n  rules: [{{ metric: faithfulness, max_drop: 0.1 }}]\n",
            path_str(&judge)
        ),
    )
    .unwrap();
    let items = items();
    let args = [
        "judge-eval",
        "--items",
        &items,
        "--judge",
        "ext,default",
        "--format",
        "json",
    ];
    let first = ragate_in(dir.path(), &args);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(
        first
            .stderr
            .contains("judge `ext`: asking about 8 of 8 tasks"),
        "{}",
        first.stderr
    );
    assert!(dir.path().join(".ragate/judge-cache.sqlite").is_file());
    let again = ragate_in(dir.path(), &args);
    assert_eq!(
        again.stdout, first.stdout,
        "cached verdicts give the same document"
    );
    assert!(!again.stderr.contains("asking about"), "{}", again.stderr);
    let document: serde_json::Value = serde_json::from_str(&first.stdout).unwrap();
    assert_eq!(
        document["judges"][1]["judge"]
            .as_str()
            .unwrap()
            .split(' ')
            .next(),
        Some("lexical-2")
    );
}

#[test]
fn bad_items_and_unknown_judges_exit_2_naming_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("items.jsonl");
    std::fs::write(
        &path,
        "{\"claim\":\"a\",\"context\":\"a\",\"label\":\"supported\"}\n{\"claim\":\"a\",\"context\":\"a\",\"label\":\"maybe\"}\n",
    )
    .unwrap();
    let out = ragate(&["judge-eval", "--items", path_str(&path)]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("items.jsonl:2:")
            && out.stderr.contains("expected `supported` or `unsupported`"),
        "{}",
        out.stderr
    );
    let as_json = ragate(&["judge-eval", "--items", path_str(&path), "--format", "json"]);
    let document: serde_json::Value = serde_json::from_str(&as_json.stdout).unwrap();
    assert_eq!(
        (document["status"].as_str(), document["exit_code"].as_i64()),
        (Some("error"), Some(2))
    );
    let items = items();
    let unknown = ragate(&["judge-eval", "--items", &items, "--judge", "lexical-4"]);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.contains("no judge `lexical-4`") && unknown.stderr.contains("did you mean"),
        "{}",
        unknown.stderr
    );
    let range = ragate(&[
        "judge-eval",
        "--items",
        &items,
        "--min-balanced-accuracy",
        "1.5",
    ]);
    assert_eq!(range.code, 2);
}

#[test]
fn hostile_item_text_stays_inert() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("items.jsonl");
    std::fs::write(
        &path,
        "{\"claim\":\"Paris.\\n::error::pwned \\u001b]0;title\\u0007 [x](https://e.vil) Rome is 4.\",\"context\":\"Paris.\",\"label\":\"supported\"}\n",
    )
    .unwrap();
    let out = ragate(&[
        "judge-eval",
        "--items",
        path_str(&path),
        "--judge",
        "lexical-2",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("misjudged: 1 of 1 items"),
        "{}",
        out.stdout
    );
    assert!(
        !out.stdout.contains('\u{1b}') && !out.stdout.contains('\u{7}'),
        "{:?}",
        out.stdout
    );
    assert!(
        !out.stdout.lines().any(|l| l.trim_start().starts_with("::")),
        "{}",
        out.stdout
    );
}

#[test]
fn a_tiers_human_labels_measure_the_judge_on_the_runs_answers() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    crate::gate_flow::setup_answer_tier(dir);
    let args = [
        "judge-eval",
        "--tier",
        "smoke",
        "--run",
        "base.jsonl",
        "--judge",
        "default,lexical-1",
        "--format",
        "json",
    ];
    let out = ragate_in(dir, &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let document: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let schema = crate::json_schema::Schema::published("judge-eval.schema.json");
    assert_eq!(schema.errors(&document), Vec::<String>::new());
    // 10 current labels (one more is stale), the humans call 2 answers unfaithful; both judges
    // call every answer faithful (its words are all in the context).
    assert_eq!(
        (document["items"].as_u64(), document["supported"].as_u64()),
        (Some(10), Some(8))
    );
    assert!(
        document["source"].as_str().unwrap().contains(
            "faithfulness labels of tier `smoke`, answers of base.jsonl; labels left out: \
                 1 stale (the answer changed))"
        ),
        "{}",
        document["source"]
    );
    for judge in document["judges"].as_array().unwrap() {
        let confusion = &judge["scores"]["confusion"];
        assert_eq!(
            (&confusion["true_positive"], &confusion["false_positive"]),
            (&8.into(), &2.into()),
            "{judge}"
        );
        assert_eq!(judge["scores"]["balanced_accuracy"]["value"], 0.5);
        let misjudged: Vec<&str> = judge["misjudged"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap())
            .collect();
        assert_eq!(misjudged, ["q00", "q01"]);
    }
    // Another labels file, and the errors of a tier without one.
    std::fs::write(
        dir.join("other.jsonl"),
        "{\"qid\":\"q05\",\"answer\":\"an answer that is not the run's\",\"faithfulness\":1}\n",
    )
    .unwrap();
    let stale = ragate_in(
        dir,
        &[
            "judge-eval",
            "--tier",
            "smoke",
            "--run",
            "base.jsonl",
            "--labels",
            "other.jsonl",
        ],
    );
    assert_eq!(stale.code, 2);
    assert!(
        stale.stderr.contains("other.jsonl")
            && stale.stderr.contains("no current faithfulness label"),
        "{}",
        stale.stderr
    );
    let both = ragate_in(
        dir,
        &[
            "judge-eval",
            "--items",
            "x.jsonl",
            "--tier",
            "smoke",
            "--run",
            "base.jsonl",
        ],
    );
    assert_eq!(both.code, 2);
    assert!(
        both.stderr.contains("cannot be used with"),
        "{}",
        both.stderr
    );
}
