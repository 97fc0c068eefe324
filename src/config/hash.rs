//! The config hash in provenance: sha256 of what gives a tier's numbers their meaning (the tier's
//! metrics and slices, judges, chunk separator, the tier's rules, embeddings), taken from the file
//! as written, before `${VAR}` expansion, with mapping keys sorted so that key order does not
//! matter. A tier's own `metrics:` or `slices:` list is hashed instead of the top-level one, so
//! that changing it changes that tier's hash only.

use crate::settings::yaml;
use crate::settings::yaml::Value;
use serde_json::{Map, Value as Json};

use crate::digest::sha256_hex;

/// The hash of `tier`'s meaningful parts of the config as written.
pub(super) fn tier_hash(written: &Value, tier: &str) -> String {
    let part = |key: &str| written.get(key).map_or(Json::Null, canonical);
    let written_tier = written.get("tiers").and_then(|tiers| tiers.get(tier));
    // The tier's own list where it has one, else the top-level list (as before tiers had lists,
    // so that the hash of a tier without its own lists is unchanged).
    let list = |key: &str| {
        written_tier
            .and_then(|t| t.get(key))
            .map_or_else(|| part(key), canonical)
    };
    let tier_rules = written_tier
        .and_then(|tier| tier.get("gate"))
        .and_then(|gate| gate.get("rules"));
    let rules = tier_rules.or_else(|| written.get("gate").and_then(|gate| gate.get("rules")));
    let mut parts = Map::new();
    parts.insert("metrics".into(), list("metrics"));
    let mut judges = part("judges");
    if let Json::Object(judges) = &mut judges {
        judges.values_mut().for_each(without_cost_hints);
    }
    parts.insert("judges".into(), judges);
    parts.insert("slices".into(), list("slices"));
    parts.insert("chunk_separator".into(), part("chunk_separator"));
    parts.insert("rules".into(), rules.map_or(Json::Null, canonical));
    let mut embeddings = part("embeddings");
    without_cost_hints(&mut embeddings);
    parts.insert("embeddings".into(), embeddings);
    let bytes = serde_json::to_vec(&Json::Object(parts)).expect("plain data serialises");
    sha256_hex(&bytes)
}

/// What a price or a latency hint changes is the plan, not the numbers: an endpoint's
/// `price_per_1k_tokens` and `latency_s` are left out of the hash.
const COST_HINTS: [&str; 2] = ["price_per_1k_tokens", "latency_s"];

fn without_cost_hints(endpoint: &mut Json) {
    if let Json::Object(keys) = endpoint {
        for key in COST_HINTS {
            keys.remove(key);
        }
    }
}

/// `value` as JSON with every mapping's keys in sorted order.
fn canonical(value: &Value) -> Json {
    match value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Number(n) => serde_json::to_value(n).unwrap_or(Json::Null),
        Value::String(s) => Json::String(s.clone()),
        Value::Sequence(items) => Json::Array(items.iter().map(canonical).collect()),
        Value::Mapping(mapping) => {
            let mut entries: Vec<(String, Json)> = mapping
                .iter()
                .map(|(k, v)| (key_text(k), canonical(v)))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Json::Object(entries.into_iter().collect())
        }
        Value::Tagged(tagged) => canonical(&tagged.value),
    }
}

fn key_text(key: &Value) -> String {
    yaml::scalar_text(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(text: &str, tier: &str) -> String {
        tier_hash(&yaml::from_str(text).unwrap(), tier)
    }

    #[test]
    fn key_order_and_unrelated_parts_do_not_change_the_hash() {
        let a = "metrics: [mrr]\njudges: { d: { kind: lexical, threshold: 0.4 } }\ngate: { rules: [ { metric: mrr, max_drop: 0.1 } ] }\npipeline: { command: [a] }\n";
        let b = "pipeline: { command: [b, \"${X}\"] }\ngate: { rules: [ { max_drop: 0.1, metric: mrr } ] }\njudges: { d: { threshold: 0.4, kind: lexical } }\nmetrics: [mrr]\n";
        assert_eq!(hash(a, "t"), hash(b, "t"));
        assert_ne!(hash(a, "t"), hash(&a.replace("0.1", "0.2"), "t"));
    }

    #[test]
    fn a_tier_with_its_own_rules_hashes_them() {
        let text = "metrics: [mrr]\ngate: { rules: [ { metric: mrr, max_drop: 0.1 } ] }\ntiers: { s: { gate: { rules: [] } } }\n";
        assert_ne!(hash(text, "s"), hash(text, "other"));
    }

    #[test]
    fn a_tier_with_its_own_lists_hashes_them_and_only_its_hash_changes() {
        let text = "metrics: [mrr, faithfulness]\nslices: [length]\ntiers:\n  a: { qrels: a }\n  b: { qrels: b, metrics: [mrr], slices: [class] }\n";
        let top_changed = text.replace("[mrr, faithfulness]", "[mrr]");
        assert_ne!(hash(text, "a"), hash(&top_changed, "a"));
        assert_eq!(hash(text, "b"), hash(&top_changed, "b"));
        let own_changed = text.replace("slices: [class]", "slices: [class, form]");
        assert_eq!(hash(text, "a"), hash(&own_changed, "a"));
        assert_ne!(hash(text, "b"), hash(&own_changed, "b"));
        let own_metrics = text.replace("metrics: [mrr], slices", "metrics: [ndcg@10], slices");
        assert_ne!(hash(text, "b"), hash(&own_metrics, "b"));
        // A tier whose own lists equal the top-level ones hashes as a tier without its own.
        let same = "metrics: [mrr]\nslices: [class]\ntiers:\n  a: { qrels: a }\n  b: { qrels: b, metrics: [mrr], slices: [class] }\n";
        assert_eq!(hash(same, "a"), hash(same, "b"));
    }

    #[test]
    fn prices_and_latencies_do_not_change_the_hash() {
        let text = "metrics: [mrr]\njudges:\n  llm: { kind: openai, model: m }\nembeddings: { model: e }\n";
        let priced = text
            .replace(
                "model: m }",
                "model: m, price_per_1k_tokens: { input: 1, output: 2 }, latency_s: 0.5 }",
            )
            .replace("model: e }", "model: e, latency_s: 0.2 }");
        assert_ne!(text, priced);
        assert_eq!(hash(text, "t"), hash(&priced, "t"));
        assert_ne!(
            hash(text, "t"),
            hash(&text.replace("model: m", "model: n"), "t")
        );
    }

    #[test]
    fn variables_are_hashed_as_written() {
        let text =
            "metrics: [mrr]\njudges:\n  llm:\n    kind: openai\n    max_calls: ${BUDGET:-100}\n";
        assert_ne!(
            hash(text, "t"),
            hash(&text.replace("${BUDGET:-100}", "100"), "t")
        );
    }
}
