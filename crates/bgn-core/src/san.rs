//! The SAN the lake leaves out, filled back in.
//!
//! The loader stores a move's `san` only where the source wrote something else than the SAN the
//! position gives (`replay`); everywhere else `san` is null. `fill_san` replays a batch of lake games
//! from their squares (`f`, `t`, `promote`, `castle`: the move whose BGN description, `replay::describe`,
//! says the same) and writes that SAN, with its `+`/`#` suffix, where `san` is null, in the mainline
//! and in every variation. Every other column, and every other field of a move, is the batch's own
//! array, not a copy.

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::builder::{ArrayBuilder, GenericStringBuilder, StringViewBuilder};
use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, GenericStringArray, ListArray, RecordBatch, StringViewArray, StructArray,
};
use arrow_schema::DataType;
use shakmaty::fen::Fen;
use shakmaty::san::{San, SanPlus, Suffix};
use shakmaty::{CastlingSide, EnPassantMode, Move, MoveList, Position, Role, Square};

use crate::replay::describe;
use crate::variant::{Board, GameVariant};

/// Why a batch's SAN cannot be filled: a batch without the columns needed, or a move that is not
/// legal where it stands (a damaged lake).
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct FillError(pub String);

impl fmt::Display for FillError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FillError {}

fn error(message: impl Into<String>) -> FillError {
    FillError(message.into())
}

/// `games` (lake games: at least `moves`, `start_fen` and `variant`; `variations` and `game_id` when
/// present) with every null `san` of `moves` and of `variations[].moves` set to the SAN the position
/// gives. The schema is unchanged.
///
/// `variant` names the rules (`Chess960`: Chess960 castling; `Crazyhouse`, `Atomic`…: lichess's
/// variants; null: standard chess). A variation (`id`)
/// starts from the position before the move at index `ply` of its `parent` line (0 is the mainline),
/// which must come before it in `variations`.
pub fn fill_san(games: &RecordBatch) -> Result<RecordBatch, FillError> {
    Ok(replay_batch(games, false)?.0)
}

/// The position after each move of `games` (lake games, as `fill_san` takes them), as python-chess's
/// `board.fen(en_passant="fen")` writes it: the en passant square after every double step.
pub fn move_fens(games: &RecordBatch) -> Result<MoveFens, FillError> {
    Ok(replay_batch(games, true)?.1)
}

/// The FEN after each move of a batch, by the move's row in the values of `moves` (`main`) and of
/// `variations[].moves` (`lines`).
#[derive(Default)]
pub struct MoveFens {
    pub main: Fens,
    pub lines: Fens,
}

/// FENs by row: one text, each row's span in it (empty for rows no game of the batch holds).
#[derive(Default)]
pub struct Fens {
    text: String,
    spans: Vec<(usize, usize)>,
}

impl Fens {
    /// The FEN after the move at `row`.
    pub fn get(&self, row: usize) -> &str {
        let (a, b) = self.spans.get(row).copied().unwrap_or((0, 0));
        &self.text[a..b]
    }

    /// Records the FEN of `pos` with `clock` as its halfmove clock.
    fn record<P: Position>(&mut self, row: usize, pos: &P, clock: u32) {
        if self.spans.len() <= row {
            self.spans.resize(row + 1, (0, 0));
        }
        let start = self.text.len();
        Fen::from_position(pos, EnPassantMode::Always).append_to_string(&mut self.text);
        pockets_as_python_chess(&mut self.text, start);
        if clock != pos.halfmoves() {
            // The halfmove clock is the field before the last.
            let fen = &self.text[start..];
            let last = fen.rfind(' ').unwrap_or(0);
            let before = fen[..last].rfind(' ').unwrap_or(0);
            let clock = clock.to_string();
            self.text
                .replace_range(start + before + 1..start + last, &clock);
        }
        self.spans[row] = (start, self.text.len());
    }
}

/// A Crazyhouse FEN's pockets (`[...]` after the board) in python-chess's order, king to pawn, white's
/// then black's (shakmaty writes pawn to king); other FENs are left as they are.
fn pockets_as_python_chess(text: &mut String, start: usize) {
    let fen = &text[start..];
    let (Some(open), Some(close)) = (fen.find('['), fen.find(']')) else {
        return;
    };
    let pockets = &fen[open + 1..close];
    let mut sorted = String::with_capacity(pockets.len());
    for letter in "KQRBNPkqrbnp".chars() {
        sorted.extend(pockets.chars().filter(|&c| c == letter));
    }
    text.replace_range(start + open + 1..start + close, &sorted);
}

/// `games` with their SAN filled, and `with_fens` the position after each move.
fn replay_batch(
    games: &RecordBatch,
    with_fens: bool,
) -> Result<(RecordBatch, MoveFens), FillError> {
    let column = |name: &str| {
        games
            .column_by_name(name)
            .ok_or_else(|| error(format!("fill_san: the batch has no `{name}` column")))
    };
    let ids = games
        .column_by_name("game_id")
        .map(|c| Texts::of(c, "game_id"))
        .transpose()?;
    let fens = Texts::of(column("start_fen")?, "start_fen")?;
    let variants = Texts::of(column("variant")?, "variant")?;
    let mainline = Moves::of(column("moves")?, "moves")?;
    let (lines, line_moves) = match games.column_by_name("variations") {
        None => (None, None),
        Some(c) => {
            let lines = Lines::of(c)?;
            let moves = Moves::of(lines.lines.column(lines.moves), "variations.moves")?;
            (Some(lines), Some(moves))
        }
    };

    let mut main_out = mainline.output();
    let mut line_out = line_moves.as_ref().map(Moves::output);
    let mut replay = Replay::default();
    let mut positions = MoveFens::default();
    let mut main_fens = with_fens.then_some(&mut positions.main);
    let mut line_fens = with_fens.then_some(&mut positions.lines);
    for game in 0..games.num_rows() {
        let id = ids.as_ref().and_then(|t| t.get(game));
        let at = Place { game, id };
        let variant = match variants.get(game) {
            None => GameVariant::Standard,
            Some(name) => GameVariant::of_name(name)
                .ok_or_else(|| error(format!("{at}: unknown variant '{name}'")))?,
        };
        let start = match fens.get(game) {
            None => Board::start(variant),
            Some(fen) => match Board::from_fen(fen.trim(), variant) {
                Ok((pos, _)) => pos,
                Err(e) => return Err(error(format!("{at}: invalid start_fen '{fen}': {e}"))),
            },
        };
        let branches = lines.as_ref().map_or(0..0, |l| l.rows(game));
        replay.begin(!branches.is_empty());
        let rows = mainline.rows(game);
        main_out.copy_until(&mainline, rows.start);
        let fens = main_fens.as_deref_mut();
        replay.line(start, None, &mainline, rows, &mut main_out, fens, |ply| {
            at.ply(ply, 0)
        })?;

        let (Some(lines), Some(moves), Some(out)) = (&lines, &line_moves, &mut line_out) else {
            continue;
        };
        for line in branches {
            let (id, parent, ply) = lines.header(line);
            let (start, clock) = replay
                .branch(id, parent, ply)
                .map_err(|why| error(format!("{at}: variation {id} cannot branch off: {why}")))?;
            let rows = moves.rows(line);
            out.copy_until(moves, rows.start);
            let fens = line_fens.as_deref_mut();
            replay.line(start, Some(clock), moves, rows, out, fens, |ply| {
                at.ply(ply, id)
            })?;
        }
    }

    let mut columns = games.columns().to_vec();
    let moves_at = games.schema().index_of("moves").expect("found above");
    columns[moves_at] = main_out.finish(&mainline);
    if let (Some(lines), Some(moves), Some(out)) = (lines, line_moves, line_out) {
        let at = games.schema().index_of("variations").expect("found above");
        columns[at] = lines.with_moves(out.finish(&moves));
    }
    let filled = RecordBatch::try_new(games.schema(), columns).map_err(|e| error(e.to_string()))?;
    Ok((filled, positions))
}

/// Where a move is, for messages: the game (its id when the batch has one) and the ply.
#[derive(Copy, Clone)]
struct Place<'a> {
    game: usize,
    id: Option<&'a str>,
}

impl Place<'_> {
    /// `game X, ply 12` on the mainline, `game X, ply 3 of variation 2` elsewhere (`index` 0-based).
    fn ply(&self, index: usize, line: i32) -> String {
        let ply = index + 1;
        match line {
            0 => format!("{self}, ply {ply} (moves[{index}])"),
            _ => format!("{self}, ply {ply} of variation {line}"),
        }
    }
}

impl fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.id {
            Some(id) => write!(f, "game {id}"),
            None => write!(f, "game at row {}", self.game),
        }
    }
}

/// Positions of one game's lines, to start variations from.
#[derive(Default)]
struct Replay {
    /// Whether positions are kept (the game has variations).
    keep: bool,
    /// The position before each move of each line played so far, line after line, with its halfmove
    /// clock as python-chess counts it (a Crazyhouse drop does not reset it, as shakmaty's does).
    positions: Vec<(Board, u32)>,
    /// Each line's positions in `positions`, by line id.
    lines: HashMap<i32, Range<usize>>,
    /// The line being played.
    current: i32,
    san: String,
}

impl Replay {
    fn begin(&mut self, keep: bool) {
        self.keep = keep;
        self.positions.clear();
        self.lines.clear();
        self.current = 0;
    }

    /// The position variation `id` starts from: its parent's before the move at index `ply`.
    fn branch(&mut self, id: i32, parent: i32, ply: i32) -> Result<(Board, u32), String> {
        self.current = id;
        let Some(range) = self.lines.get(&parent) else {
            return Err(format!("its parent line {parent} does not come before it"));
        };
        usize::try_from(ply)
            .ok()
            .filter(|&p| p < range.len())
            .map(|p| self.positions[range.start + p].clone())
            .ok_or_else(|| format!("its parent line {parent} has no move at index {ply}"))
    }

    /// Plays the moves at `rows` of `moves` from `pos`, writing each one's `san` to `out`: the
    /// stored text, or the position's SAN where it is null; with `fens`, the position after each,
    /// its halfmove clock counted from `clock` (python-chess's, else the position's own).
    #[allow(clippy::too_many_arguments)]
    fn line(
        &mut self,
        pos: Board,
        clock: Option<u32>,
        moves: &Moves,
        rows: Range<usize>,
        out: &mut SanOut,
        fens: Option<&mut Fens>,
        place: impl Fn(usize) -> String,
    ) -> Result<(), FillError> {
        match pos {
            Board::Chess(pos) => {
                let clock = clock.unwrap_or(pos.halfmoves());
                self.line_on(
                    pos,
                    clock,
                    Board::Chess,
                    false,
                    moves,
                    rows,
                    out,
                    fens,
                    place,
                )
            }
            Board::Variant(pos) => {
                let clock = clock.unwrap_or(pos.halfmoves());
                self.line_on(
                    pos,
                    clock,
                    Board::Variant,
                    true,
                    moves,
                    rows,
                    out,
                    fens,
                    place,
                )
            }
        }
    }

    /// `line` on a position of type `P` (`Chess` itself for standard chess: no dispatch per move),
    /// which `board` wraps to keep; a `variant`'s `#` is any winning move (shakmaty's suffix). With
    /// `fens`, the position after each move is written there.
    #[allow(clippy::too_many_arguments)]
    fn line_on<P: Position + Clone>(
        &mut self,
        mut pos: P,
        mut clock: u32,
        board: fn(P) -> Board,
        variant: bool,
        moves: &Moves,
        rows: Range<usize>,
        out: &mut SanOut,
        mut fens: Option<&mut Fens>,
        place: impl Fn(usize) -> String,
    ) -> Result<(), FillError> {
        let first = self.positions.len();
        for (index, row) in rows.enumerate() {
            if self.keep {
                self.positions.push((board(pos.clone()), clock));
            }
            // The candidates stay where shakmaty builds them: a `MoveList` is some 3.6 kB, which
            // every move by value would copy (a third of the PGN export's time, once).
            let candidates = moves.candidates(&pos, row);
            let Some(m) = moves.legal_move(&pos, &candidates, row) else {
                let squares = moves.squares(row);
                return Err(error(format!(
                    "{}: no legal move goes {squares} (a damaged lake?)",
                    place(index)
                )));
            };
            match moves.san.get(row) {
                Some(text) => {
                    out.append(Some(text));
                    pos.play_unchecked(m);
                }
                None => {
                    // The candidates are those `San::from_move` would generate (same role and
                    // square; castling and pawn moves consult none).
                    let san = San::disambiguate(m, &candidates);
                    pos.play_unchecked(m);
                    let suffix = match pos.is_check() {
                        _ if variant => Suffix::from_position(&pos),
                        false => None,
                        true if pos.is_checkmate() => Some(Suffix::Checkmate),
                        true => Some(Suffix::Check),
                    };
                    self.san.clear();
                    if let San::Put {
                        role: Role::Pawn, ..
                    } = san
                    {
                        self.san.push('P'); // `P@e4`, as lichess writes a pawn drop (shakmaty: `@e4`)
                    }
                    SanPlus { san, suffix }.append_to_string(&mut self.san);
                    out.append(Some(&self.san));
                }
            }
            clock = match m {
                Move::Put { .. } => clock.saturating_add(1),
                _ if m.is_zeroing() => 0,
                _ => clock.saturating_add(1),
            };
            if let Some(fens) = fens.as_deref_mut() {
                fens.record(row, &pos, clock);
            }
        }
        if self.keep {
            self.lines.insert(self.current, first..self.positions.len());
        }
        Ok(())
    }
}

/// A string column of any of Arrow's string layouts.
pub(crate) enum Texts<'a> {
    Utf8(&'a GenericStringArray<i32>),
    Large(&'a GenericStringArray<i64>),
    View(&'a StringViewArray),
    Null(usize),
}

impl<'a> Texts<'a> {
    pub(crate) fn of(array: &'a ArrayRef, name: &str) -> Result<Texts<'a>, FillError> {
        Ok(match array.data_type() {
            DataType::Utf8 => Texts::Utf8(array.as_string()),
            DataType::LargeUtf8 => Texts::Large(array.as_string()),
            DataType::Utf8View => Texts::View(array.as_string_view()),
            DataType::Null => Texts::Null(array.len()),
            other => {
                return Err(error(format!(
                    "fill_san: `{name}` must be strings, not {other}"
                )))
            }
        })
    }

    fn len(&self) -> usize {
        match self {
            Texts::Utf8(a) => a.len(),
            Texts::Large(a) => a.len(),
            Texts::View(a) => a.len(),
            Texts::Null(n) => *n,
        }
    }

    pub(crate) fn get(&self, i: usize) -> Option<&'a str> {
        match self {
            Texts::Utf8(a) => a.is_valid(i).then(|| a.value(i)),
            Texts::Large(a) => a.is_valid(i).then(|| a.value(i)),
            Texts::View(a) => a.is_valid(i).then(|| a.value(i)),
            Texts::Null(_) => None,
        }
    }
}

/// The new `san` of a `list<move>` column, in the layout of the old one.
enum SanOut {
    Utf8(GenericStringBuilder<i32>),
    Large(GenericStringBuilder<i64>),
    View(StringViewBuilder),
}

impl SanOut {
    fn append(&mut self, text: Option<&str>) {
        match self {
            SanOut::Utf8(b) => b.append_option(text),
            SanOut::Large(b) => b.append_option(text),
            SanOut::View(b) => b.append_option(text),
        }
    }

    fn len(&self) -> usize {
        match self {
            SanOut::Utf8(b) => b.len(),
            SanOut::Large(b) => b.len(),
            SanOut::View(b) => b.len(),
        }
    }

    /// Copies the old `san` of the moves before `row` that no game of the batch holds (a sliced
    /// batch's list values start before its first game's and end after its last's).
    fn copy_until(&mut self, moves: &Moves, row: usize) {
        for r in self.len()..row {
            self.append(moves.san.get(r));
        }
    }

    /// `moves` with this as its `san`.
    fn finish(mut self, moves: &Moves) -> ArrayRef {
        self.copy_until(moves, moves.san.len());
        let san: ArrayRef = match self {
            SanOut::Utf8(mut b) => Arc::new(b.finish()),
            SanOut::Large(mut b) => Arc::new(b.finish()),
            SanOut::View(mut b) => Arc::new(b.finish()),
        };
        let (fields, mut columns, nulls) = moves.moves.clone().into_parts();
        columns[moves.san_at] = san;
        let values = StructArray::new(fields, columns, nulls);
        let (field, offsets, _, nulls) = moves.list.clone().into_parts();
        Arc::new(ListArray::new(field, offsets, Arc::new(values), nulls))
    }
}

/// No square: a null `f` (a drop's, as `replay::NO_SQUARE`), or an unreadable or null `t`, which no
/// legal move matches.
const NO_SQUARE: u8 = u8::MAX;

/// A `list<move>` column: its lists, and the fields of all its moves that replay reads.
struct Moves<'a> {
    list: &'a ListArray,
    moves: &'a StructArray,
    san_at: usize,
    san: Texts<'a>,
    from: Vec<u8>,
    to: Vec<u8>,
    /// Letters of the piece that moves (`P`, `n`…).
    piece: Vec<u8>,
    /// Letters of the piece promoted to, 0 for none.
    promote: Vec<u8>,
    /// Castling letters (`K`, `q`…), 0 for none.
    castle: Vec<u8>,
}

impl<'a> Moves<'a> {
    fn of(column: &'a ArrayRef, name: &str) -> Result<Moves<'a>, FillError> {
        let list = column
            .as_list_opt::<i32>()
            .ok_or_else(|| error(format!("fill_san: `{name}` is not a list of moves")))?;
        let moves = list
            .values()
            .as_struct_opt()
            .ok_or_else(|| error(format!("fill_san: `{name}` is not a list of moves")))?;
        let field = |field: &str| {
            moves
                .column_by_name(field)
                .ok_or_else(|| error(format!("fill_san: the moves of `{name}` have no `{field}`")))
        };
        let square = |s: &str| match s.as_bytes() {
            &[f @ b'a'..=b'h', r @ b'1'..=b'8'] => (r - b'1') * 8 + (f - b'a'),
            _ => NO_SQUARE,
        };
        let letter = |s: &str| match s.as_bytes() {
            &[b] => b,
            _ => 0,
        };
        let san_at = moves
            .fields()
            .iter()
            .position(|f| f.name() == "san")
            .ok_or_else(|| error(format!("fill_san: the moves of `{name}` have no `san`")))?;
        Ok(Moves {
            list,
            moves,
            san_at,
            san: Texts::of(moves.column(san_at), "san")?,
            from: codes(field("f")?, NO_SQUARE, square)?,
            to: codes(field("t")?, NO_SQUARE, square)?,
            piece: codes(field("p")?, 0, letter)?,
            promote: codes(field("promote")?, 0, letter)?,
            castle: codes(field("castle")?, 0, letter)?,
        })
    }

    /// The moves of list `i` (empty when the list is null).
    fn rows(&self, i: usize) -> Range<usize> {
        if self.list.is_null(i) {
            return 0..0;
        }
        let offsets = self.list.value_offsets();
        offsets[i] as usize..offsets[i + 1] as usize
    }

    fn output(&self) -> SanOut {
        let (n, bytes) = (self.san.len(), 4 * self.san.len());
        match self.san {
            Texts::Large(_) => SanOut::Large(GenericStringBuilder::with_capacity(n, bytes)),
            Texts::View(_) => SanOut::View(StringViewBuilder::with_capacity(n)),
            Texts::Utf8(_) | Texts::Null(_) => {
                SanOut::Utf8(GenericStringBuilder::with_capacity(n, bytes))
            }
        }
    }

    /// The legal moves of `pos` that move `row` may be: those of its piece to its square, or the
    /// castling moves of its side (all legal moves when the piece is unknown).
    fn candidates<P: Position>(&self, pos: &P, row: usize) -> MoveList {
        if self.to[row] == NO_SQUARE {
            return MoveList::new(); // a null `from` is a drop's
        }
        match (
            self.castle[row],
            Role::from_char(char::from(self.piece[row])),
        ) {
            (b'K' | b'k', _) => pos.castling_moves(CastlingSide::KingSide),
            (b'Q' | b'q', _) => pos.castling_moves(CastlingSide::QueenSide),
            (0, Some(role)) => pos.san_candidates(role, Square::new(u32::from(self.to[row]))),
            _ => pos.legal_moves(),
        }
    }

    /// The move of `candidates` (`candidates(pos, row)`) that move `row` describes.
    fn legal_move<P: Position>(&self, pos: &P, candidates: &MoveList, row: usize) -> Option<Move> {
        let (from, to) = (self.from[row], self.to[row]);
        let (promote, castle, turn) = (self.promote[row], self.castle[row], pos.turn());
        // `castle` also tells a Chess960 castling from a king's step to the same square.
        candidates.iter().copied().find(|&m| {
            let d = describe(m, turn);
            d.from == from && d.to == to && d.promote == promote && (d.castle != 0) == (castle != 0)
        })
    }

    /// `e2-e4`, `e7-e8=Q`: what move `row` says, for messages.
    fn squares(&self, row: usize) -> String {
        let name = |s: u8| match s {
            NO_SQUARE => "?".to_owned(),
            s => format!("{}{}", (b'a' + s % 8) as char, (b'1' + s / 8) as char),
        };
        let promote = match self.promote[row] {
            0 => String::new(),
            p => format!("={}", p as char),
        };
        format!("{}-{}{promote}", name(self.from[row]), name(self.to[row]))
    }
}

/// One code per row of a letter or square field (dictionary-encoded as the loader writes it, or
/// plain strings), `none` for a null.
pub(crate) fn codes(
    array: &ArrayRef,
    none: u8,
    code: impl Fn(&str) -> u8,
) -> Result<Vec<u8>, FillError> {
    if let Some(dict) = array.as_any_dictionary_opt() {
        let values = Texts::of(dict.values(), "a move field's dictionary")?;
        if values.len() == 0 {
            return Ok(vec![none; array.len()]);
        }
        let table: Vec<u8> = (0..values.len())
            .map(|i| values.get(i).map_or(none, &code))
            .collect();
        let keys = dict.normalized_keys();
        return Ok((0..array.len())
            .map(|i| {
                if array.is_null(i) {
                    none
                } else {
                    table[keys[i]]
                }
            })
            .collect());
    }
    // One match per column, not per row: plain strings are what DuckDB hands over.
    Ok(match Texts::of(array, "a move field")? {
        Texts::Utf8(a) => a.iter().map(|t| t.map_or(none, &code)).collect(),
        Texts::Large(a) => a.iter().map(|t| t.map_or(none, &code)).collect(),
        Texts::View(a) => a.iter().map(|t| t.map_or(none, &code)).collect(),
        Texts::Null(n) => vec![none; n],
    })
}

/// The `variations` column: the lines of each game.
struct Lines<'a> {
    list: &'a ListArray,
    lines: &'a StructArray,
    id: &'a [i32],
    parent: &'a [i32],
    ply: &'a [i32],
    moves: usize,
}

impl<'a> Lines<'a> {
    fn of(column: &'a ArrayRef) -> Result<Lines<'a>, FillError> {
        let shape = || error("fill_san: `variations` is not a list of lines");
        let list = column.as_list_opt::<i32>().ok_or_else(shape)?;
        let lines = list.values().as_struct_opt().ok_or_else(shape)?;
        let int = |name: &str| {
            lines
                .column_by_name(name)
                .and_then(|c| c.as_primitive_opt::<arrow_array::types::Int32Type>())
                .map(|a| &a.values()[..])
                .ok_or_else(|| {
                    error(format!(
                        "fill_san: the lines of `variations` have no int32 `{name}`"
                    ))
                })
        };
        let moves = lines
            .fields()
            .iter()
            .position(|f| f.name() == "moves")
            .ok_or_else(|| error("fill_san: the lines of `variations` have no `moves`"))?;
        Ok(Lines {
            list,
            lines,
            id: int("id")?,
            parent: int("parent")?,
            ply: int("ply")?,
            moves,
        })
    }

    /// The lines of game `i`.
    fn rows(&self, i: usize) -> Range<usize> {
        if self.list.is_null(i) {
            return 0..0;
        }
        let offsets = self.list.value_offsets();
        offsets[i] as usize..offsets[i + 1] as usize
    }

    /// `(id, parent, ply)` of line `row`.
    fn header(&self, row: usize) -> (i32, i32, i32) {
        (self.id[row], self.parent[row], self.ply[row])
    }

    /// The column with `moves` as its lines' moves.
    fn with_moves(self, moves: ArrayRef) -> ArrayRef {
        let (fields, mut columns, nulls) = self.lines.clone().into_parts();
        columns[self.moves] = moves;
        let values = StructArray::new(fields, columns, nulls);
        let (field, offsets, _, nulls) = self.list.clone().into_parts();
        Arc::new(ListArray::new(field, offsets, Arc::new(values), nulls))
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::StringArray;

    use super::*;
    use crate::columns::GameColumns;
    use crate::derive::derive;
    use crate::parse::GameParser;
    use crate::replay::Replayer;

    /// A batch of lake games, as the loader builds it, from one PGN text per game.
    fn lake(games: &[&str]) -> RecordBatch {
        let mut parser = GameParser::default();
        let mut replayer = Replayer::default();
        let mut columns = GameColumns::with_capacity("test.pgn", games.len(), 64, None);
        for (i, pgn) in games.iter().enumerate() {
            parser
                .parse(&mut replayer, pgn.as_bytes())
                .unwrap_or_else(|e| panic!("game {i}: {}", e.message));
            let row = derive(&replayer.scratch, None);
            columns.append(&replayer.scratch, &row, i as u64, &Default::default());
        }
        columns.finish().expect("a valid batch")
    }

    fn texts(list: &ListArray, i: usize) -> Vec<Option<String>> {
        let value = list.value(i);
        let moves = value.as_struct();
        let san = moves.column_by_name("san").unwrap().as_string::<i32>();
        san.iter().map(|s| s.map(str::to_owned)).collect()
    }

    /// The `san` of game `i`'s mainline.
    fn mainline(batch: &RecordBatch, i: usize) -> Vec<Option<String>> {
        texts(batch.column_by_name("moves").unwrap().as_list(), i)
    }

    /// `(id, parent, ply, san)` of game `i`'s variations.
    fn variations(batch: &RecordBatch, i: usize) -> Vec<(i32, i32, i32, Vec<Option<String>>)> {
        let list = batch.column_by_name("variations").unwrap().as_list::<i32>();
        let value = list.value(i);
        let lines = value.as_struct();
        let int = |name: &str, k: usize| {
            let column = lines.column_by_name(name).unwrap();
            column
                .as_primitive::<arrow_array::types::Int32Type>()
                .value(k)
        };
        let moves = lines.column_by_name("moves").unwrap().as_list::<i32>();
        (0..lines.len())
            .map(|k| {
                (
                    int("id", k),
                    int("parent", k),
                    int("ply", k),
                    texts(moves, k),
                )
            })
            .collect()
    }

    fn all(sans: &[&str]) -> Vec<Option<String>> {
        sans.iter().map(|s| Some((*s).to_owned())).collect()
    }

    fn filled(games: &[&str]) -> RecordBatch {
        fill_san(&lake(games)).expect("a lake batch fills")
    }

    #[test]
    fn fills_variant_games_drops_and_wins() {
        let games = [
            // Crazyhouse: drops, a pawn drop written `P@` as lichess writes it (the source wrote `@f6`).
            "[Variant \"Crazyhouse\"]\n\n1. e4 d5 2. exd5 Qxd5 3. Nc3 Qxd2+ 4. Bxd2 e6 5. @e5 Bb4 \
             6. Q@d8+ *",
            // Atomic: the capture that blows up the black king wins: `#`.
            "[Variant \"Atomic\"]\n\n1. Nf3 a6 2. Ng5 a5 3. Nxf7 1-0",
            // Three-check: the third check wins, `#`.
            "[Variant \"Three-check\"]\n\n1. e4 e5 2. Bc4 Nc6 3. Bxf7+ Kxf7 4. Qh5+ Kf6 5. Qf5# 1-0",
        ];
        let batch = filled(&games);
        assert_eq!(
            mainline(&batch, 0),
            all(&[
                "e4", "d5", "exd5", "Qxd5", "Nc3", "Qxd2+", "Bxd2", "e6", "P@e5", "Bb4", "Q@d8+"
            ])
        );
        assert_eq!(
            mainline(&batch, 1),
            all(&["Nf3", "a6", "Ng5", "a5", "Nxf7"]) // as its source wrote it (below)
        );
        assert_eq!(
            mainline(&batch, 2),
            all(&["e4", "e5", "Bc4", "Nc6", "Bxf7+", "Kxf7", "Qh5+", "Kf6", "Qf5#"])
        );
        // The lake stores the source's SAN only where it is not the position's: `@e5` reads as `P@e5`;
        // a winning move is `#`, which the atomic game's source does not write.
        let lake = lake(&games);
        let stored = |i| texts(lake.column_by_name("moves").unwrap().as_list(), i);
        assert!(stored(0).iter().all(Option::is_none));
        assert_eq!(stored(1)[4].as_deref(), Some("Nxf7"));
        assert!(stored(2).iter().all(Option::is_none));
    }

    #[test]
    fn fills_the_mainline_with_checks_mates_captures_and_disambiguation() {
        let games = [
            "1. e4 d5 2. exd5 Nf6 3. Nf3 Nxd5 4. d3 e5 5. Nbd2 Bb4 6. c3 O-O 7. cxb4 Re8 8. Be2 Nc6 \
             9. O-O Ndxb4 10. Ne4 Bg4 11. Nfg5 f5 12. Qb3+ Kh8 13. Nf7+ Kg8 14. Nfg5+ Kh8 \
             15. Qxb4 Ncd4 *",
            "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0",
        ];
        let lake = lake(&games);
        // Stored: only `Ncd4`, whose disambiguation the position does not need.
        let mut stored = vec![None; 30];
        stored[29] = Some("Ncd4".to_owned());
        assert_eq!(mainline(&lake, 0), stored);
        assert_eq!(mainline(&lake, 1), vec![None; 7]);

        let batch = fill_san(&lake).unwrap();
        let first = [
            "e4", "d5", "exd5", "Nf6", "Nf3", "Nxd5", "d3", "e5", "Nbd2", "Bb4", "c3", "O-O",
            "cxb4", "Re8", "Be2", "Nc6", "O-O", "Ndxb4", "Ne4", "Bg4", "Nfg5", "f5", "Qb3+", "Kh8",
            "Nf7+", "Kg8", "Nfg5+", "Kh8", "Qxb4", "Ncd4",
        ];
        assert_eq!(mainline(&batch, 0), all(&first));
        let second = ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"];
        assert_eq!(mainline(&batch, 1), all(&second));
        assert_eq!(batch.schema(), lake.schema());
    }

    #[test]
    fn keeps_what_the_source_wrote_otherwise() {
        let batch = filled(&["1. e2e4 e5 2. Ngf3 d6 3. Bb5 c6 4. Bc4 Be7 5. Bf7 Kxf7 *"]);
        let sans = [
            "e2e4", "e5", "Ngf3", "d6", "Bb5", "c6", "Bc4", "Be7", "Bf7", "Kxf7",
        ];
        assert_eq!(mainline(&batch, 0), all(&sans));
    }

    #[test]
    fn en_passant_and_promotions() {
        let batch = filled(&[
            "1. e4 Nf6 2. e5 d5 3. exd6 e5 4. d4 e4 5. f4 exf3 *",
            "[FEN \"4k3/P6P/8/8/8/8/1p4p1/R3K3 w Q - 0 1\"]\n\n\
             1. a8=Q+ Kd7 2. h8=N bxa1=R+ 3. Kd2 g1=Q 4. Qb7+ Ke8 *",
        ]);
        let passant = [
            "e4", "Nf6", "e5", "d5", "exd6", "e5", "d4", "e4", "f4", "exf3",
        ];
        assert_eq!(mainline(&batch, 0), all(&passant));
        let promotions = [
            "a8=Q+", "Kd7", "h8=N", "bxa1=R+", "Kd2", "g1=Q", "Qb7+", "Ke8",
        ];
        assert_eq!(mainline(&batch, 1), all(&promotions));
    }

    #[test]
    fn chess960_castling() {
        let chess960 =
            |fen: &str, moves: &str| format!("[Variant \"Chess960\"]\n[FEN \"{fen}\"]\n\n{moves}");
        let batch = filled(&[
            // Queen-side, the king going from b1 to c1 as a king's step would.
            &chess960(
                "rk5r/pppppppp/8/8/8/8/PPPPPPPP/RK5R w AHah - 0 1",
                "1. O-O-O O-O 2. Kb1 Kh8 *",
            ),
            &chess960(
                "rk5r/pppppppp/8/8/8/8/PPPPPPPP/RK5R w AHah - 0 1",
                "1. Kc1 Kc8 2. Kb1 Kb8 *",
            ),
            // King-side with the king already on g1: it does not move.
            &chess960(
                "1r4kr/pppppppp/8/8/8/8/PPPPPPPP/1R4KR w HBhb - 0 1",
                "1. O-O O-O-O 2. Kh1 Kb8 *",
            ),
        ]);
        assert_eq!(mainline(&batch, 0), all(&["O-O-O", "O-O", "Kb1", "Kh8"]));
        assert_eq!(mainline(&batch, 1), all(&["Kc1", "Kc8", "Kb1", "Kb8"]));
        assert_eq!(mainline(&batch, 2), all(&["O-O", "O-O-O", "Kh1", "Kb8"]));
    }

    #[test]
    fn a_fen_start_with_black_to_move() {
        let batch = filled(&[
            "[FEN \"rnbqkbnr/pppp1ppp/8/4p3/3PP3/8/PPP2PPP/RNBQKBNR b KQkq d3 0 2\"]\n\n\
             2... exd4 3. Qxd4 Nc6 4. Qe3 Nf6 5. Nc3 Bb4 6. Bd2 O-O 7. O-O-O Re8 *",
        ]);
        let sans = [
            "exd4", "Qxd4", "Nc6", "Qe3", "Nf6", "Nc3", "Bb4", "Bd2", "O-O", "O-O-O", "Re8",
        ];
        assert_eq!(mainline(&batch, 0), all(&sans));
    }

    #[test]
    fn nested_variations() {
        let games = [
            "1. e4 e5 (1... c5 2. Nf3 (2. c3 d5 3. exd5 Qxd5) 2... d6) (1... e6 2. d4 d5) \
             2. Nf3 Nc6 (2... d6 3. d4 (3. Bc4 Be7) 3... exd4) 3. Bb5 a6 *",
            "1. d4 d5 *",
            "1. e4 (1. d4 d5 2. c4+) 1... e5 *",
        ];
        let lake = lake(&games);
        assert!(variations(&lake, 0)
            .iter()
            .all(|(.., s)| s.iter().all(Option::is_none)));
        let batch = fill_san(&lake).unwrap();
        assert_eq!(
            mainline(&batch, 0),
            all(&["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"])
        );
        assert_eq!(
            variations(&batch, 0),
            vec![
                (1, 0, 1, all(&["c5", "Nf3", "d6"])),
                (2, 1, 1, all(&["c3", "d5", "exd5", "Qxd5"])),
                (3, 0, 1, all(&["e6", "d4", "d5"])),
                (4, 0, 3, all(&["d6", "d4", "exd4"])),
                (5, 4, 1, all(&["Bc4", "Be7"])),
            ]
        );
        assert_eq!(mainline(&batch, 1), all(&["d4", "d5"]));
        assert_eq!(variations(&batch, 1), vec![]);
        // A variation's move as written stays (`c4+` gives no check).
        assert_eq!(
            variations(&batch, 2),
            vec![(1, 0, 0, all(&["d4", "d5", "c4+"]))]
        );
    }

    #[test]
    fn a_sliced_batch_fills_its_own_games_and_keeps_the_rest() {
        let games = [
            "1. e4 e5 (1... c5 2. Nf3) 2. Nf3 *",
            "1. d4 (1. c4 e5) 1... d5 2. c4 *",
            "1. Nf3 d5 (1... Nf6 2. g3) 2. g3 *",
        ];
        let whole = fill_san(&lake(&games)).unwrap();
        let slice = fill_san(&lake(&games).slice(1, 1)).unwrap();
        assert_eq!(slice.num_rows(), 1);
        assert_eq!(mainline(&slice, 0), mainline(&whole, 1));
        assert_eq!(variations(&slice, 0), variations(&whole, 1));
    }

    #[test]
    fn other_columns_are_not_copied() {
        let lake = lake(&["1. e4 e5 *"]);
        let batch = fill_san(&lake).unwrap();
        for name in ["game_id", "headers", "players", "start_fen"] {
            let before = lake.column_by_name(name).unwrap().to_data();
            let after = batch.column_by_name(name).unwrap().to_data();
            assert!(before.ptr_eq(&after), "{name}");
        }
    }

    #[test]
    fn a_move_no_legal_move_matches_names_the_game_and_ply() {
        let lake = lake(&["1. e4 e5 2. Nf3 (2. Nc3 Nf6) *"]);
        let id = lake
            .column_by_name("game_id")
            .unwrap()
            .as_string::<i32>()
            .value(0)
            .to_owned();
        // Another start position: 1. e4 is not legal from it.
        let mut columns = lake.columns().to_vec();
        let at = lake.schema().index_of("start_fen").unwrap();
        columns[at] = Arc::new(StringArray::from(vec![Some(
            "4k3/8/8/8/8/8/8/4K3 w - - 0 1",
        )]));
        let damaged = RecordBatch::try_new(lake.schema(), columns).unwrap();
        let e = fill_san(&damaged).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("game {id}, ply 1 (moves[0]): no legal move goes e2-e4 (a damaged lake?)")
        );
        // An unreadable FEN.
        let mut columns = lake.columns().to_vec();
        columns[at] = Arc::new(StringArray::from(vec![Some("not a fen")]));
        let damaged = RecordBatch::try_new(lake.schema(), columns).unwrap();
        let e = fill_san(&damaged).unwrap_err();
        assert!(
            e.to_string()
                .starts_with(&format!("game {id}: invalid start_fen 'not a fen'")),
            "{e}"
        );
    }

    #[test]
    fn a_batch_without_the_columns_needed_is_refused() {
        let lake = lake(&["1. e4 e5 *"]);
        let fewer = lake.project(&[0, 1]).unwrap();
        let e = fill_san(&fewer).unwrap_err();
        assert_eq!(
            e.to_string(),
            "fill_san: the batch has no `start_fen` column"
        );
    }
}
