//! `[%eval …]` and `[%clk …]` commands inside comments.
//!
//! The accepted forms are python-chess's (`EVAL_REGEX`, `CLOCK_REGEX`): `[%eval 0.17]`, `[%eval -1.5,20]`,
//! `[%eval #-3]`, `[%clk 0:03:00]`, `[%clk 1:05:00.7]`. Anything else stays in the comment text.
//!
//! A command of those forms whose number the lake's column cannot hold (`[%clk 100000:00:00]`,
//! `[%eval #99999]`) is no comment text: python-chess reads it as a clock or an eval. It is
//! [`OutOfRange`], and its game a reject. The ranges below are the one statement of them: every path
//! into the lake meets them here (a PGN load, a Spark task, the JSON import, which writes PGN).

use std::fmt;

/// Tenths of a second a clock may show: `clk` is `decimal(9, 1)` (99,999,999.9 s, 27777:46:39.9).
pub const MAX_CLOCK_TENTHS: i64 = 999_999_999;
/// Centipawns an eval may give either way: `eval_cp` is `int32`.
pub const MAX_CENTIPAWNS: i64 = i32::MAX as i64;
/// Moves to mate an eval may give either way: `eval_mate` is `int16`.
pub const MAX_MATE: i64 = i16::MAX as i64;
/// The largest NAG (`$255`): PGN's NAGs are a byte, and so are pgn-reader's.
pub const MAX_NAG: u64 = u8::MAX as u64;

/// An engine evaluation, from White's point of view.
#[derive(Copy, Clone, Debug, Eq, PartialEq)]
pub enum Eval {
    Centipawns(i32),
    Mate(i16),
}

/// What a comment carried: its first eval and clock, and its text without those commands.
#[derive(Debug, Default, Eq, PartialEq)]
pub struct Annotations {
    pub eval: Option<Eval>,
    /// Tenths of a second.
    pub clock: Option<i64>,
}

/// A command read as an eval or a clock whose number is beyond the lake's range.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct OutOfRange {
    /// `clock` or `eval`.
    pub what: &'static str,
    /// The command, on one line and cut to a few dozen characters.
    pub command: String,
    /// The range, as a person writes it.
    pub range: String,
}

impl OutOfRange {
    fn new(what: &'static str, command: &[u8], range: String) -> OutOfRange {
        const SHOWN: usize = 40;
        let mut shown: String = String::from_utf8_lossy(&command[..command.len().min(SHOWN)])
            .chars()
            .map(|c| if c.is_whitespace() { ' ' } else { c })
            .collect();
        if command.len() > SHOWN {
            shown.push('…');
        }
        OutOfRange {
            what,
            command: shown,
            range,
        }
    }
}

impl fmt::Display for OutOfRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let OutOfRange {
            what,
            command,
            range,
        } = self;
        write!(f, "{what} '{command}' is out of range ({range})")
    }
}

/// How a command reads: not at all (it stays text), as a value, or as a value the lake cannot hold
/// (`Beyond`: what tells, here the command's length in bytes then the reason).
#[derive(Debug, PartialEq)]
enum Read<T, B = usize> {
    No,
    Value(T, usize),
    Beyond(B),
}

/// The command at the start of `rest` (a `[`), if it is an eval or a clock.
fn command(rest: &[u8]) -> Option<Read<Found, OutOfRange>> {
    let read = if rest.starts_with(b"[%eval") {
        match parse_eval(&rest[6..]) {
            Read::Value(e, n) => Read::Value(Found::Eval(e), 6 + n),
            Read::Beyond(n) => {
                let pawns = format!("{}.{:02}", MAX_CENTIPAWNS / 100, MAX_CENTIPAWNS % 100);
                let range = format!("-{pawns} to {pawns} pawns, #-{MAX_MATE} to #{MAX_MATE}");
                Read::Beyond(OutOfRange::new("eval", &rest[..6 + n], range))
            }
            Read::No => Read::No,
        }
    } else if rest.starts_with(b"[%clk") {
        match parse_clock(&rest[5..]) {
            Read::Value(c, n) => Read::Value(Found::Clock(c), 5 + n),
            Read::Beyond(n) => {
                let seconds = MAX_CLOCK_TENTHS / 10;
                let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
                let range = format!("at most {h}:{m:02}:{s:02}.{}", MAX_CLOCK_TENTHS % 10);
                Read::Beyond(OutOfRange::new("clock", &rest[..5 + n], range))
            }
            Read::No => Read::No,
        }
    } else {
        return None;
    };
    Some(read)
}

enum Found {
    Eval(Eval),
    Clock(i64),
}

impl Annotations {
    /// Records `found` unless one of its kind came first.
    fn first(&mut self, found: Found) {
        match found {
            Found::Eval(e) => {
                self.eval.get_or_insert(e);
            }
            Found::Clock(c) => {
                self.clock.get_or_insert(c);
            }
        }
    }
}

/// Strips every well-formed `[%eval]`/`[%clk]` command (and the whitespace after it) from `comment`,
/// appending the remaining text to `text`, and records the first eval and clock into `found`.
/// `Err` names the first command whose number the lake cannot hold.
pub fn extract(
    comment: &str,
    text: &mut String,
    found: &mut Annotations,
) -> Result<(), OutOfRange> {
    let bytes = comment.as_bytes();
    let mut copied = 0;
    let mut search = 0;
    while let Some(i) = memchr::memchr(b'[', &bytes[search..]) {
        let at = search + i;
        search = at + 1;
        let parsed = match command(&bytes[at..]) {
            Some(Read::Value(value, len)) => {
                found.first(value);
                Some(len)
            }
            Some(Read::Beyond(e)) => return Err(e),
            Some(Read::No) | None => None,
        };
        if let Some(len) = parsed {
            text.push_str(&comment[copied..at]);
            let mut after = at + len;
            while after < bytes.len() && bytes[after].is_ascii_whitespace() {
                after += 1;
            }
            copied = after;
            search = after;
        }
    }
    text.push_str(&comment[copied..]);
    Ok(())
}

/// The eval and clock of a comment made only of `[%eval]`/`[%clk]` commands and whitespace (the
/// usual lichess comment, `{ [%eval 0.17] [%clk 0:03:00] }`); `None` for any other comment, and for one
/// with a number out of range (`extract` tells which). Read as `extract` would read it, without copying
/// any text.
pub fn commands_only(comment: &[u8]) -> Option<Annotations> {
    let mut found = Annotations::default();
    let mut i = 0;
    loop {
        while comment.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        let rest = &comment[i..];
        if rest.is_empty() {
            return Some(found);
        }
        let Some(Read::Value(value, n)) = command(rest) else {
            return None;
        };
        found.first(value);
        i += n;
    }
}

/// Parses `\s(#[+-]?\d+ | [+-]?(\d{0,10}\.\d{1,2} | \d{1,10}\.?))(,\d+)?]` (the depth read, not kept);
/// returns the eval and the bytes used.
fn parse_eval(s: &[u8]) -> Read<Eval> {
    let mut r = Cursor { s, i: 0 };
    let Some(eval) = read_eval(&mut r) else {
        return Read::No;
    };
    if r.eat(b',') && r.digits(usize::MAX).is_none_or(|(_, n)| n == 0) {
        return Read::No;
    }
    if !r.eat(b']') {
        return Read::No;
    }
    // The bounds fit the columns' types: the casts cannot wrap.
    let in_range = match eval {
        (cp, false) => (cp.abs() <= MAX_CENTIPAWNS).then_some(Eval::Centipawns(cp as i32)),
        (n, true) => (n.abs() <= MAX_MATE).then_some(Eval::Mate(n as i16)),
    };
    match in_range {
        Some(eval) => Read::Value(eval, r.i),
        None => Read::Beyond(r.i),
    }
}

/// The number of an eval, unbounded (saturated), and whether it is a mate's.
fn read_eval(r: &mut Cursor) -> Option<(i64, bool)> {
    r.space()?;
    let eval = if r.eat(b'#') {
        let neg = r.sign();
        let (v, n) = r.digits(usize::MAX)?;
        if n == 0 {
            return None;
        }
        (if neg { -v } else { v }, true)
    } else {
        let neg = r.sign();
        let (int, n_int) = r.digits(10)?;
        let cents = if r.eat(b'.') {
            let (frac, n_frac) = r.digits(2)?;
            if n_frac == 0 && n_int == 0 {
                return None;
            }
            // `\d{1,10}\.` needs digits before a bare dot; `\.\d{1,2}` needs digits after it.
            if r.peek().is_some_and(|b| b.is_ascii_digit()) {
                return None;
            }
            int * 100 + if n_frac == 1 { frac * 10 } else { frac }
        } else {
            if n_int == 0 || r.peek().is_some_and(|b| b.is_ascii_digit()) {
                return None;
            }
            int * 100
        };
        (if neg { -cents } else { cents }, false)
    };
    Some(eval)
}

/// Parses `\s\d+:\d+:\d+(\.\d*)?]`; returns tenths of a second (half-even rounding of further digits)
/// and the bytes used.
fn parse_clock(s: &[u8]) -> Read<i64> {
    // lichess writes ` H:MM:SS]`: read that shape at once, the general grammar below otherwise.
    if let [b' ', h, b':', m1, m2, b':', s1, s2, b']', ..] = *s {
        let digits = [h, m1, m2, s1, s2];
        if digits.iter().all(u8::is_ascii_digit) {
            let [h, m1, m2, s1, s2] = digits.map(|d| i64::from(d - b'0'));
            return Read::Value(((h * 60 + m1 * 10 + m2) * 60 + s1 * 10 + s2) * 10, 9);
        }
    }
    let mut r = Cursor { s, i: 0 };
    let Some(tenths) = read_clock(&mut r) else {
        return Read::No;
    };
    match tenths {
        0..=MAX_CLOCK_TENTHS => Read::Value(tenths, r.i),
        _ => Read::Beyond(r.i),
    }
}

/// The tenths of a clock, unbounded (saturated).
fn read_clock(r: &mut Cursor) -> Option<i64> {
    r.space()?;
    let (h, nh) = r.digits(usize::MAX)?;
    let ok = nh > 0 && r.eat(b':');
    let (m, nm) = r.digits(usize::MAX)?;
    let ok = ok && nm > 0 && r.eat(b':');
    let (sec, ns) = r.digits(usize::MAX)?;
    if !ok || ns == 0 {
        return None;
    }
    let seconds = h
        .saturating_mul(3600)
        .saturating_add(m.saturating_mul(60))
        .saturating_add(sec);
    let mut tenths = seconds.saturating_mul(10);
    if r.eat(b'.') {
        let start = r.i;
        while r.peek().is_some_and(|b| b.is_ascii_digit()) {
            r.i += 1;
        }
        let frac = &r.s[start..r.i];
        if let Some((&d, rest)) = frac.split_first() {
            let round_up = match rest.split_first() {
                Some((&first, _)) if first > b'5' => true,
                Some((&b'5', tail)) => tail.iter().any(|&b| b != b'0') || d % 2 == 1,
                _ => false,
            };
            tenths = tenths.saturating_add(i64::from(d - b'0') + i64::from(round_up));
        }
    }
    r.eat(b']').then_some(tenths)
}

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.peek() == Some(b);
        self.i += usize::from(hit);
        hit
    }

    /// One whitespace character (regex `\s`).
    fn space(&mut self) -> Option<()> {
        let b = self.peek()?;
        (b.is_ascii_whitespace() || b == 0x0b).then(|| self.i += 1)
    }

    fn sign(&mut self) -> bool {
        if self.eat(b'-') {
            true
        } else {
            self.eat(b'+');
            false
        }
    }

    /// Up to `max` digits and their value (saturated at `i64::MAX`: beyond any range); `None` when
    /// there are more (the regex would not match).
    fn digits(&mut self, max: usize) -> Option<(i64, usize)> {
        let mut v: i64 = 0;
        let mut n = 0;
        while let Some(b) = self.peek().filter(u8::is_ascii_digit) {
            if n == max {
                return None;
            }
            v = v.saturating_mul(10).saturating_add(i64::from(b - b'0'));
            n += 1;
            self.i += 1;
        }
        Some((v, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(c: &str) -> (String, Annotations) {
        let mut text = String::new();
        let mut found = Annotations::default();
        extract(c, &mut text, &mut found).expect("in range");
        (text, found)
    }

    fn out_of_range(c: &str) -> Option<String> {
        let found = &mut Annotations::default();
        extract(c, &mut String::new(), found)
            .err()
            .map(|e| e.to_string())
    }

    #[test]
    fn numbers_beyond_the_columns_are_out_of_range_at_their_edges() {
        for c in [
            "[%clk 27777:46:39.9]",
            "[%clk 0:1666666:39.94]",
            "[%eval 21474836.47]",
            "[%eval -21474836.47]",
            "[%eval #32767]",
            "[%eval #-32767,9999999999999999999999]",
        ] {
            assert_eq!(out_of_range(c), None, "{c}");
            assert_ne!(run(c).1, Annotations::default(), "{c}");
        }
        for (c, what) in [
            ("[%clk 27777:46:40]", "clock"),
            ("[%clk 27777:46:39.95]", "clock"), // rounds up to 27777:46:40.0
            ("[%clk 100000:00:00]", "clock"),
            ("[%clk 0:0:99999999999999999999999]", "clock"),
            ("[%clk 99999999999999999999:0:0]", "clock"),
            ("[%eval 21474836.48]", "eval"),
            ("[%eval -9999999999]", "eval"),
            ("[%eval #32768]", "eval"),
            ("[%eval #-99999999999999999999999]", "eval"),
        ] {
            let reason = out_of_range(&format!("a {c} b")).unwrap_or_default();
            assert!(
                reason.starts_with(&format!("{what} '{c}' is out of range (")),
                "{c}: {reason}"
            );
            let commands = commands_only(c.as_bytes());
            assert_eq!(commands, None, "{c}: left for extract to tell");
        }
        // python-chess's grammar reads none of these: they stay text, as before.
        for c in [
            "[%eval 99999999999]",
            "[%clk -1:00:00]",
            "[%emt 100000:00:00]",
        ] {
            assert_eq!(run(c), (c.to_owned(), Annotations::default()), "{c}");
        }
    }

    #[test]
    fn a_long_command_is_told_on_one_short_line() {
        let c = format!("[%clk\n{}:00:00]", "9".repeat(1000));
        let reason = out_of_range(&c).expect("out of range");
        assert!(!reason.contains('\n') && reason.len() < 120, "{reason}");
    }

    #[test]
    fn clock_fast_path_agrees_with_the_grammar() {
        for clk in [
            " 0:03:00]",
            " 1:59:59]",
            " 0:00:09]",
            " 0:00:09.5]",
            " 10:00:00]",
            " 0:3:00]",
        ] {
            let fast = parse_clock(clk.as_bytes());
            // The same clock after a tab, which the fast path does not take: the general grammar's.
            let general = parse_clock(clk.replacen(' ', "\t", 1).as_bytes());
            assert_eq!(fast, general, "{clk}");
        }
    }

    #[test]
    fn commands_only_agrees_with_extract() {
        for c in [
            " [%clk 0:03:00] ",
            " [%eval 0.17] [%clk 0:00:30.5] ",
            "[%eval #-3,20][%clk 1:05:00]",
            "",
            " [%clk 0:03:00] [%clk 0:02:00] ",
            " [%clk 0:03:00] Good ",
            " [%csl Ga4] ",
            " [%eval 0.1x] ",
            "Good",
        ] {
            let (text, found) = run(c);
            let expected = text.trim().is_empty().then_some(found);
            assert_eq!(commands_only(c.as_bytes()), expected, "{c:?}");
        }
    }

    #[test]
    fn lichess_comment() {
        let (text, a) = run(" [%eval 0.17] [%clk 0:00:30.5] ");
        assert_eq!(text.trim(), "");
        assert_eq!(a.eval, Some(Eval::Centipawns(17)));
        assert_eq!(a.clock, Some(305));
    }

    #[test]
    fn mate_depth_and_text_kept() {
        let (text, a) = run("Good [%eval #-3,20] idea [%csl Ga4] [%clk 1:05:00]");
        assert_eq!(text, "Good idea [%csl Ga4] ");
        assert_eq!(a.eval, Some(Eval::Mate(-3)));
        assert_eq!(a.clock, Some(39000));
    }

    #[test]
    fn cp_forms() {
        for (s, cp) in [
            ("-0.5", -50),
            ("1.", 100),
            (".25", 25),
            ("+3", 300),
            ("-12.34", -1234),
        ] {
            assert_eq!(
                run(&format!("[%eval {s}]")).1.eval,
                Some(Eval::Centipawns(cp)),
                "{s}"
            );
        }
        for bad in [
            "[%eval 1.234]",
            "[%eval .]",
            "[%eval x]",
            "[%eval 1,]",
            "[%eval]",
        ] {
            let (text, a) = run(bad);
            assert_eq!((text.as_str(), a.eval), (bad, None));
        }
    }

    #[test]
    fn clock_rounding_and_first_wins() {
        assert_eq!(run("[%clk 0:00:09.7]").1.clock, Some(97));
        assert_eq!(run("[%clk 0:00:09.75]").1.clock, Some(98));
        assert_eq!(run("[%clk 0:00:09.65]").1.clock, Some(96));
        assert_eq!(run("[%clk 0:00:01] [%clk 0:00:02]").1.clock, Some(10));
    }
}
