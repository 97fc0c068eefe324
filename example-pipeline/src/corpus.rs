//! Inputs of the example pipeline: the corpus (JSONL documents) and the synonym table (TSV).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::text;

/// One document as the corpus file gives it.
#[derive(Debug, Clone)]
pub struct Document {
    pub doc_id: String,
    pub title: String,
    pub text: String,
}

/// Reads `{"doc_id" (or BEIR "_id"), "title"?, "text"?}` lines; blank lines are skipped.
/// Errors name the file and line.
pub fn read_corpus(path: &Path) -> Result<Vec<Document>, String> {
    let content = read_text(path)?;
    let mut docs = Vec::new();
    let mut seen = BTreeMap::new();
    for (index, line) in content.lines().enumerate() {
        let number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("{}:{number}", path.display());
        let value: Value = serde_json::from_str(line)
            .map_err(|err| format!("{}: not a JSON object: {err}", at()))?;
        let id = value.get("doc_id").or_else(|| value.get("_id"));
        let doc_id = match id {
            Some(Value::String(id)) => id.clone(),
            Some(Value::Number(id)) => id.to_string(),
            _ => {
                return Err(format!(
                    "{}: expected a string \"doc_id\" (or \"_id\")",
                    at()
                ));
            }
        };
        if let Some(first) = seen.insert(doc_id.clone(), number) {
            return Err(format!(
                "{}: doc_id {doc_id:?} already on line {first}",
                at()
            ));
        }
        let field = |name: &str| match value.get(name) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(text)) => Ok(text.clone()),
            Some(_) => Err(format!("{}: \"{name}\" must be a string", at())),
        };
        docs.push(Document {
            doc_id,
            title: field("title")?,
            text: field("text")?,
        });
    }
    if docs.is_empty() {
        return Err(format!("{}: no documents", path.display()));
    }
    Ok(docs)
}

/// Query-expansion table: a phrase (one or more index terms) -> alternative terms, in file order.
#[derive(Debug, Default)]
pub struct Synonyms {
    entries: Vec<(Vec<String>, Vec<String>)>,
}

impl Synonyms {
    /// Adds `phrase -> alternatives` (comma-separated); both go through the index tokenizer, so
    /// "deleted" matches "delete", stop words in a phrase are skipped, and a multi-word
    /// alternative adds each of its words.
    pub fn add(&mut self, phrase: &str, alternatives: &str) -> Result<(), String> {
        let phrase = text::tokens(phrase);
        if phrase.is_empty() {
            return Err("the term has no word that is not a stop word".to_string());
        }
        let index = match self.entries.iter().position(|(known, _)| *known == phrase) {
            Some(index) => index,
            None => {
                self.entries.push((phrase, Vec::new()));
                self.entries.len() - 1
            }
        };
        let (phrase, known) = &mut self.entries[index];
        for alternative in alternatives.split(',').flat_map(text::tokens) {
            if !phrase.contains(&alternative) && !known.contains(&alternative) {
                known.push(alternative);
            }
        }
        Ok(())
    }

    /// The alternatives of every phrase that occurs as consecutive terms of `terms`, in table
    /// order, leaving out terms the query already has.
    pub fn expansions(&self, terms: &[String]) -> Vec<String> {
        let mut added: Vec<String> = Vec::new();
        for (phrase, alternatives) in &self.entries {
            if terms
                .windows(phrase.len())
                .any(|window| window == phrase.as_slice())
            {
                for alternative in alternatives {
                    if !terms.contains(alternative) && !added.contains(alternative) {
                        added.push(alternative.clone());
                    }
                }
            }
        }
        added
    }
}

/// Reads `term<TAB>alt1,alt2` lines (the term may be a short phrase; `#` comments and blank
/// lines skipped). Errors name the file and line.
pub fn read_synonyms(path: &Path) -> Result<Synonyms, String> {
    let content = read_text(path)?;
    let mut table = Synonyms::default();
    for (index, line) in content.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let at = format!("{}:{}", path.display(), index + 1);
        let Some((term, alternatives)) = line.split_once('\t') else {
            return Err(format!("{at}: expected term<TAB>alt1,alt2"));
        };
        table
            .add(term, alternatives)
            .map_err(|what| format!("{at}: {what}"))?;
    }
    Ok(table)
}

fn read_text(path: &Path) -> Result<String, String> {
    let bytes = fs::read(path).map_err(|err| format!("{}: cannot read: {err}", path.display()))?;
    let text =
        String::from_utf8(bytes).map_err(|err| format!("{}: not UTF-8: {err}", path.display()))?;
    Ok(text
        .strip_prefix('\u{feff}')
        .map(str::to_string)
        .unwrap_or(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_expand_only_when_their_words_are_consecutive() {
        let mut table = Synonyms::default();
        table.add("give up", "aborted, cancelled").unwrap();
        table.add("old versions", "noncurrent version").unwrap();
        let expand = |query: &str| table.expansions(&text::tokens(query));
        assert_eq!(
            expand("when does the upload give up"),
            [text::stem("aborted"), text::stem("cancelled")]
        );
        assert_eq!(expand("give the old up"), Vec::<String>::new());
        assert_eq!(expand("delete old versions"), ["noncurr"]);
        assert!(table.add("of the", "x").is_err());
    }
}
