//! The English stop words of the lexical judges (`lexical-1` drops them; `lexical-2` tells
//! content tokens from them).

/// English stop words of `lexical-1`: lowercase, sorted, unique (binary-searched).
#[rustfmt::skip]
pub const STOP_WORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "against", "also", "am", "an", "and", "any", "are",
    "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
    "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "for", "from",
    "further", "had", "has", "have", "having", "he", "he's", "her", "here", "hers", "herself",
    "him", "himself", "his", "how", "i", "i'd", "i'll", "i'm", "i've", "if", "in", "into", "is",
    "it", "it's", "its", "itself", "just", "let's", "may", "me", "might", "must", "my", "myself",
    "of", "off", "on", "once", "or", "other", "our", "ours", "ourselves", "out", "over", "own",
    "shall", "she", "she's", "should", "so", "some", "such", "than", "that", "that's", "the",
    "their", "theirs", "them", "themselves", "then", "there", "there's", "these", "they",
    "they'll", "they're", "they've", "this", "those", "through", "to", "too", "under", "until",
    "up", "very", "was", "we", "we'll", "we're", "we've", "were", "what", "what's", "when",
    "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "you'll",
    "you're", "you've", "your", "yours", "yourself", "yourselves",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_unique_lowercase_and_keep_negations() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(STOP_WORDS.iter().all(|w| *w == w.to_lowercase()));
        // Any change to the list changes this count: bump LEXICAL_JUDGE_VERSION with it.
        assert_eq!(STOP_WORDS.len(), 141);
        for kept in ["not", "no", "nor", "never", "all", "only"] {
            assert!(!STOP_WORDS.contains(&kept), "{kept}");
        }
    }
}
