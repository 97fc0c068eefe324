//! "Did you mean ...?" for misspelt names: the closest candidate by edit distance.

/// The candidate closest to `word`, when it is close enough to be a likely typo.
pub(crate) fn closest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .map(|candidate| (strsim::levenshtein(word, candidate), candidate))
        .filter(|&(distance, _)| distance <= limit)
        .min_by_key(|&(distance, candidate)| (distance, candidate))
        .map(|(_, candidate)| candidate)
}

/// `message` with " (did you mean `x`?)" appended when `word` is close to a candidate.
pub(crate) fn did_you_mean<'a>(
    message: String,
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> String {
    match closest(word, candidates) {
        Some(candidate) => format!("{message} (did you mean `{candidate}`?)"),
        None => message,
    }
}

/// Adds a suggestion to serde's "unknown field `x`, expected one of `a`, `b`" and
/// "unknown variant `x`, expected `a` or `b`" messages.
pub(crate) fn for_serde_message(message: String) -> String {
    if !(message.starts_with("unknown field") || message.starts_with("unknown variant")) {
        return message;
    }
    let quoted: Vec<String> = message
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    match quoted.split_first() {
        Some((unknown, candidates)) => did_you_mean(
            message.clone(),
            unknown,
            candidates.iter().map(String::as_str),
        ),
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_only_close_names() {
        assert_eq!(closest("alpah", ["alpha", "decision"]), Some("alpha"));
        assert_eq!(closest("smok", ["smoke", "deep"]), Some("smoke"));
        assert_eq!(closest("zzzzzz", ["alpha", "decision"]), None);
    }

    #[test]
    fn serde_messages_get_a_suggestion() {
        assert_eq!(
            for_serde_message(
                "unknown field `alpah`, expected one of `decision`, `alpha`".to_string()
            ),
            "unknown field `alpah`, expected one of `decision`, `alpha` (did you mean `alpha`?)"
        );
        assert_eq!(
            for_serde_message(
                "unknown variant `signficant`, expected `significant` or `point`".to_string()
            ),
            "unknown variant `signficant`, expected `significant` or `point` (did you mean `significant`?)"
        );
        assert_eq!(
            for_serde_message("invalid type".to_string()),
            "invalid type"
        );
    }
}
