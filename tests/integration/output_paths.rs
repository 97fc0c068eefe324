//! Outputs over inputs and devices: every command that writes refuses an output path that names
//! one of its inputs (whatever the spelling: `./x`, a symbolic link, a hard link), exit 2 naming
//! both, the input untouched; and an output that is a device or a FIFO (`/dev/null`,
//! `/dev/stdout`, a named pipe) is written in place, never replaced by a regular file.

use std::path::Path;

use crate::gate_flow::setup;
use crate::{Outcome, Ragate, accept_baseline, ragate_in};

/// A tier with a baseline of `base.jsonl` and a gate run of `regressed.jsonl` in `out`.
fn regressed_after_baseline(dir: &Path) {
    setup(dir);
    Ragate::gate("regression", "base.jsonl", "out")
        .status(2)
        .run_in(dir); // no baseline yet
    accept_baseline(dir, "regression", "out/results.json", &[]);
    std::fs::copy(dir.join("out/results.json"), dir.join("base.json")).unwrap();
    Ragate::gate("regression", "regressed.jsonl", "out")
        .status(1)
        .run_in(dir);
}

fn compare_junit(dir: &Path, junit: &str) -> Outcome {
    ragate_in(
        dir,
        &["compare", "base.json", "out/results.json", "--junit", junit],
    )
}

/// The refusal: exit 2, the option's path and what it is named, the file unchanged.
fn assert_refused(outcome: &Outcome, option: &str, named: &str, file: &Path, before: &[u8]) {
    assert_eq!(outcome.code, 2, "{}\n{}", outcome.stdout, outcome.stderr);
    assert!(
        outcome.stderr.contains(&format!("{option} "))
            && outcome.stderr.contains(named)
            && outcome.stderr.contains("refusing to overwrite an input"),
        "{}",
        outcome.stderr
    );
    assert_eq!(
        std::fs::read(file).unwrap(),
        before,
        "{} unchanged",
        file.display()
    );
}

#[test]
fn compare_refuses_a_junit_path_that_is_one_of_its_inputs_however_spelled() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    regressed_after_baseline(dir);
    let baseline = dir.join("baselines/regression.json");
    let saved = std::fs::read(&baseline).unwrap();
    std::os::unix::fs::symlink("baselines/regression.json", dir.join("link.json")).unwrap();
    std::fs::hard_link(&baseline, dir.join("hard.json")).unwrap();
    for spelling in [
        "baselines/regression.json",
        "./baselines/../baselines/regression.json",
        "link.json",
        "hard.json",
    ] {
        let refused = compare_junit(dir, spelling);
        assert_refused(
            &refused,
            "--junit",
            "tier `regression`'s baseline",
            &baseline,
            &saved,
        );
        assert!(refused.stderr.contains(spelling), "{}", refused.stderr);
    }
    for (path, named) in [
        ("eval-config.yaml", "the config"),
        ("base.json", "the first results (A)"),
        ("out/results.json", "the second results (B)"),
        ("qrels.jsonl", "qrels"),
    ] {
        let file = dir.join(path);
        let saved = std::fs::read(&file).unwrap();
        assert_refused(&compare_junit(dir, path), "--junit", named, &file, &saved);
    }
    let written = compare_junit(dir, "compare.xml");
    assert_eq!(written.code, 1, "{}", written.stderr);
    assert!(
        std::fs::read_to_string(dir.join("compare.xml"))
            .unwrap()
            .contains("<testsuite")
    );
}

#[test]
fn convert_refuses_an_out_path_that_is_its_own_queries_or_qrels() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(dir.join("qrels.txt"), "q1 0 d1 1\nq2 0 d2 1\n").unwrap();
    std::fs::write(dir.join("queries.jsonl"), "{\"_id\":\"q1\",\"text\":\"one\"}\n{\"_id\":\"q2\",\"text\":\"two\"}\n{\"_id\":\"q3\",\"text\":\"three\"}\n").unwrap();
    let convert = |out: &str| {
        ragate_in(
            dir,
            &[
                "convert",
                "--qrels",
                "qrels.txt",
                "--queries",
                "queries.jsonl",
                "--out",
                out,
            ],
        )
    };
    for (out, named, file) in [
        ("queries.jsonl", "the queries (--queries)", "queries.jsonl"),
        (
            "./queries.jsonl",
            "the queries (--queries)",
            "queries.jsonl",
        ),
        ("qrels.txt", "the qrels (--qrels)", "qrels.txt"),
    ] {
        let path = dir.join(file);
        let saved = std::fs::read(&path).unwrap();
        assert_refused(&convert(out), "--out", named, &path, &saved);
    }
    let written = convert("native.jsonl");
    assert_eq!(written.code, 0, "{}", written.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.join("native.jsonl"))
            .unwrap()
            .lines()
            .count(),
        2
    );
}

#[test]
fn report_and_gate_refuse_an_output_over_a_history_record() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    regressed_after_baseline(dir);
    let added = ragate_in(
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
        ],
    );
    assert_eq!(added.code, 0, "{}", added.stderr);
    let record = std::fs::read_dir(dir.join("hist/regression"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let saved = std::fs::read(&record).unwrap();
    let record_arg = format!(
        "hist/regression/{}",
        record.file_name().unwrap().to_str().unwrap()
    );
    let report = ragate_in(
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
            &record_arg,
        ],
    );
    assert_refused(
        &report,
        "--out",
        "a history record of tier `regression`",
        &record,
        &saved,
    );
    let gated = Ragate::gate("regression", "base.jsonl", "out")
        .args(["--history", "hist", "--junit", &record_arg])
        .run_in(dir);
    assert_refused(
        &gated,
        "--junit",
        "a history record of tier `regression`",
        &record,
        &saved,
    );
}

#[test]
fn baseline_accept_refuses_a_baseline_path_that_is_another_input_of_the_tier() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    Ragate::gate("regression", "base.jsonl", "out")
        .status(2)
        .run_in(dir); // no baseline yet
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    std::fs::write(
        dir.join("eval-config.yaml"),
        config.replace(
            "baseline: baselines/regression.json",
            "baseline: ./qrels.jsonl",
        ),
    )
    .unwrap();
    let qrels = dir.join("qrels.jsonl");
    let saved = std::fs::read(&qrels).unwrap();
    let refused = ragate_in(
        dir,
        &[
            "baseline",
            "accept",
            "--tier",
            "regression",
            "--from",
            "out/results.json",
            "--force",
        ],
    );
    assert_refused(
        &refused,
        "tier `regression`'s baseline",
        "tier `regression`'s qrels",
        &qrels,
        &saved,
    );
}

#[cfg(unix)]
mod devices {
    use super::*;
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;

    fn is_char_device(path: &str) -> bool {
        std::fs::metadata(path)
            .unwrap()
            .file_type()
            .is_char_device()
    }

    #[test]
    fn dev_null_is_written_in_place_by_gate_and_compare() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        regressed_after_baseline(dir);
        Ragate::gate("regression", "base.jsonl", "out")
            .args(["--junit", "/dev/null"])
            .status(0)
            .run_in(dir);
        assert!(is_char_device("/dev/null"));
        assert!(dir.join("out/junit.xml").is_file(), "the out folder's copy");
        // out/ now holds the run of base.jsonl: the same as A.
        let compared = compare_junit(dir, "/dev/null");
        assert_eq!(compared.code, 0, "{}", compared.stderr);
        assert!(is_char_device("/dev/null"));
    }

    #[test]
    fn dev_stdout_gets_the_converted_qrels() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        std::fs::write(dir.join("qrels.txt"), "q1 0 d1 1\nq2 0 d2 1\n").unwrap();
        std::fs::write(dir.join("queries.tsv"), "q1\tone\nq2\ttwo\n").unwrap();
        let converted = ragate_in(
            dir,
            &[
                "convert",
                "--qrels",
                "qrels.txt",
                "--queries",
                "queries.tsv",
                "--out",
                "/dev/stdout",
            ],
        );
        assert_eq!(converted.code, 0, "{}", converted.stderr);
        assert_eq!(converted.stdout.lines().count(), 2, "{}", converted.stdout);
        assert!(
            converted.stdout.contains("\"qid\":\"q1\""),
            "{}",
            converted.stdout
        );
    }

    /// A named pipe at `path` and a thread that reads it to the end.
    fn fifo_reader(path: &Path) -> std::thread::JoinHandle<String> {
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(made.success());
        let path = path.to_path_buf();
        std::thread::spawn(move || {
            let mut text = String::new();
            std::fs::File::open(&path)
                .unwrap()
                .read_to_string(&mut text)
                .unwrap();
            text
        })
    }

    #[test]
    fn a_fifo_is_written_in_place_by_gate_compare_and_report() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        regressed_after_baseline(dir);
        let fifo = dir.join("junit.pipe");
        let reader = fifo_reader(&fifo);
        Ragate::gate("regression", "base.jsonl", "out")
            .args(["--junit", "junit.pipe"])
            .status(0)
            .run_in(dir);
        let junit = reader.join().unwrap();
        assert!(junit.contains("<testsuite"), "{junit}");
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());

        let reader = fifo_reader(&dir.join("compare.pipe"));
        assert_eq!(compare_junit(dir, "compare.pipe").code, 0);
        assert!(reader.join().unwrap().contains("<testsuite"));

        let reader = fifo_reader(&dir.join("report.pipe"));
        let report = ragate_in(
            dir,
            &[
                "report",
                "--tier",
                "regression",
                "--from",
                "out/results.json",
                "--out",
                "report.pipe",
            ],
        );
        assert_eq!(report.code, 0, "{}", report.stderr);
        assert!(reader.join().unwrap().contains("<html"));
        assert!(
            std::fs::metadata(dir.join("report.pipe"))
                .unwrap()
                .file_type()
                .is_fifo()
        );
    }
}

/// `ragate history add` of `out/results.json` into `hist`; the record's path.
fn history_record(dir: &Path) -> std::path::PathBuf {
    let added = ragate_in(
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
        ],
    );
    assert_eq!(added.code, 0, "{}", added.stderr);
    std::fs::read_dir(dir.join("hist/regression"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
}

#[test]
fn no_output_goes_into_a_history_folder() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    regressed_after_baseline(dir);
    history_record(dir);
    let report = |out: &str, history: bool| {
        let mut args = vec![
            "report",
            "--tier",
            "regression",
            "--from",
            "out/results.json",
            "--out",
            out,
        ];
        if history {
            args.extend(["--history", "hist"]);
        }
        ragate_in(dir, &args)
    };
    for (out, history, why) in [
        (
            "hist/regression/zz.json",
            true,
            "is inside the history folder hist (--history)",
        ),
        (
            "hist/report.html",
            true,
            "is inside the history folder hist",
        ),
        (
            "hist/regression/zz.json",
            false,
            "is in hist/regression, a tier's history folder (it holds history records)",
        ),
        (
            "./hist/../hist/regression/zz.html",
            false,
            "is in ./hist/../hist/regression, a tier's history folder",
        ),
    ] {
        let refused = report(out, history);
        assert_eq!(refused.code, 2, "{out}: {}", refused.stderr);
        assert!(
            refused.stderr.contains(&format!("--out {out} {why}"))
                && refused.stderr.contains("choose a path outside it"),
            "{out}: {}",
            refused.stderr
        );
        assert!(!dir.join(out).exists(), "{out} was written");
    }
    // The gate's output folder and its --junit: refused, and nothing of the failed run lands there.
    for args in [
        &["--history", "hist", "--out", "hist/regression"][..],
        &["--out", "hist/regression"],
        &["--history", "hist", "--junit", "hist/junit.xml"],
    ] {
        let refused = ragate_in(
            dir,
            &[
                &["gate", "--tier", "regression", "--run", "base.jsonl"],
                args,
            ]
            .concat(),
        );
        assert_eq!(refused.code, 2, "{args:?}: {}", refused.stderr);
        assert!(
            refused.stderr.contains("history folder"),
            "{args:?}: {}",
            refused.stderr
        );
    }
    let left: Vec<String> = std::fs::read_dir(dir.join("hist/regression"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(left.len(), 1, "only the record: {left:?}");
    assert!(!dir.join("hist/junit.xml").exists());
    let shown = ragate_in(
        dir,
        &["history", "show", "--tier", "regression", "--dir", "hist"],
    );
    assert_eq!(shown.code, 0, "the history still reads: {}", shown.stderr);
    // Outside the history folder the report is written.
    let written = report("report.html", true);
    assert_eq!(written.code, 0, "{}", written.stderr);
}

#[test]
fn a_gate_run_from_a_subfolder_writes_its_outputs_beside_the_config() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    let deep = dir.join("sub/deep");
    std::fs::create_dir_all(&deep).unwrap();
    let first = ragate_in(
        &deep,
        &["gate", "--tier", "regression", "--run", "../../base.jsonl"],
    );
    assert_eq!(first.code, 2, "no baseline yet: {}", first.stderr);
    assert!(
        dir.join(".ragate/out/regression/results.json").is_file(),
        "beside the config"
    );
    assert!(dir.join(".ragate/out/regression/summary.md").is_file());
    assert!(!deep.join(".ragate").exists(), "nothing in the subfolder");
    assert!(
        first
            .stderr
            .contains("to accept ../../.ragate/out/regression/results.json"),
        "says where they went: {}",
        first.stderr
    );
    // The commands that read the outputs find them there from the subfolder too.
    let accepted = ragate_in(&deep, &["baseline", "accept", "--tier", "regression"]);
    assert_eq!(accepted.code, 0, "{}", accepted.stderr);
    assert!(dir.join("baselines/regression.json").is_file());
    let report = ragate_in(
        &deep,
        &["report", "--tier", "regression", "--out", "report.html"],
    );
    assert_eq!(report.code, 0, "{}", report.stderr);
    assert!(
        deep.join("report.html").is_file(),
        "a path given: the cwd's"
    );
    // An --out given on the command line is relative to where ragate runs.
    let given = ragate_in(
        &deep,
        &[
            "gate",
            "--tier",
            "regression",
            "--run",
            "../../base.jsonl",
            "--out",
            "mine",
        ],
    );
    assert_eq!(given.code, 0, "{}", given.stderr);
    assert!(deep.join("mine/results.json").is_file());
}

#[cfg(unix)]
#[test]
fn a_link_planted_in_the_output_folder_is_replaced_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    regressed_after_baseline(dir);
    let baseline = dir.join("baselines/regression.json");
    let saved = std::fs::read(&baseline).unwrap();
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    for (name, target) in [
        ("summary.md", "../baselines/regression.json"),
        ("trace.jsonl", "../notes.txt"),
        ("junit.xml", "../planted.xml"),
    ] {
        let link = dir.join("out").join(name);
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(target, &link).unwrap();
    }
    Ragate::gate("regression", "base.jsonl", "out")
        .status(0)
        .run_in(dir);
    assert_eq!(
        std::fs::read(&baseline).unwrap(),
        saved,
        "baseline unchanged"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "mine"
    );
    assert!(
        !dir.join("planted.xml").exists(),
        "a dangling link's target"
    );
    for name in ["summary.md", "trace.jsonl", "junit.xml"] {
        let path = dir.join("out").join(name);
        let metadata = std::fs::symlink_metadata(&path).unwrap();
        assert!(metadata.is_file(), "{name} is a regular file now");
    }
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(summary.contains("tier\u{a0}regression"), "{summary}");
}
