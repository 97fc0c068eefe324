//! Building the test set: `ragate holes` pools two runs' unjudged documents within the gated
//! depth and ranks them, `--judge` asks a `command` judge (a Python script) or an `openai` judge
//! (the loopback server of `openai_judge`) for graded proposals, through the cache, failing
//! closed on a malformed reply; `ragate qrels apply` shows the diff, writes reviewed proposals
//! into native and TREC qrels with their provenance, honours --only and --min-score, refuses in
//! CI and keeps human judgments; and judged@10 rises.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::openai_judge::{Server, Step};
use crate::{Outcome, accept_baseline, fixture, path_str, ragate_env, ragate_in};

const CORPUS: &str = r#"{"doc_id":"d1","title":"Backups","text":"Backups are stored in the Frankfurt region."}
{"doc_id":"d2","text":"The region of the invoice service."}
{"doc_id":"d3","title":"Storage","text":"Backups are stored in one region per tenant."}
{"doc_id":"d4","text":"Unrelated text about cats."}
{"doc_id":"d5","text":"Invoices are kept for ten years."}
{"doc_id":"d6","text":"Invoices are kept for a long time, ten years."}
{"doc_id":"d7","text":"Invoices are printed on paper."}
{"doc_id":"d8","text":"Nothing here."}
"#;

const NATIVE_QRELS: &str = r#"{"qid":"q1","query":"where are backups stored region","gold_doc_ids":["d1"],"class":"a"}
{"qid":"q2","query":"how long are invoices kept","gold_doc_ids":["d5"],"class":"b"}
"#;

/// Run A (native): q1 d1 d2 d3 d4, q2 d5 d6 d7.
const RUN_A: &str = r#"{"qid":"q1","retrieved":[{"doc_id":"d1"},{"doc_id":"d2"},{"doc_id":"d3"},{"doc_id":"d4"}]}
{"qid":"q2","retrieved":[{"doc_id":"d5"},{"doc_id":"d6"},{"doc_id":"d7"}]}
"#;

/// Run B (TREC): q1 d3 d1 d8, q2 d6 d5.
const RUN_B: &str =
    "q1 Q0 d3 1 9 b\nq1 Q0 d1 2 8 b\nq1 Q0 d8 3 7 b\nq2 Q0 d6 1 9 b\nq2 Q0 d5 2 8 b\n";

/// A tier gated on ndcg@3 (holes depth 3) with the grading judges `ext` (the Python script,
/// `mode` its fault) and, when `url` is given, `llm` (an openai judge).
fn setup(dir: &Path, qrels_file: &str, qrels: &str, mode: &str, url: Option<&str>) {
    let script = fixture("judges/grade_judge.py");
    let llm = url.map_or(String::new(), |url| {
        format!(
            "  llm: {{ kind: openai, base_url: \"{url}\", model: test-model, concurrency: 2, timeout_s: 5, max_retries: 1, max_calls: 100 }}\n"
        )
    });
    let config = format!(
        "version: 1
corpus: corpus.jsonl
metrics: [recall@10, ndcg@3]
judges:
  ext: {{ kind: command, command: [python3, \"{}\", {mode}] }}
{llm}cache: {{ path: cache/judge.sqlite }}
tiers:
  smoke: {{ qrels: {qrels_file}, queries: queries.tsv, baseline: baseline.json, model_judgments_max_age_days: 30 }}
gate:
  decision: point
  min_queries: 1
  rules:
    - {{ metric: ndcg@3, max_drop: 0.5 }}
",
        path_str(&script)
    );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
    std::fs::write(dir.join("corpus.jsonl"), CORPUS).unwrap();
    std::fs::write(
        dir.join("queries.tsv"),
        "q1\twhere are backups stored region\nq2\thow long are invoices kept\n",
    )
    .unwrap();
    std::fs::write(dir.join(qrels_file), qrels).unwrap();
    std::fs::write(dir.join("a.jsonl"), RUN_A).unwrap();
    std::fs::write(dir.join("b.txt"), RUN_B).unwrap();
}

fn holes(dir: &Path, extra: &[&str]) -> Outcome {
    let mut args = vec![
        "holes", "--tier", "smoke", "--run", "a.jsonl", "--run", "b.txt",
    ];
    args.extend_from_slice(extra);
    ragate_in(dir, &args)
}

/// (qid, doc_id, priority) of a `--format jsonl` listing.
fn listed(stdout: &str) -> Vec<(String, String, f64)> {
    stdout
        .lines()
        .map(|line| {
            let hole: Value = serde_json::from_str(line).unwrap();
            (
                hole["qid"].as_str().unwrap().to_string(),
                hole["doc_id"].as_str().unwrap().to_string(),
                hole["priority"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn pairs(holes: &[(String, String, f64)]) -> Vec<String> {
    holes.iter().map(|(q, d, _)| format!("{q}:{d}")).collect()
}

#[test]
fn holes_pool_two_runs_to_the_gated_depth_ranked_by_reciprocal_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, "qrels.jsonl", NATIVE_QRELS, "ok", None);
    let out = holes(dir, &["--format", "jsonl"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let found = listed(&out.stdout);
    // Depth 3 (ndcg@3 is gated): d4 (rank 4 of run A) is not a hole.
    assert_eq!(
        pairs(&found),
        vec!["q2:d6", "q1:d3", "q1:d2", "q1:d8", "q2:d7"]
    );
    assert_eq!(found[0].2, 1.5, "1/2 in run A + 1/1 in run B");
    assert!((found[1].2 - (1.0 + 1.0 / 3.0)).abs() < 1e-12);
    let deeper = holes(dir, &["--format", "jsonl", "--depth", "2"]);
    assert_eq!(
        pairs(&listed(&deeper.stdout)),
        vec!["q2:d6", "q1:d3", "q1:d2"]
    );
    let json = holes(dir, &["--format", "json", "--limit", "1"]);
    let document: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(
        (
            &document["depth"],
            &document["pooled"],
            &document["judged"],
            &document["holes_found"]
        ),
        (
            &Value::from(3),
            &Value::from(7),
            &Value::from(2),
            &Value::from(5)
        )
    );
    assert_eq!(document["holes"].as_array().unwrap().len(), 1);
    let table = holes(dir, &[]);
    assert!(
        table.stdout.starts_with(
            "tier `smoke`: 5 holes in the top 3 of 2 run(s): 2 of 7 pooled documents of 2 queries are judged\n"
        ),
        "{}",
        table.stdout
    );
    assert!(
        table.stdout.contains("  1.5000          1     2  q2  d6\n"),
        "{}",
        table.stdout
    );
    let zero = holes(dir, &["--depth", "0"]);
    assert_eq!(zero.code, 2, "{}", zero.stderr);
}

#[test]
fn without_a_run_holes_pool_the_configured_pipeline() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, "qrels.jsonl", NATIVE_QRELS, "ok", None);
    let alone = ragate_in(dir, &["holes", "--tier", "smoke", "--format", "jsonl"]);
    assert_eq!(alone.code, 2, "no pipeline configured: {}", alone.stderr);
    assert!(alone.stderr.contains("pass --run FILE"), "{}", alone.stderr);
    let replay = fixture("pipeline/replay_pipeline.py");
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    std::fs::write(
        dir.join("eval-config.yaml"),
        format!(
            "{config}pipeline: {{ command: [python3, \"{}\", a.jsonl, ok] }}\n",
            path_str(&replay)
        ),
    )
    .unwrap();
    let piped = ragate_in(dir, &["holes", "--tier", "smoke", "--format", "jsonl"]);
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    let from_file = ragate_in(
        dir,
        &[
            "holes", "--tier", "smoke", "--run", "a.jsonl", "--format", "jsonl",
        ],
    );
    assert_eq!(listed(&piped.stdout), listed(&from_file.stdout));
    assert_eq!(
        pairs(&listed(&piped.stdout)),
        vec!["q1:d2", "q2:d6", "q1:d3", "q2:d7"],
        "rank 2 before rank 3; equal priorities by qid"
    );
}

fn proposals(dir: &Path, file: &str) -> Vec<Value> {
    std::fs::read_to_string(dir.join(file))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn requests_logged(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("grade-judge-requests.txt"))
        .map_or(0, |text| text.lines().count())
}

#[test]
fn a_command_judge_proposes_grades_through_the_cache_and_never_touches_the_qrels() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, "qrels.jsonl", NATIVE_QRELS, "ok", None);
    let out = holes(dir, &["--judge", "ext", "--out", "proposals.jsonl"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.starts_with("wrote 5 proposals of judge `ext`"),
        "{}",
        out.stdout
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("qrels.jsonl")).unwrap(),
        NATIVE_QRELS
    );
    let written = proposals(dir, "proposals.jsonl");
    let grades: Vec<(String, u64)> = written
        .iter()
        .map(|p| {
            (
                format!(
                    "{}:{}",
                    p["qid"].as_str().unwrap(),
                    p["doc_id"].as_str().unwrap()
                ),
                p["grade"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected = [
        ("q2:d6", 3),
        ("q1:d3", 3),
        ("q1:d2", 1),
        ("q1:d8", 0),
        ("q2:d7", 1),
    ];
    let expected: Vec<(String, u64)> = expected.iter().map(|(p, g)| (p.to_string(), *g)).collect();
    assert_eq!(grades, expected);
    let first = &written[0];
    assert!(
        first["judge"]
            .as_str()
            .unwrap()
            .starts_with("command `python3 ")
            && first["judge"]
                .as_str()
                .unwrap()
                .ends_with(" grade-prompt graded-relevance-1"),
        "{first}"
    );
    assert_eq!(first["score"], 0.9);
    assert_eq!(first["priority"], 1.5);
    assert_eq!(
        first["rationale"], "3 query words in the document\u{1b}[2J",
        "kept as data"
    );
    assert_eq!(requests_logged(dir), 5);
    // The second run is answered from the cache: the judge is not asked again.
    let again = holes(dir, &["--judge", "ext", "--out", "again.jsonl"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(requests_logged(dir), 5, "all cache hits");
    assert_eq!(
        std::fs::read(dir.join("again.jsonl")).unwrap(),
        std::fs::read(dir.join("proposals.jsonl")).unwrap()
    );
    // --out never overwrites an input.
    let onto = holes(dir, &["--judge", "ext", "--out", "qrels.jsonl"]);
    assert_eq!(onto.code, 2, "{}", onto.stderr);
    assert!(
        onto.stderr.contains("refusing to overwrite an input"),
        "{}",
        onto.stderr
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("qrels.jsonl")).unwrap(),
        NATIVE_QRELS
    );
}

#[test]
fn a_malformed_command_grade_fails_closed_naming_the_judge_and_the_item() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, "qrels.jsonl", NATIVE_QRELS, "bad-grade", None);
    let out = holes(dir, &["--judge", "ext", "--out", "proposals.jsonl"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("judge `ext`"), "{}", out.stderr);
    assert!(
        out.stderr.contains("grade 7: expected 0, 1, 2 or 3"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("grade of `d"),
        "names the item: {}",
        out.stderr
    );
    assert!(!dir.join("proposals.jsonl").exists(), "nothing written");
    let lexical = holes(dir, &["--judge", "default", "--out", "p.jsonl"]);
    assert_eq!(lexical.code, 2, "{}", lexical.stderr);
    assert!(
        lexical.stderr.contains("cannot propose relevance grades"),
        "{}",
        lexical.stderr
    );
    let unknown = holes(dir, &["--judge", "ex", "--out", "p.jsonl"]);
    assert_eq!(unknown.code, 2, "{}", unknown.stderr);
    assert!(
        unknown.stderr.contains("no such judge"),
        "{}",
        unknown.stderr
    );
}

#[test]
fn an_openai_judge_grades_with_the_versioned_prompt_caches_and_fails_closed_on_malformed_replies() {
    let server = Server::start(vec![Step::Status(500, None)], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, "qrels.jsonl", NATIVE_QRELS, "ok", Some(&server.url));
    let out = holes(dir, &["--judge", "llm", "--out", "proposals.jsonl"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 6, "5 grades and a retried 500");
    let user = bodies[1]["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("as a TREC assessor would"), "{user}");
    let inputs = crate::openai_judge::inputs(&bodies[1]);
    assert_eq!(inputs["task"], "grade");
    let written = proposals(dir, "proposals.jsonl");
    assert_eq!(written.len(), 5);
    assert_eq!(written[0]["doc_id"], "d6");
    assert_eq!(written[0]["grade"], 3, "{}", written[0]);
    assert!(
        written[0]["judge"]
            .as_str()
            .unwrap()
            .ends_with("prompt support-relevance-1 grade-prompt graded-relevance-1"),
        "{}",
        written[0]
    );
    // A second run is all cache hits.
    let again = holes(dir, &["--judge", "llm", "--out", "again.jsonl"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(server.bodies().len(), 6, "no calls on the re-run");

    // A judge that keeps replying with prose fails closed, naming the judge and the item.
    let bad = Server::start(vec![Step::Malformed; 4], Duration::ZERO);
    let other = tempfile::tempdir().unwrap();
    let other = other.path();
    setup(other, "qrels.jsonl", NATIVE_QRELS, "ok", Some(&bad.url));
    let out = holes(
        other,
        &["--judge", "llm", "--out", "proposals.jsonl", "--limit", "1"],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("judge `llm`"), "{}", out.stderr);
    assert!(out.stderr.contains("grade of `d6`"), "{}", out.stderr);
    assert!(!other.join("proposals.jsonl").exists());
}

fn apply(dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> Outcome {
    let mut args = vec!["qrels", "apply", "proposals.jsonl", "--tier", "smoke"];
    args.extend_from_slice(extra);
    ragate_env(dir, &args, env)
}

#[test]
fn native_qrels_get_reviewed_proposals_with_provenance_and_judged_at_10_rises() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, "qrels.jsonl", NATIVE_QRELS, "ok", None);
    let gate = || crate::Ragate::gate("smoke", "a.jsonl", "out").run_in(dir);
    assert_eq!(gate().code, 2, "no baseline yet");
    accept_baseline(dir, "smoke", "out/results.json", &[]);
    assert_eq!(gate().code, 0);
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(summary.contains("judged@10 0.29"), "2 of 7: {summary}");

    let out = holes(dir, &["--judge", "ext", "--out", "proposals.jsonl"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // In CI nothing is applied.
    let ci = apply(dir, &["--yes"], &[("CI", "true")]);
    assert_eq!(ci.code, 2, "{}", ci.stderr);
    assert!(
        ci.stderr
            .contains("refusing to apply proposals to qrels in CI"),
        "{}",
        ci.stderr
    );
    // Without --yes: the diff, nothing written.
    let preview = apply(dir, &[], &[]);
    assert_eq!(preview.code, 0, "{}", preview.stderr);
    assert!(preview.stdout.contains("--- a/"), "{}", preview.stdout);
    assert!(
        preview.stdout.contains("+{\"qid\":\"q1\""),
        "{}",
        preview.stdout
    );
    assert!(
        preview
            .stdout
            .contains("nothing written: pass --yes to write 5 judgment(s)"),
        "{}",
        preview.stdout
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("qrels.jsonl")).unwrap(),
        NATIVE_QRELS
    );
    // --min-score 0.5 takes the two confident grades (3 and 3), --only narrows to one.
    let only = apply(
        dir,
        &["--only", "q1:d3", "--min-score", "0.5", "--yes"],
        &[],
    );
    assert_eq!(only.code, 0, "{}", only.stderr);
    assert!(
        only.stdout
            .starts_with("1 of 5 proposal(s) selected; 1 to write"),
        "{}",
        only.stdout
    );
    let qrels = std::fs::read_to_string(dir.join("qrels.jsonl")).unwrap();
    let q1: Value = serde_json::from_str(qrels.lines().next().unwrap()).unwrap();
    assert_eq!(
        q1["gold_doc_ids"],
        serde_json::json!(["d1", "d3"]),
        "grade 3 is gold"
    );
    assert_eq!(q1["graded_relevance"]["d3"], 3);
    assert!(
        q1["judged_by"]["d3"]["judge"]
            .as_str()
            .unwrap()
            .starts_with("command `")
    );
    assert!(q1["judged_by"]["d3"]["at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(q1["class"], "a", "slice fields kept");
    assert_eq!(
        qrels.lines().nth(1).unwrap(),
        NATIVE_QRELS.lines().nth(1).unwrap(),
        "q2 untouched"
    );
    // The rest; d3 is judged now and kept.
    // Applied as of 2020-01-01 (SOURCE_DATE_EPOCH): long unreviewed by now.
    let rest = apply(dir, &["--yes"], &[("SOURCE_DATE_EPOCH", "1577836800")]);
    assert_eq!(rest.code, 0, "{}", rest.stderr);
    assert!(
        rest.stdout
            .contains("kept 1 existing judgment(s) (0 human, 1 model)"),
        "{}",
        rest.stdout
    );
    assert!(
        rest.stdout.contains("wrote 4 model judgment(s)"),
        "{}",
        rest.stdout
    );
    let validate = ragate_in(dir, &["validate"]);
    assert_eq!(
        validate.code, 0,
        "the qrels read back: {}{}",
        validate.stdout, validate.stderr
    );
    let findings = validate.stdout.clone() + &validate.stderr;
    assert!(
        findings.contains(
            "tier `smoke`: 4 model judgment(s) were applied more than 30 days ago and no person \
             has reviewed them since"
        ),
        "{findings}"
    );
    assert!(findings.contains("(2020-01-01T00:00:00Z)"), "{findings}");
    let after = holes(dir, &["--format", "jsonl"]);
    assert_eq!(after.stdout, "", "no holes left at depth 3");

    // judged@10 of run A: 2 of 7 before, 6 of 7 now (d4 is below the pooled depth).
    let changed = gate();
    assert_eq!(changed.code, 0, "{}", changed.stderr);
    assert!(
        changed
            .stderr
            .contains("the qrels changed since the baseline"),
        "{}",
        changed.stderr
    );
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(
        summary.contains("judged@10 0.86 (human 0.29, model 0.57)"),
        "{summary}"
    );
    let stats: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/run-stats.json")).unwrap())
            .unwrap();
    let share = |key: &str| (stats[key].as_f64().unwrap() * 7.0).round();
    assert_eq!(
        (share("judged_at_10"), share("model_judged_at_10")),
        (6.0, 4.0)
    );
}

#[test]
fn trec_qrels_keep_their_format_with_a_provenance_sidecar_and_human_judgments_stay() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let trec = "q1 0 d1 1\nq2 0 d5 1\nq2 0 d6 0\n";
    setup(dir, "qrels.txt", trec, "ok", None);
    let out = holes(dir, &["--judge", "ext", "--out", "proposals.jsonl"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // d6 of q2 is judged by a person (grade 0): not a hole. Add a proposal for it by hand.
    let mut text = std::fs::read_to_string(dir.join("proposals.jsonl")).unwrap();
    text.push_str("{\"qid\":\"q2\",\"doc_id\":\"d6\",\"grade\":3,\"judge\":\"m\",\"score\":1.0,\"rationale\":null}\n");
    std::fs::write(dir.join("proposals.jsonl"), text).unwrap();
    let out = apply(dir, &["--yes"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("kept 1 existing judgment(s) (1 human, 0 model)"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("+q1 0 d3 3\n"), "{}", out.stdout);
    let qrels = std::fs::read_to_string(dir.join("qrels.txt")).unwrap();
    assert!(qrels.starts_with(trec), "human lines untouched: {qrels}");
    assert!(
        qrels.contains("q2 0 d6 0\n"),
        "the human grade stays: {qrels}"
    );
    assert_eq!(qrels.lines().count(), 3 + 4);
    let sidecar = std::fs::read_to_string(dir.join("qrels.txt.judged_by.jsonl")).unwrap();
    assert_eq!(sidecar.lines().count(), 4, "{sidecar}");
    assert!(
        sidecar.starts_with("{\"qid\":\"q1\",\"doc_id\":\"d2\",\"judge\":\"command `"),
        "{sidecar}"
    );
    // --overwrite replaces the human judgment, and says so.
    let over = apply(dir, &["--only", "q2:d6", "--overwrite", "--yes"], &[]);
    assert_eq!(over.code, 0, "{}", over.stderr);
    assert!(
        over.stdout
            .contains("replacing 1 existing judgment(s) (1 human, 0 model)"),
        "{}",
        over.stdout
    );
    let qrels = std::fs::read_to_string(dir.join("qrels.txt")).unwrap();
    assert!(qrels.contains("q2 0 d6 3\n"), "{qrels}");
    let validate = ragate_in(dir, &["validate"]);
    assert_eq!(validate.code, 0, "{}{}", validate.stdout, validate.stderr);
    // A sidecar entry for a judgment the qrels do not have marks nothing: an error.
    let sidecar = dir.join("qrels.txt.judged_by.jsonl");
    let mut text = std::fs::read_to_string(&sidecar).unwrap();
    text.push_str("{\"qid\":\"q1\",\"doc_id\":\"d77\",\"judge\":\"m\"}\n");
    std::fs::write(&sidecar, text).unwrap();
    let validate = ragate_in(dir, &["validate"]);
    assert_eq!(validate.code, 2, "{}{}", validate.stdout, validate.stderr);
    assert!(
        (validate.stdout.clone() + &validate.stderr).contains("`d77` of query `q1` is not judged"),
        "{}{}",
        validate.stdout,
        validate.stderr
    );
    let typo = apply(dir, &["--only", "q2:d66"], &[]);
    assert_eq!(typo.code, 2, "{}", typo.stderr);
    assert!(
        typo.stderr.contains("--only q2:d66: no such proposal"),
        "{}",
        typo.stderr
    );
}

#[test]
fn edited_proposals_survive_a_second_holes_run_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, "qrels.jsonl", NATIVE_QRELS, "ok", None);
    let run = |extra: &[&str]| {
        holes(
            dir,
            &[&["--judge", "ext", "--out", "proposals.jsonl"], extra].concat(),
        )
    };
    assert_eq!(run(&[]).code, 0);
    let path = dir.join("proposals.jsonl");
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(dir.join(".proposals.jsonl.ragate-sha256").is_file());
    let again = run(&[]);
    assert_eq!(again.code, 0, "unchanged: replaced: {}", again.stderr);
    // The reviewer rejects a proposal by deleting its line.
    let edited: String = written.lines().skip(1).map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, &edited).unwrap();
    let refused = run(&[]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("proposals.jsonl: changed since ragate wrote it")
            && refused.stderr.contains("pass --force to replace it"),
        "{}",
        refused.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        edited,
        "the edit survives"
    );
    let forced = run(&["--force"]);
    assert_eq!(forced.code, 0, "{}", forced.stderr);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), written);
    // --force without --out is a usage error, as --out without --judge is.
    let bare = holes(dir, &["--force"]);
    assert_eq!(bare.code, 2, "{}", bare.stderr);
}
