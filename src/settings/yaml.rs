//! The YAML library behind the config, and the one module that names it: everything else says
//! `settings::yaml::Value`, `yaml::from_str`, ... The tests pin what ragate relies on (error
//! locations and message shape, YAML 1.2 scalars, duplicate keys refused, scalar text), so that
//! a replacement is checked by them.
//!
//! serde_yaml 0.9 is archived upstream (no further releases). The replacement, when one is
//! needed: `serde_norway` or `serde_yaml_ng`, maintained forks with the same API (a change of
//! the `pub use` below and of Cargo.toml), over the same unsafe-libyaml parser. `saphyr` (a pure
//! Rust YAML 1.2 parser) would need a serde layer of our own; not worth it while a fork exists.

pub use serde_yaml::{Deserializer, Error, Mapping, Value, from_str, to_string};

/// The text of a scalar or other non-string value as YAML writes it, on one line (`1`, `true`,
/// `[a, b]` as a flow sequence is not promised: a key or an argument is expected to be a scalar).
pub fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => to_string(other).unwrap_or_default().trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_carry_a_one_based_location_that_a_type_error_ends_with() {
        let syntax = from_str::<Value>("version: 1\nmetrics: [recall@5,\n").unwrap_err();
        assert_eq!(syntax.location().expect("a location").line(), 3, "{syntax}");
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Version {
            version: u32,
        }
        let typed = from_str::<Version>("\nversion: one\n").unwrap_err();
        let location = typed.location().expect("a location");
        assert_eq!((location.line(), location.column()), (2, 10), "{typed}");
        // config::yaml_error takes this suffix off (it shows the position its own way).
        assert!(
            typed.to_string().ends_with(" at line 2 column 10"),
            "{typed}"
        );
    }

    #[test]
    fn a_nested_type_error_names_the_path_before_the_message() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Outer {
            gate: Inner,
        }
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Inner {
            alpha: f64,
        }
        let error = from_str::<Outer>("gate:\n  alpha: often\n").unwrap_err();
        // config::yaml_error strips this `gate.alpha: ` prefix and the location suffix.
        assert!(
            error
                .to_string()
                .starts_with("gate.alpha: invalid type: string \"often\""),
            "{error}"
        );
    }

    #[test]
    fn scalars_follow_yaml_1_2_and_duplicate_keys_are_refused() {
        let value: Value = from_str("a: yes\nb: on\nc: ~\nd: 0.10\ne: '1'\n").unwrap();
        assert_eq!(value["a"], Value::String("yes".to_string()));
        assert_eq!(value["b"], Value::String("on".to_string()));
        assert_eq!(value["c"], Value::Null);
        assert_eq!(value["d"].as_f64(), Some(0.1));
        assert_eq!(value["e"].as_str(), Some("1"));
        let duplicate = from_str::<Value>("a: 1\na: 2\n").unwrap_err();
        assert!(duplicate.to_string().contains("duplicate"), "{duplicate}");
    }

    #[test]
    fn scalar_text_is_the_value_as_written() {
        let value: Value = from_str("[text, 7, 0.5, true, null]").unwrap();
        let texts: Vec<String> = value
            .as_sequence()
            .unwrap()
            .iter()
            .map(scalar_text)
            .collect();
        assert_eq!(texts, ["text", "7", "0.5", "true", "null"]);
        let mapping: Mapping = from_str("{1: one}").unwrap();
        assert_eq!(mapping.keys().map(scalar_text).collect::<Vec<_>>(), ["1"]);
    }
}
