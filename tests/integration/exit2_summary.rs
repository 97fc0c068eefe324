//! The summary of an exit 2 end to end: a command pipeline that crashes after writing a
//! traceback with an API key, a mention, an image, a workflow command and colour codes to its
//! stderr. summary.md has the gate's headline style, the cause as text, and the last lines of
//! that stderr, with the key redacted and the rest inert; the stderr still reaches the terminal.

use std::path::Path;

use crate::{Ragate, ragate_in};

/// The value of `MY_API_KEY` (its name looks secret, so ragate redacts it).
const KEY: &str = "sk-test-7f3a9c2e41b8d605";

const CRASH: &str = r#"cat > /dev/null
echo "loading index" >&2
echo "Traceback (most recent call last):" >&2
echo '  File "eval/pipeline.py", line 12, in <module>' >&2
echo "openai.AuthenticationError: 401 invalid key $MY_API_KEY; ask @someone ![x](http://e.example/i.png)" >&2
printf '::error::forged\n\033[31mred\033[0m\n' >&2
exit 1
"#;

fn crashing_project(dir: &Path) {
    let init = ragate_in(dir, &["init"]);
    assert_eq!(init.code, 0, "{}", init.stderr);
    std::fs::write(dir.join("eval/crash.sh"), CRASH).unwrap();
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    let replaced = config.replace(
        r#"command: ["python3", "eval/pipeline.py"]"#,
        r#"command: ["sh", "eval/crash.sh"]"#,
    );
    assert_ne!(config, replaced, "the scaffold's pipeline command");
    std::fs::write(dir.join("eval-config.yaml"), replaced).unwrap();
}

#[test]
fn a_crashing_pipeline_s_stderr_tail_is_in_the_summary_redacted_and_inert() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    crashing_project(dir);
    let outcome = Ragate::new(["gate", "--tier", "smoke", "--out", "out"])
        .env("MY_API_KEY", KEY)
        .status(2)
        .run_in(dir);
    // Passed through to the terminal as the pipeline wrote it (its own output).
    assert!(
        outcome
            .stderr
            .contains("Traceback (most recent call last):"),
        "{}",
        outcome.stderr
    );
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(
        summary.starts_with(
            "**⚠️ Not evaluated: the pipeline failed** · tier\u{a0}smoke\n\nThe gate stopped with an \
             error before it could evaluate this tier (exit 2):\n\npipeline (command): \\`sh \
             eval/crash.sh\\`: exited with"
        ),
        "{summary}"
    );
    assert!(!summary.contains("```"), "{summary}");
    assert!(
        summary.contains(
            "<details open><summary>The last 6 lines of the pipeline's stderr (secrets \
             redacted)</summary>\n\nloading index<br>\nTraceback (most recent call last):<br>\n\
             \u{a0}\u{a0}File \"eval/pipeline.py\", line 12, in &lt;module><br>\n\
             openai.AuthenticationError: 401 invalid key [redacted]; ask @\u{2060}someone \
             ![x\\](http:\u{2060}//e.example/i.png)<br>\n\\::\u{2060}error::forged<br>\n\
             \\\\u{1b}[31mred\\\\u{1b}[0m<br>\n\n</details>\n"
        ),
        "{summary}"
    );
    assert!(
        !summary.contains(KEY) && !summary.contains("7f3a9c"),
        "{summary}"
    );
    assert!(!summary.contains('\u{1b}'), "{summary}");
    let junit = std::fs::read_to_string(dir.join("out/junit.xml")).unwrap();
    assert!(junit.contains("<error"), "{junit}");
}

#[test]
fn the_hostile_corpus_on_a_pipeline_s_stderr_is_inert_in_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    crashing_project(dir);
    // The last 20 lines of the corpus (one string a line) on stderr, then a crash.
    let strings = crate::hostile_strings::corpus();
    let lines: Vec<String> = strings.iter().map(|s| s.replace('\n', " ")).collect();
    std::fs::write(dir.join("eval/hostile.txt"), lines.join("\n")).unwrap();
    std::fs::write(
        dir.join("eval/crash.sh"),
        "cat > /dev/null\ncat eval/hostile.txt >&2\nexit 1\n",
    )
    .unwrap();
    Ragate::new(["gate", "--tier", "smoke", "--out", "out"])
        .env("MY_API_KEY", KEY)
        .status(2)
        .run_in(dir);
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(
        summary.contains("of the pipeline's stderr (secrets redacted)</summary>"),
        "{summary}"
    );
    crate::hostile_strings::assert_markdown_inert(&summary, "a crashing pipeline's stderr");
}
