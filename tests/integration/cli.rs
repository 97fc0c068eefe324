//! The command line's own surface: `--version`, colour, `--quiet`, completions and man pages.

use std::path::Path;

use crate::{Ragate, accept_baseline, ragate, ragate_env, ragate_in};

/// `ragate 0.1.0`, and in a git checkout of ragate ` (<12 hex>)` or ` (<12 hex>-dirty)` after it.
#[test]
fn version_names_the_package_version_and_the_commit_in_a_git_checkout() {
    let outcome = ragate(&["--version"]);
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    let line = outcome.stdout.trim_end();
    let expected = format!("ragate {}", env!("CARGO_PKG_VERSION"));
    assert!(line.starts_with(&expected), "{line}");
    let built_from_git = Path::new(env!("CARGO_MANIFEST_DIR")).join(".git").exists()
        && std::process::Command::new("git")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    let with_commit =
        regex_lite::Regex::new(r"^ragate \d+\.\d+\.\d+ \([0-9a-f]{12}(-dirty)?\)$").unwrap();
    if built_from_git {
        assert!(with_commit.is_match(line), "no commit in {line:?}");
    } else {
        assert_eq!(line, expected);
    }
}

const ESC: char = '\u{1b}';

/// A gate_flow folder whose `regression` tier has a baseline; `regressed.jsonl` fails one check.
fn baselined_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    crate::gate_flow::setup(dir.path());
    Ragate::gate("regression", "base.jsonl", "out")
        .status(2)
        .run_in(dir.path()); // no baseline yet
    accept_baseline(dir.path(), "regression", "out/results.json", &[]);
    dir
}

/// No file the gate writes holds an escape code, whatever colours stdout.
fn assert_files_plain(dir: &Path) {
    for name in [
        "summary.md",
        "junit.xml",
        "results.json",
        "trace.jsonl",
        "run-stats.json",
    ] {
        let text = std::fs::read_to_string(dir.join("out").join(name)).unwrap();
        assert!(!text.contains(ESC), "escape codes in {name}");
    }
}

#[test]
fn color_always_colours_the_verdict_words_and_never_the_files() {
    let dir = baselined_dir();
    let dir = dir.path();
    let outcome = Ragate::gate("regression", "regressed.jsonl", "out")
        .before(&["--color", "always"])
        .status(1)
        .run_in(dir);
    // Red bold FAIL, green pass, in the table and the verdict lines.
    assert!(
        outcome.stdout.contains("\u{1b}[1m\u{1b}[31mFAIL"),
        "{}",
        outcome.stdout
    );
    assert!(
        outcome.stdout.contains("\u{1b}[32mpass"),
        "{}",
        outcome.stdout
    );
    assert_files_plain(dir);
    // The flag also comes after the subcommand, and overrides NO_COLOR.
    let after = ragate_env(
        dir,
        &[
            "gate",
            "--tier",
            "regression",
            "--run",
            "regressed.jsonl",
            "--out",
            "out",
            "--color",
            "always",
        ],
        &[("NO_COLOR", "1")],
    );
    assert_eq!(after.code, 1, "{}", after.stderr);
    assert!(after.stdout.contains(ESC), "{}", after.stdout);
}

/// Flags before the subcommand, environment, whether stdout is coloured.
type Case = (
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
    bool,
);

#[test]
fn no_colour_on_a_pipe_with_never_or_with_no_color_and_force_color_colours_a_pipe() {
    let dir = baselined_dir();
    let dir = dir.path();
    let cases: [Case; 6] = [
        (&[], &[], false),
        (&["--color", "never"], &[], false),
        (&["--color", "never"], &[("FORCE_COLOR", "1")], false),
        (&[], &[("NO_COLOR", "1"), ("FORCE_COLOR", "1")], false),
        (&[], &[("FORCE_COLOR", "1")], true),
        (
            &["--color", "auto"],
            &[("FORCE_COLOR", "1"), ("NO_COLOR", "")],
            true,
        ),
    ];
    for (flags, env, coloured) in cases {
        let outcome = Ragate::gate("regression", "regressed.jsonl", "out")
            .before(flags)
            .envs(env)
            .run_in(dir);
        assert_eq!(outcome.code, 1, "{flags:?} {env:?}: {}", outcome.stderr);
        assert!(outcome.stdout.contains("FAIL"), "{}", outcome.stdout);
        assert_eq!(
            outcome.stdout.contains(ESC),
            coloured,
            "{flags:?} {env:?}: {}",
            outcome.stdout
        );
        assert_files_plain(dir);
    }
}

#[test]
fn the_error_prefix_is_red_with_color_always_and_plain_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let coloured = ragate_in(
        dir.path(),
        &["--color", "always", "validate", "--config", "missing.yaml"],
    );
    assert_eq!(coloured.code, 2);
    assert!(
        coloured
            .stderr
            .starts_with("\u{1b}[1m\u{1b}[31merror:\u{1b}[0m "),
        "{:?}",
        coloured.stderr
    );
    let plain = ragate_in(dir.path(), &["validate", "--config", "missing.yaml"]);
    assert_eq!(plain.code, 2);
    assert!(plain.stderr.starts_with("error: "), "{:?}", plain.stderr);
    assert!(!plain.stderr.contains(ESC));
}

#[test]
fn quiet_gate_prints_nothing_but_json_asked_for_and_keeps_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    crate::gate_flow::setup(dir);
    // No baseline: exit 2, the error on stderr, no note, no table.
    let first = Ragate::gate("regression", "base.jsonl", "out")
        .before(&["-q"])
        .status(2)
        .run_in(dir);
    assert_eq!(first.stdout, "");
    assert!(first.stderr.starts_with("error: "), "{}", first.stderr);
    assert!(!first.stderr.contains("note:"), "{}", first.stderr);
    accept_baseline(dir, "regression", "out/results.json", &[]);

    let passed = Ragate::gate("regression", "base.jsonl", "out")
        .before(&["--quiet"])
        .status(0)
        .run_in(dir);
    assert_eq!((passed.stdout.as_str(), passed.stderr.as_str()), ("", ""));
    let regressed = Ragate::gate("regression", "regressed.jsonl", "out")
        .before(&["-q"])
        .status(1)
        .run_in(dir);
    assert_eq!(
        (regressed.stdout.as_str(), regressed.stderr.as_str()),
        ("", "")
    );
    assert!(
        dir.join("out/summary.md").is_file(),
        "files are still written"
    );

    let json = ragate_in(
        dir,
        &[
            "gate",
            "--tier",
            "regression",
            "--run",
            "regressed.jsonl",
            "--out",
            "out",
            "-q",
            "--format",
            "json",
        ],
    );
    assert_eq!(json.code, 1, "{}", json.stderr);
    let document: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert!(document.is_object(), "{document}");
    assert_eq!(json.stderr, "");
}

#[test]
fn quiet_eval_and_validate_print_only_json_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    crate::gate_flow::setup(dir);
    let eval = ["eval", "--qrels", "qrels.jsonl", "--run", "base.jsonl"];
    let loud = ragate_in(dir, &eval);
    assert_eq!(loud.code, 0, "{}", loud.stderr);
    assert!(loud.stdout.contains("recall@5"), "{}", loud.stdout);
    let quiet = ragate_in(dir, &[&["-q"], &eval[..]].concat());
    assert_eq!(
        (quiet.code, quiet.stdout.as_str(), quiet.stderr.as_str()),
        (0, "", "")
    );
    let json = ragate_in(dir, &[&eval[..], &["--format", "json", "-q"]].concat());
    assert_eq!(json.code, 0, "{}", json.stderr);
    serde_json::from_str::<serde_json::Value>(&json.stdout).unwrap();

    // No baseline yet: a warning, which --quiet drops.
    let loud = ragate_in(dir, &["validate"]);
    assert_eq!(loud.code, 0, "{}", loud.stderr);
    assert!(loud.stderr.contains("warning: "), "{}", loud.stderr);
    let quiet = ragate_in(dir, &["validate", "-q"]);
    assert_eq!(
        (quiet.code, quiet.stdout.as_str(), quiet.stderr.as_str()),
        (0, "", "")
    );
    let json = ragate_in(dir, &["validate", "-q", "--format", "json"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let document: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(document["warnings"].as_array().map(Vec::len), Some(1));

    // A tier whose qrels are missing: an error, which --quiet prints on stderr.
    std::fs::remove_file(dir.join("qrels.jsonl")).unwrap();
    let quiet = ragate_in(dir, &["validate", "-q"]);
    assert_eq!(quiet.code, 2, "{}", quiet.stderr);
    assert_eq!(quiet.stdout, "");
    assert!(
        quiet.stderr.starts_with("error: tier `regression`"),
        "{}",
        quiet.stderr
    );
    assert!(!quiet.stderr.contains("warning:"), "{}", quiet.stderr);
}

/// The subcommands `ragate --help` lists (without `help`).
fn subcommands() -> Vec<String> {
    let help = ragate(&["--help"]);
    assert_eq!(help.code, 0, "{}", help.stderr);
    let names: Vec<String> = help
        .stdout
        .lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(String::from)
        .collect();
    assert!(names.len() >= 10, "{}", help.stdout);
    names
}

#[test]
fn bash_completion_parses_and_every_script_names_the_subcommands() {
    let names = subcommands();
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let outcome = ragate(&["completions", shell]);
        assert_eq!(outcome.code, 0, "{shell}: {}", outcome.stderr);
        for name in &names {
            assert!(
                outcome.stdout.contains(name.as_str()),
                "{shell} lacks {name}"
            );
        }
        let script = dir.path().join(format!("ragate.{shell}"));
        std::fs::write(&script, &outcome.stdout).unwrap();
        // bash must be there; zsh and fish are checked when the machine has them.
        let checker = match shell {
            "bash" | "zsh" => Some(vec![shell, "-n"]),
            "fish" => Some(vec!["fish", "--no-execute"]),
            _ => None,
        };
        let Some(checker) = checker else { continue };
        match std::process::Command::new(checker[0])
            .args(&checker[1..])
            .arg(&script)
            .output()
        {
            Ok(output) => assert!(
                output.status.success(),
                "{shell} rejects its completion script: {}",
                String::from_utf8_lossy(&output.stderr)
            ),
            Err(error) => assert_ne!(shell, "bash", "bash must run: {error}"),
        }
    }
    let unknown = ragate(&["completions", "tcsh"]);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.contains("possible values"),
        "{}",
        unknown.stderr
    );
}

/// roff with the `\-` escapes undone, as a reader sees the names.
fn unescaped(page: &str) -> String {
    page.replace("\\-", "-")
}

/// The page opens with its `.TH` title (after roff's two-line apostrophe preamble, `.ie`/`.el`).
fn title_line(page: &str) -> &str {
    let mut lines = page
        .lines()
        .skip_while(|l| l.starts_with(".ie ") || l.starts_with(".el "));
    let first = lines.next().unwrap_or_default();
    assert!(first.starts_with(".TH "), "{page}");
    first
}

#[test]
fn man_prints_ragate_1_naming_every_subcommand() {
    let outcome = ragate(&["man"]);
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    let title = title_line(&outcome.stdout);
    assert!(title.starts_with(".TH ragate 1 "), "{title}");
    let page = unescaped(&outcome.stdout);
    for name in subcommands() {
        assert!(
            page.contains(&format!("ragate-{name}(1)")),
            "ragate.1 lacks {name}"
        );
    }
}

#[test]
fn man_out_writes_a_page_per_subcommand_and_names_the_option_it_cannot_write() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man/man1");
    let outcome = ragate(&["man", "--out", crate::path_str(&out)]);
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    let main = std::fs::read_to_string(out.join("ragate.1")).unwrap();
    assert_eq!(
        main,
        ragate(&["man"]).stdout,
        "the printed page is the written one"
    );
    for name in subcommands() {
        let file = out.join(format!("ragate-{name}.1"));
        let page =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let title = unescaped(title_line(&page));
        assert!(
            title.starts_with(&format!(".TH ragate-{name} 1 ")),
            "{title}"
        );
    }
    for nested in ["ragate-baseline-accept.1", "ragate-baseline-show.1"] {
        assert!(out.join(nested).is_file(), "{nested}");
    }
    assert!(!out.join("ragate-help.1").exists());

    let blocker = dir.path().join("a-file");
    std::fs::write(&blocker, "").unwrap();
    let outcome = ragate(&["man", "--out", crate::path_str(&blocker)]);
    assert_eq!(outcome.code, 2, "{}", outcome.stderr);
    assert!(
        outcome.stderr.contains("(named by --out)"),
        "{}",
        outcome.stderr
    );
}

#[test]
fn programs_the_tests_run_see_only_the_kept_environment() {
    // `env` prints what it was given: the kept variables, the toolchain's and the test's own.
    let output = crate::clean_command("env")
        .env("RAGATE_SET_BY_THE_TEST", "1")
        .output()
        .expect("env runs");
    let printed = String::from_utf8(output.stdout).unwrap();
    let names: Vec<&str> = printed
        .lines()
        .filter_map(|line| line.split_once('=').map(|(name, _)| name))
        .collect();
    assert!(names.contains(&"RAGATE_SET_BY_THE_TEST"), "{printed}");
    for name in names {
        let toolchain = ["CARGO", "RUSTUP", "RUSTC"]
            .iter()
            .any(|prefix| name.starts_with(prefix));
        assert!(
            toolchain
                || crate::KEPT_ENVIRONMENT.contains(&name)
                || name == "RAGATE_SET_BY_THE_TEST",
            "`{name}` leaks from the shell running the tests: {printed}"
        );
    }
}

/// A qrels file and a run of `n` queries, each with one relevant document retrieved first.
fn many_queries(dir: &Path, n: usize) {
    let qrels: String = (0..n)
        .map(|i| {
            format!("{{\"qid\":\"q{i}\",\"query\":\"query {i}\",\"gold_doc_ids\":[\"d{i}\"]}}\n")
        })
        .collect();
    let run: String = (0..n)
        .map(|i| format!("{{\"qid\":\"q{i}\",\"retrieved\":[{{\"doc_id\":\"d{i}\"}}]}}\n"))
        .collect();
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("run.jsonl"), run).unwrap();
}

/// `ragate eval ... | head`: the reader closing stdout ends the output, not the command (exit 0,
/// nothing on stderr), while a stdout that cannot be written is an error saying so.
#[test]
fn a_closed_pipe_ends_the_output_and_a_failed_write_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    // 20,000 queries x 2 metrics of per-query TSV: far more than a pipe's buffer.
    many_queries(dir, 20_000);
    let args = [
        "eval",
        "--qrels",
        "qrels.jsonl",
        "--run",
        "run.jsonl",
        "--per-query",
        "--format",
        "tsv",
        "-m",
        "recall@5",
        "-m",
        "mrr",
    ];
    let mut child = crate::clean_command(env!("CARGO_BIN_EXE_ragate"))
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{:?}", output);
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(first.starts_with(b"recall@5\tq"), "{first:?}");
    if Path::new("/dev/full").exists() {
        let full = crate::clean_command(env!("CARGO_BIN_EXE_ragate"))
            .args(args)
            .current_dir(dir)
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        assert_eq!(full.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&full.stderr);
        assert!(stderr.contains("cannot write <stdout>"), "{stderr}");
    }
}
