//! Lake games as BGN JSON lines, a batch at a time, with no per-game object outside this module.
//!
//! The lines are the ones `sql/exports/json.sql` and `warehouse/exports/bgn_json.py` wrote before (the
//! round-trip tests hold them): BGN's names, absent values left out (never null), strings escaped as
//! DuckDB's `to_json` escapes them, evals and clocks as the PGN export writes them (shared with the PGN
//! export: [`crate::export_pgn`]), each variation nested as `{"alt": [line, ...]}` in the `a` list of
//! the move it replaces.

use std::collections::HashMap;
use std::fmt::Write;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int16Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_array::{Array, ArrayRef, DictionaryArray, ListArray, PrimitiveArray, RecordBatch};
use arrow_array::{ArrayAccessor, StructArray, TypedDictionaryArray};
use arrow_schema::{DataType, TimeUnit};

use crate::export_pgn::{
    column, error, get, ints, list, rows, structs, texts, walk, ExportError, GameTexts, Line,
    LineWriter, Lines, MoveNotes, Players,
};
use crate::san::Texts;

/// `s` as a JSON string, escaped as DuckDB's `to_json` (yyjson) escapes it.
pub(crate) fn json_string(s: &str, out: &mut String) {
    escaped_string(s, out, true);
}

/// `s` as a JSON string, escaped as Python's `json.dumps(ensure_ascii=False)` escapes it (as DuckDB
/// does, but `\u001f` in lower case).
pub(crate) fn python_json_string(s: &str, out: &mut String) {
    escaped_string(s, out, false);
}

/// `s` as a JSON string: `"`, `\\` and the control characters escaped, with upper or lower case hex.
fn escaped_string(s: &str, out: &mut String, upper_hex: bool) {
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let escaped = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\t' => "\\t",
            b'\r' => "\\r",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if escaped.is_empty() && upper_hex {
            let _ = write!(out, "\\u{b:04X}");
        } else if escaped.is_empty() {
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(escaped);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// A one-letter or square field: dictionary-encoded (as the lake stores it) or plain strings.
enum Letters<'a> {
    Dict(TypedDictionaryArray<'a, arrow_array::types::Int8Type, arrow_array::StringArray>),
    Plain(Texts<'a>),
}

impl<'a> Letters<'a> {
    fn of(array: &'a ArrayRef, name: &str) -> Result<Letters<'a>, ExportError> {
        if let DataType::Dictionary(key, value) = array.data_type() {
            if **key == DataType::Int8 && **value == DataType::Utf8 {
                let dict: &DictionaryArray<arrow_array::types::Int8Type> = array.as_dictionary();
                return dict
                    .downcast_dict::<arrow_array::StringArray>()
                    .map(Letters::Dict)
                    .ok_or_else(|| error(format!("`{name}` is not a dictionary of strings")));
            }
            return Err(error(format!("`{name}` is {}", array.data_type())));
        }
        Ok(Letters::Plain(texts(array, name)?))
    }

    fn get(&self, i: usize) -> Option<&'a str> {
        match self {
            Letters::Dict(d) => d.is_valid(i).then(|| d.value(i)),
            Letters::Plain(t) => t.get(i),
        }
    }
}

/// The fields of a list of moves that BGN JSON shows.
struct Moves<'a> {
    list: &'a ListArray,
    p: Letters<'a>,
    f: Letters<'a>,
    t: Letters<'a>,
    x: Letters<'a>,
    c: &'a PrimitiveArray<Int16Type>,
    castle: Letters<'a>,
    promote: Letters<'a>,
    blast: Option<Texts<'a>>,
    nag: &'a PrimitiveArray<Int16Type>,
    notes: MoveNotes<'a>,
}

impl<'a> Moves<'a> {
    fn of(array: &'a ArrayRef, name: &str) -> Result<Moves<'a>, ExportError> {
        let moves_list = list(array, name)?;
        let moves = structs(moves_list.values(), name)?;
        let letters = |field: &str| Letters::of(column(moves, field)?, field);
        Ok(Moves {
            list: moves_list,
            p: letters("p")?,
            f: letters("f")?,
            t: letters("t")?,
            x: letters("x")?,
            c: ints(column(moves, "c")?, "c")?,
            castle: letters("castle")?,
            promote: letters("promote")?,
            // Lakes before the `blast` field (layout 1) have none.
            blast: match moves.column_by_name("blast") {
                Some(b) => Some(texts(b, "blast")?),
                None => None,
            },
            nag: ints(column(moves, "nag")?, "nag")?,
            notes: MoveNotes::of(moves)?,
        })
    }

    /// json.sql's `move_head`: the move's object up to its `a` list; false (nothing written) for a
    /// move without `p` or `t`, which json.sql's NULL leaves out.
    fn head(&self, m: usize, out: &mut String) -> bool {
        let (Some(p), Some(t)) = (self.p.get(m), self.t.get(m)) else {
            return false;
        };
        let _ = write!(out, "{{\"p\":\"{p}\",\"f\":");
        match self.f.get(m) {
            Some(f) => {
                let _ = write!(out, "\"{f}\"");
            }
            None => out.push_str("null"),
        }
        let _ = write!(out, ",\"t\":\"{t}\"");
        if let Some(x) = self.x.get(m) {
            let _ = write!(out, ",\"x\":\"{x}\"");
        }
        if let Some(c) = get(self.c, m) {
            let _ = write!(out, ",\"c\":{c}");
        }
        if let Some(castle) = self.castle.get(m) {
            let _ = write!(out, ",\"castle\":\"{castle}\"");
        }
        if let Some(promote) = self.promote.get(m) {
            let _ = write!(out, ",\"promote\":\"{promote}\"");
        }
        if let Some(blast) = self.blast.as_ref().and_then(|b| b.get(m)) {
            let _ = write!(out, ",\"blast\":\"{blast}\"");
        }
        true
    }

    /// json.sql's `move_ann`: the first NAG, eval, clock and comment in one object (`{}` when none),
    /// each further NAG in an object of its own.
    fn annotations(&self, m: usize, out: &mut String) {
        out.push('{');
        let mut first = true;
        let mut sep = |out: &mut String| {
            if !first {
                out.push(',');
            }
            first = false;
        };
        if let Some(nag) = get(self.nag, m) {
            sep(out);
            let _ = write!(out, "\"nag\":{nag}");
        }
        let notes = &self.notes;
        notes.eval_and_clock(
            m,
            out,
            &mut sep,
            ("\"eval\":[\"", "\"]"),
            ("\"clk\":[\"", "\"]"),
        );
        if let Some(comment) = notes.comment.get(m) {
            sep(out);
            out.push_str("\"comment\":");
            json_string(comment, out);
        }
        out.push('}');
        if notes.nags.is_valid(m) {
            let nags = rows(notes.nags, m);
            if nags.len() > 1 {
                out.push(',');
                let mut first = true;
                for n in nags.skip(1) {
                    if let Some(nag) = get(notes.nag_values, n) {
                        if !first {
                            out.push(',');
                        }
                        first = false;
                        let _ = write!(out, "{{\"nag\":{nag}}}");
                    }
                }
            }
        }
    }
}

/// The BGN JSON line of every game of `games` (a lake batch with its partition's `type` column),
/// each ending in a newline; `ends[i]` is where game `i`'s line ends in the returned text.
pub fn json_lines(games: &RecordBatch) -> Result<(Vec<u8>, Vec<usize>), ExportError> {
    let batch = StructArray::from(games.clone());
    let game_texts = GameTexts::of(&batch)?;
    let id = texts(column(&batch, "game_id")?, "game_id")?;
    let kind = Letters::of(column(&batch, "type")?, "type")?;
    let datetime = Seconds::of(column(&batch, "datetime")?)?;
    let opening = structs(column(&batch, "opening")?, "opening")?;
    let openings = [
        ("ECO", game_texts.eco),
        ("verbose", game_texts.verbose),
        ("generic", texts(column(opening, "generic")?, "generic")?),
    ];
    let Players {
        list: players,
        name,
        title,
        elo,
        diff,
    } = Players::of(&batch)?;
    let moves = Moves::of(column(&batch, "moves")?, "moves")?;
    let lines = Lines::of(&batch, Moves::of)?;

    let mut out = String::with_capacity(games.num_rows() * 2048);
    let mut ends = Vec::with_capacity(games.num_rows());
    let mut ann = String::new();
    let mut children: HashMap<(i64, usize), Vec<usize>> = HashMap::new();
    for g in 0..games.num_rows() {
        // The head, as json.sql's `json_heads`: absent values left out.
        let mut fields = Fields::new(&mut out);
        let strings = [
            ("id", id.get(g)),
            ("site", game_texts.site.get(g)),
            ("event", game_texts.event.get(g)),
            ("round", game_texts.round.get(g)),
            ("type", kind.get(g)),
            ("result", game_texts.result.get(g)),
        ];
        for (key, value) in strings {
            if let Some(value) = value {
                json_string(value, fields.key(key));
            }
        }
        if let Some(seconds) = datetime.get(g) {
            let out = fields.key("datetime");
            out.push('"');
            utc_text(seconds, out);
            out.push('"');
        }
        let strings = [
            ("timeControl", game_texts.time_control.get(g)),
            ("termination", game_texts.termination.get(g)),
            (
                "variant",
                game_texts.variant.get(g).filter(|v| *v != "Standard"),
            ),
            ("fen", game_texts.start_fen.get(g)),
        ];
        for (key, value) in strings {
            if let Some(value) = value {
                json_string(value, fields.key(key));
            }
        }
        if openings.iter().any(|(_, t)| t.get(g).is_some()) {
            let out = fields.key("opening");
            let mut inner = Fields::open(out);
            for (key, t) in &openings {
                if let Some(value) = t.get(g) {
                    json_string(value, inner.key(key));
                }
            }
            out.push('}');
        }
        {
            let kind = kind.get(g);
            let lichess = game_texts
                .site
                .get(g)
                .is_some_and(|s| s.starts_with("https://lichess.org/"));
            let out = fields.key("players");
            out.push('[');
            for (n, p) in rows(players, g).enumerate() {
                if n > 0 {
                    out.push(',');
                }
                let mut inner = Fields::open(out);
                if let Some(name) = name.get(p) {
                    let out = inner.key("handle");
                    out.push_str(if lichess {
                        "{\"domain\":\"org.lichess\",\"value\":"
                    } else {
                        "{\"value\":"
                    });
                    json_string(name, out);
                    out.push('}');
                }
                if let (Some(kind), Some(elo)) = (kind, get(elo, p)) {
                    let _ = write!(inner.raw_key(), "\"ELO_{kind}\":{elo}");
                }
                if let Some(d) = get(diff, p) {
                    let _ = write!(inner.key("ratingDiff"), "{d}");
                }
                if let Some(t) = title.get(p) {
                    json_string(t, inner.key("title"));
                }
                out.push('}');
            }
            out.push(']');
        }
        if let Some(c) = game_texts.comment.get(g) {
            json_string(c, fields.key("comment"));
        }
        out.push_str(",\"moves\":");

        if rows(lines.list, g).is_empty() {
            // json.sql's `moves_json`: the moves, `"a"` left out where it is `[{}]`.
            out.push('[');
            let mut first = true;
            for m in rows(moves.list, g) {
                let at = out.len();
                if !first {
                    out.push(',');
                }
                if !moves.head(m, &mut out) {
                    out.truncate(at);
                    continue;
                }
                first = false;
                ann.clear();
                moves.annotations(m, &mut ann);
                if ann != "{}" {
                    let _ = write!(out, ",\"a\":[{ann}]");
                }
                out.push('}');
            }
            out.push(']');
        } else {
            nest(g, &moves, &lines, &mut children, &mut ann, &mut out)?;
        }
        out.push_str("}\n");
        ends.push(out.len());
    }
    Ok((out.into_bytes(), ends))
}

/// The moves of game `g` with its variations nested, as export_json.py's `assemble` wrote them: each
/// line goes as `{"alt": [line, ...]}` in the `a` list of the move it replaces; a line's starting
/// comment as `{"precomment": ...}` in its first move's `a`.
fn nest(
    g: usize,
    moves: &Moves,
    lines: &Lines<Moves>,
    children: &mut HashMap<(i64, usize), Vec<usize>>,
    ann: &mut String,
    out: &mut String,
) -> Result<(), ExportError> {
    lines.branches(g, |_| true, children);
    let main = Line {
        id: 0,
        row: None,
        comment: None,
        first_ply: 0,
    };
    let line_rows = |v| rows(lines.moves.list, v);
    let mut writer = JsonLines {
        moves,
        line_moves: &lines.moves,
        ann,
        out,
    };
    walk(
        main,
        rows(moves.list, g),
        lines,
        line_rows,
        children,
        &mut writer,
    )
}

/// The nested moves of a game's lines.
struct JsonLines<'w, 'a> {
    moves: &'w Moves<'a>,
    line_moves: &'w Moves<'a>,
    ann: &'w mut String,
    out: &'w mut String,
}

impl LineWriter for JsonLines<'_, '_> {
    fn open(&mut self, _line: &Line) -> Result<(), ExportError> {
        self.out.push('[');
        Ok(())
    }

    fn step(
        &mut self,
        line: &Line,
        index: usize,
        m: usize,
        _ply: u64,
        branches: bool,
    ) -> Result<(), ExportError> {
        let (out, ann) = (&mut *self.out, &mut *self.ann);
        let ms = if line.row.is_none() {
            self.moves
        } else {
            self.line_moves
        };
        if index > 0 {
            out.push(',');
        }
        ms.head(m, out);
        ann.clear();
        ms.annotations(m, ann);
        let precomment = line.comment.filter(|_| index == 0 && line.row.is_some());
        if ann != "{}" || precomment.is_some() || branches {
            out.push_str(",\"a\":[");
            let mut first = true;
            if ann != "{}" {
                out.push_str(ann);
                first = false;
            }
            if let Some(c) = precomment {
                if !first {
                    out.push(',');
                }
                first = false;
                out.push_str("{\"precomment\":");
                json_string(c, out);
                out.push('}');
            }
            if branches {
                if !first {
                    out.push(',');
                }
                out.push_str("{\"alt\":[");
                return Ok(());
            }
            out.push(']');
        }
        out.push('}');
        Ok(())
    }

    fn alt(&mut self, n: usize, _line: &Line) {
        if n > 0 {
            self.out.push(',');
        }
    }

    fn alt_end(&mut self, _n: usize) {}

    fn after(&mut self, branches: bool) {
        if branches {
            self.out.push_str("]}]}");
        }
    }

    fn close(&mut self) {
        self.out.push(']');
    }
}

/// A timestamp column of any unit, read as whole seconds (rounded down, as strftime's `%S`).
struct Seconds<'a> {
    values: &'a dyn Array,
    raw: &'a [i64],
    per_second: i64,
}

impl<'a> Seconds<'a> {
    fn of(array: &'a ArrayRef) -> Result<Seconds<'a>, ExportError> {
        let (raw, per_second) = match array.data_type() {
            DataType::Timestamp(TimeUnit::Second, _) => {
                (array.as_primitive::<TimestampSecondType>().values(), 1)
            }
            DataType::Timestamp(TimeUnit::Millisecond, _) => (
                array.as_primitive::<TimestampMillisecondType>().values(),
                1_000,
            ),
            DataType::Timestamp(TimeUnit::Microsecond, _) => (
                array.as_primitive::<TimestampMicrosecondType>().values(),
                1_000_000,
            ),
            DataType::Timestamp(TimeUnit::Nanosecond, _) => (
                array.as_primitive::<TimestampNanosecondType>().values(),
                1_000_000_000,
            ),
            other => return Err(error(format!("`datetime` is {other}"))),
        };
        Ok(Seconds {
            values: array.as_ref(),
            raw,
            per_second,
        })
    }

    fn get(&self, i: usize) -> Option<i64> {
        self.values
            .is_valid(i)
            .then(|| self.raw[i].div_euclid(self.per_second))
    }
}

/// A JSON object's `"key":` pairs, commas between them.
struct Fields<'o> {
    out: &'o mut String,
    first: bool,
}

impl<'o> Fields<'o> {
    /// A new object: `{` written.
    fn new(out: &'o mut String) -> Self {
        Self::open(out)
    }

    fn open(out: &'o mut String) -> Self {
        out.push('{');
        Fields { out, first: true }
    }

    /// `"key":` written (after a comma if needed): the value goes next.
    fn key(&mut self, key: &str) -> &mut String {
        let out = self.raw_key();
        out.push('"');
        out.push_str(key);
        out.push_str("\":");
        out
    }

    /// The comma, if needed: the caller writes the key and value.
    fn raw_key(&mut self) -> &mut String {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        self.out
    }
}

/// `seconds` since 1970 in UTC as `%Y-%m-%dT%H:%M:%SZ` (the year padded to four digits).
fn utc_text(seconds: i64, out: &mut String) {
    let days = seconds.div_euclid(86_400);
    let secs = seconds.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let _ = write!(
        out,
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_text_writes_as_duckdb() {
        let text = |s| {
            let mut out = String::new();
            utc_text(s, &mut out);
            out
        };
        assert_eq!(text(0), "1970-01-01T00:00:00Z");
        assert_eq!(text(-1), "1969-12-31T23:59:59Z");
        assert_eq!(text(1_746_057_600), "2025-05-01T00:00:00Z");
        assert_eq!(text(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn json_strings_escape_as_duckdb() {
        let mut out = String::new();
        json_string(
            "a/b\"c\\d\u{1}\t\n\u{7f}\u{2028}é\u{1f}\u{8}\u{c}\r",
            &mut out,
        );
        assert_eq!(
            out,
            "\"a/b\\\"c\\\\d\\u0001\\t\\n\u{7f}\u{2028}é\\u001F\\b\\f\\r\""
        );
    }
}
