//! Claim extraction for faithfulness: a deterministic sentence splitter.
//!
//! [`split_claims`] turns an answer into claims, one per sentence or list item. The rules are
//! versioned by [`CLAIM_SPLITTER_VERSION`]; changing any rule or list below bumps it, because
//! the claims (and so the judge cache keys and the faithfulness scores) change with them.
//!
//! Rules (`sentences-1`), applied in this order:
//! 1. Lines: the answer is cut at every line break (LF, CR, VT, FF, NEL, U+2028, U+2029). A
//!    claim never spans two lines, so list items (`- a\n- b`) and hard-wrapped lines are
//!    separate claims.
//! 2. List markers: at the start of a line (after leading whitespace), one unordered bullet
//!    (`- * + • ‣ ◦ ⁃ ▪ · – —`) or an ordered marker of 1 to 3 ASCII digits followed by `.` or
//!    `)` is removed when whitespace follows it. `42.` alone on a line is kept (no whitespace).
//! 3. Sentences: each line is cut at the UAX #29 sentence boundaries
//!    (`unicode-segmentation`). UAX #29 already keeps decimals, versions and addresses
//!    (`3.5`, `v1.2.3`, `10.0.0.1`) together and never breaks before a lowercase word.
//! 4. Re-joining false breaks: a piece is joined with the next piece of the same line when
//!    its last whitespace-separated token (leading `( [ { " ' “ ‘ « „` removed, compared
//!    case-insensitively) is
//!    - an abbreviation that does not end sentences, [`PREFIX_ABBREVIATIONS`] (`Dr.`, `e.g.`,
//!      `vs.`, `Fig.` ...): always joined;
//!    - an abbreviation that may end a sentence, [`FINAL_ABBREVIATIONS`] (`etc.`, `Inc.`,
//!      `U.S.`, `No.` ...), or letters each followed by a dot (`J.`, `A.B.`, `U.K.`): joined
//!      unless the next piece starts with a word of [`SENTENCE_STARTERS`] (`The`, `It`,
//!      `Then` ...), which marks a new sentence (`J. Smith wrote` joins, `vitamin C. Then`
//!      splits);
//!
//!    and a piece without any letter (an inline enumerator such as `2.`) is always joined
//!    with the next piece.
//! 5. Clean-up: each claim is trimmed; claims without any alphanumeric character (a lone `-`,
//!    `...`) are dropped.
//!
//! An empty or whitespace-only answer gives no claims; the caller reports it (never NaN).

use unicode_segmentation::UnicodeSegmentation;

/// Version of the splitting rules and lists; part of every judge cache key that uses claims.
pub const CLAIM_SPLITTER_VERSION: &str = "sentences-1";

/// The version of the decomposition prompt and reply contract of `claims: llm` (the contracts
/// are in `judge::decompose`); part of the cache key and of the splitter's id.
pub const CLAIMS_PROMPT_VERSION: &str = "claims-1";

/// How an answer is split into claims (config `claims: sentences | llm`), as recorded in
/// provenance and the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum ClaimSplitter {
    /// The deterministic sentence splitter.
    #[default]
    Sentences,
    /// The metric's judge decomposes the answer.
    Llm,
}

impl ClaimSplitter {
    /// `sentences-1` or `llm:claims-1`.
    pub fn id(self) -> String {
        match self {
            ClaimSplitter::Sentences => CLAIM_SPLITTER_VERSION.to_string(),
            ClaimSplitter::Llm => format!("llm:{CLAIMS_PROMPT_VERSION}"),
        }
    }
}

/// Abbreviations (lowercase, without the final dot) after which a sentence never ends.
pub const PREFIX_ABBREVIATIONS: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "rev", "hon", "gen", "col", "capt", "lt", "sgt", "e.g", "i.e",
    "cf", "vs", "viz", "approx", "ca", "fig", "figs", "eq", "eqs", "sec", "vol", "ch", "pp",
    "incl", "esp", "dept", "est",
];

/// Abbreviations (lowercase, without the final dot) that may also end a sentence.
pub const FINAL_ABBREVIATIONS: &[&str] = &[
    "etc", "inc", "ltd", "co", "corp", "jr", "sr", "st", "no", "nos", "al", "a.m", "p.m", "u.s",
    "u.k", "u.n", "e.u", "ph.d",
];

/// Words (lowercase) that, starting the next piece, show that an ambiguous abbreviation ended
/// its sentence.
#[rustfmt::skip]
pub const SENTENCE_STARTERS: &[&str] = &[
    "the", "a", "an", "this", "that", "these", "those", "it", "its", "they", "their", "there",
    "then", "we", "our", "he", "his", "she", "her", "i", "you", "your", "in", "on", "at", "for",
    "from", "to", "with", "by", "as", "if", "when", "while", "but", "and", "or", "so", "however",
    "also", "thus", "therefore", "hence", "after", "before", "since", "because", "although", "yes",
    "no", "not", "each", "every", "all", "some", "many", "most", "both", "what", "which", "who",
    "how", "why", "where", "note", "finally", "first", "next", "instead", "moreover",
    "furthermore", "otherwise", "overall",
];

const LINE_BREAKS: &[char] = &[
    '\n', '\r', '\u{0B}', '\u{0C}', '\u{85}', '\u{2028}', '\u{2029}',
];
const BULLETS: &[char] = &['-', '*', '+', '•', '‣', '◦', '⁃', '▪', '·', '–', '—'];
const OPENING_PUNCTUATION: &[char] = &['(', '[', '{', '"', '\'', '“', '‘', '«', '„'];

/// Splits an answer into claims by the rules of the module documentation.
pub fn split_claims(answer: &str) -> Vec<String> {
    let mut claims = Vec::new();
    for line in answer.split(LINE_BREAKS) {
        let line = strip_list_marker(line);
        let mut current = String::new();
        for piece in line.split_sentence_bounds() {
            if !current.is_empty() && !joins_next(&current, piece) {
                push_claim(&mut claims, &current);
                current.clear();
            }
            current.push_str(piece);
        }
        push_claim(&mut claims, &current);
    }
    claims
}

fn push_claim(claims: &mut Vec<String>, text: &str) {
    let text = text.trim();
    if text.chars().any(char::is_alphanumeric) {
        claims.push(text.to_string());
    }
}

/// Removes one leading list marker (rule 2).
fn strip_list_marker(line: &str) -> &str {
    let line = line.trim_start();
    let rest = if let Some(rest) = line.strip_prefix(BULLETS) {
        rest
    } else {
        let digits = line.bytes().take_while(u8::is_ascii_digit).count();
        match line[digits..].strip_prefix(['.', ')']) {
            Some(rest) if (1..=3).contains(&digits) => rest,
            _ => return line,
        }
    };
    if rest.starts_with(char::is_whitespace) {
        rest.trim_start()
    } else {
        line
    }
}

/// Whether the text so far (`current`) continues into `next` (rule 4).
fn joins_next(current: &str, next: &str) -> bool {
    if !current.chars().any(char::is_alphabetic) {
        return true;
    }
    let trimmed = current.trim_end();
    let last = trimmed
        .rsplit(char::is_whitespace)
        .next()
        .unwrap_or_default()
        .trim_start_matches(OPENING_PUNCTUATION)
        .to_lowercase();
    let Some(key) = last.strip_suffix('.') else {
        return false;
    };
    if PREFIX_ABBREVIATIONS.contains(&key) {
        return true;
    }
    let final_abbreviation = FINAL_ABBREVIATIONS.contains(&key) || is_dotted_letters(&last);
    final_abbreviation && !starts_sentence(next)
}

/// `J.`, `A.B.`, `U.K.`: one or more single letters, each followed by a dot.
fn is_dotted_letters(token: &str) -> bool {
    let chars: Vec<char> = token.chars().collect();
    !chars.is_empty()
        && chars.len().is_multiple_of(2)
        && chars
            .chunks(2)
            .all(|pair| pair[0].is_alphabetic() && pair[1] == '.')
}

fn starts_sentence(piece: &str) -> bool {
    let word: String = piece
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .chars()
        .take_while(|c| c.is_alphabetic())
        .collect::<String>()
        .to_lowercase();
    SENTENCE_STARTERS.contains(&word.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(cases: &[(&str, &[&str])]) {
        for (text, expected) in cases {
            assert_eq!(split_claims(text), *expected, "{text:?}");
        }
    }

    #[test]
    fn splits_plain_sentences() {
        check(&[(
            "The upload is aborted. It retries three times! Why? Because.",
            &[
                "The upload is aborted.",
                "It retries three times!",
                "Why?",
                "Because.",
            ],
        )]);
    }

    #[test]
    fn empty_and_whitespace_answers_have_no_claims() {
        check(&[("", &[]), ("  \n\t \r\n ", &[]), ("- \n * \n...", &[])]);
    }

    #[test]
    fn keeps_decimals_versions_and_addresses() {
        check(&[
            (
                "v1.2.3 runs at 3.5 GHz on 10.0.0.1 now. Ok.",
                &["v1.2.3 runs at 3.5 GHz on 10.0.0.1 now.", "Ok."],
            ),
            ("It costs $3.50. Yes.", &["It costs $3.50.", "Yes."]),
            (
                "It failed at 3.5. Then it rose.",
                &["It failed at 3.5.", "Then it rose."],
            ),
        ]);
    }

    #[test]
    fn rejoins_after_prefix_abbreviations() {
        check(&[
            (
                "Dr. Smith arrived. He left.",
                &["Dr. Smith arrived.", "He left."],
            ),
            ("Mr. X said so. Then?", &["Mr. X said so.", "Then?"]),
            ("Use e.g. The Book. Done.", &["Use e.g. The Book.", "Done."]),
            ("See (Fig. A) here. Ok.", &["See (Fig. A) here.", "Ok."]),
            ("PROF. Jones spoke.", &["PROF. Jones spoke."]),
        ]);
    }

    #[test]
    fn final_abbreviations_join_unless_a_sentence_starts() {
        check(&[
            (
                "The U.S. Army is big. Yes.",
                &["The U.S. Army is big.", "Yes."],
            ),
            (
                "He moved to the U.S. Then he left.",
                &["He moved to the U.S.", "Then he left."],
            ),
            ("Smith et al. Found it.", &["Smith et al. Found it."]),
            (
                "Apples, pears, etc. The rest rots.",
                &["Apples, pears, etc.", "The rest rots."],
            ),
            ("Acme Inc. Released it.", &["Acme Inc. Released it."]),
        ]);
    }

    #[test]
    fn rejoins_after_initials() {
        check(&[
            (
                "J. Smith wrote. A.B. Jones read.",
                &["J. Smith wrote.", "A.B. Jones read."],
            ),
            (
                "He got an A. Then he left.",
                &["He got an A.", "Then he left."],
            ),
        ]);
    }

    #[test]
    fn inline_enumerators_join_the_next_piece() {
        check(&[(
            "Steps: 1. Install it. 2. Run it.",
            &["Steps: 1.", "Install it.", "2. Run it."],
        )]);
    }

    #[test]
    fn lines_and_bullets_are_separate_claims() {
        check(&[
            ("- a\n- b", &["a", "b"]),
            (
                "Intro:\r\n* one\n  2) two. Dr.\n3. x\n-\n42.",
                &["Intro:", "one", "two.", "Dr.", "x", "42."],
            ),
            (
                "-5 degrees is cold.\n1.5 is a number.",
                &["-5 degrees is cold.", "1.5 is a number."],
            ),
            ("Para one.\u{2029}Para two.", &["Para one.", "Para two."]),
        ]);
    }

    #[test]
    fn quotes_and_non_latin_sentences() {
        check(&[
            (
                "He said \"Stop.\" Then left.",
                &["He said \"Stop.\"", "Then left."],
            ),
            ("日本語の文。次の文。", &["日本語の文。", "次の文。"]),
        ]);
    }

    #[test]
    fn splitting_is_deterministic() {
        let text = "Dr. A. Smith, e.g. Prof. B, etc. The end.\n- item 3.5\n";
        assert_eq!(split_claims(text), split_claims(text));
        check(&[(
            text,
            &["Dr. A. Smith, e.g. Prof. B, etc.", "The end.", "item 3.5"],
        )]);
        assert_eq!(CLAIM_SPLITTER_VERSION, "sentences-1");
    }

    #[test]
    fn splitter_ids_name_the_version() {
        assert_eq!(ClaimSplitter::Sentences.id(), "sentences-1");
        assert_eq!(ClaimSplitter::Llm.id(), "llm:claims-1");
    }
}
