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

/// Query-expansion table: stemmed term (one word, or the words of a short phrase) -> stemmed
/// alternative terms, in file order.
pub type Synonyms = BTreeMap<Vec<String>, Vec<String>>;

/// Reads `term<TAB>alt1,alt2` lines (`#` comments and blank lines skipped). Terms and
/// alternatives go through the index tokenizer, so "deleted" matches "delete"; a multi-word term
/// matches those words in a row in the query, and a multi-word alternative adds each of its words.
pub fn read_synonyms(path: &Path) -> Result<Synonyms, String> {
    let content = read_text(path)?;
    let mut table = Synonyms::new();
    for (index, line) in content.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let at = format!("{}:{}", path.display(), index + 1);
        let Some((term, alternatives)) = line.split_once('\t') else {
            return Err(format!("{at}: expected term<TAB>alt1,alt2"));
        };
        let key = text::tokens(term);
        if key.is_empty() {
            return Err(format!("{at}: the term {term:?} has no word that is not a stop word"));
        }
        let entry = table.entry(key.clone()).or_default();
        for alternative in alternatives.split(',').flat_map(text::tokens) {
            if !key.contains(&alternative) && !entry.contains(&alternative) {
                entry.push(alternative);
            }
        }
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
