//! summary.md of a run that stopped with an error (exit 2), readable at PR-comment width: a
//! headline in the gate's style (`**⚠️ Not evaluated: the pipeline failed** · tier smoke`), the
//! cause as wrapping text (no code block, which GitHub clips at the comment's width), and, when a
//! child failed, the last lines of its stderr (bounded by `stderr_tail`, secrets redacted there),
//! one inert line each, in an open `<details>`.

use crate::error::Error;
use crate::report::inert;

/// Longest line of the cause shown, in characters.
const CAUSE_CHARS: usize = 2000;
/// Longest stderr line shown, in characters.
const LINE_CHARS: usize = 300;
/// Most leading spaces of a stderr line kept (as no-break spaces: a traceback's indentation).
const MAX_INDENT: usize = 12;

/// What stopped the run, for the headline: `the pipeline failed`, ``judge `nli` failed``.
fn what_failed(error: &Error) -> String {
    match error {
        Error::Child { error, .. } => what_failed(error),
        Error::Pipeline { .. } => "the pipeline failed".to_string(),
        Error::Judge { judge, .. } => format!("judge {} failed", inert::code(judge, 100)),
        Error::Config { .. } => "the config is not valid".to_string(),
        Error::Missing { .. } => "a file is missing".to_string(),
        Error::Io { .. } => "an input cannot be read".to_string(),
        Error::Write { .. } => "an output cannot be written".to_string(),
        Error::Parse { .. } => "an input line is malformed".to_string(),
        Error::Input { .. } => "an input cannot be used".to_string(),
        Error::Usage(_) => "the command cannot run as given".to_string(),
        Error::Chart { .. } => "a chart of the HTML report failed".to_string(),
    }
}

/// Whose stderr a failed child's tail is: `the pipeline's`, ``judge `nli`'s``.
fn whose(error: &Error) -> String {
    match error {
        Error::Child { error, .. } => whose(error),
        // In `<summary>`, where Markdown (a code span) does not apply.
        Error::Judge { judge, .. } => format!("judge {}'s", inert::text(judge, 100)),
        _ => "the pipeline's".to_string(),
    }
}

/// A line of a message or of stderr as inert Markdown prose ([`inert::text`]) whose backticks are
/// escaped too: a message's own code spans would show `&amp;` and `\_` as written, so the line
/// reads as on the terminal. No line starts with `::` (as a workflow command does), even where a
/// Markdown file is printed: a leading `:` is escaped.
fn prose(line: &str, max_chars: usize) -> String {
    let text = inert::text(line, max_chars).replace('`', "\\`");
    if text.starts_with(':') {
        format!("\\{text}")
    } else {
        text
    }
}

/// One line of a child's stderr as Markdown: inert, its indentation kept as no-break spaces (a
/// tab counts four), a hard line break after it.
fn stderr_line(line: &str) -> String {
    let indent: usize = line
        .chars()
        .take_while(|c| matches!(c, ' ' | '\t'))
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum();
    format!(
        "{}{}<br>\n",
        "\u{a0}".repeat(indent.min(MAX_INDENT)),
        prose(line, LINE_CHARS)
    )
}

/// The summary of a run of `tier` that stopped with `error` (see the module doc).
pub(crate) fn render(tier: &str, error: &Error) -> String {
    let mut out = format!(
        "**⚠️ Not evaluated: {}** · tier\u{a0}{}\n\nThe gate stopped with an error before it could evaluate this tier (exit 2):\n\n",
        what_failed(error),
        inert::text(tier, 200)
    );
    let cause: Vec<String> = error
        .to_string()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| prose(line, CAUSE_CHARS))
        .collect();
    out.push_str(&cause.join("<br>\n"));
    out.push_str("\n\n");
    let tail = error.stderr_tail();
    if !tail.is_empty() {
        let lines = if tail.len() == 1 {
            "line".to_string()
        } else {
            format!("{} lines", tail.len())
        };
        out.push_str(&format!(
            "<details open><summary>The last {lines} of {} stderr (secrets redacted)</summary>\n\n",
            whose(error)
        ));
        for line in tail {
            out.push_str(&stderr_line(line));
        }
        out.push_str("\n</details>\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crash(stderr: &[&str]) -> Error {
        Error::Pipeline {
            adapter: "command".into(),
            message: "`python3 eval/pipeline.py`: exited with exit status: 1: expected exit code 0"
                .into(),
            cause: None,
        }
        .with_stderr(stderr.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn the_headline_has_the_gate_s_style_and_the_cause_wraps() {
        let text = render("smoke", &crash(&[]));
        assert!(
            text.starts_with("**⚠️ Not evaluated: the pipeline failed** · tier\u{a0}smoke\n\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "\n\npipeline (command): \\`python3 eval/pipeline.py\\`: exited with exit status: \
                 1: expected exit code 0\n"
            ),
            "{text}"
        );
        assert!(!text.contains("```"), "no clipped code block: {text}");
        assert!(!text.contains("<details"), "no stderr, no section: {text}");
        let config = Error::config(
            std::path::Path::new("eval-config.yaml"),
            "gate.rules[0].metric",
            "unknown metric `recal@5`",
        );
        let text = render("smoke", &config);
        assert!(
            text.starts_with("**⚠️ Not evaluated: the config is not valid** · tier\u{a0}smoke"),
            "{text}"
        );
        assert!(
            text.contains("eval-config.yaml: gate.rules[0].metric: unknown metric \\`recal@5\\`"),
            "{text}"
        );
    }

    #[test]
    fn the_stderr_tail_is_shown_line_by_line_with_its_indentation() {
        let text = render(
            "smoke",
            &crash(&[
                "Traceback (most recent call last):",
                "  File \"eval/pipeline.py\", line 3, in <module>",
                "ModuleNotFoundError: No module named 'faiss'",
            ]),
        );
        assert!(
            text.contains(
                "<details open><summary>The last 3 lines of the pipeline's stderr (secrets \
                 redacted)</summary>\n\nTraceback (most recent call last):<br>\n\u{a0}\u{a0}File \
                 \"eval/pipeline.py\", line 3, in &lt;module><br>\nModuleNotFoundError: No module \
                 named 'faiss'<br>\n\n</details>\n"
            ),
            "{text}"
        );
        let judge = Error::Judge {
            judge: "nli".into(),
            message: "`python3 judge.py`: it exited with code 2: expected exit code 0".into(),
            cause: None,
        }
        .with_stderr(vec!["out of memory".into()]);
        let text = render("smoke", &judge);
        assert!(
            text.starts_with("**⚠️ Not evaluated: judge `nli` failed**"),
            "{text}"
        );
        assert!(
            text.contains("<summary>The last line of judge nli's stderr"),
            "{text}"
        );
    }

    #[test]
    fn hostile_stderr_comes_out_inert() {
        let text = render(
            "smoke",
            &crash(&[
                "@someone look",
                "![x](http://evil.example/p.png)",
                "::error::forged",
                "\u{1b}[31mred\u{1b}[0m",
                "- a list",
                "===",
                "<img src=x>",
            ]),
        );
        let body = text.split("</summary>").nth(1).expect("the stderr section");
        assert!(body.contains("@\u{2060}someone"), "{body}");
        assert!(
            body.contains("![x\\](http:\u{2060}//evil.example/p.png)"),
            "{body}"
        );
        assert!(!body.contains("[x]("), "no image: {body}");
        assert!(body.contains("\n\\::\u{2060}error::forged<br>"), "{body}");
        assert!(!body.contains("::error::"), "{body}");
        assert!(body.contains("\\\\u{1b}[31mred\\\\u{1b}[0m"), "{body}");
        assert!(!text.contains('\u{1b}'), "{text}");
        assert!(body.contains("\n\\- a list<br>"), "{body}");
        assert!(body.contains("\n\\===<br>"), "{body}");
        assert!(body.contains("&lt;img src=x>"), "{body}");
        assert!(
            !text.lines().any(|line| line.trim_start().starts_with("::")),
            "{text}"
        );
    }
}
