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
    let mut packed = 0i64;
    for (nibble, code) in (1..=5).chain(7..=11).enumerate() {
        // A pass of the 64 squares a code, compared a vector at a time: a count per code of one pass
        // (`counts[code] += 1`) is a chain of increments of the same bytes in memory, which cost the
        // load's replay more than the Divider.
        let count: u8 = squares.iter().map(|&c| u8::from(c == code)).sum();
        if count > 15 {
            return None;
        }
        packed |= i64::from(count) << (4 * nibble);
    }
    Some(packed)
}

/// What [`GameMaterial`] holds for a material without a packing: no packing is negative.
const UNPACKED: i64 = -1;

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
    /// The phase of the next position of the game, `squares`, whose squares of each side are `sides`
    /// (white's, black's, as bits) and packed material `material` (read from it when known: a count,
    /// where the board takes a scan of its 64 squares).
    pub fn phase(&mut self, squares: &[u8; 64], sides: [u64; 2], material: Option<i64>) -> Phase {
        let pieces =
            || material.map_or_else(|| majors_and_minors(squares), packed_majors_and_minors);
        if !self.middle {
            self.middle = pieces() <= 10 || backrank_sparse(sides) || mixedness(sides) > 150;
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
    /// After each ply, `UNPACKED` for a material without a packing (null), counted in `unpacked`: the
    /// columns take a game's values as one slice when it has none (nearly every game).
    material: Vec<i64>,
    unpacked: usize,
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
        self.unpacked = 0;
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

    /// Ply `ply` of the game has been played: `squares` is the board after it, `sides` each side's
    /// squares as bits; `took` false when the move took nothing and promoted nothing, so that the
    /// material is the one before it (not counted again).
    pub fn after(&mut self, ply: usize, squares: &[u8; 64], sides: [u64; 2], took: bool) {
        if took {
            self.last = packed(squares);
        }
        self.material.push(self.last.unwrap_or(UNPACKED));
        self.unpacked += usize::from(self.last.is_none());
        let phase = self.divider.phase(squares, sides, self.last);
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
            if game.unpacked == 0 {
                self.material.append_slice(&game.material);
            } else {
                let values = game
                    .material
                    .iter()
                    .map(|&m| Some(m).filter(|&m| m != UNPACKED));
                self.material.extend(values);
            }
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

fn backrank_sparse([white, black]: [u64; 2]) -> bool {
    (white & 0xff).count_ones() < 4 || (black >> 56).count_ones() < 4
}

/// Byte `i` of `SPREAD[b]` is bit `i` of `b`: a rank's squares of a side (a byte of its bits), a byte
/// a file.
const SPREAD: [u64; 256] = {
    let mut spread = [0u64; 256];
    let mut bits = 0;
    while bits < 256 {
        let mut file = 0;
        while file < 8 {
            spread[bits] |= ((bits as u64 >> file) & 1) << (8 * file);
            file += 1;
        }
        bits += 1;
    }
    spread
};

/// `SCORES[y][5 * white + black]`: the mixedness [`score`] of a block at `y` + 1 holding `white` and
/// `black` pieces (0–4 each).
const SCORES: [[u8; 25]; 7] = {
    let mut scores = [[0u8; 25]; 7];
    let mut y = 0;
    while y < 7 {
        let mut index = 0;
        while index < 25 {
            scores[y][index] = score(y as i32 + 1, index as i32 / 5, index as i32 % 5) as u8;
            index += 1;
        }
        y += 1;
    }
    scores
};

/// The Divider's mixedness: over each 2×2 block of squares, a score of how many pieces of each side
/// stand in it and how far up the board (`y`, 1–7, of its lower rank) it is. The load runs it on every
/// ply of every opening, so the blocks are counted a rank pair at a time, a byte a block: each rank's
/// squares spread a byte a file ([`SPREAD`]), two ranks' bytes added (a file's pieces), then each byte
/// and its right neighbour (a block's); each block's score is then read from [`SCORES`].
fn mixedness([white, black]: [u64; 2]) -> i32 {
    let ranks = |side: u64| -> [u64; 8] {
        std::array::from_fn(|rank| SPREAD[usize::from((side >> (8 * rank)) as u8)])
    };
    let (white, black) = (ranks(white), ranks(black));
    let mut total = 0;
    for y in 0..7 {
        // Byte x (0–6): the side's pieces on files x and x + 1 of ranks y and y + 1.
        let blocks = |ranks: &[u64; 8]| {
            let files = ranks[y] + ranks[y + 1];
            files + (files >> 8)
        };
        let index = 5 * blocks(&white) + blocks(&black);
        for x in 0..7 {
            total += i32::from(SCORES[y][usize::from((index >> (8 * x)) as u8)]);
        }
    }
    total
}

const fn score(y: i32, white: i32, black: i32) -> i32 {
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
        let sides = |squares: &[u8; 64]| crate::zobrist::sides(squares);
        assert_eq!(
            divider.phase(&start(), sides(&start()), packed(&start())),
            Phase::Opening
        );
        let mut bare = [0u8; 64];
        bare[4] = 6;
        bare[60] = 12;
        assert_eq!(divider.phase(&bare, sides(&bare), None), Phase::Endgame);
        // The endgame stays once reached.
        assert_eq!(
            divider.phase(&start(), sides(&start()), None),
            Phase::Endgame
        );
    }

    #[test]
    fn a_material_without_packing_is_null_and_the_next_packed_one_kept() {
        use arrow_array::{Array, Int64Array};
        let mut board = [0u8; 64];
        board[4] = 6;
        board[60] = 12;
        board[8..24].fill(4); // sixteen white rooks
        let mut game = GameMaterial::default();
        game.begin([0u8; 3].into_iter());
        game.start(&board);
        let sides = crate::zobrist::sides;
        game.after(0, &board, sides(&board), false);
        board[8] = 0; // fifteen
        game.after(1, &board, sides(&board), true);
        game.after(2, &board, sides(&board), false);
        let mut columns = MaterialColumns::with_capacity(3, 1);
        columns.append(&game, true, 3);
        let ([material, _], _) = columns.finish();
        let material = material.as_any().downcast_ref::<Int64Array>().unwrap();
        let fifteen = packed(&board);
        assert_eq!(fifteen, Some(15 << 12));
        let values: Vec<Option<i64>> = material.iter().collect();
        assert_eq!(values, [None, fifteen, fifteen]);
    }

    /// The mixedness as scalachess counts it: each block's squares one by one.
    fn mixedness_by_squares(squares: &[u8; 64]) -> i32 {
        let mut total = 0;
        for y in 0..7 {
            for x in 0..7 {
                let block = [8 * y + x, 8 * y + x + 1, 8 * y + x + 8, 8 * y + x + 9];
                let codes = block.map(|at| squares[at]);
                let white = codes.iter().filter(|&&c| (1..=6).contains(&c)).count();
                let black = codes.iter().filter(|&&c| c >= 7).count();
                total += score(y as i32 + 1, white as i32, black as i32);
            }
        }
        total
    }

    #[test]
    fn the_mixedness_by_bytes_is_the_one_by_squares() {
        // Boards of 0 to 32 pieces on squares drawn by a fixed linear congruential sequence.
        let mut state = 12345u64;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let mut highest = 0;
        for pieces in (0..=32).cycle().take(2000) {
            let mut squares = [0u8; 64];
            for _ in 0..pieces {
                squares[next(64) as usize] = 1 + next(12) as u8;
            }
            let expected = mixedness_by_squares(&squares);
            assert_eq!(mixedness(crate::zobrist::sides(&squares)), expected);
            highest = highest.max(expected);
        }
        assert!(
            highest > 150,
            "the boards reach past the middlegame's bound"
        );
    }
}
