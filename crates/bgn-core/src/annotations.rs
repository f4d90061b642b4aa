//! `[%eval …]` and `[%clk …]` commands inside comments.
//!
//! The accepted forms are python-chess's (`EVAL_REGEX`, `CLOCK_REGEX`): `[%eval 0.17]`, `[%eval -1.5,20]`,
//! `[%eval #-3]`, `[%clk 0:03:00]`, `[%clk 1:05:00.7]`. Anything else stays in the comment text.

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

/// Strips every well-formed `[%eval]`/`[%clk]` command (and the whitespace after it) from `comment`,
/// appending the remaining text to `text`, and records the first eval and clock into `found`.
pub fn extract(comment: &str, text: &mut String, found: &mut Annotations) {
    let bytes = comment.as_bytes();
    let mut copied = 0;
    let mut search = 0;
    while let Some(i) = memchr::memchr(b'[', &bytes[search..]) {
        let at = search + i;
        search = at + 1;
        let rest = &bytes[at..];
        let parsed = if rest.starts_with(b"[%eval") {
            parse_eval(&rest[6..]).map(|(e, n)| {
                found.eval.get_or_insert(e);
                6 + n
            })
        } else if rest.starts_with(b"[%clk") {
            parse_clock(&rest[5..]).map(|(c, n)| {
                found.clock.get_or_insert(c);
                5 + n
            })
        } else {
            None
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
}

/// The eval and clock of a comment made only of `[%eval]`/`[%clk]` commands and whitespace (the
/// usual lichess comment, `{ [%eval 0.17] [%clk 0:03:00] }`); `None` for any other comment. Read as
/// `extract` would read it, without copying any text.
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
        i += if rest.starts_with(b"[%eval") {
            let (eval, n) = parse_eval(&rest[6..])?;
            found.eval.get_or_insert(eval);
            6 + n
        } else if rest.starts_with(b"[%clk") {
            let (clock, n) = parse_clock(&rest[5..])?;
            found.clock.get_or_insert(clock);
            5 + n
        } else {
            return None;
        };
    }
}

/// Parses `\s(#[+-]?\d+ | [+-]?(\d{0,10}\.\d{1,2} | \d{1,10}\.?))(,\d+)?]`; returns the eval and
/// the bytes used.
fn parse_eval(s: &[u8]) -> Option<(Eval, usize)> {
    let mut r = Cursor { s, i: 0 };
    r.space()?;
    let eval = if r.eat(b'#') {
        let neg = r.sign();
        let (v, n) = r.digits(usize::MAX)?;
        if n == 0 {
            return None;
        }
        let v = i16::try_from(v).ok()?;
        Eval::Mate(if neg { -v } else { v })
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
        let cents = i32::try_from(cents).ok()?;
        Eval::Centipawns(if neg { -cents } else { cents })
    };
    if r.eat(b',') {
        let (_, n) = r.digits(usize::MAX)?;
        if n == 0 {
            return None;
        }
    }
    r.eat(b']').then_some((eval, r.i))
}

/// Parses `\s\d+:\d+:\d+(\.\d*)?]`; returns tenths of a second (half-even rounding of further digits)
/// and the bytes used.
fn parse_clock(s: &[u8]) -> Option<(i64, usize)> {
    // lichess writes ` H:MM:SS]`: read that shape at once, the general grammar below otherwise.
    if let [b' ', h, b':', m1, m2, b':', s1, s2, b']', ..] = *s {
        let digits = [h, m1, m2, s1, s2];
        if digits.iter().all(u8::is_ascii_digit) {
            let [h, m1, m2, s1, s2] = digits.map(|d| i64::from(d - b'0'));
            return Some((((h * 60 + m1 * 10 + m2) * 60 + s1 * 10 + s2) * 10, 9));
        }
    }
    let mut r = Cursor { s, i: 0 };
    r.space()?;
    let (h, nh) = r.digits(usize::MAX)?;
    let ok = nh > 0 && r.eat(b':');
    let (m, nm) = r.digits(usize::MAX)?;
    let ok = ok && nm > 0 && r.eat(b':');
    let (sec, ns) = r.digits(usize::MAX)?;
    if !ok || ns == 0 {
        return None;
    }
    let mut tenths = ((h * 60 + m) * 60 + sec).checked_mul(10)?;
    if r.eat(b'.') {
        let start = r.i;
        while r.peek().is_some_and(|b| b.is_ascii_digit()) {
            r.i += 1;
        }
        let frac = &s[start..r.i];
        if let Some((&d, rest)) = frac.split_first() {
            tenths += i64::from(d - b'0');
            let round_up = match rest.split_first() {
                Some((&first, _)) if first > b'5' => true,
                Some((&b'5', tail)) => tail.iter().any(|&b| b != b'0') || d % 2 == 1,
                _ => false,
            };
            if round_up {
                tenths += 1;
            }
        }
    }
    r.eat(b']').then_some((tenths, r.i))
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

    /// Up to `max` digits; `None` when there are more (the regex would not match).
    fn digits(&mut self, max: usize) -> Option<(i64, usize)> {
        let mut v: i64 = 0;
        let mut n = 0;
        while let Some(b) = self.peek().filter(u8::is_ascii_digit) {
            if n == max {
                return None;
            }
            v = v.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
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
        extract(c, &mut text, &mut found);
        (text, found)
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
