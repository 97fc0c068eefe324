//! What a team meets first with its config (issue 44): a config path that is not there says what
//! named it (`--config`, `RAGATE_CONFIG`, or the search and where it looked), with a close file
//! name or `ragate init`; a YAML error shows the offending line with a caret under its column.

use crate::Ragate;

const CONFIG: &str =
    "version: 1\nmetrics: [recall@5]\ntiers:\n  smoke: { qrels: qrels.jsonl, baseline: b.json }\n";

/// A temporary folder that is a repository root (the config search stops there).
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    dir
}

#[test]
fn a_misspelt_config_path_suggests_the_close_name_and_says_what_named_it() {
    let dir = repository();
    Ragate::new(["validate", "--config", "eval-confg.yaml"])
        .file("eval-config.yaml", CONFIG)
        .status(2)
        .stderr_has(
            "error: eval-confg.yaml: no such config file (named by --config) (did you mean \
             `eval-config.yaml`?)",
        )
        .run_in(dir.path());
    Ragate::new(["validate"])
        .env("RAGATE_CONFIG", "eval-confg.yaml")
        .status(2)
        .stderr_has(
            "error: eval-confg.yaml: no such config file (named by the environment variable \
             RAGATE_CONFIG) (did you mean `eval-config.yaml`?)",
        )
        .run_in(dir.path());
}

#[test]
fn no_config_at_all_lists_where_the_search_looked_and_names_ragate_init() {
    let dir = repository();
    let sub = dir.path().join("services/search");
    std::fs::create_dir_all(&sub).unwrap();
    let here = sub.canonicalize().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let outcome = Ragate::new(["validate"])
        .status(2)
        .stderr_has(&format!(
            "error: eval-config.yaml: no config found: looked for eval-config.yaml in {}, {}, {} \
             (the search stops at the repository root, the folder holding .git); `ragate init` \
             writes a starter config and pipeline here; name another with --config FILE or \
             RAGATE_CONFIG",
            here.display(),
            here.parent().unwrap().display(),
            root.display()
        ))
        .run_in(&sub);
    assert!(
        !outcome.stderr.contains("cannot read"),
        "{}",
        outcome.stderr
    );
    // A path given but not there, with nothing close and no config anywhere: `ragate init`.
    Ragate::new(["validate", "--config", "ci/ragate.yaml"])
        .status(2)
        .stderr_has(
            "error: ci/ragate.yaml: no such config file (named by --config); `ragate init` writes \
             a starter config and pipeline here",
        )
        .run_in(&sub);
}

#[test]
fn a_yaml_type_error_shows_the_line_and_a_caret_under_the_column() {
    let dir = repository();
    let config = format!("{CONFIG}gate:\n  alpha: often\n");
    let outcome = Ragate::new(["validate"])
        .file("eval-config.yaml", &config)
        .status(2)
        .stderr_has("eval-config.yaml:6:10: gate.alpha: invalid type: string \"often\"")
        .stderr_has("\n   6 |   alpha: often\n     |          ^\n")
        .run_in(dir.path());
    // The parser's words come first, the excerpt after them.
    let words = outcome.stderr.find("invalid type").unwrap();
    assert!(
        words < outcome.stderr.find("   6 | ").unwrap(),
        "{}",
        outcome.stderr
    );
    // A character that reorders text (a bidi override, which YAML allows) is shown escaped.
    let config = format!("{CONFIG}gate:\n  alpha: \"often\u{202e}\"\n");
    let outcome = Ragate::new(["validate"])
        .file("eval-config.yaml", &config)
        .status(2)
        .stderr_has("\n   6 |   alpha: \"often\\u{202e}\"\n     |          ^\n")
        .run_in(dir.path());
    assert!(!outcome.stderr.contains('\u{202e}'), "{}", outcome.stderr);
}

#[test]
fn a_yaml_syntax_error_shows_its_line_with_control_characters_escaped() {
    let dir = repository();
    let config = format!("{CONFIG}gate: {{ alpha: 0.05 \u{1b}]0;owned\u{7}\n");
    let outcome = Ragate::new(["validate"])
        .file("eval-config.yaml", &config)
        .status(2)
        .stderr_has("eval-config.yaml:5:21: control characters are not allowed")
        .stderr_has(
            "   5 | gate: { alpha: 0.05 \\u{1b}]0;owned\\u{7}\n     |                     ^\n",
        )
        .run_in(dir.path());
    assert!(!outcome.stderr.contains('\u{1b}'), "{}", outcome.stderr);
}
