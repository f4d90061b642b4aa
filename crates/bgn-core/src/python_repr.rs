//! Values written as Python's `repr` writes what `json.loads` makes of them: the JSON imports' refusals
//! quote a field's value in the words the Python import used.

use std::fmt::Write;

use crate::json_value::{Json, KeyOrder};

/// A JSON value as Python's `repr` writes what `json.loads` makes of it, an object's keys in `order`.
pub fn repr(value: &Json, order: KeyOrder) -> String {
    match value {
        Json::Null => "None".into(),
        Json::Bool(b) => if *b { "True" } else { "False" }.into(),
        Json::Number(n) if n.is_integer() => {
            let digits = n.as_text();
            if digits.trim_start_matches('-').bytes().all(|b| b == b'0') {
                "0".into()
            } else {
                digits.into()
            }
        }
        Json::Number(n) => float_repr(n.as_text().parse().unwrap_or(f64::NAN)),
        Json::String(s) => str_repr(s),
        Json::Array(items) => {
            let items: Vec<String> = items.iter().map(|item| repr(item, order)).collect();
            format!("[{}]", items.join(", "))
        }
        Json::Object(map) => {
            let items: Vec<String> = map
                .entries(order)
                .into_iter()
                .map(|(k, v)| format!("{}: {}", str_repr(k), repr(v, order)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

/// Python's `repr` of a float: the shortest digits that read back, fixed from 1e-4 to 1e16.
fn float_repr(value: f64) -> String {
    if value.is_infinite() {
        return if value > 0.0 { "inf" } else { "-inf" }.into();
    }
    if value.is_nan() {
        return "nan".into();
    }
    let scientific = format!("{:e}", value.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if value.is_sign_negative() { "-" } else { "" };
    let text = if (-4..16).contains(&exponent) {
        if exponent < 0 {
            format!("0.{}{digits}", "0".repeat((-exponent - 1) as usize))
        } else {
            let whole = exponent as usize + 1;
            if digits.len() <= whole {
                format!("{digits}{}.0", "0".repeat(whole - digits.len()))
            } else {
                format!("{}.{}", &digits[..whole], &digits[whole..])
            }
        }
    } else {
        let rest = if digits.len() > 1 {
            format!(".{}", &digits[1..])
        } else {
            String::new()
        };
        let esign = if exponent < 0 { '-' } else { '+' };
        format!("{}{rest}e{esign}{:02}", &digits[..1], exponent.abs())
    };
    format!("{sign}{text}")
}

/// Python's `repr` of a string.
pub fn str_repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if printable(c) => out.push(c),
            c if (c as u32) <= 0xff => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) <= 0xffff => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push(quote);
    out
}

/// Python's `str.isprintable` for one character, for the characters a game's text may hold: control
/// characters, separators but the space, format characters and private use are not.
fn printable(c: char) -> bool {
    let n = c as u32;
    !(n < 0x20
        || (0x7f..=0xa0).contains(&n)
        || n == 0xad
        || n == 0x1680
        || (0x2000..=0x200f).contains(&n)
        || (0x2028..=0x202f).contains(&n)
        || (0x205f..=0x206f).contains(&n)
        || n == 0x3000
        || n == 0xfeff
        || (0xe000..=0xf8ff).contains(&n)
        || (0xfff9..=0xfffb).contains(&n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_as_python_writes_them() {
        for (value, python) in [
            (1.5, "1.5"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (1.5e-5, "1.5e-05"),
            (-2.0, "-2.0"),
            (123.456, "123.456"),
        ] {
            assert_eq!(float_repr(value), python);
        }
    }
}
