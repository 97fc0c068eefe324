//! Tokenizer of the example pipeline: lowercase, split on non-alphanumerics, drop stop words,
//! Snowball-stem the rest.

use rust_stemmers::{Algorithm, Stemmer};

/// Function words that carry no topic. Kept short on purpose: negations and question words
/// that change meaning ("not", "why") are left in.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had", "has", "have",
    "he", "her", "his", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or",
    "our", "she", "so", "than", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "those", "to", "was", "we", "were", "what", "which", "while", "who", "will", "with",
    "would", "you", "your",
];

/// True for a word (already lowercase) on the stop list.
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// Index terms of `text`, in text order, repeats kept.
pub fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|piece| !piece.is_empty())
        .map(str::to_lowercase)
        .filter(|word| !is_stop_word(word))
        .map(|word| stem(&word))
        .collect()
}

/// Snowball (Porter 2) English stem of a lowercase word: "aborted" and "aborts" -> "abort".
pub fn stem(word: &str) -> String {
    Stemmer::create(Algorithm::English).stem(word).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_list_is_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|pair| pair[0] < pair[1]));
    }

    #[test]
    fn tokens_lowercase_split_and_stem() {
        assert_eq!(
            tokens("Why were my Uploads DROPPED after 3 retries?"),
            ["whi", "upload", "drop", "3", "retri"]
        );
        assert_eq!(stem("aborted"), stem("aborts"));
    }
}
