//! The text analysis of `lexical-2`: a sentence's words as content tokens, quantities, names
//! and negations (the rules are in the documentation of [`crate::judge::lexical2`]).

use std::collections::BTreeMap;

use rust_stemmers::Stemmer;
use rustc_hash::{FxHashMap, FxHashSet};
use unicode_segmentation::UnicodeSegmentation;

use crate::judge::stop_words::STOP_WORDS;

/// Words that negate what follows them (with any word ending in `n't` and `fail(s|ed|ing) to`).
#[rustfmt::skip]
pub const NEGATIONS: &[&str] = &[
    "cannot", "neither", "never", "no", "nobody", "none", "nor", "not", "nothing", "nowhere",
    "without",
];

/// Spelled-out numbers read as their digits.
#[rustfmt::skip]
const SPELLED: &[(&str, &str)] = &[
    ("zero", "0"), ("one", "1"), ("two", "2"), ("three", "3"), ("four", "4"), ("five", "5"),
    ("six", "6"), ("seven", "7"), ("eight", "8"), ("nine", "9"), ("ten", "10"),
    ("eleven", "11"), ("twelve", "12"), ("thirteen", "13"), ("fourteen", "14"),
    ("fifteen", "15"), ("sixteen", "16"), ("seventeen", "17"), ("eighteen", "18"),
    ("nineteen", "19"), ("twenty", "20"), ("thirty", "30"), ("forty", "40"), ("fifty", "50"),
    ("sixty", "60"), ("seventy", "70"), ("eighty", "80"), ("ninety", "90"), ("hundred", "100"),
    ("thousand", "1000"), ("million", "1000000"), ("billion", "1000000000"),
];

/// Spelled-out numbers that are also pronouns or articles (`one of them`): read as digits for
/// matching, but never required to be in the context.
const WEAK_NUMBERS: &[&str] = &["one"];

/// Units (lowercase) and their canonical spelling: a number followed by one (`5 GiB`, `5GiB`,
/// `40 percent`, `40%`) is a quantity with that unit.
#[rustfmt::skip]
const UNITS: &[(&str, &str)] = &[
    ("%", "%"), ("percent", "%"), ("per cent", "%"),
    ("b", "b"), ("byte", "b"), ("bytes", "b"),
    ("kb", "kb"), ("mb", "mb"), ("gb", "gb"), ("tb", "tb"), ("pb", "pb"),
    ("kib", "kib"), ("mib", "mib"), ("gib", "gib"), ("tib", "tib"), ("pib", "pib"),
    ("ms", "ms"), ("millisecond", "ms"), ("milliseconds", "ms"),
    ("s", "s"), ("sec", "s"), ("second", "s"), ("seconds", "s"),
    ("min", "min"), ("minute", "min"), ("minutes", "min"),
    ("h", "h"), ("hour", "h"), ("hours", "h"),
    ("day", "day"), ("days", "day"), ("week", "week"), ("weeks", "week"),
    ("month", "month"), ("months", "month"), ("year", "year"), ("years", "year"),
    ("mg", "mg"), ("g", "g"), ("kg", "kg"), ("ml", "ml"), ("l", "l"),
    ("mm", "mm"), ("cm", "cm"), ("m", "m"), ("km", "km"),
    ("usd", "usd"), ("eur", "eur"), ("dollars", "usd"), ("euros", "eur"),
];

/// Currency signs before a number: its unit.
const CURRENCIES: &[(char, &str)] = &[('$', "usd"), ('€', "eur"), ('£', "gbp"), ('¥', "jpy")];

/// A number the text states, with its unit when one is attached.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Quantity {
    /// The normalised value: group separators and trailing decimal zeros removed (`10,000` ->
    /// `10000`, `3.50` -> `3.5`), spelled-out numbers as digits, a version's `v` dropped.
    pub value: String,
    /// The canonical unit (`gib`, `%`, `usd`), when one is attached.
    pub unit: Option<&'static str>,
    /// As written, for reasons.
    pub written: String,
    /// A weak number (`one`): matched, never required.
    pub weak: bool,
}

/// A name or identifier the text uses: its words, lowercase, and how it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name {
    /// Lowercase words, `'s` removed.
    pub words: Vec<String>,
    /// As written, for reasons.
    pub written: String,
}

/// One analysed piece of text (a sentence or a claim).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Analysed {
    /// Distinct content tokens: lowercase, stemmed (unless numeric), stop words and negations
    /// removed, numbers normalised.
    pub tokens: FxHashSet<String>,
    /// Content token -> (how often it occurs negated, how often plainly).
    pub polarity: FxHashMap<String, (usize, usize)>,
    /// Content token -> the first word written for it, for reasons.
    pub written: BTreeMap<String, String>,
    /// The quantities stated.
    pub quantities: Vec<Quantity>,
    /// The names and identifiers used.
    pub names: Vec<Name>,
    /// The lowercase words in order, `'s` removed (to find names).
    pub words: Vec<String>,
    /// The content tokens in order, each with the index of its clause (a `,` `;` `:` or
    /// sentence end starts a new one), for the subject of a negation (`lexical-3`).
    pub sequence: Vec<(String, usize)>,
}

/// One word of a text with what the analysis needs of it.
struct Word<'a> {
    raw: &'a str,
    lower: String,
    start: usize,
    end: usize,
}

fn is_stop(lower: &str) -> bool {
    STOP_WORDS.binary_search(&lower).is_ok()
}

fn is_negation(lower: &str) -> bool {
    NEGATIONS.binary_search(&lower).is_ok() || lower.ends_with("n't")
}

fn spelled(lower: &str) -> Option<&'static str> {
    SPELLED.iter().find(|(w, _)| *w == lower).map(|(_, d)| *d)
}

fn unit(lower: &str) -> Option<&'static str> {
    UNITS.iter().find(|(w, _)| *w == lower).map(|(_, u)| *u)
}

/// `10,000` -> `10000`, `3.50` -> `3.5`, `007` -> `7`, `1.2.30` stays: the value of a numeric
/// string of digits, `,` and `.`.
pub fn normalise_number(number: &str) -> String {
    let digits: String = number.chars().filter(|&c| c != ',').collect();
    let dots = digits.matches('.').count();
    if dots > 1 {
        return digits; // a version or an address: compared as written
    }
    let (int, frac) = digits.split_once('.').unwrap_or((&digits, ""));
    let int = int.trim_start_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        int.to_string()
    } else {
        format!("{int}.{frac}")
    }
}

/// The numeric head and the letters after it of a word that starts with a digit (or `v` and a
/// digit): `5GiB` -> (`5`, `gib`), `v1.2` -> (`1.2`, ``), `1990s` -> (`1990`, `s`).
fn split_number(lower: &str) -> Option<(&str, &str)> {
    let body = match lower.strip_prefix('v') {
        Some(rest) if rest.starts_with(|c: char| c.is_ascii_digit()) => rest,
        _ => lower,
    };
    if !body.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let end = body
        .find(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.'))
        .unwrap_or(body.len());
    let (number, rest) = body.split_at(end);
    let number = number.trim_end_matches([',', '.']);
    rest.chars()
        .all(char::is_alphabetic)
        .then_some((number, rest))
}

/// A word with a letter and a digit, an inner capital (`BucketNotEmpty`, `iPhone`), an
/// underscore (`max_keys`) or two or more capitals and no lowercase (`API`): an identifier.
fn is_identifier(raw: &str) -> bool {
    let letters = raw.chars().any(char::is_alphabetic);
    let digits = raw.chars().any(|c| c.is_ascii_digit());
    let inner_capital = raw
        .chars()
        .zip(raw.chars().skip(1))
        .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
    let capitals = raw.chars().filter(|c| c.is_uppercase()).count();
    let all_caps = capitals >= 2 && !raw.chars().any(char::is_lowercase);
    (letters && digits && split_number(&raw.to_lowercase()).is_none())
        || inner_capital
        || (raw.contains('_') && letters)
        || all_caps
}

fn is_capitalised(raw: &str) -> bool {
    raw.chars().next().is_some_and(char::is_uppercase)
}

fn strip_possessive(lower: &str) -> &str {
    lower.strip_suffix("'s").unwrap_or(lower)
}

/// Analyses `text` (one sentence) with `stemmer` (None: no stemming), as `lexical-2` does.
pub fn analyse(text: &str, stemmer: Option<&Stemmer>) -> Analysed {
    analyse_with(text, stemmer, Reading::default())
}

/// How `lexical-3` reads a text where `lexical-2` reads it otherwise (default: `lexical-2`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reading {
    /// A negation word inside a capitalised name (`Never Say Never`) is no negation.
    pub names_keep_negations: bool,
    /// A run of capitalised words ends at punctuation (`Python, Go`) and leaves out a
    /// sentence opener ([`OPENERS`]: `However Smith`) and the pronoun `I`.
    pub names_break: bool,
}

/// Capitalised words that open a sentence or clause without being part of a name (lowercase,
/// sorted): a run of capitalised words does not start with one when names break (`lexical-3`).
#[rustfmt::skip]
pub const OPENERS: &[&str] = &[
    "additionally", "although", "besides", "finally", "furthermore", "hence", "however",
    "i", "instead", "like", "meanwhile", "moreover", "otherwise", "overall", "similarly",
    "since", "still", "therefore", "though", "thus", "today", "unlike", "whereas", "yes",
    "yet",
];

/// Whether word `i` is a capitalised word inside a run of capitalised words (`Never Say
/// Never`, `No Doubt`): a name, not a negation. Mid-sentence, a capitalised neighbour on either
/// side makes the run; as a sentence's first word, only a capitalised non-stop next word does.
fn in_capitalised_name(words: &[Word<'_>], i: usize) -> bool {
    let name_word = |w: &Word<'_>| is_capitalised(w.raw) && !is_stop(&w.lower);
    if !is_capitalised(words[i].raw) {
        return false;
    }
    let next = words.get(i + 1).is_some_and(name_word);
    let previous = i > 0 && is_capitalised(words[i - 1].raw);
    next || previous
}

/// Analyses `text` (one sentence) with `stemmer`, read as `reading` says.
pub fn analyse_with(text: &str, stemmer: Option<&Stemmer>, reading: Reading) -> Analysed {
    let words: Vec<Word<'_>> = text
        .unicode_word_indices()
        .map(|(start, raw)| Word {
            raw,
            lower: raw.to_lowercase().replace('’', "'"),
            start,
            end: start + raw.len(),
        })
        .collect();
    let mut out = Analysed {
        words: words
            .iter()
            .map(|w| strip_possessive(&w.lower).to_string())
            .collect(),
        ..Analysed::default()
    };
    let token_of = |lower: &str| -> Option<String> {
        if is_stop(lower) || is_negation(lower) {
            return None;
        }
        if let Some(digits) = spelled(lower) {
            return Some(digits.to_string());
        }
        if let Some((number, rest)) = split_number(lower) {
            let _ = rest;
            return Some(normalise_number(number));
        }
        match stemmer {
            Some(stemmer) if !lower.chars().any(char::is_numeric) => {
                Some(stemmer.stem(strip_possessive(lower)).into_owned())
            }
            _ => Some(lower.to_string()),
        }
    };
    // Negation scope: the next content word within four words of a cue, in the same clause.
    let mut scope: Option<(usize, usize)> = None; // (last word index, byte offset of the cue's end)
    let mut clause = 0;
    for (i, word) in words.iter().enumerate() {
        if i > 0 && text[words[i - 1].end..word.start].contains([',', ';', ':', '.', '!', '?']) {
            clause += 1;
        }
        let lower = word.lower.as_str();
        let fails_to = matches!(lower, "fail" | "fails" | "failed" | "failing")
            && words.get(i + 1).is_some_and(|next| next.lower == "to");
        let in_name = reading.names_keep_negations && in_capitalised_name(&words, i);
        if (is_negation(lower) || fails_to) && !in_name {
            scope = Some((i + 4, word.end));
            continue;
        }
        let Some(token) = token_of(lower) else {
            continue;
        };
        let negated = scope.is_some_and(|(until, cue_end)| {
            i <= until && !text[cue_end..word.start].contains([',', ';', ':', '.', '!', '?'])
        });
        scope = None;
        let entry = out.polarity.entry(token.clone()).or_default();
        if negated {
            entry.0 += 1;
        } else {
            entry.1 += 1;
        }
        out.written
            .entry(token.clone())
            .or_insert_with(|| word.raw.to_string());
        out.sequence.push((token.clone(), clause));
        out.tokens.insert(token);
        // A number word states a quantity (with the unit that follows it, if any).
        if let Some(quantity) = quantity_at(text, &words, i) {
            out.quantities.push(quantity);
        }
    }
    out.names = names(text, &words, reading.names_break);
    out
}

/// The quantity that word `i` states, if it is a number.
fn quantity_at(text: &str, words: &[Word<'_>], i: usize) -> Option<Quantity> {
    let word = &words[i];
    let (value, attached, weak) = if let Some(digits) = spelled(&word.lower) {
        (
            digits.to_string(),
            "",
            WEAK_NUMBERS.contains(&word.lower.as_str()),
        )
    } else {
        let (number, rest) = split_number(&word.lower)?;
        (normalise_number(number), rest, false)
    };
    let after = &text[word.end..];
    let before = &text[..word.start];
    let unit = if after.starts_with('%') {
        Some("%")
    } else if !attached.is_empty() {
        unit(attached)
    } else if let Some(sign) = before
        .chars()
        .next_back()
        .and_then(|c| CURRENCIES.iter().find(|(s, _)| *s == c))
    {
        Some(sign.1)
    } else {
        words.get(i + 1).and_then(|next| {
            let gap = &text[word.end..next.start];
            gap.chars()
                .all(char::is_whitespace)
                .then(|| unit(&next.lower))
                .flatten()
        })
    };
    let written = match unit {
        Some(_) if after.starts_with('%') => format!("{}%", word.raw),
        _ => word.raw.to_string(),
    };
    Some(Quantity {
        value,
        unit,
        written,
        weak,
    })
}

/// The names and identifiers of a sentence: identifiers anywhere; runs of capitalised words,
/// where a run at the start of the sentence counts only from its second word unless it has
/// two words or more and its first is not a stop word. When `break_runs`, a run also ends at
/// punctuation between two words and does not start with an opener ([`OPENERS`]).
fn names(text: &str, words: &[Word<'_>], break_runs: bool) -> Vec<Name> {
    let opener = |w: &Word<'_>| break_runs && OPENERS.binary_search(&w.lower.as_str()).is_ok();
    let joined = |a: &Word<'_>, b: &Word<'_>| {
        !break_runs || text[a.end..b.start].chars().all(char::is_whitespace)
    };
    let mut names = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        if split_number(&word.lower).is_some()
            || spelled(&word.lower).is_some()
            || unit(&word.lower).is_some()
        {
            i += 1;
            continue;
        }
        if is_identifier(word.raw) {
            names.push(Name {
                words: vec![strip_possessive(&word.lower).to_string()],
                written: word.raw.to_string(),
            });
            i += 1;
            continue;
        }
        if !is_capitalised(word.raw) || opener(word) {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < words.len()
            && (end == i || (joined(&words[end - 1], &words[end]) && !opener(&words[end])))
            && is_capitalised(words[end].raw)
            && !is_identifier(words[end].raw)
            && split_number(&words[end].lower).is_none()
            && unit(&words[end].lower).is_none()
        {
            end += 1;
        }
        let mut start = i;
        let first_of_sentence = i == 0 || (break_runs && opener(&words[0]) && i == 1);
        if first_of_sentence {
            let first = &words[start].lower;
            if end - start < 2 || is_stop(first) || is_negation(first) {
                start += 1;
            }
        }
        // Stop words inside a run (`Of`, `The`) end it at neither side.
        while start < end && is_stop(&words[start].lower) {
            start += 1;
        }
        if start < end {
            let run = &words[start..end];
            names.push(Name {
                words: run
                    .iter()
                    .map(|w| strip_possessive(&w.lower).to_string())
                    .collect(),
                written: run.iter().map(|w| w.raw).collect::<Vec<_>>().join(" "),
            });
        }
        i = end.max(i + 1);
    }
    names
}

#[cfg(test)]
mod tests {
    use rust_stemmers::Algorithm;

    use super::*;

    fn quantities(text: &str) -> Vec<(String, Option<&'static str>)> {
        analyse(text, None)
            .quantities
            .into_iter()
            .map(|q| (q.value, q.unit))
            .collect()
    }

    fn q(value: &str, unit: Option<&'static str>) -> (String, Option<&'static str>) {
        (value.to_string(), unit)
    }

    #[test]
    fn lists_are_sorted_for_binary_search() {
        assert!(NEGATIONS.windows(2).all(|w| w[0] < w[1]));
        assert!(OPENERS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn numbers_are_normalised() {
        for (written, value) in [
            ("10,000", "10000"),
            ("10000", "10000"),
            ("3.50", "3.5"),
            ("3.5", "3.5"),
            ("3.0", "3"),
            ("007", "7"),
            ("0.25", "0.25"),
            ("1.2.3", "1.2.3"),
        ] {
            assert_eq!(normalise_number(written), value, "{written}");
        }
        assert_eq!(quantities("two parts"), [q("2", None)]);
        assert_eq!(quantities("Runs v1.2.3 now"), [q("1.2.3", None)]);
        assert_eq!(quantities("up to 10,000 parts"), [q("10000", None)]);
    }

    #[test]
    fn units_attach_to_numbers() {
        assert_eq!(quantities("5 GiB"), [q("5", Some("gib"))]);
        assert_eq!(quantities("5GiB"), [q("5", Some("gib"))]);
        assert_eq!(quantities("40% of it"), [q("40", Some("%"))]);
        assert_eq!(quantities("40 percent of it"), [q("40", Some("%"))]);
        assert_eq!(quantities("costs $3.50"), [q("3.5", Some("usd"))]);
        assert_eq!(quantities("for 30 days"), [q("30", Some("day"))]);
        assert_eq!(
            quantities("on 2024-01-05"),
            [q("2024", None), q("1", None), q("5", None)]
        );
    }

    #[test]
    fn tokens_drop_negations_and_normalise_numbers() {
        let stemmer = Stemmer::create(Algorithm::English);
        let a = analyse("Parts are not uploaded in three minutes", Some(&stemmer));
        let mut tokens: Vec<_> = a.tokens.iter().cloned().collect();
        tokens.sort();
        assert_eq!(tokens, ["3", "minut", "part", "upload"]);
        assert_eq!(a.polarity["upload"], (1, 0));
        assert_eq!(a.polarity["part"], (0, 1));
    }

    #[test]
    fn negation_cues_scope_over_the_next_content_word() {
        let stemmer = Stemmer::create(Algorithm::English);
        for (text, negated) in [
            ("The bucket cannot be deleted", "delet"),
            ("It isn't encrypted", "encrypt"),
            ("Uploads never expire", "expir"),
            ("It works without encryption", "encrypt"),
            ("The call fails to delete it", "delet"),
            ("neither versioned nor locked", "version"),
            ("neither versioned nor locked", "lock"),
            ("it contains no objects", "object"),
            ("no objects, no object versions", "object"),
        ] {
            let a = analyse(text, Some(&stemmer));
            assert!(a.polarity[negated].0 >= 1, "{text}: {negated}");
        }
        for plain in [
            "The call fails with 409",
            "No, the bucket is deleted",
            "Never: uploads expire",
        ] {
            let a = analyse(plain, Some(&stemmer));
            assert!(a.polarity.values().all(|p| p.0 == 0), "{plain}");
        }
    }

    fn name_list(text: &str) -> Vec<String> {
        analyse(text, None)
            .names
            .into_iter()
            .map(|n| n.written)
            .collect()
    }

    #[test]
    fn names_are_identifiers_and_capitalised_runs() {
        assert_eq!(
            name_list("Deleting fails with 409 BucketNotEmpty and max_keys"),
            ["BucketNotEmpty", "max_keys"]
        );
        assert_eq!(name_list("Use the API on S3"), ["API", "S3"]);
        assert_eq!(name_list("Marie Curie won it"), ["Marie Curie"]);
        assert_eq!(
            name_list("The Eiffel Tower is in Paris"),
            ["Eiffel Tower", "Paris"]
        );
        assert_eq!(name_list("Paris is big"), Vec::<String>::new());
        assert_eq!(name_list("It runs 5GiB and v1.2"), Vec::<String>::new());
        assert_eq!(name_list("it holds 5 GiB"), Vec::<String>::new());
    }

    #[test]
    fn names_break_at_punctuation_and_openers_when_asked() {
        let broken = |text: &str| -> Vec<String> {
            let reading = Reading {
                names_break: true,
                ..Reading::default()
            };
            let a = analyse_with(text, None, reading);
            a.names.into_iter().map(|n| n.written).collect()
        };
        assert_eq!(
            name_list("However Smart Tier moves it"),
            ["However Smart Tier"]
        );
        assert_eq!(broken("However Smart Tier moves it"), ["Smart Tier"]);
        assert_eq!(broken("However, Smart Tier moves it"), ["Smart Tier"]);
        assert_eq!(
            name_list("We use Python, Go and Java"),
            ["Python Go", "Java"]
        );
        assert_eq!(
            broken("We use Python, Go and Java"),
            ["Python", "Go", "Java"]
        );
        assert_eq!(broken("Then Route 9 I took"), ["Route"]);
        assert_eq!(broken("Still, Cool objects are read"), Vec::<String>::new());
        assert_eq!(
            broken("Unlike Standard, Archive needs a restore"),
            ["Archive"]
        );
        assert_eq!(broken("Marie Curie won it"), ["Marie Curie"]);
    }
}
