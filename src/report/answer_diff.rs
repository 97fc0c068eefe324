//! How the summary shows an answer that changed. The gate describes it as a word diff whose
//! changed runs are merged (`answer: The [-cat sat-]{+dog lay+} on the mat`); that reads well for
//! a small edit, but a rewritten answer becomes a zebra of runs around the few words both share.
//! So when most of the answer changed, the summary shows a `diff` block of sentences instead
//! (`- old sentence`, `+ new sentence`, wrapped so it fits a PR comment without scrolling).

use similar::{ChangeTag, TextDiff};

/// Below this similarity (similar's ratio of the diff of the words) an answer counts as rewritten.
const REWRITTEN_BELOW: f32 = 0.5;
/// Longest line in a diff block, in characters (about a PR comment's width in a monospace font).
const WIDTH: usize = 86;
/// Longest answer side shown, in characters.
const ANSWER_CHARS: usize = 1000;

/// Sentences: split after `.`, `?`, `!` or `;` followed by a space.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut words = text.split(' ').peekable();
    while let Some(word) = words.next() {
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
        if word.ends_with(['.', '?', '!', ';']) || words.peek().is_none() {
            out.push(std::mem::take(&mut current));
        }
    }
    out
}

/// `line` wrapped at spaces to `WIDTH`, every piece with the same diff mark.
fn wrapped(mark: char, line: &str) -> String {
    let mut out = String::new();
    let mut current = String::new();
    for word in line.split(' ') {
        if !current.is_empty() && current.chars().count() + 1 + word.chars().count() > WIDTH - 2 {
            out.push_str(&format!("{mark} {current}\n"));
            current.clear();
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
    }
    out.push_str(&format!("{mark} {current}\n"));
    out
}

fn cut(text: &str) -> String {
    crate::report::format::one_line(text, ANSWER_CHARS)
}

/// A `diff` block of the answer's sentences (its fence longer than any backtick run in them, so
/// an answer cannot close it), or None when the answer was edited rather than rewritten.
pub(crate) fn rewritten_block(old: &str, new: &str) -> Option<String> {
    // Similarity of the words alone: the whitespace between them would make any two texts of
    // the same length look half alike.
    let old_words: Vec<&str> = old.split_whitespace().collect();
    let new_words: Vec<&str> = new.split_whitespace().collect();
    if TextDiff::from_slices(&old_words, &new_words).ratio() >= REWRITTEN_BELOW {
        return None;
    }
    let (old, new) = (sentences(&cut(old)), sentences(&cut(new)));
    let old: Vec<&str> = old.iter().map(String::as_str).collect();
    let new: Vec<&str> = new.iter().map(String::as_str).collect();
    let mut lines = String::new();
    for change in TextDiff::from_slices(&old, &new).iter_all_changes() {
        let mark = match change.tag() {
            ChangeTag::Equal => ' ',
            ChangeTag::Delete => '-',
            ChangeTag::Insert => '+',
        };
        lines.push_str(&wrapped(mark, change.value()));
    }
    Some(crate::report::inert::block("diff", &lines))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewritten_answer_becomes_a_block_of_sentences_and_an_edit_stays_inline() {
        let (old, new) = (
            "A bucket can be deleted only when it is empty.",
            "In a versioned bucket, a delete adds a marker; only a delete that names a version \
             removes it.",
        );
        assert_eq!(
            rewritten_block(old, new).as_deref(),
            Some(
                "```diff\n- A bucket can be deleted only when it is empty.\n+ In a versioned \
                 bucket, a delete adds a marker;\n+ only a delete that names a version \
                 removes it.\n```\n"
            )
        );
        assert_eq!(
            rewritten_block("Kept for 11 days.", "Kept for 11 days. Printed in Lisbon."),
            None,
            "an appended sentence reads well inline"
        );
        let (old, new) = ("alpha beta ".repeat(30), "gamma delta ".repeat(30));
        let block = rewritten_block(&old, &new).expect("a rewrite");
        assert!(block.lines().all(|l| l.chars().count() <= WIDTH), "{block}");
        assert!(
            block.lines().filter(|l| l.starts_with("+ ")).count() >= 3,
            "{block}"
        );
    }

    #[test]
    fn an_answer_with_a_fence_cannot_close_the_block() {
        let block = rewritten_block(
            "The answer is short.",
            "```\n![x](https://evil.example/p.png)\n```` and \u{1b}]0;title\u{7} more words here.",
        )
        .expect("a rewrite");
        assert!(block.starts_with("`````diff\n"), "{block}");
        assert!(block.ends_with("\n`````\n"), "{block}");
        assert_eq!(block.matches("`````").count(), 2, "{block}");
        assert!(block.contains("\\u{1b}]0;title\\u{7}"), "{block}");
    }
}
