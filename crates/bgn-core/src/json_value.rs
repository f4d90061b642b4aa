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

use bumpalo::Bump;

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

    /// The entries as written, repeated keys included.
    pub fn iter(&self) -> std::slice::Iter<'a, (&'a str, Json<'a>)> {
        self.0.iter()
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

/// Why a text is not one JSON value, in the classes the imports word differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonError {
    /// Arrays and objects nested deeper than the caller's bound.
    TooDeep,
    /// A `\\u` escape of half a surrogate pair, alone (Python reads it into a string that then cannot be
    /// written as UTF-8).
    LoneSurrogate,
    /// Anything else: not JSON as RFC 8259 writes it (NaN and the like included).
    Invalid,
}

/// One JSON text (nothing but white space after it), its values in `arena`; arrays and objects nested
/// deeper than `max_depth` are refused ([`JsonError::TooDeep`]). It accepts what serde_json reads
/// (`arbitrary_precision`), and gives each number as serde_json scans it (an exponent written `e` and
/// signed, `-0` kept as text); the tests hold it to serde_json on the texts they make. A parser of its
/// own: serde_json's visitor took ~30% of a BGN line's CPU (November 29, 2026).
pub fn parse<'a>(text: &'a str, arena: &'a Arena, max_depth: usize) -> Result<Json<'a>, JsonError> {
    let mut parser = Parser {
        text,
        bytes: text.as_bytes(),
        at: 0,
        depth: 0,
        max_depth,
        bump: &arena.0,
        values: Vec::with_capacity(64),
        keys: Vec::with_capacity(64),
        unescaped: String::new(),
    };
    parser.value()?;
    parser.skip_space();
    match parser.values.pop() {
        Some(value) if parser.at == parser.bytes.len() => Ok(value),
        _ => Err(JsonError::Invalid),
    }
}

/// A recursive descent over the text's bytes. Each value read is pushed on `values`, where the items of
/// the arrays and objects being read wait (nested ones above their parent's; an object's keys on `keys`),
/// each copied to the arena when whole. (Values returned as `Result<Json, _>` were read back through
/// stalled loads: half the parser's time.)
struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    depth: usize,
    max_depth: usize,
    bump: &'a Bump,
    values: Vec<Json<'a>>,
    keys: Vec<&'a str>,
    unescaped: String,
}

impl<'a> Parser<'a> {
    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// The next byte past white space, not consumed.
    fn peek(&mut self) -> Result<u8, JsonError> {
        self.skip_space();
        self.bytes.get(self.at).copied().ok_or(JsonError::Invalid)
    }

    /// Reads a value onto `values`.
    fn value(&mut self) -> Result<(), JsonError> {
        let value = match self.peek()? {
            b'{' => return self.nested(Self::object),
            b'[' => return self.nested(Self::array),
            b'"' => Json::String(self.string()?),
            b't' => self.literal("true", Json::Bool(true))?,
            b'f' => self.literal("false", Json::Bool(false))?,
            b'n' => self.literal("null", Json::Null)?,
            b'-' | b'0'..=b'9' => Json::Number(self.number()?),
            _ => return Err(JsonError::Invalid),
        };
        self.values.push(value);
        Ok(())
    }

    fn literal(&mut self, word: &str, value: Json<'a>) -> Result<Json<'a>, JsonError> {
        if !self.bytes[self.at..].starts_with(word.as_bytes()) {
            return Err(JsonError::Invalid);
        }
        self.at += word.len();
        Ok(value)
    }

    fn nested(&mut self, read: fn(&mut Self) -> Result<(), JsonError>) -> Result<(), JsonError> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(JsonError::TooDeep);
        }
        self.at += 1; // the opening bracket
        read(self)?;
        self.depth -= 1;
        Ok(())
    }

    /// Comma-separated items, each read by `item`, up to the `close` that ends them.
    fn items(
        &mut self,
        close: u8,
        item: fn(&mut Self) -> Result<(), JsonError>,
    ) -> Result<(), JsonError> {
        if self.peek()? == close {
            self.at += 1;
            return Ok(());
        }
        loop {
            item(self)?;
            match self.peek()? {
                b',' => self.at += 1,
                b if b == close => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(JsonError::Invalid),
            }
        }
    }

    fn array(&mut self) -> Result<(), JsonError> {
        let start = self.values.len();
        self.items(b']', Self::value)?;
        let items = self.bump.alloc_slice_copy(&self.values[start..]);
        self.values.truncate(start);
        self.values.push(Json::Array(items));
        Ok(())
    }

    fn object(&mut self) -> Result<(), JsonError> {
        let (start, keys_start) = (self.values.len(), self.keys.len());
        self.items(b'}', Self::entry)?;
        let entries = self.values[start..].iter().zip(&self.keys[keys_start..]);
        let entries = self
            .bump
            .alloc_slice_fill_iter(entries.map(|(value, key)| (*key, *value)));
        self.values.truncate(start);
        self.keys.truncate(keys_start);
        self.values.push(Json::Object(Object(entries)));
        Ok(())
    }

    /// An object's `"key": value`, the key onto `keys`, the value onto `values`.
    fn entry(&mut self) -> Result<(), JsonError> {
        if self.peek()? != b'"' {
            return Err(JsonError::Invalid);
        }
        let key = self.string()?;
        self.keys.push(key);
        if self.peek()? != b':' {
            return Err(JsonError::Invalid);
        }
        self.at += 1;
        self.value()
    }

    /// A string at its opening quote: borrowed from the text when it holds no escape.
    fn string(&mut self) -> Result<&'a str, JsonError> {
        self.at += 1;
        let start = self.at;
        let end = self.plain_run(start);
        match self.bytes.get(end) {
            Some(b'"') => {
                self.at = end + 1;
                Ok(&self.text[start..end])
            }
            Some(b'\\') => {
                let mut text = std::mem::take(&mut self.unescaped);
                text.clear();
                let read = self.escaped(start, end, &mut text);
                let value = read.map(|()| &*self.bump.alloc_str(&text));
                self.unescaped = text;
                value
            }
            _ => Err(JsonError::Invalid), // a control character, or the text's end
        }
    }

    /// Where the run of bytes from `from` that a string holds as they are ends.
    fn plain_run(&self, from: usize) -> usize {
        let rest = &self.bytes[from..];
        from + rest
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            .unwrap_or(rest.len())
    }

    /// The rest of a string whose text from `start` holds an escape at `at`, unescaped into `out`.
    fn escaped(&mut self, start: usize, mut at: usize, out: &mut String) -> Result<(), JsonError> {
        out.push_str(&self.text[start..at]);
        loop {
            match self.bytes.get(at) {
                Some(b'"') => {
                    self.at = at + 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    let escape = *self.bytes.get(at + 1).ok_or(JsonError::Invalid)?;
                    at += 2;
                    match escape {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let (c, past) = self.unicode_escape(at)?;
                            out.push(c);
                            at = past;
                        }
                        _ => return Err(JsonError::Invalid),
                    }
                }
                _ => {
                    let end = self.plain_run(at);
                    if end == at {
                        return Err(JsonError::Invalid); // a control character, or the text's end
                    }
                    out.push_str(&self.text[at..end]);
                    at = end;
                }
            }
        }
    }

    /// The character of a `\\u` escape whose hex digits start at `at`, and where it ends: a surrogate
    /// pair is two escapes, and half a pair alone is refused, as serde_json refuses it.
    fn unicode_escape(&self, at: usize) -> Result<(char, usize), JsonError> {
        let first = self.hex4(at)?;
        let code = match first {
            0xDC00..=0xDFFF => return Err(JsonError::LoneSurrogate),
            0xD800..=0xDBFF => {
                // As serde_json: the text's end is an end (`Invalid`), anything but `\\u` a lone half.
                match (self.bytes.get(at + 4), self.bytes.get(at + 5)) {
                    (None, _) | (Some(b'\\'), None) => return Err(JsonError::Invalid),
                    (Some(b'\\'), Some(b'u')) => {}
                    _ => return Err(JsonError::LoneSurrogate),
                }
                let second = self.hex4(at + 6)?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(JsonError::LoneSurrogate);
                }
                let code =
                    0x1_0000 + ((u32::from(first) - 0xD800) << 10) + (u32::from(second) - 0xDC00);
                return Ok((char::from_u32(code).ok_or(JsonError::Invalid)?, at + 10));
            }
            code => u32::from(code),
        };
        Ok((char::from_u32(code).ok_or(JsonError::Invalid)?, at + 4))
    }

    fn hex4(&self, at: usize) -> Result<u16, JsonError> {
        let digits = self.bytes.get(at..at + 4).ok_or(JsonError::Invalid)?;
        digits.iter().try_fold(0u16, |n, &b| {
            let digit = (b as char).to_digit(16).ok_or(JsonError::Invalid)?;
            Ok(n << 4 | digit as u16)
        })
    }

    /// A number as serde_json (`arbitrary_precision`) scans it: an integer within 64 bits as one (`-0`
    /// as text), else its text, the exponent written `e` and signed.
    fn number(&mut self) -> Result<Number<'a>, JsonError> {
        let start = self.at;
        let negative = self.bytes[start] == b'-';
        let digits = start + usize::from(negative);
        let mut at = digits;
        match self.bytes.get(at) {
            Some(b'0') => at += 1,
            Some(b'1'..=b'9') => at = self.digits_end(at),
            _ => return Err(JsonError::Invalid),
        }
        let integer_end = at;
        if self.bytes.get(at) == Some(&b'.') {
            let end = self.digits_end(at + 1);
            if end == at + 1 {
                return Err(JsonError::Invalid);
            }
            at = end;
        }
        let mut exponent = None;
        if let Some(b'e' | b'E') = self.bytes.get(at) {
            let signed = matches!(self.bytes.get(at + 1), Some(b'+' | b'-'));
            let first_digit = at + 1 + usize::from(signed);
            let end = self.digits_end(first_digit);
            if end == first_digit {
                return Err(JsonError::Invalid);
            }
            exponent = Some((at, signed));
            at = end;
        }
        self.at = at;
        let text = &self.text[start..at];
        if at == integer_end {
            if let Some(n) = integer(&self.bytes[digits..at]) {
                if !negative {
                    return Ok(Number::U64(n));
                }
                if n != 0 && n <= 1 << 63 {
                    return Ok(Number::I64((n as i64).wrapping_neg()));
                }
            }
        }
        Ok(Number::Text(match exponent {
            Some((e, signed)) if !signed || self.bytes[e] == b'E' => {
                let sign = if signed { "" } else { "+" };
                let rest = &self.text[e + 1..at];
                self.bump
                    .alloc_str(&format!("{}e{sign}{rest}", &self.text[start..e]))
            }
            _ => text,
        }))
    }

    fn digits_end(&self, from: usize) -> usize {
        let rest = self.bytes.get(from..).unwrap_or_default();
        from + rest.iter().take_while(|b| b.is_ascii_digit()).count()
    }
}

/// Decimal digits as a `u64`, `None` past it.
fn integer(digits: &[u8]) -> Option<u64> {
    digits.iter().try_fold(0u64, |n, &d| {
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// serde_json's default nesting bound (128 levels refused), the oracle's.
    const SERDE_DEPTH: usize = 127;

    /// An arena for a test's texts (leaked: a test's few bytes).
    fn arena() -> &'static Arena {
        Box::leak(Box::default())
    }

    fn object(text: &str) -> Object<'_> {
        match parse(text, arena(), usize::MAX).unwrap() {
            Json::Object(object) => object,
            other => panic!("{other:?}"),
        }
    }

    fn read(text: &str) -> Json<'_> {
        parse(text, arena(), SERDE_DEPTH).unwrap()
    }

    /// A value as serde_json's `Value` holds it (each object's keys sorted, a repeated key's last value).
    fn as_serde(value: &Json) -> serde_json::Value {
        use serde_json::Value;
        match value {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => Value::Number(n.as_text().parse().expect("a number's text")),
            Json::String(s) => Value::String((*s).into()),
            Json::Array(items) => Value::Array(items.iter().map(as_serde).collect()),
            Json::Object(object) => Value::Object(
                object
                    .entries(KeyOrder::Sorted)
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), as_serde(v)))
                    .collect(),
            ),
        }
    }

    /// What serde_json makes of `text`: its value, or the class of its error.
    fn oracle(text: &str) -> Result<serde_json::Value, JsonError> {
        serde_json::from_str(text).map_err(|e| {
            let message = e.to_string();
            if message.starts_with("recursion limit exceeded") {
                JsonError::TooDeep
            } else if message.contains("surrogate")
                || message.starts_with("unexpected end of hex escape")
            {
                JsonError::LoneSurrogate
            } else {
                JsonError::Invalid
            }
        })
    }

    fn agrees_with_serde(text: &str) {
        let arena = Arena::default();
        let ours = parse(text, &arena, SERDE_DEPTH).map(|v| as_serde(&v));
        let theirs = oracle(text);
        // Numbers compare by their text (`arbitrary_precision`): `1.0` and `1.00` differ, as written.
        assert_eq!(ours, theirs, "{text:?}");
    }

    /// Pieces of JSON texts, well-formed and not: a random run of them is mostly not JSON, and finds
    /// where the two parsers would part.
    const PIECES: &[&str] = &[
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        " ",
        "\n",
        "\t",
        "\r",
        "\u{b}",
        "\"",
        "\\",
        "\"a\"",
        "\"key\"",
        "\"\\u00e9\"",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud83d\\ude00\"",
        "\"\\ud800x\"",
        "\"\\ud800\\n\"",
        "\"\\ud800\\ud800\"",
        "\"\\ud800\\",
        "\"\\u12\"",
        "\"\\uZZZZ\"",
        "\"\\/\"",
        "\"\\b\\f\\n\\r\\t\\\"\\\\\"",
        "\"\\x\"",
        "\"\u{1}\"",
        "\"\u{7f}é€😀\"",
        "0",
        "-0",
        "-",
        "12",
        "1.5",
        "1.50",
        "1e3",
        "1E-3",
        "1e+3",
        "1.5E3",
        "01",
        "1.",
        ".5",
        "1e",
        "1e+",
        "+1",
        "-01",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "-9223372036854775809",
        "true",
        "false",
        "null",
        "fals",
        "nul",
        "NaN",
        "Infinity",
        "x",
    ];

    fn pieces() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(PIECES), 0..24).prop_map(|p| p.concat())
    }

    /// Well-formed JSON texts, nested, with the pieces above as leaves and keys.
    fn documents() -> impl Strategy<Value = String> {
        let leaf = prop::sample::select(
            &[
                "0",
                "-0",
                "12",
                "-7",
                "1.50",
                "1e3",
                "1E-3",
                "2.5e+10",
                "18446744073709551616",
                "-9223372036854775808",
                "true",
                "false",
                "null",
                "\"a\"",
                "\"\\u00e9\\n\"",
                "\"\\ud83d\\ude00\"",
                "\"\\/\\\\\"",
                "\"é\"",
            ][..],
        )
        .prop_map(str::to_string);
        let keys = prop::sample::select(&["\"a\"", "\"b\"", "\"a\\u0062\"", "\"\""][..]);
        leaf.prop_recursive(6, 64, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6)
                    .prop_map(|items| format!("[{}]", items.join(", "))),
                prop::collection::vec((keys.clone(), inner), 0..6).prop_map(|entries| {
                    let entries: Vec<String> =
                        entries.iter().map(|(k, v)| format!("{k}:{v}")).collect();
                    format!(" {{ {} }}\n", entries.join(","))
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn runs_of_pieces_read_as_serde_json_reads_them(text in pieces()) {
            agrees_with_serde(&text);
        }

        #[test]
        fn documents_read_as_serde_json_reads_them(text in documents()) {
            agrees_with_serde(&text);
        }
    }

    #[test]
    fn the_texts_that_part_parsers_read_as_serde_json_reads_them() {
        for text in [
            "",
            " ",
            "{}",
            "[]",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{1:2}",
            "[1 2]",
            "\"\\ud800\"",
            "\"\\ud800",
            "\"\\ud800\\",
            "\"\\ud800\\u",
            "\"\\ud800\\udc0\"",
            "\"\\ud800\\ud7ff\"",
            "\"\\udfff\"",
            "\"a\u{0}b\"",
            "[-]",
            "[-a]",
            "1 2",
            "tru",
            "true x",
            "{\"a\":\"b\"} ",
            "\u{feff}{}",
            "[1e5]",
            "[-1.0E-0]",
            "[0.0]",
            "[-18446744073709551616]",
        ] {
            agrees_with_serde(text);
        }
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        for n in [126, 127, 128, 129] {
            agrees_with_serde(&deep(n));
        }
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
            ("1E-3", "1e-3", None),
            ("100000000000000000000", "100000000000000000000", None),
            (
                "-9223372036854775808",
                "-9223372036854775808",
                Some(i64::MIN),
            ),
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
    fn numbers_keep_their_text_and_nesting_has_the_callers_bound() {
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
        // needs 2-4 MiB for 995 levels (`json_games::MAX_DEPTH`), more than a test thread's 2 MiB.
        let deep = format!("{}{}", "[".repeat(995), "]".repeat(995));
        let nested = std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(move || {
                let arena = Arena::default();
                assert!(parse(&deep, &arena, 995).is_ok());
                assert_eq!(parse(&deep, &arena, 994), Err(JsonError::TooDeep));
            })
            .expect("a thread");
        nested.join().expect("the deep texts read");
        let arena = Arena::default();
        assert_eq!(parse("{} x", &arena, 1), Err(JsonError::Invalid));
        assert_eq!(parse(r#"{"a": NaN}"#, &arena, 1), Err(JsonError::Invalid));
    }
}
