//! Drafting a test set: `ragate synth` asks a `command` generator (a Python script) or an
//! `openai` one (the loopback server of `openai_judge`) for questions of four classes from a
//! seeded, stratified sample of the corpus, through the cache; drops unanswerable, duplicate
//! and number-less drafts with their reasons in the review sheet; labels literal vs paraphrased
//! by overlap; fails closed on a malformed draft. A draft tier is refused until `ragate qrels
//! accept` adds it (diff first, --yes, never in CI); then `validate` accepts it and the gate runs.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::openai_judge::{Server, Step};
use crate::{Outcome, accept_baseline, fixture, path_str, ragate_env, ragate_in};

/// A fictional ferry company's help pages: every document long enough to draft from, some with
/// numbers.
pub(crate) const CORPUS: &str = r#"{"doc_id":"tickets","title":"Tickets","text":"A single ticket is valid for one crossing on the date printed on it. Tickets bought at the harbour kiosk cost 2 euros more than tickets bought online. Children under 6 travel free with a paying adult."}
{"doc_id":"bikes","title":"Bicycles","text":"Bicycles ride on the car deck and must be secured with the straps provided. A bicycle needs its own ticket, which costs 5 euros. Electric bicycles are allowed if the battery is removable."}
{"doc_id":"pets","title":"Pets","text":"Dogs and cats may travel in the outdoor lounge on a lead or in a carrier. Pets are not allowed in the restaurant or in cabins. Assistance dogs are welcome everywhere on board."}
{"doc_id":"delays","title":"Delays","text":"When a crossing is delayed by more than 90 minutes, passengers may claim a refund of half the fare. Claims must be filed within 30 days using the online form. Delays caused by storms are not refunded."}
{"doc_id":"luggage","title":"Luggage","text":"Each passenger may bring two suitcases and one hand bag without charge. Suitcases stay in the luggage racks on the car deck during the crossing. Sharp tools must be packed in checked luggage."}
{"doc_id":"cabins","title":"Cabins","text":"Night crossings offer cabins with two or four berths, towels and a private shower. Cabins must be booked together with the ticket and cannot be added on board. Keys are handed out at the reception desk."}
{"doc_id":"food","title":"Food on board","text":"The restaurant serves breakfast, lunch and dinner, and the kiosk sells snacks and drinks all day. Passengers may bring their own food to the outdoor lounge. Vegetarian meals are marked on the menu."}
{"doc_id":"cars","title":"Cars","text":"Cars must arrive at the harbour gate 45 minutes before departure and follow the marshals onto the car deck. Vehicles taller than 2 metres pay the truck fare. Drivers leave the car deck once the engine is off."}
{"doc_id":"wifi","title":"Internet","text":"Free wireless internet is available in the lounges, limited to 500 megabytes per passenger per crossing. Streaming video is blocked to keep the connection usable for everyone on board."}
{"doc_id":"accessibility","title":"Accessibility","text":"Lifts connect the car deck with the passenger decks, and two cabins are adapted for wheelchairs. Passengers who need assistance should tell the crew at check-in so that seats near the lifts are kept free."}
{"doc_id":"lost","title":"Lost property","text":"Items left on board are kept at the harbour office for three months. Owners can collect them with proof of identity or ask for them to be posted at their own cost. Food and perishable items are thrown away."}
{"doc_id":"short","text":"Ask the crew."}
"#;

/// A config with the generators `gen` (the Python script in `mode`) and, given `url`, `llm`.
fn setup(dir: &Path, mode: &str, url: Option<&str>) {
    let script = fixture("judges/draft_generator.py");
    let llm = url.map_or(String::new(), |url| {
        format!(
            "  llm: {{ kind: openai, base_url: \"{url}\", model: test-model, concurrency: 2, timeout_s: 5, max_retries: 1, max_calls: 100, price_per_1k_tokens: {{ input: 0.5, output: 1.5 }} }}\n"
        )
    });
    let config = format!(
        "version: 1
corpus: corpus.jsonl
metrics: [recall@5, mrr, faithfulness]
judges:
  gen: {{ kind: command, command: [python3, \"{}\", {mode}] }}
{llm}cache: {{ path: cache/judge.sqlite }}
tiers:
  smoke: {{ qrels: qrels/smoke.jsonl, baseline: baseline.json }}
  raw: {{ qrels: raw/draft.jsonl, baseline: raw-baseline.json }}
gate:
  decision: point
  min_queries: 1
  rules:
    - {{ metric: recall@5, max_drop: 0.1 }}
",
        path_str(&script)
    );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
    std::fs::write(dir.join("corpus.jsonl"), CORPUS).unwrap();
}

fn synth(dir: &Path, extra: &[&str]) -> Outcome {
    let mut args = vec!["synth", "--generator", "gen", "--out", "drafts"];
    args.extend_from_slice(extra);
    ragate_in(dir, &args)
}

fn drafts(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("drafts/draft.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn requests_logged(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("draft-generator-requests.txt"))
        .map_or(0, |text| text.lines().count())
}

fn field<'a>(draft: &'a Value, key: &str) -> &'a str {
    draft[key].as_str().unwrap()
}

#[test]
fn a_command_generator_drafts_every_class_with_provenance_through_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, "ok", None);
    let out = synth(dir, &["--count", "8"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("drafted 8 of 8 queries asked"),
        "{}",
        out.stdout
    );
    assert_eq!(requests_logged(dir), 8);
    let written = drafts(dir);
    assert_eq!(
        written.len(),
        8,
        "all answerable and distinct: {written:#?}"
    );
    let first = std::fs::read_to_string(dir.join("drafts/draft.jsonl")).unwrap();
    for draft in &written {
        let gold = draft["gold_doc_ids"].as_array().unwrap();
        assert!(gold.iter().all(|d| d != "short"), "too short to draft from");
        let provenance = &draft["drafted_by"];
        assert!(
            field(provenance, "generator").contains("draft-prompt synth-query-1"),
            "{provenance}"
        );
        assert_eq!(provenance["seed"], 1);
        assert!(provenance.get("accepted_at").is_none());
        let overlap = provenance["lexical_overlap"].as_f64().unwrap();
        match field(draft, "class") {
            "literal" => assert!(overlap >= 0.7, "{draft}"),
            "paraphrased" => assert!(overlap < 0.7, "{draft}"),
            "multi-topic" => {
                assert_eq!(gold.len(), 2);
                assert_eq!(draft["graded_relevance"][gold[0].as_str().unwrap()], 2);
            }
            "numeric" => {
                assert!(
                    field(draft, "reference_answer")
                        .chars()
                        .any(|c| c.is_ascii_digit())
                );
            }
            other => panic!("class {other}"),
        }
        if gold.len() == 1 {
            assert_eq!(draft["graded_relevance"][gold[0].as_str().unwrap()], 3);
        }
        let judged = draft["judged_by"].as_object().unwrap();
        assert_eq!(
            judged.len(),
            gold.len(),
            "the generator's judgments are model ones"
        );
    }
    let classes: Vec<&str> = written.iter().map(|d| field(d, "class")).collect();
    for class in ["literal", "paraphrased", "multi-topic", "numeric"] {
        assert_eq!(
            classes.iter().filter(|c| **c == class).count(),
            2,
            "{classes:?}"
        );
    }
    let review = std::fs::read_to_string(dir.join("drafts/review.md")).unwrap();
    assert!(review.contains("**Kept 8 of 8**"), "{review}");
    assert!(review.contains("| `synth-0001` | kept |"), "{review}");

    // The same seed drafts the same file, from the cache; another seed other documents.
    let again = synth(dir, &["--count", "8"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.join("drafts/draft.jsonl")).unwrap(),
        first
    );
    assert_eq!(requests_logged(dir), 8, "the cache answered the re-run");
    assert!(
        again
            .stdout
            .contains("0 draft(s) from the generator, 8 from the cache")
    );
    let other = synth(dir, &["--count", "8", "--seed", "2"]);
    assert_eq!(other.code, 0, "{}", other.stderr);
    assert_ne!(
        std::fs::read_to_string(dir.join("drafts/draft.jsonl")).unwrap(),
        first
    );
}

#[test]
fn unanswerable_duplicate_and_blank_drafts_never_become_queries() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, "invented", None);
    let out = synth(dir, &["--count", "4"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(drafts(dir).is_empty());
    let review = std::fs::read_to_string(dir.join("drafts/review.md")).unwrap();
    assert!(
        review.contains("**Kept 0 of 4**; dropped: 4 not answerable"),
        "{review}"
    );
    assert!(
        review.contains("the judge supports 0 of the answer's 1 claim(s)"),
        "{review}"
    );

    setup(dir, "same", None);
    let out = synth(dir, &["--count", "4", "--class", "literal"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(drafts(dir).len(), 1, "one of four identical questions");
    let review = std::fs::read_to_string(dir.join("drafts/review.md")).unwrap();
    assert!(review.contains("near-duplicate of synth-0001"), "{review}");

    setup(dir, "blank", None);
    std::fs::remove_file(dir.join("cache/judge.sqlite")).unwrap();
    let out = synth(dir, &["--count", "2"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("blank question"), "{}", out.stderr);
    assert!(
        !dir.join("drafts/draft.jsonl").exists() && !dir.join("drafts/review.md").exists(),
        "a failed run leaves no earlier draft to mistake for its own"
    );

    let lexical = ragate_in(dir, &["synth", "--generator", "default", "--out", "drafts"]);
    assert_eq!(lexical.code, 2);
    assert!(
        lexical.stderr.contains("cannot draft questions"),
        "{}",
        lexical.stderr
    );
    let control = synth(dir, &["--qid-prefix", "q\u{1b}"]);
    assert_eq!(control.code, 2, "{}", control.stderr);
    assert!(
        control.stderr.contains("--qid-prefix"),
        "{}",
        control.stderr
    );
    let unknown = ragate_in(dir, &["synth", "--generator", "gne", "--out", "drafts"]);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.contains("gen"),
        "did you mean: {}",
        unknown.stderr
    );
}

#[test]
fn a_draft_becomes_a_tier_only_through_qrels_accept() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, "ok", None);
    assert_eq!(synth(dir, &["--count", "6"]).code, 0);
    let kept = drafts(dir);
    assert_eq!(kept.len(), 6);

    let run: String = kept
        .iter()
        .map(|draft| {
            let retrieved: Vec<Value> = draft["gold_doc_ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|doc| serde_json::json!({"doc_id": doc}))
                .collect();
            format!(
                "{}\n",
                serde_json::json!({"qid": draft["qid"], "retrieved": retrieved, "answer": draft["reference_answer"]})
            )
        })
        .collect();
    std::fs::write(dir.join("run.jsonl"), run).unwrap();

    // A tier pointed at a draft as it is is refused (synth itself refuses to overwrite a
    // tier's qrels, so the draft is copied).
    std::fs::create_dir_all(dir.join("raw")).unwrap();
    std::fs::copy(dir.join("drafts/draft.jsonl"), dir.join("raw/draft.jsonl")).unwrap();
    let raw = ragate_in(
        dir,
        &[
            "gate",
            "--tier",
            "raw",
            "--run",
            "run.jsonl",
            "--out",
            "raw-out",
        ],
    );
    assert_eq!(raw.code, 2, "{}", raw.stderr);
    assert!(raw.stderr.contains("6 drafted queries"), "{}", raw.stderr);
    assert!(raw.stderr.contains("never accepted"), "{}", raw.stderr);

    let accept = |extra: &[&str], env: &[(&str, &str)]| {
        let mut args = vec![
            "qrels",
            "accept",
            "drafts/draft.jsonl",
            "--into",
            "qrels/smoke.jsonl",
        ];
        args.extend_from_slice(extra);
        let mut env = env.to_vec();
        env.push(("SOURCE_DATE_EPOCH", "1790000000"));
        ragate_env(dir, &args, &env)
    };
    let in_ci = accept(&["--yes"], &[("CI", "true")]);
    assert_eq!(in_ci.code, 2, "{}", in_ci.stderr);
    assert!(!dir.join("qrels/smoke.jsonl").exists());
    let typo = accept(&["--only", "synth-0009"], &[]);
    assert_eq!(typo.code, 2, "{}", typo.stderr);
    let dry = accept(&["--only", "synth-0001,synth-0002"], &[]);
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert!(
        dry.stdout.contains("+{\"qid\":\"synth-0001\""),
        "{}",
        dry.stdout
    );
    assert!(dry.stdout.contains("nothing written"), "{}", dry.stdout);
    assert!(!dir.join("qrels/smoke.jsonl").exists());
    let wrote = accept(&["--yes"], &[]);
    assert_eq!(wrote.code, 0, "{}", wrote.stderr);
    let accepted = std::fs::read_to_string(dir.join("qrels/smoke.jsonl")).unwrap();
    assert_eq!(accepted.lines().count(), 6);
    for line in accepted.lines() {
        let query: Value = serde_json::from_str(line).unwrap();
        assert_eq!(query["drafted_by"]["accepted_at"], "2026-09-21T14:13:20Z");
        for judged in query["judged_by"].as_object().unwrap().values() {
            assert_eq!(judged["at"], "2026-09-21T14:13:20Z");
        }
    }
    let twice = accept(&["--yes"], &[]);
    assert_eq!(twice.code, 2, "qids already there: {}", twice.stderr);

    // The accepted tier validates (the raw tier removed) and the gate runs on it.
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    let config: String = config
        .lines()
        .filter(|line| !line.contains("raw:"))
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
    let valid = ragate_in(dir, &["validate"]);
    assert_eq!(valid.code, 0, "{}{}", valid.stdout, valid.stderr);
    let gate = || crate::Ragate::gate("smoke", "run.jsonl", "out").run_in(dir);
    assert_eq!(gate().code, 2, "no baseline yet");
    accept_baseline(dir, "smoke", "out/results.json", &[]);
    let passed = gate();
    assert_eq!(passed.code, 0, "{}{}", passed.stdout, passed.stderr);
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(
        summary.contains("judged@10 1.00 (human 0.00, model 1.00)"),
        "{summary}"
    );
}

#[test]
fn an_openai_generator_drafts_by_the_documented_contract_and_reports_its_cost() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    // One malformed reply and one 429: retried, not errors.
    let server = Server::start(
        vec![Step::Malformed, Step::Status(429, Some(0))],
        Duration::ZERO,
    );
    setup(dir, "ok", Some(&server.url));
    let args = [
        "synth",
        "--generator",
        "llm",
        "--out",
        "drafts",
        "--count",
        "4",
    ];
    // Before spending: the plan asks nothing and writes nothing.
    let dry = |dir: &Path| ragate_in(dir, &[&args[..], &["--dry-run"]].concat());
    let before = dry(dir);
    assert_eq!(before.code, 0, "{}", before.stderr);
    assert!(
        before
            .stdout
            .contains("4 drafts of 4 asked, 0 from the cache; 4 call(s), about "),
        "{}",
        before.stdout
    );
    assert!(
        before.stdout.contains("at its price_per_1k_tokens"),
        "{}",
        before.stdout
    );
    assert!(server.bodies().is_empty());
    assert!(!dir.join("drafts").exists() && !dir.join("cache").exists());
    let out = ragate_in(dir, &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 6, "4 drafts and two retries");
    let messages = bodies[0]["messages"].as_array().unwrap();
    let user = messages.last().unwrap()["content"].as_str().unwrap();
    assert!(user.contains("Write one question"), "{user}");
    assert!(
        user.lines()
            .last()
            .unwrap()
            .starts_with("{\"task\":\"draft\""),
        "{user}"
    );
    assert!(out.stdout.contains("6 call(s)"), "{}", out.stdout);
    assert!(
        out.stdout.contains("at the configured price_per_1k_tokens"),
        "{}",
        out.stdout
    );
    let written = drafts(dir);
    assert_eq!(written.len(), 4, "{written:#?}");
    assert!(field(&written[0]["drafted_by"], "generator").starts_with("openai"));
    let after = dry(dir);
    assert!(
        after
            .stdout
            .contains("4 drafts of 4 asked, 4 from the cache; 0 call(s)"),
        "{}",
        after.stdout
    );
    // The re-run is answered from the cache.
    let again = ragate_in(dir, &args);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(server.bodies().len(), 6);
    let first = std::fs::read_to_string(dir.join("drafts/draft.jsonl")).unwrap();
    // Replay mode asks nothing (the endpoint is part of the cache key, so it stays) and
    // refuses a draft it has not seen.
    let config = std::fs::read_to_string(dir.join("eval-config.yaml"))
        .unwrap()
        .replace(
            "cache: { path: cache/judge.sqlite }",
            "cache: { path: cache/judge.sqlite, mode: replay }",
        );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
    let replayed = ragate_in(dir, &args);
    assert_eq!(replayed.code, 0, "{}", replayed.stderr);
    assert_eq!(server.bodies().len(), 6);
    assert_eq!(
        std::fs::read_to_string(dir.join("drafts/draft.jsonl")).unwrap(),
        first
    );
    let unseen = ragate_in(
        dir,
        &[
            "synth",
            "--generator",
            "llm",
            "--out",
            "drafts",
            "--count",
            "5",
        ],
    );
    assert_eq!(unseen.code, 2, "{}", unseen.stderr);
    assert!(
        unseen.stderr.contains("replay mode: no cached verdict"),
        "{}",
        unseen.stderr
    );
    assert_eq!(server.bodies().len(), 6);
}

#[test]
fn a_draft_edited_by_hand_survives_a_second_synth_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, "ok", None);
    assert_eq!(synth(dir, &["--count", "4"]).code, 0);
    let draft = dir.join("drafts/draft.jsonl");
    let review = dir.join("drafts/review.md");
    let written = std::fs::read_to_string(&draft).unwrap();
    // Unchanged since synth wrote them: a second run replaces them.
    let again = synth(dir, &["--count", "4"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(std::fs::read_to_string(&draft).unwrap(), written);

    // The reviewer rejects the last draft and rewords the first.
    let mut lines: Vec<String> = written.lines().map(str::to_string).collect();
    lines.pop();
    lines[0] = lines[0].replacen("\"query\":\"", "\"query\":\"reworded: ", 1);
    let edited = format!("{}\n", lines.join("\n"));
    std::fs::write(&draft, &edited).unwrap();
    let sheet = std::fs::read(&review).unwrap();
    let asked = requests_logged(dir);
    let refused = synth(dir, &["--count", "4", "--seed", "2"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains(&format!(
            "{}: changed since ragate wrote it",
            Path::new("drafts").join("draft.jsonl").display()
        )) && refused.stderr.contains("pass --force to replace it"),
        "{}",
        refused.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&draft).unwrap(),
        edited,
        "the edit survives"
    );
    assert_eq!(std::fs::read(&review).unwrap(), sheet);
    assert_eq!(requests_logged(dir), asked, "refused before asking");
    // A review sheet annotated by hand counts too.
    std::fs::write(&draft, &written).unwrap();
    std::fs::write(&review, "my notes\n").unwrap();
    let refused = synth(dir, &["--count", "4"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("review.md: changed"),
        "{}",
        refused.stderr
    );
    // --dry-run writes nothing, so it is not refused.
    assert_eq!(synth(dir, &["--count", "4", "--dry-run"]).code, 0);

    let forced = synth(dir, &["--count", "4", "--force"]);
    assert_eq!(forced.code, 0, "{}", forced.stderr);
    assert_eq!(
        std::fs::read_to_string(&draft).unwrap(),
        written,
        "replaced"
    );
    assert_ne!(std::fs::read_to_string(&review).unwrap(), "my notes\n");
    assert_eq!(synth(dir, &["--count", "4"]).code, 0, "what it wrote again");

    // A draft.jsonl that synth did not write (no record of it) is not replaced either.
    std::fs::create_dir_all(dir.join("mine")).unwrap();
    std::fs::write(dir.join("mine/draft.jsonl"), &edited).unwrap();
    let foreign = ragate_in(
        dir,
        &[
            "synth",
            "--generator",
            "gen",
            "--out",
            "mine",
            "--count",
            "4",
        ],
    );
    assert_eq!(foreign.code, 2, "{}", foreign.stderr);
    assert!(
        foreign
            .stderr
            .contains("ragate has no record of writing it")
            && foreign.stderr.contains("--force"),
        "{}",
        foreign.stderr
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("mine/draft.jsonl")).unwrap(),
        edited
    );
}

#[test]
fn an_accept_removes_the_old_temporary_files_a_killed_accept_left() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(
        dir.join("draft.jsonl"),
        "{\"qid\":\"synth-0001\",\"query\":\"how long are invoices kept\",\"gold_doc_ids\":[\"d1\"],\"drafted_by\":{\"generator\":\"g\",\"seed\":1}}\n",
    )
    .unwrap();
    // What accepts killed by SIGKILL between writing and renaming left: one two hours ago, one
    // just now (maybe an accept running at this moment), and one of another file.
    let old = dir.join(".qrels.jsonl.ragate-tmp-Old123");
    let young = dir.join(".qrels.jsonl.ragate-tmp-New456");
    let other = dir.join(".other.jsonl.ragate-tmp-Old789");
    for path in [&old, &young, &other] {
        std::fs::write(path, "{\"qid\":\"partial").unwrap();
    }
    let two_hours_ago = std::time::SystemTime::now() - Duration::from_secs(2 * 3600);
    for path in [&old, &other] {
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(two_hours_ago)
            .unwrap();
    }
    let accepted = ragate_in(
        dir,
        &[
            "qrels",
            "accept",
            "draft.jsonl",
            "--into",
            "qrels.jsonl",
            "--yes",
        ],
    );
    assert_eq!(accepted.code, 0, "{}", accepted.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.join("qrels.jsonl"))
            .unwrap()
            .lines()
            .count(),
        1
    );
    assert!(!old.exists(), "the old temporary file is removed");
    assert!(young.exists(), "a young one may be another accept's");
    assert!(other.exists(), "another file's is not this write's");
}
