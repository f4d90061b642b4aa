//! Lake games as study JSON (`../shared/specs/study-game.schema.json`), a batch at a time, with no
//! per-game object outside this module.
//!
//! The documents are the ones `warehouse/exports/study.py` wrote with DuckDB and Python before (the
//! round-trip tests hold them): `game_id`, the eight metadata fields and every other tag the PGN export
//! writes (its tags: [`GameTags`]) in `metadata.other_tags`; each move's SAN, number, colour,
//! annotations (comment, eval, clock, NAGs as `$n` with the free tags of a `[%tags [...]]` command)
//! and the lines that replace it, nested in place ([`walk`]); the game's first comment as `notes`.
//! Strings are escaped as Python's `json.dumps(ensure_ascii=False)` escapes them. The batch must have
//! its SAN filled (`san::fill_san`).

use std::borrow::Cow;
use std::collections::HashMap;

use arrow_array::{RecordBatch, StructArray};

use crate::export_json::python_json_string;
use crate::export_pgn::{
    column, error, rows, start_ply, texts, walk, ExportError, GameTags, Line, LineWriter, Lines,
    Moves,
};
use crate::fen::is_python_space;
use crate::san::{move_fens, Fens};

/// The tag that keeps a study `game_id` the lake cannot take as its own id (the import writes it: `study_json`).
pub(crate) const GAME_ID_TAG: &str = "GameId";
/// Where free annotation tags ride in a move's comment (the import writes it: `study_json`).
pub(crate) const TAGS_COMMAND: &str = "[%tags [";

impl Moves<'_> {
    /// Move `m`'s `annotations` object: comment, eval, clock and tags, those it has.
    fn annotations(&self, m: usize, out: &mut String) {
        let notes = &self.notes;
        let mut comment = notes.comment.get(m).map(Cow::Borrowed);
        let mut free = Vec::new();
        if let Some((without, tags)) = comment.as_deref().and_then(free_tags) {
            comment = Some(Cow::Owned(without));
            free = tags;
        }
        out.push('{');
        let mut first = true;
        let mut key = |out: &mut String, key: &str| {
            if !first {
                out.push(',');
            }
            first = false;
            out.push('"');
            out.push_str(key);
            out.push_str("\":");
        };
        if let Some(comment) = comment.filter(|c| !c.is_empty()) {
            key(out, "comment");
            python_json_string(&comment, out);
        }
        let mut eval = String::new();
        if notes.signed_eval(m, &mut eval) {
            key(out, "eval");
            out.push('"');
            out.push_str(&eval);
            out.push('"');
        }
        if notes.has_clock(m) {
            key(out, "clock");
            out.push('"');
            notes.clock(m, out);
            out.push('"');
        }
        let nags = rows(notes.nags, m).filter_map(|n| crate::export_pgn::get(notes.nag_values, n));
        let mut tags = nags.map(|nag| Cow::Owned(format!("${nag}"))).peekable();
        if tags.peek().is_some() || !free.is_empty() {
            key(out, "tags");
            out.push('[');
            for (i, tag) in tags.chain(free.into_iter().map(Cow::Owned)).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                python_json_string(&tag, out);
            }
            out.push(']');
        }
        out.push('}');
    }
}

/// A comment's free tags: the first `[%tags [...]]` command whose list is a JSON list of strings (as
/// the regex `\[%tags (\[[^\]]*\])\]` finds it and `json.loads` reads it), and the comment without it,
/// stripped of Python's whitespace; `None` when there is none.
fn free_tags(comment: &str) -> Option<(String, Vec<String>)> {
    let mut from = 0;
    while let Some(at) = comment[from..].find(TAGS_COMMAND).map(|i| from + i) {
        from = at + 1;
        let list_start = at + TAGS_COMMAND.len() - 1;
        let close = comment[list_start..].find(']').map(|i| list_start + i)?;
        if comment[close + 1..].starts_with(']') {
            let tags = json_strings(&comment[list_start..=close])?;
            let rest = [&comment[..at], &comment[close + 2..]].concat();
            return Some((rest.trim_matches(is_python_space).to_owned(), tags));
        }
    }
    None
}

/// `text` read as a JSON list of strings (as Python's `json.loads` reads it), or `None`.
fn json_strings(text: &str) -> Option<Vec<String>> {
    let space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\r');
    let mut rest = text
        .trim_matches(space)
        .strip_prefix('[')?
        .trim_start_matches(space);
    let mut strings = Vec::new();
    if let Some(after) = rest.strip_prefix(']') {
        return after.is_empty().then_some(strings);
    }
    loop {
        let (string, after) = json_string_at(rest)?;
        strings.push(string);
        rest = after.trim_start_matches(space);
        if let Some(after) = rest.strip_prefix(',') {
            rest = after.trim_start_matches(space);
        } else {
            return (rest == "]").then_some(strings);
        }
    }
}

/// The JSON string at the start of `text`, and the text after it.
fn json_string_at(text: &str) -> Option<(String, &str)> {
    let mut chars = text.strip_prefix('"')?.char_indices();
    let body = &text[1..];
    let mut out = String::new();
    let hex = |chars: &mut std::str::CharIndices| -> Option<u32> {
        let mut n = 0;
        for _ in 0..4 {
            n = n * 16 + chars.next()?.1.to_digit(16)?;
        }
        Some(n)
    };
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &body[i + 1..])),
            '\\' => match chars.next()?.1 {
                '"' => out.push('"'),
                '\\' => out.push('\\'),
                '/' => out.push('/'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                't' => out.push('\t'),
                'u' => {
                    let mut code = hex(&mut chars)?;
                    if (0xd800..0xdc00).contains(&code) {
                        // A surrogate pair; a lone surrogate (which Python keeps, and then cannot
                        // write) is refused.
                        let rest = chars.as_str();
                        let low = rest.strip_prefix("\\u")?;
                        let low = u32::from_str_radix(low.get(..4)?, 16).ok()?;
                        if !(0xdc00..0xe000).contains(&low) {
                            return None;
                        }
                        for _ in 0..6 {
                            chars.next();
                        }
                        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
                    }
                    out.push(char::from_u32(code)?);
                }
                _ => return None,
            },
            c if c < ' ' => return None,
            c => out.push(c),
        }
    }
    None
}

/// The moves of a game's lines as the study nests them.
struct StudyLines<'w, 'a> {
    moves: &'w Moves<'a>,
    line_moves: &'w Moves<'a>,
    fens: Option<&'w (Fens, Fens)>,
    out: &'w mut String,
}

impl LineWriter for StudyLines<'_, '_> {
    fn open(&mut self, _line: &Line) -> Result<(), ExportError> {
        self.out.push('[');
        Ok(())
    }

    fn step(
        &mut self,
        line: &Line,
        index: usize,
        m: usize,
        ply: u64,
        _branches: bool,
    ) -> Result<(), ExportError> {
        let out = &mut *self.out;
        let (ms, fens) = match (line.row, self.fens) {
            (None, fens) => (self.moves, fens.map(|f| &f.0)),
            (Some(_), fens) => (self.line_moves, fens.map(|f| &f.1)),
        };
        if index > 0 {
            out.push(',');
        }
        out.push_str("{\"san\":");
        let san = ms
            .san
            .get(m)
            .ok_or_else(|| error("a move's `san` is null"))?;
        python_json_string(san, out);
        let color = if ply.is_multiple_of(2) { 'w' } else { 'b' };
        out.push_str(&format!(
            ",\"move_number\":{},\"color\":\"{color}\"",
            ply / 2 + 1
        ));
        if let Some(fens) = fens {
            out.push_str(",\"fen\":");
            python_json_string(fens.get(m), out);
        }
        out.push_str(",\"annotations\":");
        ms.annotations(m, out);
        out.push_str(",\"variations\":[");
        Ok(())
    }

    fn alt(&mut self, n: usize, line: &Line) {
        if n > 0 {
            self.out.push(',');
        }
        self.out.push('{');
        if let Some(label) = line.comment {
            self.out.push_str("\"label\":");
            python_json_string(label, self.out);
            self.out.push(',');
        }
        self.out.push_str("\"line\":");
    }

    fn alt_end(&mut self, _n: usize) {
        self.out.push('}');
    }

    fn after(&mut self, _branches: bool) {
        self.out.push_str("]}");
    }

    fn close(&mut self) {
        self.out.push(']');
    }
}

/// `([0-9?]{4})\.([0-9?]{2})\.([0-9?]{2})` in full: the date as `yyyy-mm-dd`.
fn iso_date(date: &str) -> Option<String> {
    let b = date.as_bytes();
    let ok = |r: std::ops::Range<usize>| b[r].iter().all(|&c| c.is_ascii_digit() || c == b'?');
    (b.len() == 10 && b[4] == b'.' && b[7] == b'.' && ok(0..4) && ok(5..7) && ok(8..10))
        .then(|| format!("{}-{}-{}", &date[..4], &date[5..7], &date[8..]))
}

/// Texts written one after the other, and where each ends.
pub type Texts = (Vec<u8>, Vec<usize>);

/// The study JSON document of every game of `games` (a lake batch with its SAN filled), each ending in
/// a newline, and each game's `game_id` as the document writes it; `ends[i]` is where game `i`'s
/// document (and id) ends. With `fen`, each move with the position after it (`san::move_fens`).
pub fn study_documents(games: &RecordBatch, fen: bool) -> Result<(Texts, Texts), ExportError> {
    let batch = StructArray::from(games.clone());
    let game_tags = GameTags::of(&batch)?;
    let game_texts = &game_tags.texts;
    let players = &game_tags.players;
    let ids = texts(column(&batch, "game_id")?, "game_id")?;
    let moves = Moves::of(column(&batch, "moves")?, "moves")?;
    let lines = Lines::of(&batch, Moves::of)?;
    let fens = if fen {
        let f = move_fens(games).map_err(|e| error(e.0))?;
        Some((f.main, f.lines))
    } else {
        None
    };

    let mut out = String::with_capacity(games.num_rows() * 4096);
    let mut ends = Vec::with_capacity(games.num_rows());
    let mut id_text = String::with_capacity(games.num_rows() * 16);
    let mut id_ends = Vec::with_capacity(games.num_rows());
    let mut numbers = String::new();
    let mut children: HashMap<(i64, usize), Vec<usize>> = HashMap::new();
    for g in 0..games.num_rows() {
        let mut tags = Vec::with_capacity(32);
        let roster = game_tags.pairs(g, &mut numbers, &mut tags)?;
        let date = tags[roster + 2].1;
        let mut rest: Vec<(&str, &str)> = tags[..roster]
            .iter()
            .chain(&tags[roster + 7..])
            .copied()
            .collect();
        if game_texts.time_control.get(g).is_some() {
            // The last TimeControl pair is the column's, which the metadata holds.
            if let Some(last) = rest.iter().rposition(|(n, _)| *n == "TimeControl") {
                rest.remove(last);
            }
        }
        // Repeated names keyed `Date (2)`, as the lake's `headers`.
        let mut others: Vec<(Cow<str>, &str)> = Vec::with_capacity(rest.len());
        for (name, value) in rest {
            let mut key = Cow::Borrowed(name);
            let mut n = 1;
            while others.iter().any(|(k, _)| *k == key) {
                n += 1;
                key = Cow::Owned(format!("{name} ({n})"));
            }
            others.push((key, value));
        }
        let game_id = match others.iter().position(|(k, _)| k == GAME_ID_TAG) {
            Some(i) => Some(others.remove(i).1),
            None => ids.get(g),
        };

        out.push_str("{\"game_id\":");
        match game_id {
            Some(id) => python_json_string(id, &mut out),
            None => out.push_str("null"),
        }
        id_text.push_str(game_id.unwrap_or(""));
        id_ends.push(id_text.len());
        out.push_str(",\"metadata\":{\"event\":");
        python_json_string(game_texts.event.get(g).unwrap_or("?"), &mut out);
        if let Some(site) = game_texts.site.get(g) {
            out.push_str(",\"site\":");
            python_json_string(site, &mut out);
        }
        out.push_str(",\"date\":");
        match iso_date(date) {
            Some(iso) => python_json_string(&iso, &mut out),
            None => python_json_string(date, &mut out),
        }
        if let Some(round) = game_texts.round.get(g) {
            out.push_str(",\"round\":");
            python_json_string(round, &mut out);
        }
        let ps = rows(players.list, g);
        for (key, p) in [("white", ps.start), ("black", ps.start + 1)] {
            let name = (p < ps.end).then(|| players.name.get(p)).flatten();
            out.push_str(",\"");
            out.push_str(key);
            out.push_str("\":");
            python_json_string(name.filter(|n| !n.is_empty()).unwrap_or("?"), &mut out);
        }
        out.push_str(",\"result\":");
        python_json_string(game_tags.result(g)?, &mut out);
        if let Some(tc) = game_texts.time_control.get(g) {
            out.push_str(",\"time_control\":");
            python_json_string(tc, &mut out);
        }
        if !others.is_empty() {
            out.push_str(",\"other_tags\":{");
            for (i, (key, value)) in others.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                python_json_string(key, &mut out);
                out.push(':');
                python_json_string(value, &mut out);
            }
            out.push('}');
        }
        out.push_str("},\"moves\":");

        lines.branches(g, |_| true, &mut children);
        let main = Line {
            id: 0,
            row: None,
            comment: None,
            first_ply: start_ply(game_texts.start_fen.get(g)),
        };
        let mut writer = StudyLines {
            moves: &moves,
            line_moves: &lines.moves,
            fens: fens.as_ref(),
            out: &mut out,
        };
        let line_rows = |v| rows(lines.moves.list, v);
        walk(
            main,
            rows(moves.list, g),
            &lines,
            line_rows,
            &children,
            &mut writer,
        )?;
        if let Some(notes) = game_texts.comment.get(g) {
            out.push_str(",\"notes\":");
            python_json_string(notes, &mut out);
        }
        out.push_str("}\n");
        ends.push(out.len());
    }
    Ok(((out.into_bytes(), ends), (id_text.into_bytes(), id_ends)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_tags_as_python_finds_and_reads_them() {
        let found = |c: &str| free_tags(c);
        assert_eq!(
            found(" see [%tags [\"a\",\"b\\u00e9\"]] here "),
            Some((
                "see  here".to_owned(),
                vec!["a".to_owned(), "bé".to_owned()]
            ))
        );
        assert_eq!(found("[%tags []]"), Some((String::new(), vec![])));
        assert_eq!(found("[%tags [1]]"), None);
        assert_eq!(found("[%tags [\"a\"] ]"), None);
        assert_eq!(
            found("[%tags [\"x\"] [%tags [\"y\"]]"),
            Some(("[%tags [\"x\"]".to_owned(), vec!["y".to_owned()]))
        );
        assert_eq!(found("[%tags [\"\\ud800\"]]"), None);
        assert_eq!(
            found("[%tags [\"\\ud83d\\ude00\"]]"),
            Some((String::new(), vec!["😀".to_owned()]))
        );
    }

    #[test]
    fn iso_dates() {
        assert_eq!(iso_date("2024.01.0?").as_deref(), Some("2024-01-0?"));
        assert_eq!(iso_date("2024.1.01"), None);
    }
}
