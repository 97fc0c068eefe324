use super::*;
use crate::escape::is_hazard;

/// `markdown` rendered as GitHub does (cmark-gfm's extensions, raw HTML through the tag filter).
fn gfm(markdown: &str) -> String {
    let mut options = comrak::Options::default();
    options.extension.autolink = true;
    options.extension.table = true;
    // GitHub filters these tags; comrak deprecates its option, but it is what GitHub does.
    #[allow(deprecated)]
    {
        options.extension.tagfilter = true;
    }
    options.extension.strikethrough = true;
    options.extension.footnotes = true;
    options.extension.tasklist = true;
    options.extension.math_dollars = true;
    options.render.r#unsafe = true;
    comrak::markdown_to_html(markdown, &options)
}

/// The text of `html` outside `<code>` and `<pre>`, entities decoded.
fn prose(html: &str) -> String {
    let document = scraper::Html::parse_fragment(html);
    let mut out = String::new();
    for node in document.tree.root().descendants() {
        let Some(text) = node.value().as_text() else {
            continue;
        };
        let in_code = node.ancestors().any(|a| {
            a.value()
                .as_element()
                .is_some_and(|e| matches!(e.name(), "code" | "pre"))
        });
        if !in_code {
            out.push_str(text);
            out.push(' ');
        }
    }
    out
}

/// What GitHub would turn into a link, a mention or an emoji in text outside code.
fn github_patterns(prose: &str) -> Vec<String> {
    let patterns = [
        r"(^|[^\w])@[A-Za-z0-9]",
        r"\w@[A-Za-z0-9]",
        r"(^|[^\w])#[0-9]",
        r"(?i)\bGH-[0-9]",
        r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#[0-9]",
        r"(?i)(https?|ftp)://",
        r"(?i)(^|[^\w])www\.",
        r":[a-z0-9_+-]+:",
        r"(^|[^\w])[0-9a-f]*[0-9][0-9a-f]*([^\w]|$)",
    ];
    let mut found = Vec::new();
    for pattern in patterns {
        let regex = regex_lite::Regex::new(pattern).unwrap();
        for m in regex.find_iter(prose) {
            let hex = m.as_str().trim_matches(|c: char| !c.is_ascii_hexdigit());
            // Only a hex word of 7 to 40 digits can be a commit.
            if pattern.contains("0-9a-f") && !(7..=40).contains(&hex.len()) {
                continue;
            }
            found.push(m.as_str().to_string());
        }
    }
    found
}

/// Strings that act in Markdown, on GitHub, in a terminal or in a log.
const HOSTILE: [&str; 24] = [
    "![x](https://evil.example/p.png?leak=1)",
    "[log in](https://evil.example/phish)",
    "[x][y]\n\n[y]: https://evil.example/ref",
    "<https://evil.example/auto>",
    "see https://evil.example/bare and www.evil.example and HTTP://EVIL.EXAMPLE",
    "mail me@evil.example or mailto:me@evil.example",
    "@octocat and @org/team, cc:@admin",
    "fixes #123, GH-45, owner/repo#6, JIRA-77",
    "commit 0123456789abcdef0123456789abcdef01234567 and deadbee1",
    ":smile: :+1: :shipit:",
    "<img src=x onerror=alert(1)> <script>alert(1)</script> &lt;b&gt; &#64;octocat",
    "**bold** _em_ ~~gone~~ $x^2$ `code` ``two``",
    "# heading",
    "- item",
    "1. item",
    "> quote",
    "---",
    "a | b | c",
    "back\\slash\\",
    "ends with two spaces  ",
    "\u{1b}]0;pwned\u{7}\u{1b}[31mred\u{0}nul",
    "bidi \u{202e}evil\u{202c} \u{2066}isolate\u{2069}",
    "[^1] and [^1]: https://evil.example",
    "::add-mask::x\n::stop-commands::y",
];

/// Asserts that `markdown` renders with no element but those ragate wrote (`strong` times
/// `<strong>`), no GitHub pattern outside code, and no hazard.
fn assert_inert_with(markdown: &str, context: &str, strong: usize) {
    let html = gfm(markdown);
    for tag in [
        "<img",
        "<a ",
        "<a>",
        "<script",
        "<em",
        "<del",
        "<h1",
        "<ol",
        "<blockquote",
    ] {
        assert!(
            !html.contains(tag),
            "{tag} from {context:?}: {markdown:?} -> {html}"
        );
    }
    assert_eq!(
        html.matches("<strong>").count(),
        strong,
        "{context:?}: {html}"
    );
    assert!(!html.contains("<hr"), "{context:?}: {html}");
    assert!(!html.contains("<ul>\n<li><ul>"), "{context:?}: {html}");
    let found = github_patterns(&prose(&html));
    assert!(
        found.is_empty(),
        "{context:?}: {found:?} in {markdown:?} -> {html}"
    );
    assert!(!html.chars().any(is_hazard), "{context:?}: {html:?}");
}

fn assert_inert(markdown: &str, context: &str) {
    assert_inert_with(markdown, context, 0);
}

#[test]
fn hostile_prose_renders_as_text_in_a_list_item_a_paragraph_and_a_table_cell() {
    for hostile in HOSTILE {
        assert_inert(&format!("- {}\n", text(hostile, 500)), hostile);
        assert_inert(&format!("{}\n", text(hostile, 500)), hostile);
        assert_inert_with(&format!("**❌ {}**\n", text(hostile, 500)), hostile, 1);
        assert_inert(
            &format!("| a | b |\n|---|---|\n| {} | x |\n", cell(hostile, 500)),
            hostile,
        );
    }
}

#[test]
fn hostile_identifiers_render_as_code_in_text_and_in_table_cells() {
    for hostile in HOSTILE {
        assert_inert(&format!("- {}:\n", code(hostile, 500)), hostile);
        let markdown = format!(
            "| a | b |\n|---|---|\n| {} | x |\n",
            code_cell(hostile, 500)
        );
        assert_inert(&markdown, hostile);
        let table = gfm(&markdown);
        // The cell did not split: two cells in the body row.
        assert_eq!(table.matches("<td>").count(), 2, "{hostile:?}: {table}");
    }
}

#[test]
fn prose_reads_the_same_once_rendered() {
    for (raw, shown) in [
        (
            "recall@5 [class=paraphrased]",
            "recall@5 [class=paraphrased]",
        ),
        ("a | b", "a | b"),
        ("back\\slash", "back\\slash"),
        ("<b>&amp;", "<b>&amp;"),
        ("answer_length 12 -> 13", "answer_length 12 -> 13"),
        ("# 1. * _x_ $y$", "# 1. * _x_ $y$"),
    ] {
        let html = gfm(&cell(raw, 100));
        let text: String = prose(&html).trim().replace(JOINER, "");
        assert_eq!(text, shown, "{raw:?} -> {html}");
    }
    assert_eq!(text("x".repeat(20).as_str(), 5), "xxxxx…");
    // What ragate writes itself reads the same in the raw Markdown.
    for plain in [
        "recall@5 [class=paraphrased] -0.2000 (limit -0.0200)",
        "answer_relevance_ppi [all] improved: 0.6000 -> 0.6600",
        "judge gpt-4o-mini at http:8080, 12:30",
    ] {
        assert_eq!(text(plain, 200), plain);
    }
}

#[test]
fn code_spans_keep_their_text_whatever_the_backticks() {
    for (raw, shown) in [
        ("q1", "q1"),
        ("a`b", "a`b"),
        ("``x``", "``x``"),
        ("`", "`"),
        ("a|b", "a|b"),
        ("a\\|b", "a\u{2216}|b"),
    ] {
        let html = gfm(&format!("| a |\n|---|\n| {} |\n", code_cell(raw, 100)));
        let document = scraper::Html::parse_fragment(&html);
        let selector = scraper::Selector::parse("td code").unwrap();
        let spans: Vec<String> = document
            .select(&selector)
            .map(|c| c.text().collect())
            .collect();
        assert_eq!(spans, [shown], "{raw:?} -> {html}");
        let html = gfm(&code(raw, 100));
        assert!(html.contains("<code>"), "{raw:?} -> {html}");
    }
}

#[test]
fn a_block_cannot_be_closed_from_inside() {
    let hostile = "line\n````\n![x](https://evil.example/p.png)\n```\n@octocat";
    let markdown = format!("{}after\n", block("text", hostile));
    let html = gfm(&markdown);
    assert!(markdown.starts_with("`````text\n"), "{markdown}");
    assert!(html.contains("<p>after</p>"), "{html}");
    assert!(!html.contains("<img"), "{html}");
    assert!(github_patterns(&prose(&html)).is_empty(), "{html}");
    assert_eq!(block("diff", "- a\n"), "```diff\n- a\n```\n");
}
