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

/// What serde's "unknown field `x`, expected one of `a`, `b`" and "unknown variant `x`, expected
/// `a` or `b`" errors name. serde_yaml's errors are opaque (no kind to match on: unknown keys
/// reach it through `de::Error::custom`), so the name is read from the message, whose shape
/// serde fixes (`de::Error::unknown_field`, `unknown_variant`). This is the one place that reads
/// an error's message; callers match on the variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SerdeUnknown {
    /// A key the struct does not have.
    Field {
        /// The key as written.
        name: String,
        /// The keys the struct has.
        expected: Vec<String>,
    },
    /// A value that is none of the enum's.
    Variant {
        /// The value as written.
        name: String,
        /// The enum's values.
        expected: Vec<String>,
    },
}

impl SerdeUnknown {
    /// The unknown field or variant serde's `message` names; None for any other message.
    pub(crate) fn of(message: &str) -> Option<SerdeUnknown> {
        let field = message.strip_prefix("unknown field ");
        let rest = field.or_else(|| message.strip_prefix("unknown variant "))?;
        let mut quoted = rest.split('`').skip(1).step_by(2).map(str::to_string);
        let name = quoted.next()?;
        let expected = quoted.collect();
        Some(match field {
            Some(_) => SerdeUnknown::Field { name, expected },
            None => SerdeUnknown::Variant { name, expected },
        })
    }

    /// `message` (the error's) with " (did you mean `x`?)" when the name is close to one
    /// expected.
    pub(crate) fn did_you_mean(&self, message: String) -> String {
        let (SerdeUnknown::Field { name, expected } | SerdeUnknown::Variant { name, expected }) =
            self;
        did_you_mean(message, name, expected.iter().map(String::as_str))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// serde's `message` with the suggestion for the field or variant it names, if any.
    fn for_serde_message(message: String) -> String {
        match SerdeUnknown::of(&message) {
            Some(unknown) => unknown.did_you_mean(message),
            None => message,
        }
    }

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

    #[test]
    fn serde_messages_name_the_unknown_field_or_variant() {
        assert_eq!(
            SerdeUnknown::of("unknown field `alpah`, expected one of `decision`, `alpha`"),
            Some(SerdeUnknown::Field {
                name: "alpah".into(),
                expected: vec!["decision".into(), "alpha".into()],
            })
        );
        assert_eq!(
            SerdeUnknown::of("unknown field `x`, there are no fields"),
            Some(SerdeUnknown::Field {
                name: "x".into(),
                expected: vec![],
            })
        );
        assert_eq!(
            SerdeUnknown::of("unknown variant `signficant`, expected `significant` or `point`"),
            Some(SerdeUnknown::Variant {
                name: "signficant".into(),
                expected: vec!["significant".into(), "point".into()],
            })
        );
        assert_eq!(SerdeUnknown::of("invalid type: integer `3`"), None);
    }
}
