//! A JSON value that borrows its strings from the text it was read from and its arrays and objects from
//! an arena ([`Arena`]): what `serde_json::Value` holds, without a `String` per key and string, a map per
//! object or a `Vec` per array (a BGN line is ~4 kB of small objects: a move, its notes, each of which
//! was an allocation and a free), and with each object's keys in document order.
//!
//! serde_json's `Map` sorts its keys unless built with its `preserve_order` feature, whose `indexmap`
//! crate the project does not have; a study's tags must keep the document's order (a PGN tag list is
//! ordered). A repeated key counts once, with its last value: in the place of its first occurrence as
//! Python's `json.loads` reads it ([`Object::entries`], the study import), or in sorted order as
//! serde_json's map reads it ([`Object::sorted_entries`], the BGN import's refusals).

use std::collections::HashMap;
use std::fmt;

use bumpalo::Bump;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The key serde_json (`arbitrary_precision`) gives a number too large for 64 bits under, its digits the
/// value.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Json<'a> {
    Null,
    Bool(bool),
    Number(Number<'a>),
    String(&'a str),
    Array(&'a [Json<'a>]),
    Object(Object<'a>),
}

/// A number: an integer that fits 64 bits, or its text as written (a fraction, an exponent, more digits).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number<'a> {
    U64(u64),
    I64(i64),
    Text(&'a str),
}

impl Number<'_> {
    /// The number as written (an integer in its canonical digits, as JSON writes integers).
    pub fn as_text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Number::U64(n) => n.to_string().into(),
            Number::I64(n) => n.to_string().into(),
            Number::Text(text) => (*text).into(),
        }
    }

    /// The integer, if it is one within `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Number::U64(n) => i64::try_from(*n).ok(),
            Number::I64(n) => Some(*n),
            Number::Text(text) if text.contains(['.', 'e', 'E']) => None,
            Number::Text(text) => text.parse().ok(),
        }
    }

    pub fn is_integer(&self) -> bool {
        !matches!(self, Number::Text(text) if text.contains(['.', 'e', 'E']))
    }
}

/// An object's entries as written.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Object<'a>(&'a [(&'a str, Json<'a>)]);

/// Where a repeated key's entry stands among an object's entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyOrder {
    /// At its first occurrence, as Python's `json.loads` reads an object.
    Document,
    /// In sorted order, as serde_json's map reads an object.
    Sorted,
}

/// Objects with more entries than this find repeated keys with a hash map, not by scanning.
const SCAN_ENTRIES: usize = 16;

impl<'a> Object<'a> {
    /// A key's value: its last occurrence's.
    pub fn get(&self, key: &str) -> Option<&'a Json<'a>> {
        self.0.iter().rev().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.0.iter().any(|(k, _)| *k == key)
    }

    /// Each key once, with the value of its last occurrence, in `order`.
    pub fn entries(&self, order: KeyOrder) -> Vec<(&'a str, &'a Json<'a>)> {
        match order {
            KeyOrder::Document => self.document_entries(),
            KeyOrder::Sorted => self.sorted_entries(),
        }
    }

    fn document_entries(&self) -> Vec<(&'a str, &'a Json<'a>)> {
        let mut entries: Vec<(&str, &Json<'a>)> = Vec::with_capacity(self.0.len());
        if self.0.len() <= SCAN_ENTRIES {
            for (key, value) in self.0 {
                match entries.iter_mut().find(|(k, _)| k == key) {
                    Some(entry) => entry.1 = value,
                    None => entries.push((key, value)),
                }
            }
            return entries;
        }
        let mut places: HashMap<&str, usize> = HashMap::with_capacity(self.0.len());
        for (key, value) in self.0 {
            match places.get(key) {
                Some(&at) => entries[at].1 = value,
                None => {
                    places.insert(key, entries.len());
                    entries.push((key, value));
                }
            }
        }
        entries
    }

    fn sorted_entries(&self) -> Vec<(&'a str, &'a Json<'a>)> {
        let mut entries: Vec<(&str, &Json<'a>)> = self.0.iter().map(|(k, v)| (*k, v)).collect();
        // A stable sort keeps a repeated key's occurrences in order: the last one is kept.
        entries.sort_by(|a, b| a.0.cmp(b.0));
        let mut unique: Vec<(&str, &Json<'a>)> = Vec::with_capacity(entries.len());
        for entry in entries {
            match unique.last_mut() {
                Some(last) if last.0 == entry.0 => *last = entry,
                _ => unique.push(entry),
            }
        }
        unique
    }
}

impl<'a> Json<'a> {
    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    pub fn as_str(&self) -> Option<&'a str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }
}

/// Where the values read hold their arrays, objects and unescaped strings, emptied between texts
/// ([`Arena::reset`]): a text's values cost no allocation of their own.
#[derive(Default)]
pub struct Arena(Bump);

impl Arena {
    /// Drops what the last texts read (the borrow checker sees that none of it is held).
    pub fn reset(&mut self) {
        self.0.reset();
    }
}

/// One JSON text (nothing but white space after it), its values in `arena`. `bounded`: nesting deeper
/// than serde_json's default limit (128) is its error (`recursion limit exceeded`), as
/// `serde_json::from_str` reads; else at any depth: the caller bounds the nesting (the import refuses a
/// line nested deeper than `json_games::MAX_DEPTH` before it gets here).
pub fn parse<'a>(
    text: &'a str,
    arena: &'a Arena,
    bounded: bool,
) -> Result<Json<'a>, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    if !bounded {
        deserializer.disable_recursion_limit();
    }
    let mut scratch = Scratch {
        bump: &arena.0,
        values: Vec::with_capacity(64),
        entries: Vec::with_capacity(64),
    };
    let value = Seed(&mut scratch).deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// The items of the arrays and objects being read (nested ones above their parent's), each copied to
/// the arena when whole.
struct Scratch<'a> {
    bump: &'a Bump,
    values: Vec<Json<'a>>,
    entries: Vec<(&'a str, Json<'a>)>,
}

/// Reads one value into the arena.
struct Seed<'s, 'a>(&'s mut Scratch<'a>);

impl<'de: 'a, 'a> DeserializeSeed<'de> for Seed<'_, 'a> {
    type Value = Json<'a>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for Seed<'_, 'a> {
    type Value = Json<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Self::Value, E> {
        Ok(Json::Bool(b))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Self::Value, E> {
        Ok(Json::Number(Number::U64(n)))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Self::Value, E> {
        Ok(Json::Number(Number::I64(n)))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Json::String(s))
    }

    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Json::String(self.0.bump.alloc_str(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let scratch = self.0;
        let start = scratch.values.len();
        while let Some(item) = seq.next_element_seed(Seed(&mut *scratch))? {
            scratch.values.push(item);
        }
        let items = scratch.bump.alloc_slice_copy(&scratch.values[start..]);
        scratch.values.truncate(start);
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let scratch = self.0;
        let start = scratch.entries.len();
        while let Some(key) = map.next_key_seed(Key(scratch.bump))? {
            if scratch.entries.len() == start && key == NUMBER_TOKEN {
                // As serde_json's `Value` reads it: the digits must be a number.
                let text = map.next_value_seed(Key(scratch.bump))?;
                text.parse::<serde_json::Number>()
                    .map_err(|_| serde::de::Error::custom("invalid number"))?;
                return Ok(Json::Number(Number::Text(text)));
            }
            let value = map.next_value_seed(Seed(&mut *scratch))?;
            scratch.entries.push((key, value));
        }
        let entries = scratch.bump.alloc_slice_copy(&scratch.entries[start..]);
        scratch.entries.truncate(start);
        Ok(Json::Object(Object(entries)))
    }
}

/// Reads a string (an object's key, a big number's digits), borrowed when it holds no escape.
struct Key<'a>(&'a Bump);

impl<'de: 'a, 'a> DeserializeSeed<'de> for Key<'a> {
    type Value = &'a str;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for Key<'a> {
    type Value = &'a str;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(s)
    }

    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(self.0.alloc_str(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An arena for a test's texts (leaked: a test's few bytes).
    fn arena() -> &'static Arena {
        Box::leak(Box::default())
    }

    fn object(text: &str) -> Object<'_> {
        match parse(text, arena(), false).unwrap() {
            Json::Object(object) => object,
            other => panic!("{other:?}"),
        }
    }

    fn read(text: &str) -> Json<'_> {
        parse(text, arena(), true).unwrap()
    }

    #[test]
    fn strings_borrow_unless_escaped() {
        let text = r#"{"a": "plain", "b\n": "esc\"aped"}"#;
        let doc = read(text);
        let doc = doc.as_object().unwrap();
        assert!(matches!(
            doc.get("a"),
            Some(Json::String(s)) if s.as_ptr() == text[7..].as_ptr()
        ));
        assert_eq!(doc.get("b\n").and_then(Json::as_str), Some("esc\"aped"));
    }

    #[test]
    fn an_object_reads_as_serde_jsons_map() {
        let doc = read(r#"{"b": 1, "a": 2, "b": 3}"#);
        let entries = doc.as_object().unwrap().entries(KeyOrder::Sorted);
        let keys: Vec<&str> = entries.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["a", "b"]);
        assert_eq!(entries[1].1, &Json::Number(Number::U64(3)));
        assert_eq!(
            doc.as_object().unwrap().get("b"),
            Some(&Json::Number(Number::U64(3)))
        );
    }

    #[test]
    fn numbers_as_written() {
        for (text, written, int) in [
            ("12", "12", Some(12)),
            ("-7", "-7", Some(-7)),
            ("-0", "-0", Some(0)),
            ("1.50", "1.50", None),
            ("1e3", "1e+3", None), // as serde_json scans it
            ("100000000000000000000", "100000000000000000000", None),
        ] {
            let Json::Number(n) = read(text) else {
                panic!("{text}")
            };
            assert_eq!(n.as_text(), written);
            assert_eq!(n.as_i64(), int);
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            assert_eq!(value.as_number().unwrap().as_str(), written);
        }
    }

    #[test]
    fn keys_keep_the_document_order_and_strings_are_borrowed() {
        let text = r#"{"z": "1", "a": "2", "m\u00e9": "3", "b": "x\"y"}"#;
        let doc = object(text);
        let within = |s: &str| text.as_bytes().as_ptr_range().contains(&s.as_ptr());
        let keys: Vec<&str> = doc
            .entries(KeyOrder::Document)
            .iter()
            .map(|(k, _)| *k)
            .collect();
        assert_eq!(keys, ["z", "a", "mé", "b"]);
        assert!(within(doc.0[0].0) && within(doc.get("a").unwrap().as_str().unwrap()));
        assert!(!within(doc.0[2].0));
        assert_eq!(doc.get("b"), Some(&Json::String("x\"y")));
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
            let entries = doc.entries(KeyOrder::Document);
            assert_eq!(entries.len(), 2 + n);
            assert_eq!(entries[0], ("a", &Json::Number(Number::U64(3))));
            assert_eq!(entries[1], ("b", &Json::Number(Number::U64(2))));
            assert_eq!(doc.get("a"), Some(&Json::Number(Number::U64(3))));
        }
    }

    #[test]
    fn numbers_keep_their_text_and_nesting_has_no_fixed_limit() {
        let doc = object(r#"{"n": [-0, 1.50, 1e400, 123456789012345678901234567890]}"#);
        let Some(Json::Array(numbers)) = doc.get("n") else {
            panic!()
        };
        let texts: Vec<String> = numbers
            .iter()
            .map(|n| match n {
                Json::Number(n) => n.as_text().into_owned(),
                other => panic!("{other:?}"),
            })
            .collect();
        // serde_json writes an exponent's sign: Python reads both as the same float.
        assert_eq!(
            texts,
            ["-0", "1.50", "1e+400", "123456789012345678901234567890"]
        );
        // On a thread with a Python thread's stack (8 MiB), where the imports call it: a debug build
        // needs 2-4 MiB for 995 levels (`json_games::MAX_DEPTH`), more than a test thread's 2 MiB; a
        // release build less than 256 KiB (measured 2026-11-25).
        let deep = format!("{}{}", "[".repeat(900), "]".repeat(900));
        let nested = std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(move || {
                let arena = Arena::default();
                assert!(parse(&deep, &arena, false).is_ok());
                let bounded = parse(&deep, &arena, true).unwrap_err();
                assert!(bounded.to_string().starts_with("recursion limit exceeded"));
            })
            .expect("a thread");
        nested.join().expect("the deep texts read");
        let arena = Arena::default();
        assert!(parse("{} x", &arena, false).is_err());
        assert!(parse(r#"{"a": NaN}"#, &arena, false).is_err());
    }
}
