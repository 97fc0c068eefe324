//! The README's quotes of the example's output, checked against a run of the example: each quote
//! sits between `<!-- quoted: VARIANT FILE -->` and `<!-- /quoted -->` in README.md (FILE is
//! `stdout` or a file of the output directory), so the README and this test cannot drift apart.

use std::collections::BTreeSet;
use std::path::Path;

use crate::gate_flow::run_readme_example;

/// One quote: `text` is a code span (a part of the output) or, from a fenced block, a run of whole
/// lines of it, one after the other (`lines`); a `…` line of the block leaves lines out.
#[derive(Debug, Clone, PartialEq)]
struct Quote {
    variant: String,
    file: String,
    text: String,
    lines: bool,
}

/// Every quote between the markers of `readme`, in order.
fn quotes(readme: &str) -> Vec<Quote> {
    let marker = regex_lite::Regex::new(
        r"(?s)<!--\s*quoted:\s*(\S+)\s+(\S+)\s*-->(.*?)<!--\s*/quoted\s*-->",
    )
    .unwrap();
    let span = regex_lite::Regex::new(r"`([^`]+)`").unwrap();
    // A line break and the next line's indentation inside a code span read as one space.
    let wrap = regex_lite::Regex::new(r"\n[ \t]*").unwrap();
    let mut found = Vec::new();
    for region in marker.captures_iter(readme) {
        let quote = |text: &str, lines: bool| Quote {
            variant: region[1].to_string(),
            file: region[2].to_string(),
            text: text.to_string(),
            lines,
        };
        let body = &region[3];
        if let Some(start) = body.find("```") {
            // A fenced block: its runs of lines between the `…` that stand for lines left out.
            let fenced = &body[start..];
            let inner = fenced.split_once('\n').map_or("", |(_, rest)| rest);
            let inner = &inner[..inner.rfind("```").expect("a closed fence")];
            let lines: Vec<&str> = inner.lines().collect();
            found.extend(
                lines
                    .split(|l| l.trim() == "…")
                    .map(|run| run.join("\n").trim_matches('\n').to_string())
                    .filter(|run| !run.is_empty())
                    .map(|run| quote(&run, true)),
            );
        } else {
            found.extend(
                span.captures_iter(body)
                    .map(|c| quote(&wrap.replace_all(&c[1], " "), false)),
            );
        }
    }
    found
}

/// The text of an XML file as its attributes and text say it.
fn xml_text(xml: &str) -> String {
    xml.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

#[test]
fn quotes_are_read_from_spans_wrapped_lines_and_fenced_blocks() {
    let readme = "a <!-- quoted: degraded junit.xml -->`x  y\n   z` and `w`<!-- /quoted -->, `not quoted`\n\
        <!-- quoted: hybrid summary.md -->\n```markdown\n**head**\n\nbody\n…\n- \\[all] cause\n```\n<!-- /quoted -->\n";
    let found = quotes(readme);
    let texts: Vec<(&str, &str, &str, bool)> = found
        .iter()
        .map(|q| {
            (
                q.variant.as_str(),
                q.file.as_str(),
                q.text.as_str(),
                q.lines,
            )
        })
        .collect();
    assert_eq!(
        texts,
        [
            ("degraded", "junit.xml", "x  y z", false),
            ("degraded", "junit.xml", "w", false),
            ("hybrid", "summary.md", "**head**\n\nbody", true),
            ("hybrid", "summary.md", "- \\[all] cause", true),
        ]
    );
    assert_eq!(xml_text("a -&gt; b &amp;lt;"), "a -> b &lt;");
}

#[test]
fn every_output_the_readme_quotes_is_what_the_example_prints() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let quotes = quotes(&readme);
    let quoted: BTreeSet<(&str, &str)> = quotes
        .iter()
        .map(|q| (q.variant.as_str(), q.file.as_str()))
        .collect();
    // The markers are there: the terminal, junit.xml and summary.md of the failing example, and
    // the summary of the passing one.
    for expected in [
        ("degraded", "stdout"),
        ("degraded", "junit.xml"),
        ("degraded", "summary.md"),
        ("hybrid", "summary.md"),
    ] {
        assert!(quoted.contains(&expected), "{expected:?} in {quoted:?}");
    }
    assert!(quotes.len() >= 8, "{quotes:#?}");
    let variants: BTreeSet<&str> = quoted.iter().map(|(variant, _)| *variant).collect();
    for variant in variants {
        let (work, out) = run_readme_example(variant);
        let expected_code = if variant == "degraded" { 1 } else { 0 };
        assert_eq!(
            out.code, expected_code,
            "{variant}: {}\n{}",
            out.stdout, out.stderr
        );
        let mut checked = 0;
        for file in quoted
            .iter()
            .filter(|(v, _)| *v == variant)
            .map(|(_, f)| *f)
        {
            let actual = match file {
                "stdout" => out.stdout.clone(),
                name => {
                    let text = std::fs::read_to_string(work.path().join("out").join(name))
                        .unwrap_or_else(|e| panic!("{variant}: out/{name}: {e}"));
                    if name.ends_with(".xml") {
                        xml_text(&text)
                    } else {
                        text
                    }
                }
            };
            // Runs of whole lines in the README's order; spans anywhere.
            let lines: Vec<&str> = actual.lines().collect();
            let mut next_line = 0;
            for quote in quotes
                .iter()
                .filter(|q| q.variant == variant && q.file == file)
            {
                if quote.lines {
                    let run: Vec<&str> = quote.text.lines().collect();
                    let at = lines[next_line..]
                        .windows(run.len())
                        .position(|window| window == run.as_slice())
                        .unwrap_or_else(|| {
                            panic!(
                                "{variant} {file}: the README's lines\n{}\nare not lines of the \
                                 output one after the other (after line {next_line}):\n{actual}",
                                quote.text
                            )
                        });
                    next_line += at + run.len();
                } else {
                    assert!(
                        actual.contains(&quote.text),
                        "{variant} {file}: README quotes `{}`, not in:\n{actual}",
                        quote.text
                    );
                }
                checked += 1;
            }
        }
        assert!(checked > 0, "{variant}");
    }
}
