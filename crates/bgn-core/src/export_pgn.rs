//! Lake games back to PGN text, a batch at a time, with no per-game object outside this module.
//!
//! The text is the one `warehouse/exports/pgn.py` has always written (its round-trip tests hold it):
//! the Seven Tag Roster, then the `headers` map in file order, then the tags kept in columns; each
//! move as `sql/exports/text.sql` and `pgn.sql` wrote it (SAN, `$n` NAGs,
//! `{ [%eval 0.17] [%clk 0:03:00] comment }`), numbered, variations nested in place, in lines of at
//! most 79 characters, never broken inside a token. The batch must have its SAN filled
//! (`san::fill_san`): a null `san` is an error here.

use std::collections::HashMap;
use std::fmt::Write;

use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Int16Type, Int32Type};
use arrow_array::{Array, ArrayRef, ListArray, MapArray, PrimitiveArray, RecordBatch, StructArray};
use arrow_schema::DataType;

use crate::fen::is_python_space;
use crate::san::Texts;
use crate::tags;

/// Characters a movetext line holds at most, where tokens allow.
const LINE_WIDTH: usize = 79;

/// Why a batch cannot be written: a column missing or of another type, or a null SAN.
#[derive(Debug)]
pub struct ExportError(pub String);

impl std::fmt::Display for ExportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ExportError {}

pub(crate) fn error(message: impl Into<String>) -> ExportError {
    ExportError(format!("cannot export this batch: {}", message.into()))
}

pub(crate) fn column<'a>(s: &'a StructArray, name: &str) -> Result<&'a ArrayRef, ExportError> {
    s.column_by_name(name)
        .ok_or_else(|| error(format!("no `{name}` column")))
}

pub(crate) fn texts<'a>(array: &'a ArrayRef, name: &str) -> Result<Texts<'a>, ExportError> {
    Texts::of(array, name).map_err(|e| ExportError(e.0))
}

/// The text columns both exports write, each game's value by `get(g)`.
pub(crate) struct GameTexts<'a> {
    pub site: Texts<'a>,
    pub event: Texts<'a>,
    pub round: Texts<'a>,
    pub result: Texts<'a>,
    pub termination: Texts<'a>,
    pub time_control: Texts<'a>,
    pub variant: Texts<'a>,
    pub start_fen: Texts<'a>,
    pub comment: Texts<'a>,
    pub eco: Texts<'a>,
    pub verbose: Texts<'a>,
}

impl<'a> GameTexts<'a> {
    pub(crate) fn of(batch: &'a StructArray) -> Result<Self, ExportError> {
        let text = |name: &str| texts(column(batch, name)?, name);
        let opening = structs(column(batch, "opening")?, "opening")?;
        Ok(Self {
            site: text("site")?,
            event: text("event")?,
            round: text("round")?,
            result: text("result")?,
            termination: text("termination")?,
            time_control: text("time_control")?,
            variant: text("variant")?,
            start_fen: text("start_fen")?,
            comment: text("comment")?,
            eco: texts(column(opening, "eco")?, "eco")?,
            verbose: texts(column(opening, "verbose")?, "verbose")?,
        })
    }
}

pub(crate) fn list<'a>(array: &'a ArrayRef, name: &str) -> Result<&'a ListArray, ExportError> {
    array
        .as_list_opt::<i32>()
        .ok_or_else(|| error(format!("`{name}` is not a list")))
}

pub(crate) fn structs<'a>(array: &'a ArrayRef, name: &str) -> Result<&'a StructArray, ExportError> {
    array
        .as_struct_opt()
        .ok_or_else(|| error(format!("`{name}` is not a struct")))
}

pub(crate) fn ints<'a, T: arrow_array::ArrowPrimitiveType>(
    array: &'a ArrayRef,
    name: &str,
) -> Result<&'a PrimitiveArray<T>, ExportError> {
    array
        .as_primitive_opt::<T>()
        .ok_or_else(|| error(format!("`{name}` is {}", array.data_type())))
}

pub(crate) fn get<T: arrow_array::ArrowPrimitiveType>(
    a: &PrimitiveArray<T>,
    i: usize,
) -> Option<T::Native> {
    a.is_valid(i).then(|| a.value(i))
}

/// The rows of list `i` (none when null).
pub(crate) fn rows(l: &ListArray, i: usize) -> std::ops::Range<usize> {
    if l.is_null(i) {
        return 0..0;
    }
    let o = l.value_offsets();
    o[i] as usize..o[i + 1] as usize
}

/// What a move says besides the move: NAGs, eval, clock and comment (shared with `export_json`).
pub(crate) struct MoveNotes<'a> {
    pub(crate) nags: &'a ListArray,
    pub(crate) nag_values: &'a PrimitiveArray<Int16Type>,
    eval_cp: &'a PrimitiveArray<Int32Type>,
    eval_mate: &'a PrimitiveArray<Int16Type>,
    clk: &'a PrimitiveArray<Decimal128Type>,
    /// The clock's decimal scale.
    clk_scale: i8,
    pub(crate) comment: Texts<'a>,
}

impl<'a> MoveNotes<'a> {
    pub(crate) fn of(moves: &'a StructArray) -> Result<MoveNotes<'a>, ExportError> {
        let nags = list(column(moves, "nags")?, "nags")?;
        let clk = column(moves, "clk")?;
        let clk_scale = match clk.data_type() {
            DataType::Decimal128(_, scale) => *scale,
            other => return Err(error(format!("`clk` is {other}"))),
        };
        Ok(MoveNotes {
            nags,
            nag_values: ints(nags.values(), "nags")?,
            eval_cp: ints(column(moves, "eval_cp")?, "eval_cp")?,
            eval_mate: ints(column(moves, "eval_mate")?, "eval_mate")?,
            clk: ints(clk, "clk")?,
            clk_scale,
            comment: texts(column(moves, "comment")?, "comment")?,
        })
    }

    /// The eval, then the clock, each between its `(open, close)` and after `sep`, where the move has
    /// them.
    pub(crate) fn eval_and_clock(
        &self,
        m: usize,
        out: &mut String,
        sep: &mut impl FnMut(&mut String),
        eval: (&str, &str),
        clock: (&str, &str),
    ) {
        if self.has_eval(m) {
            sep(out);
            out.push_str(eval.0);
            self.eval(m, out);
            out.push_str(eval.1);
        }
        if self.has_clock(m) {
            sep(out);
            out.push_str(clock.0);
            self.clock(m, out);
            out.push_str(clock.1);
        }
    }

    /// The study JSON's eval (`sql/exports/study.sql` wrote it): signed pawns with two decimals
    /// (`+0.20`, `-1.50`, `+0.00`), or `#n` / `#-n` for a mate; false (nothing written) when none.
    pub(crate) fn signed_eval(&self, m: usize, out: &mut String) -> bool {
        if let Some(mate) = get(self.eval_mate, m) {
            let _ = write!(out, "#{mate}");
        } else if let Some(cp) = get(self.eval_cp, m) {
            let a = (cp as i64).abs();
            let sign = if cp < 0 { '-' } else { '+' };
            let _ = write!(out, "{sign}{}.{:02}", a / 100, a % 100);
        } else {
            return false;
        }
        true
    }

    fn has_eval(&self, m: usize) -> bool {
        self.eval_mate.is_valid(m) || self.eval_cp.is_valid(m)
    }

    /// The PGN's eval: `#n` for a mate, else pawns with one or two decimals.
    fn eval(&self, m: usize, out: &mut String) {
        if let Some(mate) = get(self.eval_mate, m) {
            let _ = write!(out, "#{mate}");
        } else if let Some(cp) = get(self.eval_cp, m) {
            eval_text(cp as i64, out);
        }
    }

    pub(crate) fn has_clock(&self, m: usize) -> bool {
        self.clk.is_valid(m)
    }

    /// The clock (every export's): `h:mm:ss`, with the tenth when it is not zero (`0:00:09.5`).
    pub(crate) fn clock(&self, m: usize, out: &mut String) {
        if let Some(clk) = get(self.clk, m) {
            clock_text(tenths(clk, self.clk_scale), out);
        }
    }
}

/// The fields of a list of moves that the PGN and the study show.
pub(crate) struct Moves<'a> {
    pub(crate) list: &'a ListArray,
    pub(crate) san: Texts<'a>,
    pub(crate) notes: MoveNotes<'a>,
}

impl<'a> Moves<'a> {
    pub(crate) fn of(array: &'a ArrayRef, name: &str) -> Result<Moves<'a>, ExportError> {
        let moves_list = list(array, name)?;
        let moves = structs(moves_list.values(), name)?;
        Ok(Moves {
            list: moves_list,
            san: texts(column(moves, "san")?, "san")?,
            notes: MoveNotes::of(moves)?,
        })
    }

    /// Move `m`'s text as pgn.sql's `move_pgn` wrote it, appended to `out`.
    fn text(&self, m: usize, out: &mut String) -> Result<(), ExportError> {
        let notes = &self.notes;
        let start = out.len();
        out.push_str(
            self.san
                .get(m)
                .ok_or_else(|| error("a move's `san` is null"))?,
        );
        if notes.nags.is_valid(m) {
            out.push(' ');
            let mut first = true;
            for n in rows(notes.nags, m) {
                if let Some(nag) = get(notes.nag_values, n) {
                    if !first {
                        out.push(' ');
                    }
                    first = false;
                    let _ = write!(out, "${nag}");
                }
            }
        }
        let open = out.len();
        out.push_str(" { ");
        let mut parts = 0;
        let mut part = |out: &mut String| {
            if parts > 0 {
                out.push(' ');
            }
            parts += 1;
        };
        notes.eval_and_clock(m, out, &mut part, ("[%eval ", "]"), ("[%clk ", "]"));
        if let Some(comment) = notes.comment.get(m) {
            part(out);
            out.push_str(comment);
        }
        if out.len() == open + 3 {
            out.truncate(open); // an empty comment, which pgn.sql dropped
        } else {
            out.push_str(" }");
        }
        // pgn.sql dropped `' {  }'` anywhere in the move's text (here only in a SAN or comment of a
        // damaged lake: a comment holds no `}`).
        if out[start..].contains(" {  }") {
            let text = out[start..].replace(" {  }", "");
            out.truncate(start);
            out.push_str(&text);
        }
        Ok(())
    }
}

/// A decimal clock of `scale` as whole tenths of a second, rounded half away from zero (DuckDB's cast).
fn tenths(raw: i128, scale: i8) -> i64 {
    if scale == 1 {
        return raw as i64;
    }
    if scale < 1 {
        return (raw * 10i128.pow((1 - scale as i32) as u32)) as i64;
    }
    let div = 10i128.pow((scale - 1) as u32);
    let (q, r) = (raw / div, raw % div);
    let up = 2 * r.abs() >= div;
    (q + if up { raw.signum() } else { 0 }) as i64
}

/// The PGN's eval of centipawns: pawns with one or two decimals (`0.17`, `-1.5`, `0.0`).
fn eval_text(cp: i64, out: &mut String) {
    let a = cp.abs();
    let sign = if cp < 0 { "-" } else { "" };
    if a % 10 == 0 {
        let _ = write!(out, "{sign}{}.{}", a / 100, (a % 100) / 10);
    } else {
        let _ = write!(out, "{sign}{}.{:02}", a / 100, a % 100);
    }
}

/// `n` in decimal, without `fmt`'s machinery (once a move, for its number).
fn push_number(n: u64, out: &mut String) {
    if n >= 10 {
        push_number(n / 10, out);
    }
    out.push(char::from(b'0' + (n % 10) as u8));
}

/// DuckDB's `lpad(n::varchar, 2, '0')`: padded to two characters, or cut to two.
fn lpad2(n: i64, out: &mut String) {
    if (0..100).contains(&n) {
        out.push(char::from(b'0' + (n / 10) as u8));
        out.push(char::from(b'0' + (n % 10) as u8));
        return;
    }
    let s = n.to_string();
    if s.len() >= 2 {
        out.push_str(&s[..2]);
    } else {
        out.push('0');
        out.push_str(&s);
    }
}

/// A clock of whole tenths: `h:mm:ss`, with the tenth when not zero.
fn clock_text(t: i64, out: &mut String) {
    match t / 36000 {
        h @ 0..=9 => out.push(char::from(b'0' + h as u8)),
        h => {
            let _ = write!(out, "{h}");
        }
    }
    out.push(':');
    lpad2(t / 600 % 60, out);
    out.push(':');
    lpad2(t / 10 % 60, out);
    match t % 10 {
        0 => {}
        d @ 1..=9 => {
            out.push('.');
            out.push(char::from(b'0' + d as u8));
        }
        d => {
            let _ = write!(out, ".{d}");
        }
    }
}

/// The ply of a game's first move from its FEN: side to move and fullmove number (fields split at
/// Python's white space, as `str.split()` splits them).
pub(crate) fn start_ply(fen: Option<&str>) -> u64 {
    let Some(fen) = fen.filter(|f| !f.is_empty()) else {
        return 0;
    };
    let fields: Vec<&str> = fen
        .split(is_python_space)
        .filter(|f| !f.is_empty())
        .collect();
    let black = fields.get(1) == Some(&"b");
    let fullmove = match fields.get(5) {
        Some(f) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) => {
            f.parse::<u64>().unwrap_or(u64::MAX / 4)
        }
        _ => 1,
    };
    2 * (fullmove.max(1) - 1) + u64::from(black)
}

/// Tokens joined by spaces in lines of at most `LINE_WIDTH` characters where tokens allow.
struct Wrapper<'o> {
    out: &'o mut Vec<u8>,
    /// Characters on the current line; `None` before the first token.
    line: Option<usize>,
    /// Whether the current line holds any text (Python's `if current`).
    filled: bool,
}

impl Wrapper<'_> {
    fn token(&mut self, token: &str) {
        let chars = if token.is_ascii() {
            token.len()
        } else {
            token.chars().count()
        };
        match self.line {
            Some(n) if self.filled && n + 1 + chars > LINE_WIDTH => {
                self.out.push(b'\n');
                self.line = Some(chars);
                self.filled = !token.is_empty();
            }
            Some(n) if self.filled => {
                self.out.push(b' ');
                self.line = Some(n + 1 + chars);
            }
            _ => {
                self.line = Some(chars);
                self.filled = !token.is_empty();
            }
        }
        self.out.extend_from_slice(token.as_bytes());
    }
}

/// The game's variations: moves, comment and where each branches off.
pub(crate) struct Lines<'a, M> {
    pub(crate) list: &'a ListArray,
    pub(crate) id: &'a PrimitiveArray<Int32Type>,
    pub(crate) parent: &'a PrimitiveArray<Int32Type>,
    pub(crate) ply: &'a PrimitiveArray<Int32Type>,
    pub(crate) comment: Texts<'a>,
    /// Each line's moves, read by the export (`M`).
    pub(crate) moves: M,
}

impl<'a, M> Lines<'a, M> {
    /// The `variations` of `batch`, their moves read by `moves`.
    pub(crate) fn of(
        batch: &'a StructArray,
        moves: impl Fn(&'a ArrayRef, &str) -> Result<M, ExportError>,
    ) -> Result<Self, ExportError> {
        let variations = list(column(batch, "variations")?, "variations")?;
        let vs = structs(variations.values(), "variations")?;
        Ok(Lines {
            list: variations,
            id: ints(column(vs, "id")?, "id")?,
            parent: ints(column(vs, "parent")?, "parent")?,
            ply: ints(column(vs, "ply")?, "ply")?,
            comment: texts(column(vs, "comment")?, "comment")?,
            moves: moves(column(vs, "moves")?, "variations.moves")?,
        })
    }

    /// Game `g`'s variations by where they branch off: (the id of their parent line, the index of the
    /// move they replace in it), in source order; `keep` says which lines count.
    pub(crate) fn branches(
        &self,
        g: usize,
        keep: impl Fn(usize) -> bool,
        children: &mut HashMap<(i64, usize), Vec<usize>>,
    ) {
        children.clear();
        for v in rows(self.list, g).filter(|&v| keep(v)) {
            let key = (
                get(self.parent, v).unwrap_or(0) as i64,
                get(self.ply, v).unwrap_or(0) as usize,
            );
            children.entry(key).or_default().push(v);
        }
    }
}

/// The `players` of a batch: name, title, Elo and rating difference of each.
pub(crate) struct Players<'a> {
    pub(crate) list: &'a ListArray,
    pub(crate) name: Texts<'a>,
    pub(crate) title: Texts<'a>,
    pub(crate) elo: &'a PrimitiveArray<Int32Type>,
    pub(crate) diff: &'a PrimitiveArray<Int32Type>,
}

impl<'a> Players<'a> {
    pub(crate) fn of(batch: &'a StructArray) -> Result<Self, ExportError> {
        let players = list(column(batch, "players")?, "players")?;
        let player = structs(players.values(), "players")?;
        Ok(Players {
            list: players,
            name: texts(column(player, "name")?, "name")?,
            title: texts(column(player, "title")?, "title")?,
            elo: ints(column(player, "elo")?, "elo")?,
            diff: ints(column(player, "rating_diff")?, "rating_diff")?,
        })
    }
}

/// One line of a game: the mainline or a variation.
#[derive(Clone, Copy)]
pub(crate) struct Line<'a> {
    /// 0 for the mainline, else the variation's id.
    pub(crate) id: i64,
    /// `None`: the mainline; `Some(row)`: the variation at that row of `Lines`.
    pub(crate) row: Option<usize>,
    /// The line's opening comment.
    pub(crate) comment: Option<&'a str>,
    /// The ply of its first move.
    pub(crate) first_ply: u64,
}

/// What an export writes as `walk` goes through a game's lines, variations nested in place.
pub(crate) trait LineWriter {
    /// A line begins.
    fn open(&mut self, line: &Line) -> Result<(), ExportError>;
    /// The move at `index` of `line` (`m`: its row in the line's moves), at `ply`; `branches`: lines
    /// replace it, which come next (`alt`…), then `after`.
    fn step(
        &mut self,
        line: &Line,
        index: usize,
        m: usize,
        ply: u64,
        branches: bool,
    ) -> Result<(), ExportError>;
    /// Before the `n`th line that replaces a move (its `open` follows).
    fn alt(&mut self, n: usize, line: &Line);
    /// After the `n`th line that replaces a move (its `close` came before).
    fn alt_end(&mut self, n: usize);
    /// After a move and the lines that replace it.
    fn after(&mut self, branches: bool);
    /// A line ends.
    fn close(&mut self);
}

/// What the walk does next.
enum Step<'a> {
    Open(Line<'a>),
    /// Continue a line at a move index, after the lines that replace the move before it.
    Resume(Line<'a>, usize),
    Alt(usize, Line<'a>),
    AltEnd(usize),
    After,
}

/// Goes through game `g`'s lines in the order they are written, each variation in place after the move
/// it replaces (`children`: `Lines::branches`), with an explicit stack: the lake keeps variations
/// nested deeper than any call stack. `main_rows`: the mainline's moves; `line_rows(v)`: variation
/// `v`'s.
pub(crate) fn walk<'a, M>(
    main: Line<'a>,
    main_rows: std::ops::Range<usize>,
    lines: &Lines<'a, M>,
    line_rows: impl Fn(usize) -> std::ops::Range<usize>,
    children: &HashMap<(i64, usize), Vec<usize>>,
    writer: &mut impl LineWriter,
) -> Result<(), ExportError> {
    let mut stack = vec![Step::Open(main)];
    while let Some(step) = stack.pop() {
        let (line, start) = match step {
            Step::Open(line) => {
                writer.open(&line)?;
                (line, 0)
            }
            Step::Resume(line, start) => (line, start),
            Step::Alt(n, line) => {
                writer.alt(n, &line);
                stack.push(Step::Open(line));
                continue;
            }
            Step::AltEnd(n) => {
                writer.alt_end(n);
                continue;
            }
            Step::After => {
                writer.after(true);
                continue;
            }
        };
        let range = match line.row {
            None => main_rows.clone(),
            Some(v) => line_rows(v),
        };
        let mut index = start;
        let mut waiting = false;
        while range.start + index < range.end {
            let ply = line.first_ply + index as u64;
            let alts = (!children.is_empty())
                .then(|| children.get(&(line.id, index)))
                .flatten();
            writer.step(&line, index, range.start + index, ply, alts.is_some())?;
            if let Some(alts) = alts {
                // Resume after the variations: pushed first, popped last.
                stack.push(Step::Resume(line, index + 1));
                stack.push(Step::After);
                for (n, &alt) in alts.iter().enumerate().rev() {
                    stack.push(Step::AltEnd(n));
                    stack.push(Step::Alt(
                        n,
                        Line {
                            id: get(lines.id, alt).unwrap_or(0) as i64,
                            row: Some(alt),
                            comment: lines.comment.get(alt),
                            first_ply: ply,
                        },
                    ));
                }
                waiting = true;
                break;
            }
            writer.after(false);
            index += 1;
        }
        if !waiting {
            writer.close();
        }
    }
    Ok(())
}

pub(crate) const RESULTS: [(&str, &str); 4] =
    [("W", "1-0"), ("B", "0-1"), ("D", "1/2-1/2"), ("*", "*")];

/// What a game's tags are made of: the columns, the players and the `headers` map.
pub(crate) struct GameTags<'a> {
    pub(crate) texts: GameTexts<'a>,
    pub(crate) players: Players<'a>,
    headers: &'a MapArray,
    keys: Texts<'a>,
    values: Texts<'a>,
}

impl<'a> GameTags<'a> {
    pub(crate) fn of(batch: &'a StructArray) -> Result<Self, ExportError> {
        let headers: &MapArray = column(batch, "headers")?
            .as_map_opt()
            .ok_or_else(|| error("`headers` is not a map"))?;
        Ok(GameTags {
            texts: GameTexts::of(batch)?,
            players: Players::of(batch)?,
            headers,
            keys: texts(headers.keys(), "headers")?,
            values: texts(headers.values(), "headers")?,
        })
    }

    /// Game `g`'s result as PGN writes it (`1-0`…).
    pub(crate) fn result(&self, g: usize) -> Result<&'static str, ExportError> {
        let result = self.texts.result.get(g);
        RESULTS
            .iter()
            .find(|(k, _)| Some(*k) == result)
            .map(|(_, v)| *v)
            .ok_or_else(|| error(format!("game {g}: unknown result {result:?}")))
    }

    /// Game `g`'s tags in the order the PGN export writes them (`tags`, cleared first): the tags of
    /// `headers` a column supersedes, the Seven Tag Roster, the other `headers` in file order, then
    /// the columns' tags. `numbers` holds the text of the Elo and rating-difference tags. Returns
    /// where the roster starts in `tags`.
    pub(crate) fn pairs<'s>(
        &'s self,
        g: usize,
        numbers: &'s mut String,
        tags: &mut Vec<(&'s str, &'s str)>,
    ) -> Result<usize, ExportError> {
        let (game_texts, players) = (&self.texts, &self.players);
        let result_text = self.result(g)?;
        let header_rows = {
            let o = self.headers.value_offsets();
            o[g] as usize..o[g + 1] as usize
        };
        let header = |i: usize| {
            (
                self.keys.get(i).unwrap_or(""),
                self.values.get(i).unwrap_or(""),
            )
        };
        // The first Date goes to the roster; a repeated one stays where it was (readers keep the last).
        let first_date = header_rows.clone().find(|&i| header(i).0 == "Date");
        // A Termination the column holds in lichess's words (`Normal` for chess.com's `X won by
        // checkmate`) is written as the source wrote it, kept in `headers`, in the column's place.
        let column_termination = game_texts.termination.get(g);
        let source_termination = header_rows
            .clone()
            .filter(|&i| Some(i) != first_date)
            .rfind(|&i| tag_name(header(i).0) == "Termination")
            .filter(|&i| {
                let written = header(i).1;
                column_termination.is_some_and(|c| written != c && tags::termination(written) == c)
            });
        let rest = header_rows
            .clone()
            .filter(|&i| Some(i) != first_date && Some(i) != source_termination)
            .map(|i| (tag_name(header(i).0), header(i).1));
        // Tags a column also holds, kept in `headers` as earlier occurrences of a repeated tag or as
        // text the column cannot spell (`WhiteElo "?"`): written first, so that a reader keeping a
        // tag's last value gets the column's, as the source's readers did.
        tags.clear();
        tags.extend(rest.clone().filter(|(n, _)| has_column(n)));
        let roster = tags.len();
        let ps = rows(players.list, g);
        let (white, black) = (
            (ps.start < ps.end).then_some(ps.start),
            (ps.start + 1 < ps.end).then_some(ps.start + 1),
        );
        let pname = |p: Option<usize>| p.and_then(|p| players.name.get(p));
        tags.push(("Event", game_texts.event.get(g).unwrap_or("?")));
        tags.push(("Site", game_texts.site.get(g).unwrap_or("?")));
        tags.push(("Date", first_date.map_or("????.??.??", |i| header(i).1)));
        tags.push(("Round", game_texts.round.get(g).unwrap_or("?")));
        tags.push(("White", pname(white).unwrap_or("?")));
        tags.push(("Black", pname(black).unwrap_or("?")));
        tags.push(("Result", result_text));
        tags.extend(rest.filter(|(n, _)| !has_column(n)));
        let ptitle = |p: Option<usize>| p.and_then(|p| players.title.get(p));
        if let Some(t) = ptitle(white) {
            tags.push(("WhiteTitle", t));
        }
        if let Some(t) = ptitle(black) {
            tags.push(("BlackTitle", t));
        }
        numbers.clear();
        let mut spans: [(&str, usize, usize); 4] = [("", 0, 0); 4];
        let mut n = 0;
        let (elo, diff) = (players.elo, players.diff);
        let signed = [
            ("WhiteRatingDiff", white, diff),
            ("BlackRatingDiff", black, diff),
        ];
        for (i, (tag, p, values)) in [("WhiteElo", white, elo), ("BlackElo", black, elo)]
            .into_iter()
            .chain(signed)
            .enumerate()
        {
            if let Some(v) = p.and_then(|p| get(values, p)) {
                let at = numbers.len();
                let _ = if i < 2 {
                    write!(numbers, "{v}")
                } else {
                    write!(numbers, "{v:+}")
                };
                spans[n] = (tag, at, numbers.len());
                n += 1;
            }
        }
        let numbers: &'s String = numbers;
        tags.extend(spans[..n].iter().map(|&(tag, a, b)| (tag, &numbers[a..b])));
        if let Some(v) = game_texts.variant.get(g).filter(|v| *v != "Standard") {
            tags.push(("Variant", v));
        }
        let optional = [
            ("ECO", game_texts.eco.get(g)),
            ("Opening", game_texts.verbose.get(g)),
            ("TimeControl", game_texts.time_control.get(g)),
            (
                "Termination",
                source_termination.map_or(column_termination, |i| Some(header(i).1)),
            ),
            ("FEN", game_texts.start_fen.get(g)),
        ];
        tags.extend(optional.iter().filter_map(|(t, v)| v.map(|v| (*t, v))));
        Ok(roster)
    }
}

/// The PGN of every game of `games` (a lake batch with its SAN filled), each ending in a blank line;
/// `ends[i]` is where game `i`'s text ends in the returned bytes.
pub fn pgn_texts(games: &RecordBatch) -> Result<(Vec<u8>, Vec<usize>), ExportError> {
    let batch = StructArray::from(games.clone());
    let game_tags = GameTags::of(&batch)?;
    let game_texts = &game_tags.texts;
    let moves = Moves::of(column(&batch, "moves")?, "moves")?;
    let lines = Lines::of(&batch, Moves::of)?;

    // A lichess game with clocks is some 2.3 kB of PGN: room for it, not a copy as the text grows.
    let mut out = Vec::with_capacity(games.num_rows() * 3072);
    let mut ends = Vec::with_capacity(games.num_rows());
    let mut scratch = String::new();
    let mut numbers = String::new();
    let mut children: HashMap<(i64, usize), Vec<usize>> = HashMap::new();
    for g in 0..games.num_rows() {
        let result_text = game_tags.result(g)?;
        let mut tags = Vec::with_capacity(32);
        game_tags.pairs(g, &mut numbers, &mut tags)?;
        write_tags(&mut out, &tags);
        out.push(b'\n');

        // The movetext: lines unfolded in place, as export_pgn.py's `movetext`.
        // An empty line `( )` holds nothing python-chess keeps: left out.
        lines.branches(g, |v| !rows(lines.moves.list, v).is_empty(), &mut children);
        let mut writer = PgnLines {
            wrap: Wrapper {
                out: &mut out,
                line: None,
                filled: false,
            },
            moves: &moves,
            line_moves: &lines.moves,
            scratch: &mut scratch,
            black_number: true,
        };
        let main = Line {
            id: 0,
            row: None,
            comment: game_texts.comment.get(g),
            first_ply: start_ply(game_texts.start_fen.get(g)),
        };
        let line_rows = |v| rows(lines.moves.list, v);
        let main_rows = rows(moves.list, g);
        walk(main, main_rows, &lines, line_rows, &children, &mut writer)?;
        let wrap = &mut writer.wrap;
        wrap.token(result_text);
        out.extend_from_slice(b"\n\n");
        ends.push(out.len());
    }
    Ok((out, ends))
}

/// The movetext of a game's lines, as export_pgn.py's `movetext` wrote it.
struct PgnLines<'w, 'a> {
    wrap: Wrapper<'w>,
    moves: &'w Moves<'a>,
    line_moves: &'w Moves<'a>,
    scratch: &'w mut String,
    /// Whether Black's next move needs its number (`12...`).
    black_number: bool,
}

impl LineWriter for PgnLines<'_, '_> {
    fn open(&mut self, line: &Line) -> Result<(), ExportError> {
        if let Some(c) = line.comment.filter(|c| !c.is_empty()) {
            self.scratch.clear();
            self.scratch.push_str("{ ");
            self.scratch.push_str(c);
            self.scratch.push_str(" }");
            self.wrap.token(self.scratch);
        }
        self.black_number = true;
        Ok(())
    }

    fn step(
        &mut self,
        line: &Line,
        _index: usize,
        m: usize,
        ply: u64,
        branches: bool,
    ) -> Result<(), ExportError> {
        // A move and its number are one token, never split across lines.
        let scratch = &mut *self.scratch;
        scratch.clear();
        if ply.is_multiple_of(2) {
            push_number(ply / 2 + 1, scratch);
            scratch.push_str(". ");
        } else if self.black_number {
            push_number(ply / 2 + 1, scratch);
            scratch.push_str("... ");
        }
        let ms = if line.row.is_none() {
            self.moves
        } else {
            self.line_moves
        };
        ms.text(m, scratch)?;
        self.wrap.token(scratch);
        self.black_number = scratch.ends_with('}') || branches;
        Ok(())
    }

    fn alt(&mut self, _n: usize, _line: &Line) {
        self.wrap.token("(");
    }

    fn alt_end(&mut self, _n: usize) {
        self.wrap.token(")");
    }

    fn after(&mut self, branches: bool) {
        if branches {
            self.black_number = true;
        }
    }

    fn close(&mut self) {}
}

/// Whether the lake keeps tag `name` in a column of its own (the load's list, `tags::Known`): an earlier
/// occurrence in `headers` is written before the roster.
fn has_column(name: &str) -> bool {
    tags::Known::of(name.as_bytes()).is_some_and(tags::Known::has_column)
}

/// A `headers` key's tag: a repeated tag is keyed `Date (2)`, `Date (3)`…
pub(crate) fn tag_name(key: &str) -> &str {
    if let Some(open) = key.rfind(" (") {
        if key.ends_with(')') && key.len() > open + 3 {
            let digits = &key[open + 2..key.len() - 1];
            if digits.bytes().all(|b| b.is_ascii_digit()) {
                return &key[..open];
            }
        }
    }
    key
}

/// `[Name "value"]` lines, the value with PGN's escapes for `\\` and `"`.
pub(crate) fn write_tags(out: &mut Vec<u8>, tags: &[(&str, &str)]) {
    for (name, value) in tags {
        out.push(b'[');
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b" \"");
        for b in value.bytes() {
            if b == b'\\' || b == b'"' {
                out.push(b'\\');
            }
            out.push(b);
        }
        out.extend_from_slice(b"\"]\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_values_as_pgn_writes_them() {
        let mut out = Vec::new();
        write_tags(&mut out, &[("Event", "say \"hi\" \\ bye")]);
        assert_eq!(out, b"[Event \"say \\\"hi\\\" \\\\ bye\"]\n");
    }

    #[test]
    fn the_first_ply_from_a_fen() {
        for (fen, ply) in [
            (None, 0),
            (Some(""), 0),
            (
                Some("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
                0,
            ),
            (
                Some("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"),
                1,
            ),
            (Some("8/8/8/8/8/8/8/K6k w - - 0 5"), 8),
            (Some("8/8/8/8/8/8/8/K6k b - - 0 5"), 9),
            (Some("8/8/8/8/8/8/8/K6k b - - 0 0"), 1), // fullmove 0 read as 1
            (Some("8/8/8/8/8/8/8/K6k b"), 1),         // no move number: the first
            // Python's str.split() splits at U+001F too, as the load read a study's FEN.
            (Some("8/8/8/8/8/8/8/K6k b - - 0 5\u{1f}"), 9),
        ] {
            assert_eq!(start_ply(fen), ply, "{fen:?}");
        }
    }
}
