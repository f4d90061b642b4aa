//! The material on the board and the game's phase, read off a replayed board after each move, for the
//! `plies` and `games` columns SQL reads without replaying anything (docs/schema.md).
//!
//! - Material, packed in one integer: each side's count of pawns, knights, bishops, rooks and queens,
//!   four bits each, white's in bits 0–19 (`P N B R Q` from the low end), black's in bits 20–39. Kings
//!   are not counted. A count above 15 (only a hand-written start position can have one) has no
//!   packing: the value is null rather than wrong.
//! - Phase: lichess's Divider (scalachess `Divider.scala`), run over the positions after each move:
//!   the middlegame starts at the first position with at most 10 majors and minors on the board
//!   (both sides, kings and pawns not counted), or a sparse back rank (fewer than 4 of a side's own
//!   pieces on its first rank), or a mixedness above 150; the endgame at the first position from the
//!   middlegame on with at most 6 majors and minors.

use std::sync::Arc;

use arrow_array::builder::{Int32Builder, Int64Builder, Int8Builder, StringBuilder};
use arrow_array::ArrayRef;
use arrow_schema::{DataType, Field};

/// Board codes as [`crate::zobrist`] holds them: `1 + 6 * color + role - 1`, 0 for an empty square.
const KINGS: [u8; 2] = [6, 12];

/// The packed material of a board's squares; `None` when a count does not fit in four bits.
pub fn packed(squares: &[u8; 64]) -> Option<i64> {
    let mut counts = [0u8; 13];
    for &code in squares {
        counts[usize::from(code)] += 1;
    }
    let mut packed = 0i64;
    for (nibble, code) in (1..=5).chain(7..=11).enumerate() {
        let count = counts[code];
        if count > 15 {
            return None;
        }
        packed |= i64::from(count) << (4 * nibble);
    }
    Some(packed)
}

/// The phase of a position: what `plies.phase` holds.
#[derive(Copy, Clone, Debug, Eq, PartialEq, PartialOrd, Ord)]
pub enum Phase {
    Opening = 0,
    Middlegame = 1,
    Endgame = 2,
}

/// The Divider's state through one game: fed each position in turn.
#[derive(Default)]
pub struct Divider {
    middle: bool,
    end: bool,
}

impl Divider {
    /// The phase of the next position of the game, `squares`, whose packed material is `material` (read
    /// from it when known: a count, where the board takes a scan of its 64 squares).
    pub fn phase(&mut self, squares: &[u8; 64], material: Option<i64>) -> Phase {
        let pieces =
            || material.map_or_else(|| majors_and_minors(squares), packed_majors_and_minors);
        if !self.middle {
            self.middle = pieces() <= 10 || backrank_sparse(squares) || mixedness(squares) > 150;
        }
        if self.middle && !self.end {
            self.end = pieces() <= 6;
        }
        match (self.middle, self.end) {
            (_, true) => Phase::Endgame,
            (true, false) => Phase::Middlegame,
            _ => Phase::Opening,
        }
    }
}

/// One game's material and phase, fed position by position by its replay (`crate::plies::Positions`,
/// the one replay of a game read from PGN or from the lake): after each ply its packed material and
/// phase; its first castling of each side (`castle` letter and ply, 0-based as `plies.ply`), the first
/// ply after which the middlegame, the endgame holds, the material after that endgame ply (what endgame
/// the game reaches, without a join with its plies) and after the last move (the start position's for a
/// game without moves).
#[derive(Default)]
pub struct GameMaterial {
    material: Vec<Option<i64>>,
    phase: Vec<i8>,
    divider: Divider,
    castled: [Option<(i32, u8)>; 2],
    phase_ply: [Option<i32>; 2],
    endgame_material: Option<i64>,
    last: Option<i64>,
}

impl GameMaterial {
    /// Starts a game whose moves' `castle` codes (`NONE`, or the letter, upper-case for White's) are
    /// `castles`: castling is read off the moves, in any variant (no board needed).
    pub fn begin(&mut self, castles: impl Iterator<Item = u8>) {
        self.material.clear();
        self.phase.clear();
        self.divider = Divider::default();
        self.castled = [None; 2];
        self.phase_ply = [None; 2];
        self.endgame_material = None;
        self.last = None;
        for (ply, castle) in castles.enumerate() {
            if castle != 0 {
                let side = &mut self.castled[usize::from(castle.is_ascii_lowercase())];
                side.get_or_insert((ply as i32, castle));
            }
        }
    }

    /// The game's start position, `squares`, when it is replayed.
    pub fn start(&mut self, squares: &[u8; 64]) {
        self.last = packed(squares);
    }

    /// Ply `ply` of the game has been played: `squares` is the board after it; `took` false when the
    /// move took nothing and promoted nothing, so that the material is the one before it (not counted
    /// again).
    pub fn after(&mut self, ply: usize, squares: &[u8; 64], took: bool) {
        if took {
            self.last = packed(squares);
        }
        self.material.push(self.last);
        let phase = self.divider.phase(squares, self.last);
        self.phase.push(phase as i8);
        for (at, reached) in [(0, Phase::Middlegame), (1, Phase::Endgame)] {
            if phase >= reached && self.phase_ply[at].is_none() {
                self.phase_ply[at] = Some(ply as i32);
                if reached == Phase::Endgame {
                    self.endgame_material = self.last;
                }
            }
        }
    }
}

/// The names of the per-game columns of [`MaterialColumns`], in order.
pub const GAME_COLUMNS: [&str; 8] = [
    "white_castled",
    "white_castle",
    "black_castled",
    "black_castle",
    "middlegame_ply",
    "endgame_ply",
    "endgame_material",
    "final_material",
];

/// The fields of [`GAME_COLUMNS`].
pub fn game_fields() -> Vec<Field> {
    let types = [
        DataType::Int32,
        DataType::Utf8,
        DataType::Int32,
        DataType::Utf8,
        DataType::Int32,
        DataType::Int32,
        DataType::Int64,
        DataType::Int64,
    ];
    GAME_COLUMNS
        .iter()
        .zip(types)
        .map(|(name, t)| Field::new(*name, t, true))
        .collect()
}

/// The material and phase columns of a batch of games, a [`GameMaterial`] at a time: `plies.material`
/// and `plies.phase` (after each move), and the per-game [`GAME_COLUMNS`].
pub struct MaterialColumns {
    material: Int64Builder,
    phase: Int8Builder,
    castled: [Int32Builder; 2],
    castle: [StringBuilder; 2],
    phase_ply: [Int32Builder; 2],
    endgame_material: Int64Builder,
    final_material: Int64Builder,
}

impl MaterialColumns {
    pub fn with_capacity(plies: usize, games: usize) -> MaterialColumns {
        MaterialColumns {
            material: Int64Builder::with_capacity(plies),
            phase: Int8Builder::with_capacity(plies),
            castled: std::array::from_fn(|_| Int32Builder::with_capacity(games)),
            castle: std::array::from_fn(|_| StringBuilder::with_capacity(games, games)),
            phase_ply: std::array::from_fn(|_| Int32Builder::with_capacity(games)),
            endgame_material: Int64Builder::with_capacity(games),
            final_material: Int64Builder::with_capacity(games),
        }
    }

    /// Appends a game of `plies` plies; `replayed` false for a game of another variant, which has no
    /// material nor phase (nulls), its castling kept.
    pub fn append(&mut self, game: &GameMaterial, replayed: bool, plies: usize) {
        if replayed {
            self.material.extend(game.material.iter().copied());
            self.phase.append_slice(&game.phase);
        } else {
            self.material.append_nulls(plies);
            self.phase.append_nulls(plies);
        }
        for side in 0..2 {
            let castled = game.castled[side];
            self.castled[side].append_option(castled.map(|(ply, _)| ply));
            let letter = castled.map(|(_, c)| [c]);
            let letter = letter.as_ref().and_then(|c| std::str::from_utf8(c).ok());
            self.castle[side].append_option(letter);
            self.phase_ply[side].append_option(game.phase_ply[side]);
        }
        // A game not replayed has no phase nor material: `begin` left them `None`.
        self.endgame_material.append_option(game.endgame_material);
        self.final_material.append_option(game.last);
    }

    /// The per-ply columns (`material`, `phase`), and the per-game [`GAME_COLUMNS`]; the builders start
    /// empty.
    pub fn finish(&mut self) -> ([ArrayRef; 2], Vec<ArrayRef>) {
        let [wc, bc] = &mut self.castled;
        let [wl, bl] = &mut self.castle;
        let [mid, end] = &mut self.phase_ply;
        let games: Vec<ArrayRef> = vec![
            Arc::new(wc.finish()),
            Arc::new(wl.finish()),
            Arc::new(bc.finish()),
            Arc::new(bl.finish()),
            Arc::new(mid.finish()),
            Arc::new(end.finish()),
            Arc::new(self.endgame_material.finish()),
            Arc::new(self.final_material.finish()),
        ];
        let plies: [ArrayRef; 2] = [
            Arc::new(self.material.finish()),
            Arc::new(self.phase.finish()),
        ];
        (plies, games)
    }
}

fn is_white(code: u8) -> bool {
    (1..=6).contains(&code)
}

fn is_black(code: u8) -> bool {
    code >= 7
}

/// The queens, rooks, bishops and knights of both sides in a packed material.
fn packed_majors_and_minors(material: i64) -> usize {
    (1..5)
        .chain(6..10)
        .map(|nibble| ((material >> (4 * nibble)) & 15) as usize)
        .sum()
}

fn majors_and_minors(squares: &[u8; 64]) -> usize {
    let pawn_or_king = |c: u8| c == 1 || c == 7 || KINGS.contains(&c);
    squares
        .iter()
        .filter(|&&c| c != 0 && !pawn_or_king(c))
        .count()
}

fn backrank_sparse(squares: &[u8; 64]) -> bool {
    let white = squares[..8].iter().filter(|&&c| is_white(c)).count();
    let black = squares[56..].iter().filter(|&&c| is_black(c)).count();
    white < 4 || black < 4
}

/// The Divider's mixedness: over each 2×2 block of squares, a score of how many pieces of each side
/// stand in it and how far up the board (`y`, 1–7, of its lower rank) it is. Counted on each side's
/// occupancy as bits (a block is a mask, its pieces a popcount): the load runs it on every ply of every
/// opening, where reading the block's four squares one by one cost more than the rest of the replay.
fn mixedness(squares: &[u8; 64]) -> i32 {
    let (mut white, mut black) = (0u64, 0u64);
    for (square, &code) in squares.iter().enumerate() {
        white |= u64::from(is_white(code)) << square;
        black |= u64::from(is_black(code)) << square;
    }
    let mut total = 0;
    for y in 0..7 {
        for x in 0..7 {
            // The squares (x, y), (x + 1, y), (x, y + 1), (x + 1, y + 1).
            let block = 0x303u64 << (8 * y + x);
            if (white | black) & block != 0 {
                let count = |side: u64| (side & block).count_ones() as i32;
                total += score(y + 1, count(white), count(black));
            }
        }
    }
    total
}

fn score(y: i32, white: i32, black: i32) -> i32 {
    match (white, black) {
        (1, 0) => 1 + (8 - y),
        (2, 0) if y > 2 => 2 + (y - 2),
        (3 | 4, 0) if y > 1 => 3 + (y - 1),
        (0, 1) => 1 + y,
        (1, 1) => 5 + (4 - y).abs(),
        (2, 1) => 4 + (y - 1),
        (3, 1) => 5 + (y - 1),
        (0, 2) if y < 6 => 2 + (6 - y),
        (1, 2) => 4 + (7 - y),
        (2, 2) => 7,
        (0, 3 | 4) if y < 7 => 3 + (7 - y),
        (1, 3) => 5 + (7 - y),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start() -> [u8; 64] {
        let mut squares = [0u8; 64];
        let back = [4, 2, 3, 5, 6, 3, 2, 4];
        for f in 0..8 {
            squares[f] = back[f];
            squares[8 + f] = 1;
            squares[48 + f] = 7;
            squares[56 + f] = back[f] + 6;
        }
        squares
    }

    #[test]
    fn the_start_packs_each_count_in_its_nibble() {
        let m = packed(&start()).unwrap();
        let white = 8 | 2 << 4 | 2 << 8 | 2 << 12 | 1 << 16;
        assert_eq!(m, white | white << 20);
    }

    #[test]
    fn the_packed_count_of_majors_and_minors_is_the_boards() {
        let board = start();
        assert_eq!(packed_majors_and_minors(packed(&board).unwrap()), 14);
        assert_eq!(majors_and_minors(&board), 14);
    }

    #[test]
    fn more_than_fifteen_of_a_kind_has_no_packing() {
        let mut squares = [0u8; 64];
        squares[..16].fill(5);
        assert_eq!(packed(&squares), None);
    }

    #[test]
    fn the_start_is_the_opening_and_bare_kings_the_endgame() {
        let mut divider = Divider::default();
        assert_eq!(divider.phase(&start(), packed(&start())), Phase::Opening);
        let mut bare = [0u8; 64];
        bare[4] = 6;
        bare[60] = 12;
        assert_eq!(divider.phase(&bare, None), Phase::Endgame);
        // The endgame stays once reached.
        assert_eq!(divider.phase(&start(), None), Phase::Endgame);
    }
}
