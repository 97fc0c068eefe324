//! The command line's own surface: `--version`, colour, `--quiet`, completions and man pages.

use std::path::Path;

use crate::ragate;

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
