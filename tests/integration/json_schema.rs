//! Validation against the published JSON Schemas under docs/schema, for the subset of draft
//! 2020-12 they use. A full validator crate (`jsonschema`) was a quarter of the test build's
//! compile time; this one refuses any keyword it does not implement, so a schema that grows a new
//! keyword fails here instead of passing unchecked. `format` is an annotation in 2020-12 (not
//! asserted), as in the reference validators' default mode.

use std::path::Path;

use serde_json::Value;

/// Keywords that only annotate.
const ANNOTATIONS: [&str; 6] = ["$schema", "$id", "title", "description", "format", "$defs"];

/// A published schema, read from docs/schema.
pub(crate) struct Schema {
    root: Value,
}

impl Schema {
    pub(crate) fn published(name: &str) -> Schema {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("docs/schema")
            .join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        Schema {
            root: serde_json::from_str(&text).unwrap(),
        }
    }

    /// Every violation, as `instance path: what is wrong`.
    pub(crate) fn errors(&self, document: &Value) -> Vec<String> {
        let mut errors = Vec::new();
        self.check(&self.root, document, "", &mut errors);
        errors
    }

    pub(crate) fn is_valid(&self, document: &Value) -> bool {
        self.errors(document).is_empty()
    }

    fn resolve<'a>(&'a self, reference: &str) -> &'a Value {
        let name = reference
            .strip_prefix("#/$defs/")
            .unwrap_or_else(|| panic!("unsupported $ref `{reference}`"));
        &self.root["$defs"][name]
    }

    fn check(&self, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
        let Some(keywords) = schema.as_object() else {
            panic!("schema at {at} is not an object: {schema}");
        };
        for (keyword, rule) in keywords {
            match keyword.as_str() {
                k if ANNOTATIONS.contains(&k) => {}
                "$ref" => self.check(self.resolve(rule.as_str().unwrap()), value, at, errors),
                "type" => {
                    let allowed: Vec<&str> = match rule {
                        Value::String(one) => vec![one.as_str()],
                        Value::Array(many) => many.iter().map(|t| t.as_str().unwrap()).collect(),
                        _ => panic!("bad type at {at}"),
                    };
                    if !allowed.iter().any(|t| has_type(value, t)) {
                        fail(errors, at, format!("{value} is not of type {allowed:?}"));
                    }
                }
                "const" if value != rule => fail(errors, at, format!("{value} is not {rule}")),
                "enum" if !rule.as_array().unwrap().contains(value) => {
                    fail(errors, at, format!("{value} is not one of {rule}"))
                }
                "minimum" => {
                    if let (Some(v), Some(min)) = (value.as_f64(), rule.as_f64())
                        && v < min
                    {
                        fail(errors, at, format!("{v} < minimum {min}"));
                    }
                }
                "maximum" => {
                    if let (Some(v), Some(max)) = (value.as_f64(), rule.as_f64())
                        && v > max
                    {
                        fail(errors, at, format!("{v} > maximum {max}"));
                    }
                }
                "minLength" => {
                    if let Some(text) = value.as_str()
                        && (text.chars().count() as u64) < rule.as_u64().unwrap()
                    {
                        fail(errors, at, format!("`{text}` is shorter than {rule}"));
                    }
                }
                "pattern" => {
                    let pattern = regex_lite::Regex::new(rule.as_str().unwrap()).unwrap();
                    if let Some(text) = value.as_str()
                        && !pattern.is_match(text)
                    {
                        fail(errors, at, format!("`{text}` does not match {rule}"));
                    }
                }
                "minItems" | "maxItems" => {
                    if let Some(items) = value.as_array() {
                        let bound = rule.as_u64().unwrap() as usize;
                        let short = keyword == "minItems" && items.len() < bound;
                        if short || (keyword == "maxItems" && items.len() > bound) {
                            fail(
                                errors,
                                at,
                                format!("{} items, {keyword} {bound}", items.len()),
                            );
                        }
                    }
                }
                "items" => {
                    for (i, item) in value.as_array().into_iter().flatten().enumerate() {
                        self.check(rule, item, &format!("{at}/{i}"), errors);
                    }
                }
                "required" => {
                    if let Some(object) = value.as_object() {
                        for name in rule.as_array().unwrap() {
                            let name = name.as_str().unwrap();
                            if !object.contains_key(name) {
                                fail(errors, at, format!("missing required `{name}`"));
                            }
                        }
                    }
                }
                "properties" => {
                    for (name, member) in value.as_object().into_iter().flatten() {
                        if let Some(property) = rule.get(name) {
                            self.check(property, member, &format!("{at}/{name}"), errors);
                        }
                    }
                }
                "additionalProperties" => {
                    let declared = keywords.get("properties");
                    for (name, member) in value.as_object().into_iter().flatten() {
                        if declared.is_some_and(|p| p.get(name).is_some()) {
                            continue;
                        }
                        match rule {
                            Value::Bool(false) => {
                                fail(errors, at, format!("unexpected property `{name}`"))
                            }
                            Value::Bool(true) => {}
                            schema => self.check(schema, member, &format!("{at}/{name}"), errors),
                        }
                    }
                }
                "const" | "enum" => {}
                other => panic!("schema keyword `{other}` at {at} is not supported here"),
            }
        }
    }
}

fn fail(errors: &mut Vec<String>, at: &str, what: String) {
    errors.push(format!("{at}: {what}"));
}

fn has_type(value: &Value, name: &str) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => value.as_i64().is_some() || value.as_u64().is_some(),
        other => panic!("unknown type `{other}`"),
    }
}

#[test]
fn the_validator_rejects_what_the_schemas_forbid() {
    let schema = Schema {
        root: serde_json::json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["id", "n"],
            "properties": {
                "id": { "type": "string", "pattern": "^[0-9a-f]{4}$", "minLength": 4 },
                "n": { "type": ["integer", "null"], "minimum": 0, "maximum": 9 },
                "kind": { "enum": ["a", "b"] },
                "tag": { "const": "x" },
                "pair": { "type": "array", "minItems": 2, "maxItems": 2, "items": { "$ref": "#/$defs/num" } },
                "map": { "type": "object", "additionalProperties": { "$ref": "#/$defs/num" } }
            },
            "$defs": { "num": { "type": "number" } }
        }),
    };
    let valid = serde_json::json!({"id": "00af", "n": 3, "kind": "a", "tag": "x", "pair": [1, 2.5], "map": {"k": 1}});
    assert_eq!(schema.errors(&valid), Vec::<String>::new());
    let broken = [
        serde_json::json!({"id": "00af"}),
        serde_json::json!({"id": "00af", "n": 3, "extra": 1}),
        serde_json::json!({"id": "00AF", "n": 3}),
        serde_json::json!({"id": "00af", "n": 1.5}),
        serde_json::json!({"id": "00af", "n": 10}),
        serde_json::json!({"id": "00af", "n": -1}),
        serde_json::json!({"id": "00af", "n": 3, "kind": "c"}),
        serde_json::json!({"id": "00af", "n": 3, "tag": "y"}),
        serde_json::json!({"id": "00af", "n": 3, "pair": [1]}),
        serde_json::json!({"id": "00af", "n": 3, "pair": [1, "2"]}),
        serde_json::json!({"id": "00af", "n": 3, "map": {"k": "v"}}),
    ];
    for document in broken {
        assert!(!schema.is_valid(&document), "{document}");
    }
}
