//! A JSON text as a tree that keeps each object's keys in document order, its strings borrowed from the
//! text where they hold no escape.
//!
//! serde_json's `Map` sorts its keys unless built with its `preserve_order` feature, whose `indexmap`
//! crate the project does not have; a study's tags must keep the document's order (a PGN tag list is
//! ordered). An object reads as Python's `json.loads` reads it: a repeated key keeps the place of its first
//! occurrence and the value of its last ([`Object::get`], [`Object::entries`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The key under which serde_json (with `arbitrary_precision`) hands a number's text to a visitor: a map
/// of one entry (serde_json's `number::TOKEN`, not exported).
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// A JSON value; objects keep their keys in document order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json<'a> {
    Null,
    Bool(bool),
    /// A number's text as written (`-0`, 40 digits: any size), but for an exponent's sign (`1e+400`).
    Number(Cow<'a, str>),
    String(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    Object(Object<'a>),
}

/// An object's entries in document order, repeated keys included.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Object<'a>(pub Vec<(Cow<'a, str>, Json<'a>)>);

/// Objects with more entries than this find repeated keys with a hash map, not by scanning.
const SCAN_ENTRIES: usize = 16;

impl<'a> Object<'a> {
    /// The value of `key`: its last occurrence.
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.0.iter().any(|(k, _)| k == key)
    }

    /// Each key once, in the order of its first occurrence, with the value of its last.
    pub fn entries(&self) -> Vec<(&str, &Json<'a>)> {
        let mut entries: Vec<(&str, &Json<'a>)> = Vec::with_capacity(self.0.len());
        if self.0.len() <= SCAN_ENTRIES {
            for (key, value) in &self.0 {
                match entries.iter_mut().find(|(k, _)| *k == key) {
                    Some(entry) => entry.1 = value,
                    None => entries.push((key, value)),
                }
            }
            return entries;
        }
        let mut places: HashMap<&str, usize> = HashMap::with_capacity(self.0.len());
        for (key, value) in &self.0 {
            match places.get(key.as_ref()) {
                Some(&at) => entries[at].1 = value,
                None => {
                    places.insert(key, entries.len());
                    entries.push((key, value));
                }
            }
        }
        entries
    }
}

/// One JSON text (nothing but white space after it), at any depth: the caller bounds the nesting (the
/// import refuses a line nested deeper than `json_games::MAX_DEPTH` before it gets here).
pub fn parse(text: &str) -> Result<Json<'_>, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer.disable_recursion_limit();
    let value = Json::deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Json<'de>, E> {
        Ok(Json::Number(Cow::Owned(n.to_string())))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Json<'de>, E> {
        Ok(Json::Number(Cow::Owned(n.to_string())))
    }

    fn visit_f64<E>(self, n: f64) -> Result<Json<'de>, E> {
        Ok(Json::Number(Cow::Owned(n.to_string())))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E>(self, s: String) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        let mut entries = Vec::new();
        while let Some(Text(key)) = map.next_key_seed(TextSeed)? {
            if entries.is_empty() && key == NUMBER_TOKEN {
                let Text(number) = map.next_value_seed(TextSeed)?;
                return Ok(Json::Number(number));
            }
            entries.push((key, map.next_value()?));
        }
        Ok(Json::Object(Object(entries)))
    }
}

/// A string, borrowed from the text when it holds no escape.
struct Text<'a>(Cow<'a, str>);

struct TextSeed;

impl<'de> DeserializeSeed<'de> for TextSeed {
    type Value = Text<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Text<'de>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for TextSeed {
    type Value = Text<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Borrowed(s)))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(s)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(text: &str) -> Object<'_> {
        match parse(text).unwrap() {
            Json::Object(object) => object,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn keys_keep_the_document_order_and_strings_are_borrowed() {
        let doc = object(r#"{"z": "1", "a": "2", "m\u00e9": "3", "b": "x\"y"}"#);
        let keys: Vec<&str> = doc.entries().iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["z", "a", "mé", "b"]);
        assert!(matches!(&doc.0[0].0, Cow::Borrowed("z")));
        assert!(matches!(
            doc.get("a"),
            Some(Json::String(Cow::Borrowed("2")))
        ));
        assert!(matches!(&doc.0[2].0, Cow::Owned(k) if k == "mé"));
        assert_eq!(doc.get("b"), Some(&Json::String("x\"y".into())));
    }

    #[test]
    fn a_repeated_key_keeps_its_first_place_and_last_value() {
        // As Python's json.loads: {"a": 1, "b": 2, "a": 3} is {'a': 3, 'b': 2}.
        for n in [3, 40] {
            let mut text = String::from(r#"{"a": 1, "b": 2, "a": 3"#);
            for i in 0..n {
                text.push_str(&format!(r#", "k{i}": {i}"#));
            }
            text.push('}');
            let doc = object(&text);
            let entries = doc.entries();
            assert_eq!(entries.len(), 2 + n);
            assert_eq!(entries[0], ("a", &Json::Number("3".into())));
            assert_eq!(entries[1], ("b", &Json::Number("2".into())));
            assert_eq!(doc.get("a"), Some(&Json::Number("3".into())));
        }
    }

    #[test]
    fn numbers_keep_their_text_and_nesting_has_no_fixed_limit() {
        let doc = object(r#"{"n": [-0, 1.50, 1e400, 123456789012345678901234567890]}"#);
        let Some(Json::Array(numbers)) = doc.get("n") else {
            panic!()
        };
        let texts: Vec<&Json> = numbers.iter().collect();
        assert_eq!(
            texts,
            // serde_json writes an exponent's sign: Python reads both as the same float.
            ["-0", "1.50", "1e+400", "123456789012345678901234567890"]
                .map(|n| Json::Number(n.into()))
                .iter()
                .collect::<Vec<_>>()
        );
        let deep = format!("{}{}", "[".repeat(900), "]".repeat(900));
        assert!(parse(&deep).is_ok());
        assert!(parse("{} x").is_err());
        assert!(parse(r#"{"a": NaN}"#).is_err());
    }
}
