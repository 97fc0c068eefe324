//! Tests of config parsing and validation: the documented example and a table of bad configs.
//! Over 600 lines: one table-driven test file for the whole config format, read top to bottom.

use std::time::Duration;

use super::*;
use crate::judge::command::CommandSpec;
use crate::judge::lexical::LexicalSpec;
use crate::judge::openai::OpenAiSpec;
use crate::settings::yaml;

const VALID: &str = r##"
version: 1
corpus: qrels/corpus.jsonl
chunk_separator: "#"
metrics: [precision@5, recall@5, recall@10, mrr, ndcg@10]
slices: [class]
tiers:
  smoke:      { qrels: qrels/smoke.jsonl, baseline: baselines/smoke.json, gate: { decision: point } }
  regression: { qrels: qrels/regression.jsonl, baseline: baselines/regression.json }
  nightly:    { from: qrels/deep.jsonl, sample: 500, stratify: class, seed: 7, baseline: baselines/nightly.json,
                gate: { rules: [ { metric: mrr, max_drop: 0.1 } ] } }
gate:
  decision: significant
  alpha: 0.05
  correction: holm
  min_queries: 5
  resamples: 10000
  seed: 42
  rules:
    - { metric: recall@5, max_drop: 0.02 }
    - { metric: ndcg@10, max_drop_pct: 5 }
    - { metric: recall@5, slice: class=paraphrased, max_drop: 0.05, min: 0.6 }
"##;

fn load_str(text: &str) -> Result<Config> {
    let path = Path::new("conf/eval-config.yaml");
    let raw = parse(path, text)?;
    validate(path, raw, &yaml::from_str(text).unwrap())
}

#[test]
fn the_hash_is_taken_before_expansion() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("eval-config.yaml");
    let text = VALID.replace(
        "chunk_separator: \"#\"",
        "chunk_separator: \"${RAGATE_TEST_SEPARATOR:-#}\"",
    );
    assert_ne!(text, VALID);
    std::fs::write(&path, &text).unwrap();
    let expanded = load(&path).unwrap();
    assert_eq!(
        expanded.chunk_separator.as_deref(),
        Some("#"),
        "the default applies"
    );
    std::fs::write(&path, VALID).unwrap();
    let plain = load(&path).unwrap();
    assert_ne!(
        expanded.tiers["smoke"].config_hash, plain.tiers["smoke"].config_hash,
        "the hash covers the text as written, so `${{...}}` and its value differ"
    );
}

#[test]
fn the_documented_example_is_valid() {
    let config = load_str(VALID).unwrap();
    assert_eq!(
        config.corpus,
        Some(PathBuf::from("conf/qrels/corpus.jsonl"))
    );
    let smoke = &config.tiers["smoke"];
    assert_eq!(smoke.gate.decision, Decision::Point);
    assert_eq!(smoke.gate.alpha, 0.05);
    assert_eq!(smoke.gate.rules.len(), 3);
    assert_eq!(
        smoke.source,
        TierSource::Qrels(PathBuf::from("conf/qrels/smoke.jsonl"))
    );
    let paraphrased = &smoke.gate.rules[2];
    assert_eq!(
        paraphrased.slice.as_ref().unwrap().to_string(),
        "class=paraphrased"
    );
    assert_eq!(paraphrased.limits.min, Some(0.6));
    let nightly = &config.tiers["nightly"];
    assert_eq!(
        nightly.gate.rules.len(),
        1,
        "a tier's rules replace the top-level list"
    );
    assert_eq!(nightly.gate.decision, Decision::Significant);
    assert_eq!(
        nightly.source,
        TierSource::Sample {
            from: PathBuf::from("conf/qrels/deep.jsonl"),
            size: 500,
            stratify: Some("class".into()),
            seed: 7
        }
    );
    assert_ne!(nightly.config_hash, smoke.config_hash);
    assert_eq!(smoke.config_hash, config.tiers["regression"].config_hash);
    assert_eq!(smoke.config_hash.len(), 64);
}

#[test]
fn bad_configs_name_the_key_path() {
    let replace = |from: &str, to: &str| {
        assert!(VALID.contains(from), "{from}");
        VALID.replacen(from, to, 1)
    };
    let cases = [
        (
            replace("  alpha: 0.05", "  alpah: 0.05"),
            "conf/eval-config.yaml:14:3: gate.alpah: unknown field `alpah`, expected one of `decision`, `alpha`, `alpha_scope`, `correction`, `slice_correction`, `inconclusive`, `min_queries`, `min_share`, `resamples`, `seed`, `rules`, `drift`, `budget` (did you mean `alpha`?)",
        ),
        (
            replace("decision: significant", "decision: signficant"),
            "gate.decision: unknown variant `signficant`, expected `significant` or `point` (did you mean `significant`?)",
        ),
        (
            replace("alpha: 0.05", "alpha: 1.5"),
            "conf/eval-config.yaml: tiers.nightly.gate.alpha: 1.5 is outside (0, 1)",
        ),
        (
            replace("version: 1", "version: 2"),
            "conf/eval-config.yaml: version: unsupported version 2: expected 1",
        ),
        (
            replace("metrics: [precision@5,", "metrics: [precison@5,"),
            "metrics[0]: unknown metric `precison@5`",
        ),
        (
            replace(
                "{ metric: ndcg@10, max_drop_pct: 5 }",
                "{ metric: ndcg@20, max_drop_pct: 5 }",
            ),
            "conf/eval-config.yaml: gate.rules[1].metric: `ndcg@20` is not computed",
        ),
        (
            replace("slice: class=paraphrased", "slice: klass=paraphrased"),
            "gate.rules[2].slice: `klass` is not a slice field: expected one of the slices list (class) (did you mean `class`?)",
        ),
        (
            replace("slice: class=paraphrased", "slice: paraphrased"),
            "gate.rules[2].slice: `paraphrased`: expected `field=value`",
        ),
        (
            replace(
                "{ metric: ndcg@10, max_drop_pct: 5 }",
                "{ metric: recall@5, max_drop_pct: 5 }",
            ),
            "gate.rules[1]: a second rule for recall@5 on all slices: expected one rule per metric and slice",
        ),
        (
            replace(
                "{ metric: ndcg@10, max_drop_pct: 5 }",
                "{ metric: ndcg@10, max_increase: 5 }",
            ),
            "gate.rules[1].max_increase: ndcg@10 is higher-is-better: expected max_drop, max_drop_pct, min",
        ),
        (
            replace(
                "{ metric: ndcg@10, max_drop_pct: 5 }",
                "{ metric: ndcg@10 }",
            ),
            "gate.rules[1]: no limit: expected at least one of max_drop, max_drop_pct, min",
        ),
        (
            replace(
                "{ metric: mrr, max_drop: 0.1 }",
                "{ metric: mrr, max_drop: -0.1 }",
            ),
            "tiers.nightly.gate.rules[0].max_drop: -0.1: expected a finite non-negative number",
        ),
        (
            replace("qrels: qrels/smoke.jsonl,", ""),
            "tiers.smoke: no queries: expected `qrels: FILE` or `from: FILE` with `sample: N`",
        ),
        (
            replace("sample: 500, ", ""),
            "tiers.nightly.sample: a tier with `from:` needs `sample: N`",
        ),
        (
            replace(
                "{ metric: ndcg@10, max_drop_pct: 5 }",
                "{ metric: faithfulness_ppi, min: 0.5 }",
            ),
            "gate.rules[1].metric: `faithfulness_ppi` needs `faithfulness` in the metrics list",
        ),
        (
            replace(
                "metrics: [precision@5,",
                "metrics: [faithfulness_ppi, precision@5,",
            ),
            "metrics[0]: `faithfulness_ppi` is a tier-level estimate for rules, not a per-query metric",
        ),
        (
            replace(
                "slices: [class]",
                "slices: [class]\ndiagnosis: { low: 1.5 }",
            ),
            "conf/eval-config.yaml: diagnosis.low: 1.5 is outside [0, 1]",
        ),
        (
            replace(
                "slices: [class]",
                "slices: [class]\npipeline: { command: [python3, p.py], run_file: r.jsonl }",
            ),
            "conf/eval-config.yaml: pipeline: expected exactly one of `run_file",
        ),
        (
            replace(
                "slices: [class]",
                "slices: [class]\npipeline: { command: [] }",
            ),
            "pipeline.command: expected a non-empty argv list",
        ),
        (
            replace(
                "slices: [class]",
                "slices: [class]\npipeline: { http: { url: \"localhost:8000\" } }",
            ),
            "pipeline.http.url: `localhost:8000`: expected an http:// or https:// URL",
        ),
        (
            replace(
                "slices: [class]",
                "slices: [class]\npipeline: { command: [p], timeout_s: 0 }",
            ),
            "pipeline.timeout_s: 0: expected a positive number of seconds",
        ),
        (
            replace(
                "slices: [class]",
                "slices: [class]\npipeline: { http: { url: \"http://h\" }, timeout_s: 5 }",
            ),
            "pipeline.timeout_s: applies to `command` only",
        ),
        (
            replace("slices: [class]", "slices: [class, class]"),
            "slices[1]: `class` is listed twice",
        ),
        (
            replace("min_queries: 5", "min_queries: 4"),
            "tiers.nightly.gate.min_queries: 4 with alpha 0.05: a check of 4 queries can never reach p <= 0.05 (its smallest p is 2^-4 = 0.0625): expected at least 5, or `decision: point`",
        ),
        (
            replace(
                "correction: holm",
                "correction: holm\n  slice_correction: fdr",
            ),
            "gate.slice_correction: unknown variant `fdr`, expected one of `holm`, `bh`, `none`",
        ),
        (
            replace("correction: holm", "correction: holm\n  inconclusive: warn"),
            "gate.inconclusive: unknown variant `warn`, expected `pass` or `fail`",
        ),
        (
            replace(
                "correction: holm",
                "correction: holm\n  alpha_scope: global",
            ),
            "conf/eval-config.yaml:16:16: gate.alpha_scope: unknown variant `global`, expected `family` or `run`",
        ),
        // Time limits beyond a day overflowed Duration or Instant arithmetic (a panic).
        (
            replace(
                "slices: [class]",
                "slices: [class]\npipeline: { command: [p], timeout_s: 1e20 }",
            ),
            "pipeline.timeout_s: 100000000000000000000: expected a positive number of seconds, at most 86400 (one day)",
        ),
        (
            replace(
                "slices: [class]",
                "slices: [class]\npipeline: { http: { url: \"http://h\", timeout_s: 86400.5 } }",
            ),
            "pipeline.http.timeout_s: 86400.5: expected a positive number of seconds, at most 86400",
        ),
        (
            replace(
                "slices: [class]",
                "slices: [class]\njudges: { j: { kind: command, command: [j], timeout_s: 18446744073709551615 } }",
            ),
            "judges.j.timeout_s: 18446744073709552000: expected a positive number of seconds, at most 86400",
        ),
        (
            replace(
                "slices: [class]",
                "slices: [class]\njudges: { j: { kind: openai, base_url: \"http://h\", model: m, timeout_s: 86401 } }",
            ),
            "judges.j.timeout_s: 86401: expected a positive number of seconds, at most 86400",
        ),
        (
            replace(
                "slices: [class]",
                "slices: [class]\nembeddings: { base_url: \"http://h\", model: m, timeout_s: 0 }",
            ),
            "embeddings.timeout_s: 0: expected a positive number of seconds",
        ),
        (
            replace("min: 0.6 }", "min: 1.5 }"),
            "conf/eval-config.yaml: gate.rules[2].min: 1.5 is outside the values of recall@5: expected a number in [0, 1]",
        ),
        (
            replace("min: 0.6 }", "min: -0.1 }"),
            "gate.rules[2].min: -0.1 is outside the values of recall@5: expected a number in [0, 1]",
        ),
        (
            replace(
                "metrics: [precision@5,",
                "metrics: [latency_ms, precision@5,",
            )
            .replace(
                "{ metric: ndcg@10, max_drop_pct: 5 }",
                "{ metric: latency_ms, max: -1 }",
            ),
            "gate.rules[1].max: -1 is outside the values of latency_ms: expected a number in [0, ∞)",
        ),
        (
            replace(
                "metrics: [precision@5,",
                "metrics: [faithfulness, precision@5,",
            )
            .replace(
                "{ metric: ndcg@10, max_drop_pct: 5 }",
                "{ metric: faithfulness_ppi, min: 2 }",
            ),
            "gate.rules[1].min: 2 is outside the values of faithfulness: expected a number in [0, 1]",
        ),
        (
            replace("  smoke:      {", "  \"../../x\":  {"),
            "conf/eval-config.yaml: tiers: tier name `../../x`: expected letters, digits, `-`, `_` and `.` only",
        ),
        (
            replace("  smoke:      {", "  \"..\":  {"),
            "tiers: tier name `..`: expected letters",
        ),
        (
            replace("  smoke:      {", "  \"a/b\":  {"),
            "tiers: tier name `a/b`: expected letters",
        ),
        (
            replace(
                "slices: [class]",
                "slices: [class]\npipeline: { run_file: \"runs/{tierr}.jsonl\" }",
            ),
            "pipeline.run_file: `runs/{tierr}.jsonl` has `{tierr}`, which is not a placeholder: expected `{tier}` (the tier's name), the only one (did you mean `{tier}`?)",
        ),
        (
            replace(
                "slices: [class]",
                "slices: [class]\npipeline: { run_file: \"runs/{tier}}.jsonl\" }",
            ),
            "pipeline.run_file: `runs/{tier}}.jsonl` has `}`, which is not a placeholder",
        ),
    ];
    for (text, expected) in cases {
        let message = load_str(&text).unwrap_err().to_string();
        assert!(
            message.contains(expected),
            "expected `{expected}` in `{message}`"
        );
    }
}

#[test]
fn decision_settings_default_and_override_per_tier() {
    let config = load_str(VALID).unwrap();
    let regression = &config.tiers["regression"].gate;
    assert_eq!(regression.slice_correction, SliceCorrection::Holm);
    assert_eq!(regression.inconclusive, InconclusivePolicy::Pass);
    assert_eq!(
        regression.notices,
        [
            "`resamples` in a gate block no longer has any effect: p-values are exact (fewer than 30 paired queries) or analytic, so no verdict depends on resampling; remove the key"
        ]
    );
    let strict = load_str(&VALID.replace(
        "  regression: { qrels: qrels/regression.jsonl, baseline: baselines/regression.json }",
        "  regression: { qrels: qrels/regression.jsonl, baseline: baselines/regression.json, gate: { inconclusive: fail, slice_correction: bh } }",
    ))
    .unwrap();
    let regression = &strict.tiers["regression"].gate;
    assert_eq!(regression.inconclusive, InconclusivePolicy::Fail);
    assert_eq!(regression.slice_correction, SliceCorrection::Bh);
    assert_eq!(
        config.tiers["regression"].gate.alpha_scope,
        crate::config::AlphaScope::Family
    );
    let run_scope = load_str(&VALID.replace(
        "  regression: { qrels: qrels/regression.jsonl, baseline: baselines/regression.json }",
        "  regression: { qrels: qrels/regression.jsonl, baseline: baselines/regression.json, gate: { alpha_scope: run } }",
    ))
    .unwrap();
    assert_eq!(
        run_scope.tiers["regression"].gate.alpha_scope,
        crate::config::AlphaScope::Run
    );
    assert_eq!(
        run_scope.tiers["smoke"].gate.alpha_scope,
        crate::config::AlphaScope::Family
    );
    assert_eq!(
        strict.tiers["smoke"].gate.inconclusive,
        InconclusivePolicy::Pass
    );
    // A point decision may look at fewer queries than a test could.
    let point = load_str(&VALID.replace(
        "smoke:      { qrels: qrels/smoke.jsonl, baseline: baselines/smoke.json, gate: { decision: point } }",
        "smoke:      { qrels: qrels/smoke.jsonl, baseline: baselines/smoke.json, gate: { decision: point, min_queries: 2 } }",
    ))
    .unwrap();
    assert_eq!(point.tiers["smoke"].gate.min_queries, 2);
    assert_eq!(rules::smallest_workable_size(0.05), 5);
    assert_eq!(rules::smallest_workable_size(0.01), 7);
}

#[test]
fn tier_names_with_dots_dashes_and_underscores_are_accepted() {
    let text = VALID.replacen("  smoke:      {", "  smoke-v1.2_a: {", 1);
    assert!(load_str(&text).unwrap().tiers.contains_key("smoke-v1.2_a"));
}

#[test]
fn the_run_file_is_resolved_per_tier() {
    let config = load_str(&VALID.replace(
        "slices: [class]",
        "slices: [class]\npipeline: { run_file: \"runs/{tier}.jsonl\" }",
    ))
    .unwrap();
    assert_eq!(
        config.run_file("smoke"),
        Some(PathBuf::from("conf/runs/smoke.jsonl"))
    );
    assert_eq!(load_str(VALID).unwrap().run_file("smoke"), None);
}

#[test]
fn pipeline_adapters_take_their_defaults() {
    use crate::pipeline::{CommandPipeline, HttpPipeline, Pipeline};
    use std::time::Duration;
    let with = |pipeline: &str| {
        load_str(&VALID.replace(
            "slices: [class]",
            &format!("slices: [class]\npipeline: {pipeline}"),
        ))
        .unwrap()
        .pipeline
    };
    assert_eq!(
        with("{ command: [python3, rag.py, --fast] }"),
        Some(Pipeline::Command(CommandPipeline {
            argv: vec!["python3".into(), "rag.py".into(), "--fast".into()],
            shown: "python3 rag.py --fast".into(),
            timeout: Duration::from_secs(600),
        }))
    );
    assert_eq!(
        with("{ http: { url: \"http://127.0.0.1:8000/q\", concurrency: 4, timeout_s: 2.5 } }"),
        Some(Pipeline::Http(HttpPipeline {
            url: "http://127.0.0.1:8000/q".into(),
            shown_url: "http://127.0.0.1:8000/q".into(),
            concurrency: 4,
            timeout: Duration::from_millis(2500),
            max_retries: 3,
        }))
    );
}

#[test]
fn an_operational_metric_named_by_a_rule_is_computed() {
    let config = load_str(&VALID.replace(
        "  rules:\n",
        "  rules:\n    - { metric: latency_ms, max_increase_pct: 20 }\n",
    ))
    .unwrap();
    let names: Vec<String> = config.tiers["smoke"]
        .metrics
        .iter()
        .map(|s| s.metric.to_string())
        .collect();
    assert_eq!(names.last().map(String::as_str), Some("latency_ms"));
}

#[test]
fn unknown_tier_suggests_the_closest() {
    let config = load_str(VALID).unwrap();
    let message = config.tier("smok").unwrap_err().to_string();
    assert_eq!(
        message,
        "conf/eval-config.yaml: no tier `smok`: expected one of nightly, regression, smoke (did you mean `smoke`?)"
    );
}

/// VALID with `judges` (block style, `judges:` on line 7) inserted after `slices`.
fn with_judges(judges: &str) -> String {
    VALID.replacen(
        "slices: [class]\n",
        &format!("slices: [class]\njudges:\n{judges}"),
        1,
    )
}

#[test]
fn a_key_of_another_judge_kind_is_named_with_its_line_column_and_the_accepted_keys() {
    let cases = [
        (
            "  j:\n    kind: lexical\n    base_url: http://h\n",
            "conf/eval-config.yaml:10:5: judges.j.base_url: unknown field `base_url`, expected one of `kind`, `threshold`, `stem`, `version` (the keys of a `lexical` judge)",
        ),
        (
            // The wrong key before `kind`: the same error, at the key.
            "  j:\n    base_url: http://h\n    kind: lexical\n",
            "conf/eval-config.yaml:9:5: judges.j.base_url: unknown field `base_url`, expected one of `kind`, `threshold`, `stem`, `version` (the keys of a `lexical` judge)",
        ),
        (
            "  a: { kind: command, command: [j] }\n  b: { kind: openai, base_url: \"http://h\", model: m, stem: true }\n",
            "conf/eval-config.yaml:9:54: judges.b.stem: unknown field `stem`, expected one of `kind`, `base_url`, `model`, `api_key_env`, `concurrency`, `timeout_s`, `max_retries`, `max_calls`, `price_per_1k_tokens`, `latency_s` (the keys of an `openai` judge)",
        ),
        (
            "  j: { kind: command, command: [j], treshold: 0.5 }\n",
            "conf/eval-config.yaml:8:37: judges.j.treshold: unknown field `treshold`, expected one of `kind`, `command`, `timeout_s` (the keys of a `command` judge)",
        ),
        (
            "  j:\n    kind: lexical\n    threshold: yes\n",
            "conf/eval-config.yaml:10:16: judges.j.threshold: invalid type: string \"yes\", expected f64",
        ),
        (
            "  j:\n    kind: lexicl\n",
            "conf/eval-config.yaml:9:11: judges.j.kind: unknown variant `lexicl`, expected one of `lexical`, `openai`, `command`, `nli` (did you mean `lexical`?)",
        ),
        (
            "  j:\n    threshold: 0.5\n",
            "conf/eval-config.yaml:9:5: judges.j: missing field `kind`",
        ),
        (
            // Not a YAML document (a key twice): the document's error, not the judge's.
            "  j: { kind: lexical }\n  j: { kind: openai }\n",
            "conf/eval-config.yaml:8:3: judges: duplicate entry with key \"j\": expected a valid YAML document",
        ),
    ];
    for (judges, expected) in cases {
        let text = with_judges(judges);
        let message = parse(Path::new("conf/eval-config.yaml"), &text)
            .map(|_| "parsed".to_string())
            .unwrap_or_else(|e| e.to_string());
        assert_eq!(message, expected, "in\n{judges}");
    }
}

#[test]
fn judges_of_every_kind_are_read_whatever_the_key_order() {
    let config = load_str(&with_judges(
        "  lex: { stem: false, kind: lexical, threshold: 0.5 }\n  \
         old: { kind: lexical, version: 1 }\n  \
         cmd: { command: [judge, --strict], timeout_s: 7, kind: command }\n  \
         llm: { model: m, kind: openai, base_url: \"http://h/v1\", max_calls: 9 }\n",
    ))
    .unwrap();
    let names: Vec<&str> = config.judges.keys().map(String::as_str).collect();
    assert_eq!(names, ["cmd", "default", "lex", "llm", "old"]);
    assert_eq!(
        config.judges["lex"],
        JudgeSpec::new(LexicalSpec {
            threshold: 0.5,
            stem: false,
            version: 2,
        })
    );
    assert_eq!(
        config.judges["old"],
        JudgeSpec::new(LexicalSpec {
            threshold: 0.4,
            stem: true,
            version: 1,
        })
    );
    assert_eq!(
        config.judges["cmd"],
        JudgeSpec::new(CommandSpec {
            command: vec!["judge".into(), "--strict".into()],
            written_command: None,
            timeout: Duration::from_secs(7),
        })
    );
    let mut llm = OpenAiSpec::new("http://h/v1", "m");
    llm.max_calls = 9;
    assert_eq!(config.judges["llm"], JudgeSpec::new(llm));
    assert_eq!(
        config.judges["default"],
        JudgeSpec::new(LexicalSpec::default())
    );
}

#[test]
fn drift_policy_and_history_dir_are_read_and_checked() {
    let config = load_str(VALID).unwrap();
    assert_eq!(
        config.tiers["regression"].drift,
        DriftPolicy::Warn,
        "the default"
    );
    assert_eq!(config.history_dir, None);
    let text = VALID
        .replace(
            "  decision: significant\n",
            "  decision: significant\n  drift: fail\n",
        )
        .replace(
            "gate: { decision: point }",
            "gate: { decision: point, drift: warn }",
        )
        + "history: { dir: ../hist }\n";
    let config = load_str(&text).unwrap();
    assert_eq!(config.tiers["regression"].drift, DriftPolicy::Fail);
    assert_eq!(
        config.tiers["smoke"].drift,
        DriftPolicy::Warn,
        "a tier's gate block overrides"
    );
    assert_eq!(config.history_dir, Some(PathBuf::from("conf/../hist")));
    // The drift policy is not part of the config hash: changing it does not break the series.
    assert_eq!(
        config.tiers["regression"].config_hash,
        load_str(VALID).unwrap().tiers["regression"].config_hash
    );
    for (bad, expected) in [
        (
            VALID.replace(
                "  decision: significant\n",
                "  decision: significant\n  drift: maybe\n",
            ),
            "gate.drift: unknown variant `maybe`, expected `warn` or `fail`",
        ),
        (
            format!("{VALID}history: {{ dir: \"\" }}\n"),
            "history.dir: empty: expected a directory",
        ),
        (
            format!("{VALID}history: {{ folder: h }}\n"),
            "unknown field `folder`",
        ),
    ] {
        let message = load_str(&bad).unwrap_err().to_string();
        assert!(
            message.contains(expected),
            "expected `{expected}` in `{message}`"
        );
    }
}

#[test]
fn ir_measures_and_trec_eval_names_are_read_as_ragate_s_and_noted_once() {
    let text = VALID
        .replace(
            "metrics: [precision@5, recall@5, recall@10, mrr, ndcg@10]",
            "metrics: [P@5, recall_5, recall@10, RR, nDCG@10, ndcg@10]",
        )
        .replace(
            "{ metric: ndcg@10, max_drop_pct: 5 }",
            "{ metric: ndcg_cut.10, max_drop_pct: 5 }",
        )
        .replace(
            "{ metric: mrr, max_drop: 0.1 }",
            "{ metric: RR, max_drop: 0.1 }",
        );
    let config = load_str(&text).unwrap();
    let names: Vec<String> = config.tiers["smoke"]
        .metrics
        .iter()
        .map(|s| s.metric.to_string())
        .collect();
    assert_eq!(
        names,
        [
            "precision@5",
            "recall@5",
            "recall@10",
            "mrr",
            "ndcg_linear@10",
            "ndcg@10"
        ]
    );
    let gated: Vec<String> = config.tiers["regression"]
        .gate
        .rules
        .iter()
        .map(|rule| rule.metric.to_string())
        .collect();
    assert!(gated.contains(&"ndcg_linear@10".to_string()), "{gated:?}");
    let raw = parse(Path::new("eval-config.yaml"), &text).unwrap();
    assert_eq!(
        metrics::alias_notes(&raw),
        [
            "P@5 is read as precision@5 (ir_measures' name, the same definition)",
            "recall_5 is read as recall@5 (trec_eval's name, the same definition)",
            "RR is read as mrr (ir_measures' name, the same definition)",
            "nDCG@10 is read as ndcg_linear@10 (gain g, as ir_measures and trec_eval)",
            "ndcg_cut.10 is read as ndcg_linear@10 (gain g, as ir_measures and trec_eval)",
        ]
    );
    // A rule must name a computed metric, also through an alias.
    let uncomputed = VALID.replace(
        "{ metric: ndcg@10, max_drop_pct: 5 }",
        "{ metric: nDCG@10, max_drop_pct: 5 }",
    );
    let message = load_str(&uncomputed).unwrap_err().to_string();
    assert!(
        message.contains("`ndcg_linear@10` is not computed"),
        "{message}"
    );
}

#[test]
fn a_scalar_where_a_mapping_is_expected_says_what_to_write_not_a_type_name() {
    let cases = [
        (
            with_judges(
                "  j: { kind: openai, base_url: \"http://h\", model: m, price_per_1k_tokens: 0.01 }\n",
            ),
            "expected a mapping `{ input: PRICE, output: PRICE }` (per 1,000 prompt and completion tokens)",
        ),
        (
            VALID.replace("gate:\n  decision", "pipeline: 3\ngate:\n  decision"),
            "expected a mapping with one of `run_file`, `command` or `http`",
        ),
        (
            VALID.replace(
                "    - { metric: ndcg@10, max_drop_pct: 5 }",
                "    - ndcg@10",
            ),
            "expected a rule mapping such as `{ metric: recall@5, max_drop: 0.02 }`",
        ),
    ];
    for (text, expected) in cases {
        let message = load_str(&text).unwrap_err().to_string();
        assert!(message.contains(expected), "{message}");
        assert!(!message.contains("Raw"), "{message}");
    }
}

#[test]
fn a_quoted_variable_in_a_flow_mapping_reads_as_the_number_it_expands_to() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("eval-config.yaml");
    let text = VALID.replace(
        "{ metric: recall@5, max_drop: 0.02 }",
        "{ metric: recall@5, max_drop: \"${RAGATE_TEST_UNSET_MAXDROP:-0.03}\" }",
    );
    assert_ne!(text, VALID);
    std::fs::write(&path, &text).unwrap();
    let config = load(&path).unwrap();
    let rule = &config.tiers["smoke"].gate.rules[0];
    assert_eq!(rule.limits.max_drop, Some(0.03));
}
