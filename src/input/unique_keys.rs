//! A JSON object read into a map that refuses a key appearing twice: serde_json (like most JSON
//! parsers) silently keeps the last of duplicate keys, which would drop a judgment or a label.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, Visitor};
use serde::{Serialize, Serializer};

/// The entries of a JSON object in key order, each key once.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UniqueKeys<V>(pub BTreeMap<String, V>);

/// No entries (whatever `V`: a derived `Default` would ask `V: Default`).
impl<V> Default for UniqueKeys<V> {
    fn default() -> Self {
        UniqueKeys(BTreeMap::new())
    }
}

impl<V> UniqueKeys<V> {
    /// The entries, by key.
    pub(crate) fn into_inner(self) -> BTreeMap<String, V> {
        self.0
    }
}

/// Written as the JSON object it was read from, in key order.
impl<V: Serialize> Serialize for UniqueKeys<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for UniqueKeys<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MapVisitor<V>(PhantomData<V>);

        impl<'de, V: Deserialize<'de>> Visitor<'de> for MapVisitor<V> {
            type Value = UniqueKeys<V>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object with each key once")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut map = BTreeMap::new();
                while let Some(key) = access.next_key::<String>()? {
                    if map.contains_key(&key) {
                        return Err(A::Error::custom(format!(
                            "key `{}` appears twice in one object: expected each key once",
                            crate::error::shorten(&key)
                        )));
                    }
                    let value = access.next_value()?;
                    map.insert(key, value);
                }
                Ok(UniqueKeys(map))
            }
        }

        deserializer.deserialize_map(MapVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Line {
        #[allow(dead_code)]
        id: String,
        grades: UniqueKeys<i64>,
        #[serde(flatten)]
        rest: UniqueKeys<serde_json::Value>,
    }

    #[test]
    fn keeps_distinct_keys_and_refuses_repeats_also_when_flattened() {
        let line: Line =
            serde_json::from_str(r#"{"id":"q","grades":{"b":2,"a":1},"x":true}"#).unwrap();
        assert_eq!(
            line.grades.0.into_iter().collect::<Vec<_>>(),
            [("a".into(), 1), ("b".into(), 2)]
        );
        assert_eq!(line.rest.0.len(), 1);
        let err = serde_json::from_str::<Line>(r#"{"id":"q","grades":{"a":3,"a":1}}"#)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.starts_with("key `a` appears twice in one object"),
            "{err}"
        );
        let err = serde_json::from_str::<Line>(r#"{"id":"q","grades":{},"x":1,"x":2}"#)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.starts_with("key `x` appears twice in one object"),
            "{err}"
        );
    }
}
