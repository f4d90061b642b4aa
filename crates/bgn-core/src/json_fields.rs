//! The checks the JSON imports make of a field, each refusal worded as the Python import worded it.

use std::fmt;

use crate::json_value::{Json, KeyOrder, Object};
use crate::python_repr;

/// A field's value, or the refusal's words.
pub type Refused<T> = Result<T, String>;

/// What a value is, as a refusal says: `an object`, `a number`...
pub fn json_type(value: &Json) -> &'static str {
    match value {
        Json::Object(_) => "an object",
        Json::Array(_) => "an array",
        Json::String(_) => "a string",
        Json::Bool(_) => "a boolean",
        Json::Null => "null",
        Json::Number(_) => "a number",
    }
}

pub fn object<'o, 'a>(value: &'o Json<'a>, here: impl fmt::Display) -> Refused<&'o Object<'a>> {
    match value {
        Json::Object(object) => Ok(object),
        other => Err(format!("{here} is {}, not an object", json_type(other))),
    }
}

pub fn array<'o, 'a>(value: &'o Json<'a>, here: impl fmt::Display) -> Refused<&'o [Json<'a>]> {
    match value {
        Json::Array(items) => Ok(items),
        other => Err(format!("{here} is {}, not an array", json_type(other))),
    }
}

pub fn string<'o>(value: &'o Json, here: impl fmt::Display) -> Refused<&'o str> {
    match value {
        Json::String(text) => Ok(text),
        other => Err(format!("{here} is {}, not a string", json_type(other))),
    }
}

pub fn tag_value<'o>(value: &'o Json, here: impl fmt::Display) -> Refused<&'o str> {
    tag_text(string(value, &here)?, here)
}

pub fn tag_text(text: &str, here: impl fmt::Display) -> Refused<&str> {
    if text.contains(['\n', '\r']) {
        return Err(format!("{here} holds a line break, which a PGN tag cannot"));
    }
    Ok(text)
}

pub fn comment_text<'o>(value: &'o Json, here: impl fmt::Display) -> Refused<&'o str> {
    let text = string(value, &here)?;
    if text.contains('}') {
        return Err(format!("{here} holds '}}', which ends a PGN comment"));
    }
    Ok(text)
}

/// An integer (a JSON number without fraction or exponent, as Python reads one) within `low..=high`.
pub fn integer(value: &Json, here: impl fmt::Display, low: i64, high: i64) -> Refused<i64> {
    match value {
        Json::Number(number) if number.is_integer() => match number.as_i64() {
            Some(n) if (low..=high).contains(&n) => Ok(n),
            _ => Err(format!(
                "{here} {} is out of range ({low} to {high})",
                python_repr::repr(value, KeyOrder::Sorted)
            )),
        },
        other => Err(format!("{here} is {}, not an integer", json_type(other))),
    }
}

/// `[0-9]+:[0-9]{2}:[0-9]{2}(\.[0-9])?`
pub fn is_clock(text: &str) -> bool {
    // Read by bytes: a `str` split by `char` cost each clock of a line a searcher's setup.
    let all_digits = |b: &[u8]| b.iter().all(u8::is_ascii_digit);
    let b = text.as_bytes();
    let (clock, tenth) = match b.iter().position(|&c| c == b'.') {
        None => (b, None),
        Some(dot) => (&b[..dot], Some(&b[dot + 1..])),
    };
    let n = clock.len();
    n >= 7
        && clock[n - 3] == b':'
        && clock[n - 6] == b':'
        && all_digits(&clock[..n - 6])
        && all_digits(&clock[n - 5..n - 3])
        && all_digits(&clock[n - 2..])
        && tenth.is_none_or(|t| t.len() == 1 && t[0].is_ascii_digit())
}

pub fn digits(text: &str, fewest: usize, most: usize) -> bool {
    (fewest..=most).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit())
}

/// A lichess id (8 letters or digits) or 16 hex digits of a content hash (docs/schema.md).
pub fn lake_id(id: &str) -> bool {
    let b = id.as_bytes();
    (b.len() == 8 && b.iter().all(u8::is_ascii_alphanumeric))
        || (b.len() == 16 && b.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_are_three_fields_and_an_optional_tenth() {
        for clock in ["0:05:00", "123:59:59", "0:00:07.5"] {
            assert!(is_clock(clock), "{clock}");
        }
        for not in [
            "",
            "0:05",
            ":05:00",
            "0:5:00",
            "0:05:00:00",
            "0:05:00.12",
            "0:05:00.",
            "a:05:00",
            "0:05:00.5.5",
            "0:05:0a",
            "0:0a:00",
            "0:05:00.a",
            "1:2:3:4",
            "0::05:00",
            "\u{663}:05:00",
            "0;05:00",
            "0:05;00",
        ] {
            assert!(!is_clock(not), "{not}");
        }
    }
}
