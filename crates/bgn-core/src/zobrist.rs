//! PolyGlot Zobrist keys of every position of lake games, rebuilt from the stored squares.
//!
//! Every ply of the lake names its piece, its squares, its castling side and its promotion, so the
//! positions need no move generation: a 64-square board and the key are updated by XOR per ply. The
//! key is PolyGlot's (shakmaty's `Zobrist64` tables, the ones `chess.polyglot.zobrist_hash` uses), so
//! books interoperate:
//! - castling: one key per right, `K`/`Q` by the side of the king its rook stands on (Chess960 too);
//!   a right goes when the king moves, or when a move leaves from or lands on its rook's square;
//! - en passant: the file of a double step is hashed only when a pawn of the side to move stands beside
//!   the pawn that made it, legal capture or not (PolyGlot's rule, python-chess's).
//!
//! Only `variant` `Standard` and `Chess960` games are keyed; the others get nulls.

use std::fmt;
use std::ops::Range;
use std::sync::OnceLock;

use arrow_array::builder::{ArrayBuilder, Int32Builder, Int64Builder};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, ListArray, RecordBatch};
use shakmaty::zobrist::{Zobrist64, ZobristValue};
use shakmaty::{
    CastlingSide, Chess, Color, EnPassantMode, File, Move, Piece, Position, Role, Square,
};

use crate::fen::chess_fen_fields;
use crate::san::{codes, Texts};
use crate::variant::chess_from_fen;

/// Why a batch cannot be keyed: missing columns, or a move its position does not allow (a damaged lake).
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct KeyError(pub String);

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for KeyError {}

fn error(message: impl Into<String>) -> KeyError {
    KeyError(message.into())
}

/// PolyGlot's keys, indexed as the board holds pieces (`1 + 6 * color + role - 1`, 0 for none).
struct Tables {
    piece: [[u64; 64]; 13],
    castle: [[u64; 2]; 2], // [white, black][king side, queen side]
    ep_file: [u64; 8],
    white_turn: u64,
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let mut piece = [[0; 64]; 13];
        for code in 1..13u8 {
            let p = piece_of(code);
            for sq in 0..64u32 {
                piece[code as usize][sq as usize] =
                    Zobrist64::zobrist_for_piece(Square::new(sq), p).0;
            }
        }
        let right = |c, s| Zobrist64::zobrist_for_castling_right(c, s).0;
        Tables {
            piece,
            castle: [
                [
                    right(Color::White, CastlingSide::KingSide),
                    right(Color::White, CastlingSide::QueenSide),
                ],
                [
                    right(Color::Black, CastlingSide::KingSide),
                    right(Color::Black, CastlingSide::QueenSide),
                ],
            ],
            ep_file: std::array::from_fn(|f| {
                Zobrist64::zobrist_for_en_passant_file(File::new(f as u32)).0
            }),
            white_turn: Zobrist64::zobrist_for_white_turn().0,
        }
    })
}

pub(crate) const NONE: u8 = 0;
pub(crate) const NO_SQUARE: u8 = u8::MAX;

fn code_of(p: Piece) -> u8 {
    1 + 6 * u8::from(p.color == Color::Black) + (p.role as u8 - 1)
}

/// The role of a piece's board code.
pub(crate) fn role_of(code: u8) -> Role {
    piece_of(code).role
}

fn piece_of(code: u8) -> Piece {
    let color = if code > 6 { Color::Black } else { Color::White };
    let role = Role::ALL[usize::from((code - 1) % 6)];
    Piece { color, role }
}

/// The board code of each piece letter (`P`…`k`), `NONE` for any other byte.
const LETTER_CODES: [u8; 256] = {
    let mut codes = [NONE; 256];
    let letters = *b"PNBRQKpnbrqk";
    let mut i = 0;
    while i < 12 {
        codes[letters[i] as usize] = i as u8 + 1;
        i += 1;
    }
    codes
};

pub(crate) fn letter_code(letter: u8) -> u8 {
    LETTER_CODES[usize::from(letter)]
}

/// A one-byte field's byte (`castle`'s `K`/`Q`), `NONE` otherwise.
fn letter(s: &str) -> u8 {
    match s.as_bytes() {
        &[b] => b,
        _ => NONE,
    }
}

/// The board code of a piece letter as the lake writes it (`p`, `promote`), `NONE` otherwise.
pub(crate) fn piece_code(s: &str) -> u8 {
    letter_code(letter(s))
}

/// The index (a1 = 0, h8 = 63) of a square as the lake writes it (`f`, `t`), `NO_SQUARE` otherwise.
pub(crate) fn square_code(s: &str) -> u8 {
    match s.as_bytes() {
        &[f @ b'a'..=b'h', r @ b'1'..=b'8'] => (r - b'1') * 8 + (f - b'a'),
        _ => NO_SQUARE,
    }
}

const WHITE_PAWN: u8 = 1;
const BLACK_PAWN: u8 = 7;

/// One position, with its key kept up to date.
#[derive(Clone)]
pub(crate) struct Board {
    squares: [u8; 64],
    /// Each side's squares as bits (white's, black's; a1 = bit 0), kept with `squares`: the Divider
    /// (`crate::material`) reads the board's occupancy on every ply of every opening.
    sides: [u64; 2],
    white: bool,
    /// Rook squares of the castling rights: [white, black][king side, queen side].
    rooks: [[u8; 2]; 2],
    /// The square a double step passed over, for one ply.
    ep: u8,
    pub(crate) key: u64,
    /// The last move played took a piece (en passant included) or promoted: the material changed.
    pub(crate) took: bool,
}

/// The squares of each side (white's, black's) of a board's `squares`, as bits.
pub(crate) fn sides(squares: &[u8; 64]) -> [u64; 2] {
    let mut sides = [0u64; 2];
    for (at, &code) in squares.iter().enumerate() {
        if code != NONE {
            sides[usize::from(code > 6)] |= 1 << at;
        }
    }
    sides
}

/// A [`Board`] in [`PACKED`] bytes: the squares' codes two to a byte, the side to move, the castling
/// rooks' squares and the en-passant square (its key is kept beside it).
pub(crate) type Packed = [u8; PACKED];
pub(crate) const PACKED: usize = 38;

impl Board {
    pub(crate) fn new(pos: &Chess) -> Board {
        let t = tables();
        let mut squares = [NONE; 64];
        let mut key = 0;
        for (sq, p) in pos.board().clone() {
            squares[sq as usize] = code_of(p);
            key ^= t.piece[code_of(p) as usize][sq as usize];
        }
        let rook = |c, s| pos.castles().rook(c, s).map_or(NO_SQUARE, |sq| sq as u8);
        let mut board = Board {
            squares,
            sides: sides(&squares),
            white: pos.turn() == Color::White,
            rooks: [
                [
                    rook(Color::White, CastlingSide::KingSide),
                    rook(Color::White, CastlingSide::QueenSide),
                ],
                [
                    rook(Color::Black, CastlingSide::KingSide),
                    rook(Color::Black, CastlingSide::QueenSide),
                ],
            ],
            ep: pos
                .ep_square(EnPassantMode::Always)
                .map_or(NO_SQUARE, |sq| sq as u8),
            key,
            took: false,
        };
        if board.white {
            board.key ^= t.white_turn;
        }
        board.key ^= board.state_key();
        board
    }

    /// The part of the key that castling rights and the en-passant file give.
    fn state_key(&self) -> u64 {
        let t = tables();
        let mut key = 0;
        for color in 0..2 {
            for side in 0..2 {
                if self.rooks[color][side] != NO_SQUARE {
                    key ^= t.castle[color][side];
                }
            }
        }
        if self.ep != NO_SQUARE {
            // The pawn that stepped stands one rank past `ep`, seen from the side to move.
            let pawn_rank = if self.white { 4 } else { 3 };
            let file = self.ep % 8;
            let pawn = if self.white { WHITE_PAWN } else { BLACK_PAWN };
            let beside = [file.wrapping_sub(1), file + 1]
                .into_iter()
                .filter(|&f| f < 8)
                .any(|f| self.squares[usize::from(pawn_rank * 8 + f)] == pawn);
            if beside {
                key ^= t.ep_file[usize::from(file)];
            }
        }
        key
    }

    fn toggle(&mut self, code: u8, sq: u8) {
        let at = usize::from(sq);
        self.squares[at] ^= code; // only ever between NONE and `code`
        self.sides[usize::from(code > 6)] ^= 1 << at;
        self.key ^= tables().piece[usize::from(code)][at];
    }

    /// The board's squares (a1 = 0, h8 = 63) as piece codes, `NONE` where empty.
    pub(crate) fn squares(&self) -> &[u8; 64] {
        &self.squares
    }

    /// Each side's squares as bits: white's, black's (a1 = bit 0).
    pub(crate) fn sides(&self) -> [u64; 2] {
        self.sides
    }

    pub(crate) fn pack(&self) -> Packed {
        let mut packed = [0; PACKED];
        for (i, pair) in self.squares.chunks_exact(2).enumerate() {
            packed[i] = pair[0] | pair[1] << 4;
        }
        packed[32] = u8::from(self.white);
        packed[33..37].copy_from_slice(&[
            self.rooks[0][0],
            self.rooks[0][1],
            self.rooks[1][0],
            self.rooks[1][1],
        ]);
        packed[37] = self.ep;
        packed
    }

    pub(crate) fn unpack(packed: &Packed, key: u64) -> Board {
        let mut squares = [NONE; 64];
        for (i, &byte) in packed[..32].iter().enumerate() {
            squares[2 * i] = byte & 15;
            squares[2 * i + 1] = byte >> 4;
        }
        Board {
            squares,
            sides: sides(&squares),
            white: packed[32] != 0,
            rooks: [[packed[33], packed[34]], [packed[35], packed[36]]],
            ep: packed[37],
            key,
            took: false,
        }
    }

    /// Plays a move of standard chess given by its squares and promotion, as UCI gives it: the piece is the one on `from`, and a king's two-square step castles.
    pub(crate) fn play_squares(
        &mut self,
        from: u8,
        to: u8,
        promotion: Option<Role>,
    ) -> Result<(), String> {
        let color = if self.white {
            Color::White
        } else {
            Color::Black
        };
        let promote = promotion.map_or(NONE, |role| code_of(Piece { color, role }));
        let piece = match self.squares.get(usize::from(from)) {
            Some(&code) if code != NONE && piece_of(code).color == color => code,
            _ => return Err(format!("no piece of the side to move on square {from}")),
        };
        let castle = match piece_of(piece).role == Role::King && from.abs_diff(to) == 2 {
            true if to > from => b'K',
            true => b'Q',
            false => NONE,
        };
        self.play(piece, from, to, promote, castle)
    }

    /// The position's FEN (standard chess: castling rights as `KQkq`; the en-passant square after any
    /// double step; counters `0 1`), for shakmaty to read.
    pub(crate) fn fen(&self) -> String {
        let mut fen = String::with_capacity(90);
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                match self.squares[rank * 8 + file] {
                    NONE => empty += 1,
                    code => {
                        if empty > 0 {
                            fen.push(char::from(b'0' + empty));
                            empty = 0;
                        }
                        fen.push(piece_of(code).char());
                    }
                }
            }
            if empty > 0 {
                fen.push(char::from(b'0' + empty));
            }
            fen.push(if rank > 0 { '/' } else { ' ' });
        }
        fen.push(if self.white { 'w' } else { 'b' });
        fen.push(' ');
        let rights: String = [(0, 0, 'K'), (0, 1, 'Q'), (1, 0, 'k'), (1, 1, 'q')]
            .into_iter()
            .filter(|&(color, side, _)| self.rooks[color][side] != NO_SQUARE)
            .map(|(_, _, letter)| letter)
            .collect();
        fen.push_str(if rights.is_empty() { "-" } else { &rights });
        fen.push(' ');
        match self.ep {
            NO_SQUARE => fen.push('-'),
            sq => {
                fen.push(char::from(b'a' + sq % 8));
                fen.push(char::from(b'1' + sq / 8));
            }
        }
        fen.push_str(" 0 1");
        fen
    }

    /// Plays one ply as the lake describes it; `Err` says why it does not fit the position.
    fn play(&mut self, piece: u8, from: u8, to: u8, promote: u8, castle: u8) -> Result<(), String> {
        if from == NO_SQUARE || to == NO_SQUARE || piece == NONE {
            return Err("a move without its piece or squares".to_owned());
        }
        if self.squares[usize::from(from)] != piece {
            return Err(format!("no {} on square {from}", piece_of(piece).char()));
        }
        let color = usize::from(!self.white);
        self.key ^= self.state_key();
        self.ep = NO_SQUARE;
        self.took = promote != NONE;
        if castle != NONE {
            let side = usize::from(castle.eq_ignore_ascii_case(&b'Q'));
            let rook = self.rooks[color][side];
            if rook == NO_SQUARE {
                return Err("castling without the right".to_owned());
            }
            let rank = from - from % 8;
            let rook_to = rank + if side == 0 { 5 } else { 3 };
            let rook_code = self.squares[usize::from(rook)];
            self.toggle(piece, from);
            self.toggle(rook_code, rook);
            if self.squares[usize::from(to)] != NONE || self.squares[usize::from(rook_to)] != NONE {
                return Err("castling onto an occupied square".to_owned());
            }
            self.toggle(piece, to);
            self.toggle(rook_code, rook_to);
        } else {
            let captured = self.squares[usize::from(to)];
            let pawn = piece_of(piece).role == Role::Pawn;
            if captured != NONE {
                if piece_of(captured).color == piece_of(piece).color {
                    return Err("a capture of one's own piece".to_owned());
                }
                self.toggle(captured, to);
                self.took = true;
            } else if pawn && from % 8 != to % 8 {
                let taken = from - from % 8 + to % 8; // en passant: beside the pawn's from-square
                let code = self.squares[usize::from(taken)];
                if code == NONE {
                    return Err("an en-passant capture of nothing".to_owned());
                }
                self.toggle(code, taken);
                self.took = true;
            }
            self.toggle(piece, from);
            let lands = if promote == NONE { piece } else { promote };
            self.toggle(lands, to);
            if pawn && from.abs_diff(to) == 16 {
                self.ep = (from + to) / 2;
            }
        }
        if piece_of(piece).role == Role::King {
            self.rooks[color] = [NO_SQUARE; 2];
        }
        for rights in &mut self.rooks {
            for rook in rights {
                if *rook == from || *rook == to {
                    *rook = NO_SQUARE;
                }
            }
        }
        self.white = !self.white;
        self.key ^= tables().white_turn;
        self.key ^= self.state_key();
        Ok(())
    }
}

/// The fields of a `list<move>` column that positions need, one code per move.
struct Moves<'a> {
    list: &'a ListArray,
    /// The first move of the batch among the list's values: a sliced batch (a run of a reader
    /// thread's batch) reads only its own moves.
    base: usize,
    piece: Vec<u8>,
    from: Vec<u8>,
    to: Vec<u8>,
    promote: Vec<u8>,
    castle: Vec<u8>,
}

impl<'a> Moves<'a> {
    fn of(column: &'a ArrayRef) -> Result<Moves<'a>, KeyError> {
        let list = column
            .as_list_opt::<i32>()
            .ok_or_else(|| error("`moves` is not a list of moves"))?;
        let offsets = list.value_offsets();
        let base = offsets[0] as usize;
        let values = list
            .values()
            .slice(base, offsets[list.len()] as usize - base);
        let moves = values
            .as_struct_opt()
            .ok_or_else(|| error("`moves` is not a list of moves"))?;
        let field = |name: &str| {
            moves
                .column_by_name(name)
                .ok_or_else(|| error(format!("the moves have no `{name}`")))
        };
        let fail = |e: crate::san::FillError| error(e.0);
        Ok(Moves {
            list,
            base,
            piece: codes(field("p")?, NONE, piece_code).map_err(fail)?,
            from: codes(field("f")?, NO_SQUARE, square_code).map_err(fail)?,
            to: codes(field("t")?, NO_SQUARE, square_code).map_err(fail)?,
            promote: codes(field("promote")?, NONE, piece_code).map_err(fail)?,
            castle: codes(field("castle")?, NONE, letter).map_err(fail)?,
        })
    }

    fn rows(&self, game: usize) -> Range<usize> {
        if self.list.is_null(game) {
            return 0..0;
        }
        let offsets = self.list.value_offsets();
        offsets[game] as usize - self.base..offsets[game + 1] as usize - self.base
    }
}

/// The games of a batch, position by position.
pub(crate) struct Games<'a> {
    moves: Moves<'a>,
    fens: Texts<'a>,
    variants: Texts<'a>,
    ids: Option<Texts<'a>>,
}

impl<'a> Games<'a> {
    pub(crate) fn of(games: &'a RecordBatch) -> Result<Games<'a>, KeyError> {
        let column = |name: &str| {
            games
                .column_by_name(name)
                .ok_or_else(|| error(format!("the batch has no `{name}` column")))
        };
        let texts = |name: &str| Texts::of(column(name)?, name).map_err(|e| error(e.0));
        Ok(Games {
            moves: Moves::of(column("moves")?)?,
            fens: texts("start_fen")?,
            variants: texts("variant")?,
            ids: games
                .column_by_name("game_id")
                .map(|c| Texts::of(c, "game_id").map_err(|e| error(e.0)))
                .transpose()?,
        })
    }

    /// The mainline moves of game `game`.
    pub(crate) fn plies(&self, game: usize) -> usize {
        self.moves.rows(game).len()
    }

    /// The `castle` code of each mainline move of game `game` (`NONE` for a move that does not castle).
    pub(crate) fn castles(&self, game: usize) -> &[u8] {
        &self.moves.castle[self.moves.rows(game)]
    }

    /// Replays game `game`, calling `visit(ply index, board before that ply)` for each ply, then
    /// `visit(n_plies, final board)`; `visit` returns false to stop. `Ok(false)` for a game of another
    /// variant, which has no keys.
    pub(crate) fn replay(
        &self,
        game: usize,
        visit: impl FnMut(usize, &Board) -> bool,
    ) -> Result<bool, KeyError> {
        let m = &self.moves;
        let name = || {
            let id = self.ids.as_ref().and_then(|t| t.get(game));
            id.map_or_else(|| format!("game {game}"), |id| format!("game {id}"))
        };
        let moves = m.rows(game).map(|row| MoveCodes {
            piece: m.piece[row],
            from: m.from[row],
            to: m.to[row],
            promote: m.promote[row],
            castle: m.castle[row],
        });
        replay_keys(self.fens.get(game), self.variants.get(game), moves, visit).map_err(|e| match e
        {
            ReplayError::Start(fen, why) => {
                error(format!("{}: invalid start_fen '{fen}': {why}", name()))
            }
            ReplayError::Ply(ply, why) => error(format!("{}, ply {}: {why}", name(), ply + 1)),
        })
    }
}

/// A ply as the key replay reads it: board codes (`piece_code`, `square_code`; `castle` its letter).
#[derive(Copy, Clone, Debug)]
pub(crate) struct MoveCodes {
    pub(crate) piece: u8,
    pub(crate) from: u8,
    pub(crate) to: u8,
    pub(crate) promote: u8,
    pub(crate) castle: u8,
}

/// Why a game's key replay stopped: its start FEN, or its ply (0-based) that does not fit.
#[derive(Debug)]
pub(crate) enum ReplayError {
    Start(String, String),
    Ply(usize, String),
}

/// The board a game of `variant` (`None`: Standard) starts from, `start_fen` or the standard start;
/// `Ok(None)` for a variant without keys (only Standard and Chess960 have them).
fn start_board(
    start_fen: Option<&str>,
    variant: Option<&str>,
) -> Result<Option<Board>, ReplayError> {
    let chess960 = match variant {
        Some("Standard") | None => false,
        Some("Chess960") => true,
        Some(_) => return Ok(None),
    };
    match start_fen {
        None => {
            static START: OnceLock<Board> = OnceLock::new();
            Ok(Some(
                START.get_or_init(|| Board::new(&Chess::default())).clone(),
            ))
        }
        Some(fen) => chess_from_fen(fen.trim(), chess960)
            .map(|pos| Some(Board::new(&pos)))
            .map_err(|e| ReplayError::Start(fen.to_owned(), e.to_string())),
    }
}

/// The one key replay of a game, whether read from PGN or from the lake: calls `visit(ply index, board
/// before that ply)` for each of `moves`, then `visit(n_plies, final board)`; `visit` returns false to
/// stop. `Ok(false)` for a game of a variant without keys.
pub(crate) fn replay_keys(
    start_fen: Option<&str>,
    variant: Option<&str>,
    moves: impl Iterator<Item = MoveCodes>,
    mut visit: impl FnMut(usize, &Board) -> bool,
) -> Result<bool, ReplayError> {
    let Some(mut board) = start_board(start_fen, variant)? else {
        return Ok(false);
    };
    let mut n = 0;
    for (ply, m) in moves.enumerate() {
        if !visit(ply, &board) {
            return Ok(true);
        }
        board
            .play(m.piece, m.from, m.to, m.promote, m.castle)
            .map_err(|why| ReplayError::Ply(ply, why))?;
        n = ply + 1;
    }
    visit(n, &board);
    Ok(true)
}

/// The keys of a batch of games: `plies` holds, for each move of `moves` (the list values from the
/// first game's first move to the last game's last, as `pyarrow`'s `ListArray.flatten` gives them),
/// the key of the position before it, for the first `keyed_plies` plies of each game (null after, and
/// for games of other variants); `finals` the key of each game's final position.
pub struct Keys {
    pub plies: Int64Array,
    pub finals: Int64Array,
}

/// The keys of `games` (a batch holding `moves`, `start_fen`, `variant`; `game_id` for messages), as
/// signed 64-bit integers (PolyGlot's unsigned keys, same bits).
pub fn position_keys(games: &RecordBatch, keyed_plies: usize) -> Result<Keys, KeyError> {
    let g = Games::of(games)?;
    let n = games.num_rows();
    let offsets = g.moves.list.value_offsets();
    let span = offsets[n] as usize - offsets[0] as usize;
    let mut plies = Int64Builder::with_capacity(span);
    let mut finals = Int64Builder::with_capacity(n);
    for game in 0..n {
        // Moves of a null list between games: none in a lake, but keep the alignment.
        let start = offsets[game] as usize - offsets[0] as usize;
        plies.append_nulls(start - plies.len());
        let rows = g.moves.rows(game).len();
        let mut last = 0;
        let keyed = g.replay(game, |ply, board| {
            let key = board.key;
            if ply < rows {
                plies.append_option((ply < keyed_plies).then_some(key as i64));
            } else {
                last = key;
            }
            true
        })?;
        if keyed {
            finals.append_value(last as i64);
        } else {
            plies.append_nulls(rows);
            finals.append_null();
        }
    }
    plies.append_nulls(span - plies.len());
    Ok(Keys {
        plies: plies.finish(),
        finals: finals.finish(),
    })
}

/// For each game of `games`, the first ply from `from_ply` on whose position (before the move; the
/// final position is ply `n_plies`) has key `key`; null when none has, and for other variants.
pub fn find_position(
    games: &RecordBatch,
    key: i64,
    from_ply: usize,
) -> Result<Int32Array, KeyError> {
    let g = Games::of(games)?;
    let mut found = Int32Builder::with_capacity(games.num_rows());
    for game in 0..games.num_rows() {
        let mut at = None;
        g.replay(game, |ply, board| {
            if ply >= from_ply && board.key as i64 == key {
                at = Some(ply as i32);
            }
            at.is_none()
        })?;
        found.append_option(at);
    }
    Ok(found.finish())
}

/// The PolyGlot key (signed) of the position of a FEN a user gives, read by python-chess's rules (see
/// `fen`); `chess960` reads its castling rights as Chess960's. `Err`, in one line (the FEN quoted with
/// its control characters escaped), for a FEN that is no legal position.
pub fn fen_key(fen: &str, chess960: bool) -> Result<i64, KeyError> {
    let invalid = |e: String| error(format!("invalid FEN {fen:?}: {e}"));
    let fields = chess_fen_fields(fen).map_err(invalid)?;
    Ok(position_key(
        &chess_from_fen(&fields, chess960).map_err(invalid)?,
    ))
}

/// The PolyGlot key (signed) of a position.
pub fn position_key(pos: &Chess) -> i64 {
    Board::new(pos).key as i64
}

/// Each legal move of `pos` with the key (signed) of the position it reaches, updated by XOR from
/// `pos`'s: no position is played.
pub fn moves_with_keys(pos: &Chess) -> Vec<(i64, Move)> {
    let board = Board::new(pos);
    pos.legal_moves()
        .into_iter()
        .map(|m| (played(&board, pos.turn(), &m).key as i64, m))
        .collect()
}

/// `board` after legal move `m` of the side `color` to move.
fn played(board: &Board, color: Color, m: &Move) -> Board {
    let code = |role| code_of(Piece { color, role });
    let (to, castle) = match m.castling_side() {
        Some(side) => (
            side.king_to(color),
            if side.is_queen_side() { b'Q' } else { b'K' },
        ),
        None => (m.to(), NONE),
    };
    let from = m.from().expect("a legal move of chess starts on a square");
    let promote = m.promotion().map_or(NONE, code);
    let mut next = board.clone();
    next.play(code(m.role()), from as u8, to as u8, promote, castle)
        .expect("a legal move plays on the board of its position");
    next
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::CastlingMode;

    fn key_of(fen: &str) -> u64 {
        let pos: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        Board::new(&pos).key
    }

    /// Castling both ways, en passant (a pawn beside, and a capture), promotions and captures of rooks
    /// that take away castling rights.
    const TRICKY: [&str; 5] = [
        "r3k2r/pppq1ppp/2n2n2/3pp3/1b1PP3/2N2N2/PPPQ1PPP/R3K2R w KQkq - 0 8",
        "rnbqkbnr/ppp2ppp/8/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3",
        "r3k2r/1P4P1/8/8/8/8/1p4p1/R3K2R w KQkq - 0 1",
        "r3k2r/1P4P1/8/8/8/8/1p4p1/R3K2R b KQkq - 0 1",
        "4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1",
    ];

    fn chess(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    #[test]
    fn moves_with_keys_are_the_keys_of_the_positions_played() {
        for fen in TRICKY {
            let pos = chess(fen);
            let moves = moves_with_keys(&pos);
            assert_eq!(moves.len(), pos.legal_moves().len());
            for (key, m) in moves {
                let mut next = pos.clone();
                next.play_unchecked(m);
                assert_eq!(key, position_key(&next), "{fen} {m}");
            }
        }
    }

    #[test]
    fn moves_keep_each_sides_squares_as_the_position_played() {
        for fen in TRICKY {
            let pos = chess(fen);
            let board = Board::new(&pos);
            for m in pos.legal_moves() {
                let mut next = pos.clone();
                next.play_unchecked(m);
                let expected = [Color::White, Color::Black].map(|c| next.board().by_color(c).0);
                assert_eq!(
                    played(&board, pos.turn(), &m).sides(),
                    expected,
                    "{fen} {m}"
                );
            }
        }
    }

    #[test]
    fn start_and_polyglot_reference_keys() {
        // PolyGlot's published examples (book_format.html), as shakmaty's tests hold them.
        assert_eq!(
            key_of("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
            0x463b_9618_1691_fc9c
        );
        assert_eq!(
            key_of("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"),
            0x22a4_8b5a_8e47_ff78
        );
    }

    #[test]
    fn moves_update_the_key_as_the_reference_positions_say() {
        let mut board = Board::new(&Chess::default());
        let p = |c| letter_code(c);
        let sq = |s: &str| (s.as_bytes()[1] - b'1') * 8 + (s.as_bytes()[0] - b'a');
        let plays = [
            (b'P', "e2", "e4", 0x823c_9b50_fd11_4196u64),
            (b'p', "d7", "d5", 0x0756_b944_61c5_0fb0),
            (b'P', "e4", "e5", 0x662f_afb9_65db_29d4),
            (b'p', "f7", "f5", 0x22a4_8b5a_8e47_ff78),
            (b'K', "e1", "e2", 0x652a_607c_a3f2_42c1),
            (b'k', "e8", "f7", 0x00fd_d303_c946_bdd9),
        ];
        for (piece, from, to, key) in plays {
            board.play(p(piece), sq(from), sq(to), NONE, NONE).unwrap();
            assert_eq!(board.key, key, "after {from}{to}");
        }
    }
}
