//! The run history: `history add` and `show` on real gate results (round trip, no overwrite,
//! series breaks, corrupt and foreign files), and `gate --history` (a drift over nights whose
//! recent runs together worsen beyond the limit, as a warning or a failure, and the trends in
//! summary.md).

use std::path::Path;

use crate::gate_flow::{setup, write_run};
use crate::{Outcome, Ragate, accept_baseline, ragate_env};

const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

/// The commit of night `night`: another one each night.
fn night_sha(night: u64) -> String {
    format!("{night:x}{}", &SHA[1..])
}

/// `history add` of out/results.json at `epoch` seconds.
fn add(dir: &Path, epoch: u64) -> Outcome {
    ragate_env(
        dir,
        &[
            "history",
            "add",
            "--tier",
            "regression",
            "--from",
            "out/results.json",
            "--history",
            "hist",
        ],
        &[("SOURCE_DATE_EPOCH", &epoch.to_string())],
    )
}

/// `history show`, with the folder under the option's former name `--dir` (an alias of
/// `--history`, which `add` uses above: records written by one are read by the other).
fn show(dir: &Path, extra: &[&str]) -> Outcome {
    let mut args = vec!["history", "show", "--tier", "regression", "--dir", "hist"];
    args.extend_from_slice(extra);
    ragate_env(dir, &args, &[])
}

/// A tier with an accepted baseline of `base.jsonl`.
fn baselined(dir: &Path) {
    setup(dir);
    Ragate::gate("regression", "base.jsonl", "out")
        .sha(SHA)
        .status(2)
        .run_in(dir); // no baseline yet
    accept_baseline(dir, "regression", "out/results.json", &[]);
}

#[test]
fn the_history_subcommands_take_history_as_gate_does_and_list_dir_as_its_alias() {
    let dir = tempfile::tempdir().unwrap();
    for subcommand in ["add", "show"] {
        let help = ragate_env(dir.path(), &["history", subcommand, "--help"], &[]);
        assert_eq!(help.code, 0, "{}", help.stderr);
        let option = help
            .stdout
            .split("\n      --")
            .find(|option| option.starts_with("history <DIR>"))
            .unwrap_or_else(|| panic!("no --history in {}", help.stdout));
        assert!(option.contains("[alias: --dir]"), "{}", help.stdout);
        assert!(!help.stdout.contains("--dir <DIR>"), "{}", help.stdout);
    }
    // Either name, one folder: an empty one is named as such, whichever spelling named it.
    std::fs::create_dir(dir.path().join("hist")).unwrap();
    for option in ["--history", "--dir"] {
        let shown = ragate_env(
            dir.path(),
            &[
                "history",
                "show",
                "--tier",
                "smoke",
                option,
                "hist",
                "--config",
                "none.yaml",
            ],
            &[],
        );
        assert_eq!(shown.code, 0, "{option}: {}", shown.stderr);
    }
}

#[test]
fn records_round_trip_are_never_replaced_and_show_series_breaks() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    baselined(dir);
    Ragate::gate("regression", "base.jsonl", "out")
        .sha(SHA)
        .status(0)
        .run_in(dir);

    let first = add(dir, 86_400);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let name = "19700102T000000Z-0123456789ab.json";
    let path = dir.join("hist/regression").join(name);
    assert!(first.stdout.contains(name), "{}", first.stdout);
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(record["format"], "ragate-history/1");
    assert_eq!(record["time"], "1970-01-02T00:00:00Z");
    assert_eq!(record["commit"], SHA);
    assert_eq!(record["status"], "pass");
    let all = &record["metrics"]["recall@5"]["all"];
    assert_eq!(all["mean"], 1.0);
    assert_eq!(all["n"], 120);
    assert_eq!(all["interval"], serde_json::json!([1.0, 1.0]));
    assert_eq!(record["metrics"]["mrr"]["class=literal"]["n"], 40);
    assert!(record["metrics"].get("ndcg@10").is_none(), "not gated");
    let check = &record["checks"][0];
    assert_eq!(check["name"], "recall@5 [all]");
    assert_eq!(check["status"], "pass");
    assert_eq!(check["delta"], 0.0);
    assert!(
        record.get("queries").is_none(),
        "no per-query values unless asked"
    );

    // Same tier, time and commit: refused, naming the file; the record is unchanged.
    let before = std::fs::read(&path).unwrap();
    let again = add(dir, 86_400);
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert!(again.stderr.contains(name), "{}", again.stderr);
    assert!(again.stderr.contains("never replaced"), "{}", again.stderr);
    assert_eq!(std::fs::read(&path).unwrap(), before);

    let second = ragate_env(
        dir,
        &[
            "history",
            "add",
            "--tier",
            "regression",
            "--from",
            "out/results.json",
            "--dir",
            "hist",
            "--with-queries",
        ],
        &[("SOURCE_DATE_EPOCH", "172800")],
    );
    assert_eq!(second.code, 0, "{}", second.stderr);
    let second_path = dir.join("hist/regression/19700103T000000Z-0123456789ab.json");
    let text = std::fs::read_to_string(&second_path).unwrap();
    assert!(text.contains("\"queries\""), "--with-queries keeps them");

    // A third night under another config hash: a series break, shown, not mixed in.
    let mut third: serde_json::Value = serde_json::from_str(&text).unwrap();
    third["time"] = "1970-01-04T00:00:00Z".into();
    third["config_hash"] = "f".repeat(64).into();
    std::fs::write(
        dir.join("hist/regression/19700104T000000Z-0123456789ab.json"),
        serde_json::to_string_pretty(&third).unwrap(),
    )
    .unwrap();
    let table = show(dir, &[]);
    assert_eq!(table.code, 0, "{}", table.stderr);
    let lines: Vec<&str> = table.stdout.lines().collect();
    assert!(lines[0].starts_with("time"), "{}", table.stdout);
    assert!(lines[0].contains("recall@5 [all]") && lines[0].contains("mrr [all]"));
    assert!(
        lines[1].starts_with("1970-01-02T00:00:00Z  01234567  pass"),
        "{}",
        table.stdout
    );
    assert!(
        lines[3].starts_with("---- series break: config hash"),
        "{}",
        table.stdout
    );
    assert!(
        lines[4].starts_with("1970-01-04T00:00:00Z"),
        "{}",
        table.stdout
    );
    assert_eq!(lines.len(), 5, "{}", table.stdout);

    let last = show(dir, &["--last", "2", "--format", "json"]);
    assert_eq!(last.code, 0, "{}", last.stderr);
    let document: serde_json::Value = serde_json::from_str(&last.stdout).unwrap();
    assert_eq!(document["earlier_runs_not_shown"], 1);
    let runs = document["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert!(runs[0]["series_break"].is_null());
    assert!(
        runs[1]["series_break"]
            .as_str()
            .unwrap()
            .starts_with("config hash"),
        "{}",
        last.stdout
    );

    // The default directory comes from the config (`history: { dir }`), relative to it.
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    std::fs::write(
        dir.join("eval-config.yaml"),
        format!("{config}history: {{ dir: hist }}\n"),
    )
    .unwrap();
    let from_config = ragate_env(dir, &["history", "show", "--tier", "regression"], &[]);
    assert_eq!(from_config.code, 0, "{}", from_config.stderr);
    assert_eq!(from_config.stdout, table.stdout);
}

#[test]
fn a_corrupt_or_foreign_file_in_the_history_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    baselined(dir);
    Ragate::gate("regression", "base.jsonl", "out")
        .sha(SHA)
        .status(0)
        .run_in(dir);
    assert_eq!(add(dir, 86_400).code, 0);
    let folder = dir.join("hist/regression");
    for (name, text) in [
        (
            "19700105T000000Z-0123456789ab.json",
            "{\"format\": \"ragate-history/1\"",
        ),
        ("notes.txt", "a note"),
        (
            "19700106T000000Z-unknown.json",
            "{\"format\": \"something-else/1\"}",
        ),
    ] {
        std::fs::write(folder.join(name), text).unwrap();
        let shown = show(dir, &[]);
        assert_eq!(shown.code, 2, "{name}: {}", shown.stdout);
        assert!(shown.stderr.contains(name), "{name}: {}", shown.stderr);
        let gated = Ragate::gate("regression", "base.jsonl", "out")
            .args(["--history", "hist"])
            .sha(SHA)
            .run_in(dir);
        assert_eq!(gated.code, 2, "{name}: the gate fails closed too");
        assert!(gated.stderr.contains(name), "{name}: {}", gated.stderr);
        std::fs::remove_file(folder.join(name)).unwrap();
    }
    // A record under a name that is not its own time and commit.
    let record =
        std::fs::read_to_string(folder.join("19700102T000000Z-0123456789ab.json")).unwrap();
    std::fs::write(folder.join("19700107T000000Z-0123456789ab.json"), record).unwrap();
    let shown = show(dir, &[]);
    assert_eq!(shown.code, 2);
    assert!(
        shown.stderr.contains("19700107T000000Z-0123456789ab.json"),
        "{}",
        shown.stderr
    );
    assert!(shown.stderr.contains("rename it"), "{}", shown.stderr);
    // A history directory that does not exist is not an empty history.
    let missing = Ragate::gate("regression", "base.jsonl", "out")
        .args(["--history", "no-such-dir"])
        .sha(SHA)
        .status(2)
        .run_in(dir);
    assert!(missing.stderr.contains("no-such-dir"), "{}", missing.stderr);
}

/// One query of each class (3 of 120) loses its second gold doc from the top 5: recall@5
/// -0.0125 overall and in each slice, within the 0.02 limit, so the night passes on its own.
fn write_slightly_worse(dir: &Path) {
    write_run(&dir.join("slightly.jsonl"), |i, _| {
        if i == 0 { [1, 7] } else { [1, 2 + i % 3] }
    });
}

/// One query in five (24 of 120) loses its second gold doc from the top 5: recall@5 -0.1, 4.4
/// standard errors beyond the 0.02 limit: the night fails on its own.
fn write_broken(dir: &Path) {
    write_run(&dir.join("broken.jsonl"), |i, _| {
        if i % 5 == 0 { [1, 7] } else { [1, 2 + i % 3] }
    });
}

fn drift_check(document: &serde_json::Value) -> &serde_json::Value {
    document["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "drift recall@5 [all]")
        .expect("a drift check in the JSON")
}

#[test]
fn a_passing_night_after_failing_ones_drifts_as_a_warning_or_a_failure_with_trends() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    baselined(dir);
    write_slightly_worse(dir);
    write_broken(dir);
    std::fs::create_dir_all(dir.join("hist")).unwrap();

    // An empty history: the drift checks see this run only, and are skipped (one run is no
    // series); the run passes.
    let first = Ragate::gate("regression", "slightly.jsonl", "out")
        .args(["--history", "hist"])
        .sha(SHA)
        .status(0)
        .run_in(dir);
    assert!(
        first.stdout.contains("drift recall@5 [all]"),
        "{}",
        first.stdout
    );
    for night in 1..=4 {
        let run = Ragate::gate("regression", "broken.jsonl", "out")
            .sha(&night_sha(night))
            .run_in(dir);
        assert_eq!(
            run.code, 1,
            "night {night} fails on its own: {}",
            run.stdout
        );
        assert_eq!(add(dir, night * 86_400).code, 0);
    }
    // Tonight is within the limit, but the last five runs together are beyond it.
    Ragate::gate("regression", "slightly.jsonl", "out")
        .args(["--history", "hist"])
        .sha(&night_sha(5))
        .status(0)
        .run_in(dir); // a drift warns by default
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(summary.contains("drift recall@5 [all]"), "{summary}");
    assert!(summary.contains("⚠️ warn"), "{summary}");
    assert!(summary.contains("drifting"), "{summary}");
    assert!(summary.contains("### Trends"), "{summary}");
    // Four nights at 0.9, tonight at 0.9875.
    assert!(
        summary.contains("| recall@5 [all] | `▁▁▁▁█` | 0.9000 – 0.9875 | 0.9875 (highest of 5) |"),
        "{summary}"
    );
    let junit = std::fs::read_to_string(dir.join("out/junit.xml")).unwrap();
    assert!(
        junit.contains("<testcase name=\"drift recall@5 [all]\""),
        "{junit}"
    );
    let json = Ragate::gate("regression", "slightly.jsonl", "out")
        .args(["--history", "hist", "--format", "json"])
        .sha(&night_sha(5))
        .run_in(dir);
    let document: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let drift = drift_check(&document);
    assert_eq!(drift["status"], "warn");
    assert_eq!(drift["family"], "drift");
    assert_eq!(drift["n"], 5);
    // mrr did not move: no drift there.
    let mrr = document["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "drift mrr [all]")
        .expect("a drift check per `all` check");
    assert_eq!(mrr["status"], "pass", "{mrr}");

    // `gate: { drift: fail }` (not part of the config hash: the series goes on) fails the run.
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    std::fs::write(
        dir.join("eval-config.yaml"),
        config.replace("gate:\n", "gate:\n  drift: fail\n"),
    )
    .unwrap();
    Ragate::gate("regression", "slightly.jsonl", "out")
        .args(["--history", "hist"])
        .sha(&night_sha(5))
        .status(1)
        .run_in(dir);
    let junit = std::fs::read_to_string(dir.join("out/junit.xml")).unwrap();
    let case = &junit[junit
        .find("<testcase name=\"drift recall@5 [all]\"")
        .unwrap()..];
    assert!(
        case[..case.find("</testcase>").unwrap()].contains("<failure"),
        "{junit}"
    );
    // Without --history there is no drift check: tonight passes.
    Ragate::gate("regression", "slightly.jsonl", "out")
        .sha(SHA)
        .status(0)
        .run_in(dir);

    // A run is one observation: night 4 gated again after it was recorded counts once (four
    // runs, not five).
    let again = Ragate::gate("regression", "broken.jsonl", "out")
        .args(["--history", "hist", "--format", "json"])
        .sha(&night_sha(4))
        .run_in(dir);
    let document: serde_json::Value = serde_json::from_str(&again.stdout).unwrap();
    assert_eq!(drift_check(&document)["n"], 4, "{}", again.stdout);
}

#[test]
fn a_temporary_left_by_a_killed_add_is_skipped_on_reading_and_removed_by_the_next_add() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    baselined(dir);
    Ragate::gate("regression", "base.jsonl", "out")
        .sha(SHA)
        .status(0)
        .run_in(dir);
    assert_eq!(add(dir, 86_400).code, 0);
    let folder = dir.join("hist/regression");
    // What `history add` killed by SIGKILL between writing and renaming leaves: a partial record
    // under the temporary name, an hour old; and one of an add running now.
    let stale = folder.join(".history-tmp-Ab12Cd");
    std::fs::write(&stale, "{\"format\": \"ragate-hist").unwrap();
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3_600);
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();
    let young = folder.join(".history-tmp-Ef34Gh");
    std::fs::write(&young, "{").unwrap();

    let shown = show(dir, &[]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert!(
        shown.stdout.contains("1970-01-02T00:00:00Z"),
        "{}",
        shown.stdout
    );
    Ragate::gate("regression", "base.jsonl", "out")
        .args(["--history", "hist"])
        .sha(SHA)
        .status(0)
        .run_in(dir);
    let report = ragate_env(
        dir,
        &[
            "report",
            "--tier",
            "regression",
            "--from",
            "out/results.json",
            "--history",
            "hist",
            "--out",
            "report.html",
        ],
        &[],
    );
    assert_eq!(report.code, 0, "{}", report.stderr);

    assert_eq!(add(dir, 2 * 86_400).code, 0);
    assert!(!stale.exists(), "the next add removes the stale temporary");
    assert!(young.exists(), "a temporary of an add running now is left");
    let shown = show(dir, &[]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert!(
        shown.stdout.contains("1970-01-03T00:00:00Z"),
        "{}",
        shown.stdout
    );
}

#[test]
fn a_source_date_epoch_past_the_year_9999_is_refused_by_history_add() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    baselined(dir);
    Ragate::gate("regression", "base.jsonl", "out")
        .sha(SHA)
        .status(0)
        .run_in(dir);
    for epoch in [253_402_300_800, u64::MAX] {
        let added = add(dir, epoch);
        assert_eq!(added.code, 2, "{epoch}: {}", added.stderr);
        assert!(
            added
                .stderr
                .contains(&format!("SOURCE_DATE_EPOCH is `{epoch}`"))
                && added.stderr.contains("before the year 10000"),
            "{}",
            added.stderr
        );
    }
    let last_second = add(dir, 253_402_300_799);
    assert_eq!(last_second.code, 0, "{}", last_second.stderr);
    assert!(
        dir.join("hist/regression/99991231T235959Z-0123456789ab.json")
            .exists()
    );
}

#[test]
fn a_recorded_value_outside_its_metric_or_an_n_that_does_not_fit_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    baselined(dir);
    Ragate::gate("regression", "base.jsonl", "out")
        .sha(SHA)
        .status(0)
        .run_in(dir);
    assert_eq!(add(dir, 86_400).code, 0);
    let path = dir.join("hist/regression/19700102T000000Z-0123456789ab.json");
    let original: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(show(dir, &[]).code, 0);
    let cases: [(&str, serde_json::Value, &str); 3] = [
        (
            "/metrics/recall@5/all/mean",
            1.5.into(),
            "metrics.recall@5.all: the mean is 1.5: expected a number in [0, 1]",
        ),
        (
            "/metrics/mrr/class=literal/n",
            1000.into(),
            "metrics.mrr.class=literal: n is 1000: expected at least 1 and at most the `all` n, 120",
        ),
        (
            "/metrics/recall@5/all/n",
            0.into(),
            "metrics.recall@5.all: n is 0: expected at least 1",
        ),
    ];
    for (pointer, value, expected) in cases {
        let mut record = original.clone();
        *record.pointer_mut(pointer).expect(pointer) = value;
        std::fs::write(&path, serde_json::to_string_pretty(&record).unwrap()).unwrap();
        let shown = show(dir, &[]);
        assert_eq!(shown.code, 2, "{expected}: {}", shown.stdout);
        assert!(
            shown
                .stderr
                .contains("19700102T000000Z-0123456789ab.json: ")
                && shown.stderr.contains(expected),
            "{expected}: {}",
            shown.stderr
        );
        let gated = Ragate::gate("regression", "base.jsonl", "out")
            .args(["--history", "hist"])
            .sha(SHA)
            .run_in(dir);
        assert_eq!(gated.code, 2, "{expected}: the gate fails closed too");
    }
}
