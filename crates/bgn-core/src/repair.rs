//! Repairs, before pgn-reader reads a game, what it would misread or silently drop.
//!
//! Tag lines: pgn-reader ends a tag value at its first unescaped `"`; python-chess (and the PGN
//! writers that forget to escape) take the value up to the line's last `"]`. A line like
//! `[White "Smith, John "The King""]` is rewritten with PGN escapes so that both read it alike; a
//! value missing its closing quote (`[Annotator "Krush, I]`) is closed at the `]`. A line whose tag
//! name python-chess does not read (`[Weird{ "x"]`, `[Two words "x"]`, `[ "x"]`, `[Name"x"]`: not
//! `tags::is_tag_name` then whitespace then `"`) is dropped, as python-chess drops it: pgn-reader would
//! keep a name that no export can write back. A line that does not end in `]` is left as it is: a
//! game cut inside its tags is rejected as before.
//!
//! Movetext: pgn-reader drops a token it cannot read as SAN (`a8Q`, `Qh7++`, `exf6ep`, `Sf3`) without telling
//! its visitor: a game would lose a move and nobody would know. This pass walks the movetext with
//! pgn-reader's own token rules (`Reader::read_movetext`) and, for each token it would skip:
//! - a token naming no square (`e.p.`, `+-`, a stray word) is annotation noise: it stays skipped, as
//!   python-chess skips it too;
//! - a token that starts with a move as python-chess reads one (`[NBKRQ]?[a-h]?[1-8]?[-x]?[a-h][1-8]`,
//!   then `=?` and a promotion letter, or `O-O(-O)`) and names no other square is rewritten to that move
//!   in SAN (`a8Q` → `a8=Q`, `Qh7++` → `Qh7+`, `e2-e4` → `e2e4`, `exf6ep` → `exf6`);
//! - anything else (`Sf3`, `Nf3Nc6`) is an unreadable move: the game is rejected.
//!
//! It also reads what pgn-reader drops silently and python-chess does not: the null moves `0000` and
//! `@@@@` (python-chess's spellings besides `--` and `Z0`, which pgn-reader reads) are rewritten `--`,
//! for the replay to reject as it rejects `--`; a NAG over `$255` (pgn-reader's NAGs are a byte) is
//! out of range, and the game rejected.

use shakmaty::san::SanPlus;

use crate::annotations::MAX_NAG;
use crate::reject::{RejectKind, RejectReason};
use crate::tags::{is_tag_name, is_tag_name_byte};

/// What `game` found.
#[derive(Copy, Clone, Debug, Eq, PartialEq)]
pub struct Repaired {
    /// `rewritten` holds the text to parse, repaired; otherwise the text is read as it is.
    pub rewritten: bool,
    /// The movetext opens a variation somewhere.
    pub variations: bool,
    /// Bytes before the movetext (the tag pairs).
    pub tags_len: usize,
    /// The longest tag pair, in bytes.
    pub longest_tag: usize,
}

/// Checks and repairs the game `text` (tags and movetext); `Err` is the reason to reject the game.
/// `scratch` is working space.
pub fn game(
    text: &[u8],
    scratch: &mut Vec<u8>,
    rewritten: &mut Vec<u8>,
) -> Result<Repaired, RejectReason> {
    let tags_repaired = repair_tags(text, scratch);
    let text = if tags_repaired { &scratch[..] } else { text };
    let mut moves = movetext(text, rewritten)?;
    if tags_repaired && !moves.rewritten {
        rewritten.clear();
        rewritten.extend_from_slice(text);
        moves.rewritten = true;
    }
    Ok(moves)
}

/// The tag lines of the game's head, rewritten where pgn-reader would read a value otherwise than
/// python-chess's `TAG_REGEX` (`^\[([A-Za-z0-9][A-Za-z0-9_+#=:-]*)\s+"([^\r]*)"\]\s*$`, the value
/// then unescaped as PGN says). Returns whether `out` holds a rewritten text.
fn repair_tags(text: &[u8], out: &mut Vec<u8>) -> bool {
    let mut copied = 0;
    let mut i = usize::from(text.starts_with(b"\xef\xbb\xbf")) * 3;
    while i < text.len() {
        let end = line_end(text, i);
        let line = &text[i..end];
        match line.trim_ascii_start().first() {
            None | Some(b'%') => {}
            Some(b'[') => {
                // A line not closed (cut short, unterminated) is left to pgn-reader, which rejects it.
                let line_body = line.trim_ascii();
                let named = named_tag_line(line_body) || !line_body.ends_with(b"]");
                if let Some(fixed) = if named {
                    repaired_tag_line(line)
                } else {
                    Some(Vec::new())
                } {
                    if copied == 0 {
                        out.clear();
                    }
                    out.extend_from_slice(&text[copied..i]);
                    out.extend_from_slice(&fixed);
                    // A dropped line goes with its line end.
                    copied = if named {
                        end
                    } else {
                        (end + 1).min(text.len())
                    };
                }
            }
            Some(_) => break,
        }
        i = end + 1;
    }
    if copied == 0 {
        return false;
    }
    out.extend_from_slice(&text[copied..]);
    true
}

/// Whether python-chess reads the tag line `line` (from its `[`) by its name: a tag name, whitespace
/// (Python's `\s` in ASCII), then `"` (`TAG_REGEX`'s start).
fn named_tag_line(line: &[u8]) -> bool {
    let body = &line[1..];
    let name = body.iter().take_while(|&&b| is_tag_name_byte(b)).count();
    let spaces = body[name..]
        .iter()
        .take_while(|b| b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f".contains(b))
        .count();
    is_tag_name(&body[..name]) && spaces > 0 && body.get(name + spaces) == Some(&b'"')
}

/// `line` rewritten with escapes, when it is a tag line whose value pgn-reader would cut short.
fn repaired_tag_line(line: &[u8]) -> Option<Vec<u8>> {
    let body = line.strip_suffix(b"\r").unwrap_or(line);
    if body.first() != Some(&b'[') {
        return None;
    }
    // The common case first, cheaply: two quotes, no backslash, `"]` at the end.
    if memchr::memchr_iter(b'"', body).count() == 2
        && memchr::memchr(b'\\', body).is_none()
        && body.trim_ascii_end().ends_with(b"\"]")
    {
        return None;
    }
    let name_end = 1 + body[1..]
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || b"_+#=:-".contains(&b)))?;
    if name_end == 1 || !body[1].is_ascii_alphanumeric() {
        return None;
    }
    let spaces = body[name_end..]
        .iter()
        .take_while(|b| b.is_ascii_whitespace())
        .count();
    let value_start = name_end + spaces + 1;
    if spaces == 0 || body.get(value_start - 1) != Some(&b'"') {
        return None;
    }
    // The value runs to the last `"]` followed by nothing but whitespace (the regex is greedy).
    // Without its closing quote (`[Annotator "Krush, I]`), python-chess drops the line and pgn-reader
    // keeps the `]` and line end in the value: the value up to the `]` is what was meant.
    let line_body = body.trim_ascii_end();
    let close = match line_body.strip_suffix(b"\"]") {
        Some(rest) => rest.len(),
        None => line_body.strip_suffix(b"]")?.len(),
    };
    let value = body.get(value_start..close)?;
    let unterminated = !line_body.ends_with(b"\"]");
    // Where pgn-reader ends the value: at the first `"` not escaped by a backslash.
    let mut k = 0;
    while k < value.len() && value[k] != b'"' {
        k += if value[k] == b'\\' { 2 } else { 1 };
    }
    match value.get(k..) {
        _ if unterminated => {}
        // pgn-reader took the closing quote for an escaped one (`[Event "Tournament \"]`).
        None => {}
        // Both read the same value; or a whole tag ends there and another follows on the line
        // (`[Event "a"] [Site "b"]`), which pgn-reader reads as two tags and python-chess as one.
        Some(rest) if rest.is_empty() || rest.starts_with(b"\"]") => return None,
        Some(_) => {}
    }
    let mut fixed = Vec::with_capacity(line.len() + 8);
    fixed.extend_from_slice(&body[..name_end]);
    fixed.extend_from_slice(b" \"");
    let mut k = 0;
    while k < value.len() {
        // PGN escapes are `\\` and `\"`; any other backslash is a plain character.
        let b = match value[k] {
            b'\\' if matches!(value.get(k + 1), Some(b'\\' | b'"')) => {
                k += 1;
                value[k]
            }
            b => b,
        };
        if matches!(b, b'\\' | b'"') {
            fixed.push(b'\\');
        }
        fixed.push(b);
        k += 1;
    }
    fixed.extend_from_slice(b"\"]");
    fixed.extend_from_slice(&line[body.len()..]);
    Some(fixed)
}

/// The movetext check: tokens pgn-reader would skip are rewritten or make a reject.
fn movetext(text: &[u8], rewritten: &mut Vec<u8>) -> Result<Repaired, RejectReason> {
    let mut edits: Vec<(usize, usize, Vec<u8>)> = Vec::new();
    let (tags_len, longest_tag) = movetext_start(text);
    let mut lexer = Lexer {
        s: text,
        i: tags_len,
        variations: false,
    };
    while let Some((start, end)) = lexer.next_unread_token() {
        let token = &text[start..end];
        if token.starts_with(b"$") {
            return Err(RejectReason::new(
                RejectKind::OutOfRange,
                format!(
                    "NAG '{}' is out of range ($0 to ${MAX_NAG})",
                    String::from_utf8_lossy(&token[..token.len().min(24)])
                ),
            ));
        }
        if null_move_len(token) == Some(token.len()) {
            edits.push((start, end, b"--".to_vec()));
            continue;
        }
        if !names_square(token) && !token.starts_with(b"O-O") {
            continue; // noise, skipped by both pgn-reader and python-chess
        }
        match leading_move(token) {
            Some((san, len)) if !names_square(&token[len..]) => edits.push((start, end, san)),
            _ => {
                return Err(RejectReason::new(
                    RejectKind::UnreadableMove,
                    format!("unreadable move '{}'", String::from_utf8_lossy(token)),
                ))
            }
        }
    }
    let variations = lexer.variations;
    if edits.is_empty() {
        return Ok(Repaired {
            rewritten: false,
            variations,
            tags_len,
            longest_tag,
        });
    }
    rewritten.clear();
    let mut at = 0;
    for (start, end, san) in edits {
        rewritten.extend_from_slice(&text[at..start]);
        rewritten.extend_from_slice(&san);
        // Keep the token apart from what follows it (`Bh6+,e5` → `Bh6 ,e5`).
        rewritten.push(b' ');
        at = end;
    }
    rewritten.extend_from_slice(&text[at..]);
    Ok(Repaired {
        rewritten: true,
        variations,
        tags_len,
        longest_tag,
    })
}

/// Where pgn-reader starts reading movetext: after a BOM, whitespace, `%` escape lines and the tag
/// pairs, as `Reader::read_game` skips them (`before_game`, `read_tags`, `skip_ket`); and the length
/// of the longest tag pair.
fn movetext_start(s: &[u8]) -> (usize, usize) {
    let mut i = usize::from(s.starts_with(b"\xef\xbb\xbf")) * 3;
    i = skip_whitespace(s, i, true);
    let mut longest = 0;
    while s.get(i) == Some(&b'[') {
        let tag_start = i;
        i += 1;
        let Some(j) = memchr::memchr3(b'"', b'\n', b']', &s[i..]) else {
            return (s.len(), s.len() - tag_start); // unterminated tag: pgn-reader reports it
        };
        if s[i + j] == b'"' {
            // The value, with its backslash escapes; a line break ends it too.
            i += j + 1;
            loop {
                let Some(k) = memchr::memchr3(b'\\', b'"', b'\n', &s[i..]) else {
                    return (s.len(), s.len() - tag_start);
                };
                i += k;
                match s[i] {
                    b'"' => {
                        i += 1;
                        break;
                    }
                    b'\n' => break,
                    _ => i = (i + 2).min(s.len()),
                }
            }
        } else {
            i += j + 1;
        }
        // `skip_ket`: the closing bracket and the whitespace after it.
        while matches!(s.get(i), Some(b' ' | b'\t' | b'\r')) {
            i += 1;
        }
        longest = longest.max(i + 1 - tag_start);
        match s.get(i) {
            Some(b']') => i = skip_whitespace(s, i + 1, false),
            Some(b'\n') => i = skip_whitespace(s, i + 1, true),
            _ => {}
        }
    }
    (i, longest)
}

/// pgn-reader's `skip_whitespace`: blanks, line breaks, and `%` escape lines.
fn skip_whitespace(s: &[u8], mut i: usize, mut new_line: bool) -> usize {
    while let Some(&ch) = s.get(i) {
        match ch {
            b' ' | b'\t' | b'\r' => i += 1,
            b'\n' => {
                new_line = true;
                i += 1;
            }
            b'%' if new_line => i = (line_end(s, i) + 1).min(s.len()),
            _ => break,
        }
    }
    i
}

/// The index of the line break ending the line at `i` (or the end of `s`).
fn line_end(s: &[u8], i: usize) -> usize {
    memchr::memchr(b'\n', &s[i..]).map_or(s.len(), |j| i + j)
}

/// pgn-reader's token boundaries (`is_token_end`).
fn is_token_end(byte: u8) -> bool {
    matches!(
        byte,
        b' ' | b'\t'
            | b'\n'
            | b'\r'
            | b'{'
            | b'}'
            | b'('
            | b')'
            | b'!'
            | b'?'
            | b'$'
            | b';'
            | b'.'
            | b'*'
    )
}

/// Walks movetext as pgn-reader's `read_movetext` does, stopping where it would stop.
struct Lexer<'a> {
    s: &'a [u8],
    i: usize,
    /// A `(` was seen.
    variations: bool,
}

impl Lexer<'_> {
    /// The span of the next token pgn-reader would skip, up to the token's end.
    fn next_unread_token(&mut self) -> Option<(usize, usize)> {
        while let Some(&ch) = self.s.get(self.i) {
            match ch {
                b'{' => match memchr::memchr(b'}', &self.s[self.i..]) {
                    Some(j) => self.i += j + 1,
                    None => return None, // unterminated: pgn-reader reports it
                },
                b'\n' => {
                    self.i += 1;
                    match self.s.get(self.i) {
                        Some(b'%') => self.i = line_end(self.s, self.i),
                        Some(b'[' | b'\n') => return None,
                        Some(b'\r') => {
                            self.i += 1;
                            if self.s.get(self.i) == Some(&b'\n') {
                                return None;
                            }
                        }
                        _ => {}
                    }
                }
                b';' => self.i = line_end(self.s, self.i),
                b'0' => {
                    if let Some(n) = null_move_len(&self.s[self.i..]) {
                        let start = self.i;
                        self.i += n;
                        return Some((start, self.i));
                    }
                    self.i += 1;
                    if self.eat_dash() && !self.eat(b"1") && self.eat(b"0") {
                        let _ = self.eat_dash() && self.eat(b"0");
                        if matches!(self.s.get(self.i), Some(b'+' | b'#')) {
                            self.i += 1;
                        }
                    }
                }
                b'1' => {
                    self.i += 1;
                    if self.eat_dash() {
                        self.eat(b"0");
                    } else if !(self.eat(b"/2") && self.eat_dash() && self.eat(b"1/2")) {
                        self.skip_move_number();
                    }
                }
                b'\xc2' => {
                    self.i += 1;
                    let _ = self.eat(b"\xbd") && self.eat_dash() && self.eat("½".as_bytes());
                }
                b'2'..=b'9' => {
                    self.i += 1;
                    self.skip_move_number();
                }
                b'$' => {
                    let start = self.i;
                    self.i += 1;
                    self.i = self.token_end();
                    // pgn-reader drops a NAG that is no byte: one of digits alone is too large.
                    let digits = &self.s[start + 1..self.i];
                    let value = digits.iter().try_fold(0u64, |n, &d| {
                        d.is_ascii_digit()
                            .then(|| n.saturating_mul(10).saturating_add(u64::from(d - b'0')))
                    });
                    if !digits.is_empty() && value.is_some_and(|n| n > MAX_NAG) {
                        return Some((start, self.i));
                    }
                }
                b'(' => {
                    self.variations = true;
                    self.i += 1;
                }
                b')' | b'!' | b'?' | b'*' | b' ' | b'\t' | b'\r' | b'.' => self.i += 1,
                _ => {
                    let start = self.i;
                    if let Some(n) = standard_san_len(&self.s[start..]) {
                        self.i = start + n;
                        continue;
                    }
                    if let Ok((_, n)) = SanPlus::from_ascii_prefix(&self.s[start..]) {
                        if self.s.get(start + n).is_none_or(|&b| is_token_end(b)) {
                            self.i = start + n;
                            continue;
                        }
                    }
                    self.i = self.token_end().max(start + 1);
                    return Some((start, self.i));
                }
            }
        }
        None
    }

    fn token_end(&self) -> usize {
        self.s[self.i..]
            .iter()
            .position(|&b| is_token_end(b))
            .map_or(self.s.len(), |j| self.i + j)
    }

    fn skip_move_number(&mut self) {
        while matches!(self.s.get(self.i), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        while matches!(self.s.get(self.i), Some(b'.' | b' ')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, bytes: &[u8]) -> bool {
        let found = self.s[self.i..].starts_with(bytes);
        if found {
            self.i += bytes.len();
        }
        found
    }

    fn eat_dash(&mut self) -> bool {
        self.eat(b"-") || self.eat("–".as_bytes()) || self.eat("—".as_bytes())
    }
}

/// The length of the null move python-chess reads (`0000`, `@@@@`, as `--` and `Z0`) that `s` starts
/// with, a `+` or `#` after it included, when a token end follows it.
fn null_move_len(s: &[u8]) -> Option<usize> {
    if !(s.starts_with(b"0000") || s.starts_with(b"@@@@")) {
        return None;
    }
    let n = 4 + usize::from(matches!(s.get(4), Some(b'+' | b'#')));
    s.get(n).is_none_or(|&b| is_token_end(b)).then_some(n)
}

/// The length of the standard SAN move (`e4`, `exd5`, `e8=Q+`, `Nbd7`, `R1xe2#`, `O-O-O`) that
/// `s` starts with, when a token end follows it: the common case, checked without a full SAN parse.
/// `None` means "ask shakmaty", never "unreadable".
fn standard_san_len(s: &[u8]) -> Option<usize> {
    let at = |i: usize| s.get(i).copied().unwrap_or(b' ');
    let file = |i: usize| matches!(at(i), b'a'..=b'h');
    let rank = |i: usize| matches!(at(i), b'1'..=b'8');
    let mut i = if s.starts_with(b"O-O-O") {
        5
    } else if s.starts_with(b"O-O") {
        3
    } else if matches!(at(0), b'N' | b'B' | b'R' | b'Q' | b'K') {
        // Piece move: optional file and/or rank of origin, optional capture, target square.
        let mut i = 1;
        if file(i) && !rank(i + 1) || file(i) && rank(i + 1) && (at(i + 2) == b'x' || file(i + 2)) {
            i += 1;
        }
        if rank(i) {
            i += 1;
        }
        if at(i) == b'x' {
            i += 1;
        }
        if !(file(i) && rank(i + 1)) {
            return None;
        }
        i + 2
    } else if file(0) {
        // Pawn move: a push, or a capture from a file; then an optional promotion.
        let mut i = if at(1) == b'x' { 2 } else { 0 };
        if !(file(i) && rank(i + 1)) {
            return None;
        }
        i += 2;
        if at(i) == b'=' && matches!(at(i + 1), b'N' | b'B' | b'R' | b'Q') {
            i += 2;
        }
        i
    } else {
        return None;
    };
    if matches!(at(i), b'+' | b'#') {
        i += 1;
    }
    (i == s.len() || is_token_end(s[i])).then_some(i)
}

/// Whether `token` holds a square name (`[a-h][1-8]`).
fn names_square(token: &[u8]) -> bool {
    token
        .windows(2)
        .any(|w| matches!(w[0], b'a'..=b'h') && matches!(w[1], b'1'..=b'8'))
}

/// The move python-chess's tokenizer reads at the start of `token`, rewritten as SAN that pgn-reader
/// reads, and the number of bytes it spans.
fn leading_move(token: &[u8]) -> Option<(Vec<u8>, usize)> {
    if token.starts_with(b"O-O") {
        let len = if token.starts_with(b"O-O-O") { 5 } else { 3 };
        return Some((token[..len].to_vec(), len));
    }
    let piece = usize::from(matches!(
        token.first(),
        Some(b'N' | b'B' | b'K' | b'R' | b'Q')
    ));
    let at = |i: usize| token.get(i).copied().unwrap_or(0);
    // python-chess's `[a-h]?[1-8]?[\-x]?[a-h][1-8]`, greedy with backtracking: try the longest
    // optional prefix first.
    for file in [true, false] {
        for rank in [true, false] {
            for mark in [true, false] {
                let mut i = piece;
                if file {
                    if !at(i).is_ascii_lowercase() || at(i) > b'h' {
                        continue;
                    }
                    i += 1;
                }
                if rank {
                    if !matches!(at(i), b'1'..=b'8') {
                        continue;
                    }
                    i += 1;
                }
                let capture = mark && at(i) == b'x';
                if mark {
                    if !matches!(at(i), b'-' | b'x') {
                        continue;
                    }
                    i += 1;
                }
                if !(matches!(at(i), b'a'..=b'h') && matches!(at(i + 1), b'1'..=b'8')) {
                    continue;
                }
                let to = i;
                i += 2;
                let mut san = token[..to - usize::from(mark)].to_vec();
                if capture {
                    san.push(b'x');
                }
                san.extend_from_slice(&token[to..to + 2]);
                let promotion = if at(i) == b'=' { i + 1 } else { i };
                if matches!(
                    at(promotion).to_ascii_uppercase(),
                    b'N' | b'B' | b'R' | b'Q' | b'K'
                ) {
                    san.push(b'=');
                    san.push(at(promotion).to_ascii_uppercase());
                    i = promotion + 1;
                }
                // Keep one check or mate mark (`Qh7++` → `Qh7+`): it is what the source said.
                if matches!(at(i), b'+' | b'#') {
                    san.push(at(i));
                    i += 1;
                }
                return Some((san, i));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite(movetext: &str) -> Result<Option<String>, String> {
        let mut out = Vec::new();
        let text = format!("[Event \"a8Q\"]\n\n{movetext}\n\n");
        let checked = game(text.as_bytes(), &mut Vec::new(), &mut out).map_err(|e| {
            assert_eq!(e.kind, RejectKind::UnreadableMove);
            e.message
        })?;
        Ok(checked.rewritten.then(|| {
            let out = String::from_utf8(out).unwrap();
            out.split_once("\n\n").unwrap().1.trim_end().to_owned()
        }))
    }

    /// The reject of `movetext`, by the repairs and the replay.
    fn reject(movetext: &str) -> Option<RejectReason> {
        let text = format!("[Event \"x\"]\n\n{movetext}\n\n");
        let mut replayer = crate::replay::Replayer::default();
        crate::parse::GameParser::default()
            .parse(&mut replayer, text.as_bytes())
            .err()
    }

    #[test]
    fn python_chess_null_moves_are_null_moves() {
        for null in ["--", "Z0", "0000", "@@@@", "0000+", "@@@@#"] {
            let reason = reject(&format!("1. e4 e5 2. {null} Nc6 *")).expect("rejected");
            assert_eq!(
                (reason.kind, reason.message.as_str()),
                (RejectKind::NullMove, "null move '--' at ply 3"),
                "{null}"
            );
        }
        // Move numbers with zeros, and castling with zeros, are no null moves.
        assert_eq!(reject("10000. e4 e5 *"), None);
        assert_eq!(reject("1. e4 e5 2. Nf3 Nf6 3. Bc4 Bc5 4. 0-0 0-0 *"), None);
    }

    #[test]
    fn a_nag_beyond_a_byte_is_out_of_range() {
        for nag in ["$256", "$99999999999999999999999", "$0256"] {
            let reason = reject(&format!("1. e4 {nag} e5 *")).expect("rejected");
            assert_eq!(reason.kind, RejectKind::OutOfRange, "{nag}");
            assert!(
                reason.message.ends_with("is out of range ($0 to $255)"),
                "{}",
                reason.message
            );
        }
        for nag in ["$255", "$0", "$007", "$", "$x"] {
            assert_eq!(reject(&format!("1. e4 {nag} e5 *")), None, "{nag}");
        }
    }

    #[test]
    fn clean_movetext_is_left_alone() {
        let clean = "1. e4 e5!? 2. Nf3 {a8Q [%clk 0:01:00]} (2. f4 $1 exf4) 2... Nc6 ; Sf3\n\
                     3. O-O 0-0 4. exd8=Q+ Kxd8# e.p. +- 1/2-1/2";
        assert_eq!(rewrite(clean), Ok(None));
    }

    #[test]
    fn the_fast_path_agrees_with_shakmaty() {
        for san in [
            "e4", "exd5", "e8=Q", "exd8=N+", "Nf3", "Nbd7", "N1d7", "Nb1d2", "Rxe2#", "Kxe2",
            "O-O", "O-O-O+", "Qh4xe1", "Bb5+",
        ] {
            let token = format!("{san} ");
            let (_, n) = SanPlus::from_ascii_prefix(token.as_bytes()).unwrap();
            assert_eq!(standard_san_len(token.as_bytes()), Some(n), "{san}");
        }
        for odd in [
            "a8Q", "Qh7++", "e2-e4", "Sf3", "exf6ep", "Nf3,", "e", "b", "Ne",
        ] {
            assert_eq!(standard_san_len(odd.as_bytes()), None, "{odd}");
        }
    }

    #[test]
    fn readable_forms_are_rewritten() {
        assert_eq!(rewrite("1. a8Q *"), Ok(Some("1. a8=Q  *".into())));
        assert_eq!(
            rewrite("1. exd8n Qh7++ *"),
            Ok(Some("1. exd8=N  Qh7+  *".into()))
        );
        assert_eq!(
            rewrite("1. e2-e4 Ng8xf6 *"),
            Ok(Some("1. e2e4  Ng8xf6 *".into()))
        );
        assert_eq!(rewrite("1. exf6ep Bh6+,"), Ok(Some("1. exf6  Bh6+".into())));
        assert_eq!(rewrite("1. O-Och *"), Ok(Some("1. O-O  *".into())));
    }

    #[test]
    fn variations_are_noticed_outside_comments_only() {
        let mut out = Vec::new();
        let checked =
            |text: &str, out: &mut Vec<u8>| game(text.as_bytes(), &mut Vec::new(), out).unwrap();
        assert!(checked("1. e4 (1. d4) e5 *", &mut out).variations);
        assert!(!checked("1. e4 {(1. d4)} e5 ; (\n *", &mut out).variations);
    }

    #[test]
    fn tag_values_are_read_to_the_last_quote() {
        let repaired =
            |line: &str| repaired_tag_line(line.as_bytes()).map(|v| String::from_utf8(v).unwrap());
        assert_eq!(
            repaired(r#"[White "Smith, John "The King""]"#).as_deref(),
            Some(r#"[White "Smith, John \"The King\""]"#)
        );
        assert_eq!(
            repaired("[Event \"Tournament \\\"]\r").as_deref(),
            Some("[Event \"Tournament \\\\\"]\r")
        );
        assert_eq!(repaired(r#"[Event "Fine \"escaped\" value"]"#), None);
        assert_eq!(repaired(r#"[Event "Plain"]"#), None);
        assert_eq!(
            repaired("[Annotator \"Krush, I]\r").as_deref(),
            Some("[Annotator \"Krush, I\"]\r")
        );
        assert_eq!(repaired(r#"[Event "two"] [Site "tags"]"#), None);
    }

    #[test]
    fn tag_lines_python_chess_drops_for_their_name_are_dropped() {
        let repaired = |head: &str| {
            let mut out = Vec::new();
            let text = format!("{head}\n\n1. e4 *\n");
            let fixed = repair_tags(text.as_bytes(), &mut out);
            fixed.then(|| String::from_utf8(out).unwrap())
        };
        let kept = "[Event \"e\"]\n[A1_+#=:-b \"v\"]\n[Tab\t\"v\"]";
        assert_eq!(repaired(kept), None);
        for cut in ["[Event \"e\"]\n[Eve", "[Event \"e\"]\n[Weird{ \"v"] {
            assert_eq!(repaired(cut), None, "{cut}");
        }
        for odd in [
            "[Weird{ \"v\"]",
            "[Clo}se \"v\"]",
            "[Back\\slash \"v\"]",
            "[Two words \"v\"]",
            "[Per%cent \"v\"]",
            "[Semi;colon \"v\"]",
            "[\u{dc}n\u{ef} \"v\"]",
            "[ \"v\"]",
            "[_under \"v\"]",
            "[Quo\"te \"v\"]",
            "[Name\"v\"]",
            "[Name]",
            "[Name v]",
        ] {
            assert_eq!(
                repaired(&format!("[Event \"e\"]\n{odd}\n[Site \"s\"]")).as_deref(),
                Some("[Event \"e\"]\n[Site \"s\"]\n\n1. e4 *\n"),
                "{odd}"
            );
        }
    }

    #[test]
    fn unreadable_moves_are_rejected() {
        assert_eq!(rewrite("1. Sf3 *"), Err("unreadable move 'Sf3'".into()));
        assert_eq!(
            rewrite("1. Nf3Nc6 *"),
            Err("unreadable move 'Nf3Nc6'".into())
        );
    }
}
