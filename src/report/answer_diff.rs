//! How the summary shows an answer that changed. The gate describes it as a word diff whose
//! changed runs are merged (`answer: The [-cat sat-]{+dog lay+} on the mat`); that reads well for
//! a small edit, but a rewritten answer becomes a zebra of runs around the few words both share.
//! So when most of the answer changed, the summary shows a `diff` block of sentences instead
//! (`- old sentence`, `+ new sentence`, wrapped so it fits a PR comment without scrolling).

use similar::{ChangeTag, TextDiff};

/// Below this similarity (similar's ratio of the word diff) an answer counts as rewritten.
const REWRITTEN_BELOW: f32 = 0.5;
/// Longest line in a diff block, in characters (about a PR comment's width in a monospace font).
const WIDTH: usize = 86;
/// Longest answer side shown, in characters.
const ANSWER_CHARS: usize = 1000;

/// The answer before and after, read back from the gate's marked word diff; None when the marks
/// do not pair up (an answer that itself contains `[-` or `{+`, for instance).
fn sides(marked: &str) -> Option<(String, String)> {
    let (mut old, mut new) = (String::new(), String::new());
    let mut rest = marked;
    loop {
        let next = [rest.find("[-"), rest.find("{+")]
            .into_iter()
            .flatten()
            .min();
        let Some(start) = next else {
            old.push_str(rest);
            new.push_str(rest);
            break;
        };
        old.push_str(&rest[..start]);
        new.push_str(&rest[..start]);
        let (close, side) = if rest[start..].starts_with("[-") {
            ("-]", &mut old)
        } else {
            ("+}", &mut new)
        };
        let body = &rest[start + 2..];
        let end = body.find(close)?;
        side.push_str(&body[..end]);
        rest = &body[end + 2..];
    }
    let tidy = |s: String| s.split_whitespace().collect::<Vec<_>>().join(" ");
    Some((tidy(old), tidy(new)))
}

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
    crate::report::gate_table::one_line(text, ANSWER_CHARS)
}

/// A `diff` block of the answer's sentences, or None when the answer was edited rather than
/// rewritten (or cannot be read back, or holds a code fence).
pub(crate) fn rewritten_block(marked: &str) -> Option<String> {
    let (old, new) = sides(marked)?;
    if old.contains("```") || new.contains("```") {
        return None;
    }
    if TextDiff::from_words(old.as_str(), new.as_str()).ratio() >= REWRITTEN_BELOW {
        return None;
    }
    let (old, new) = (sentences(&cut(&old)), sentences(&cut(&new)));
    let old: Vec<&str> = old.iter().map(String::as_str).collect();
    let new: Vec<&str> = new.iter().map(String::as_str).collect();
    let mut block = String::from("```diff\n");
    for change in TextDiff::from_slices(&old, &new).iter_all_changes() {
        let mark = match change.tag() {
            ChangeTag::Equal => ' ',
            ChangeTag::Delete => '-',
            ChangeTag::Insert => '+',
        };
        block.push_str(&wrapped(mark, change.value()));
    }
    block.push_str("```\n");
    Some(block)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marked_diffs_read_back_into_both_answers() {
        assert_eq!(
            sides("The [-cat sat-]{+dog lay+} on the mat. {+New.+}"),
            Some((
                "The cat sat on the mat.".to_string(),
                "The dog lay on the mat. New.".to_string()
            ))
        );
        assert_eq!(sides("an [-unclosed mark"), None);
    }

    #[test]
    fn a_rewritten_answer_becomes_a_block_of_sentences_and_an_edit_stays_inline() {
        let rewritten = "[-A bucket can be deleted-]{+In a versioned bucket, a delete adds a \
                         marker;+} only [-when it is empty.-]{+a delete that names a version \
                         removes it.+}";
        assert_eq!(
            rewritten_block(rewritten).as_deref(),
            Some(
                "```diff\n- A bucket can be deleted only when it is empty.\n+ In a versioned \
                 bucket, a delete adds a marker;\n+ only a delete that names a version \
                 removes it.\n```\n"
            )
        );
        assert_eq!(
            rewritten_block("Kept for 11 days. {+Printed in Lisbon.+}"),
            None,
            "an appended sentence reads well inline"
        );
        let long = format!(
            "[-{}-]{{+{}+}}",
            "alpha beta ".repeat(30),
            "gamma delta ".repeat(30)
        );
        let block = rewritten_block(&long).expect("a rewrite");
        assert!(block.lines().all(|l| l.chars().count() <= WIDTH), "{block}");
        assert!(
            block.lines().filter(|l| l.starts_with("+ ")).count() >= 3,
            "{block}"
        );
    }
}
