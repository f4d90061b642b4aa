//! Opening-book counts over the lake's keyed plies, without a join: a `games/` file and its `plies/`
//! twin hold the same games in the same order, each game's plies in a row (`n_plies` of them), so the
//! plies' row numbers in their file say whose they are. For each (position key, move), the counts of
//! the games that played it and one of them (the least `game_key`, its first ply there), replayed at
//! the end for the row's FEN and SAN.
//!
//! A file is fed in two steps: [`BookCounts::start_file`] with its games (all of them, for the row
//! ranges; the attributes of those counted), then [`BookCounts::add_plies`] with its keyed plies in row
//! order, in as many batches as the reader gives; [`BookCounts::finish`] returns the book.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use arrow_array::builder::{
    Float64Builder, Int64Builder, StringBuilder, TimestampMillisecondBuilder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{Chess, EnPassantMode, Position, Role, Square};

use crate::variant::chess_from_fen;
use crate::zobrist::fen_key;

/// Why a book cannot be counted: a batch without the columns it needs, or plies that do not fit their
/// games (a damaged lake).
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct BookError(pub String);

impl fmt::Display for BookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BookError {}

fn error(message: impl Into<String>) -> BookError {
    BookError(message.into())
}

/// A move in 15 bits: from square (bits 0-5), to square (6-11), promotion role (12-14, 0 for none).
type MoveCode = u16;

/// The position keys are Zobrist keys, uniform already: the hash is the key with the move multiplied in.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 ^= n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn write_i64(&mut self, n: i64) {
        self.0 ^= n as u64;
    }

    fn write_u16(&mut self, n: u16) {
        self.write_u64(u64::from(n));
    }
}

/// The counts of one row of the book, a (position key, move).
struct Row {
    white_wins: i64,
    draws: i64,
    black_wins: i64,
    games: i64,
    rated: i64,
    /// The sum over rated games of White's Elo + Black's (twice the sum of their means: exact).
    elo_sums: i64,
    /// The least and greatest date of its games (`i64::MAX`, `i64::MIN` while none has one).
    first_date: i64,
    last_date: i64,
    /// Its index in `BookCounts::samples`, and that sample's `game_key` (here, where every ply compares
    /// with it, rather than in the sample, which changes rarely).
    sample: usize,
    sample_key: i64,
}

/// One game that played a row's move: its moves up to it, replayed by [`BookCounts::finish`].
struct Sample {
    game_key: i64,
    start_fen: Option<Arc<str>>,
    /// The game's moves from ply 0 to the row's, the row's last.
    moves: Box<[MoveCode]>,
}

impl Sample {
    fn of(game: &CountedGame, moves: &[MoveCode]) -> Sample {
        Sample {
            game_key: game.game_key,
            start_fen: game.start_fen.clone(),
            moves: moves.into(),
        }
    }
}

/// A game's result, as the `result` column spells it.
#[derive(Clone, Copy)]
enum Outcome {
    White,
    Draw,
    Black,
    Unknown,
}

/// A game of the file being read whose plies count: what each of its plies adds to its row.
struct CountedGame {
    game_key: i64,
    /// The key of its start position, which its first keyed ply must hold: a check that the plies' row
    /// numbers fit the games' (a plies file missing a row would shift every ply to another game).
    start_key: Option<i64>,
    outcome: Outcome,
    elo_sum: Option<i64>,
    date: Option<i64>,
    start_fen: Option<Arc<str>>,
}

/// The file being read: where each game's plies start, which games count, and where the reading is.
struct FileState {
    /// `starts[g]..starts[g + 1]`: the plies rows of game `g`.
    starts: Vec<i64>,
    /// For each game of the file, its index in `counted`, or `NOT_COUNTED`.
    counted_at: Vec<u32>,
    counted: Vec<CountedGame>,
    game: usize,
    last_row: Option<i64>,
    /// The moves of game `game` read so far (its keyed plies come first, from ply 0, in order).
    moves: Vec<MoveCode>,
}

const NOT_COUNTED: u32 = u32::MAX;

/// The book being counted.
#[derive(Default)]
pub struct BookCounts {
    rows: HashMap<(i64, MoveCode), Row, BuildHasherDefault<KeyHasher>>,
    /// Out of `rows`, which the counting reads and writes for every ply: a sample changes rarely.
    samples: Vec<Sample>,
    file: Option<FileState>,
    standard_key: Option<i64>,
}

const STANDARD_START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

impl BookCounts {
    pub fn new() -> BookCounts {
        BookCounts::default()
    }

    /// Starts a file: `n_plies` of each of its games, in file order; `counted` the games whose plies
    /// count, a batch of `row` (the game's index in the file), `game_key`, `result`, `elo_sum` (White's
    /// Elo + Black's, null unless both known), `date_ms` (milliseconds since 1970, UTC), `start_fen`.
    pub fn start_file(
        &mut self,
        n_plies: &dyn Array,
        counted: &RecordBatch,
    ) -> Result<(), BookError> {
        let n_plies = n_plies
            .as_primitive_opt::<Int32Type>()
            .filter(|a| a.null_count() == 0)
            .ok_or_else(|| error("book: n_plies must be an int32 array without nulls"))?;
        let mut starts = Vec::with_capacity(n_plies.len() + 1);
        starts.push(0i64);
        for &n in n_plies.values() {
            starts.push(starts[starts.len() - 1] + i64::from(n.max(0)));
        }
        let mut counted_at = vec![NOT_COUNTED; n_plies.len()];
        for (at, row) in int64(counted, "row")?.values().iter().enumerate() {
            let slot = usize::try_from(*row)
                .ok()
                .and_then(|r| counted_at.get_mut(r))
                .ok_or_else(|| error(format!("book: game row {row} is not a row of the file")))?;
            *slot = at as u32;
        }
        let (keys, results) = (int64(counted, "game_key")?, texts(counted, "result")?);
        let elo_sums = column(counted, "elo_sum")?
            .as_primitive_opt::<Int32Type>()
            .ok_or_else(|| error("book: elo_sum must be int32"))?;
        let dates = column(counted, "date_ms")?
            .as_primitive_opt::<Int64Type>()
            .ok_or_else(|| error("book: date_ms must be int64"))?;
        let fens = texts(counted, "start_fen")?;
        let standard = *self.standard_key.get_or_insert_with(|| {
            fen_key(STANDARD_START, false).expect("the standard start position has a key")
        });
        let counted = (0..counted.num_rows())
            .map(|i| CountedGame {
                game_key: keys.value(i),
                start_key: match fens.is_valid(i) {
                    true => fen_key(fens.value(i), false).ok(),
                    false => Some(standard),
                },
                outcome: match results.is_valid(i).then(|| results.value(i)) {
                    Some("W") => Outcome::White,
                    Some("D") => Outcome::Draw,
                    Some("B") => Outcome::Black,
                    _ => Outcome::Unknown,
                },
                elo_sum: elo_sums.is_valid(i).then(|| i64::from(elo_sums.value(i))),
                date: dates.is_valid(i).then(|| dates.value(i)),
                start_fen: fens.is_valid(i).then(|| Arc::from(fens.value(i))),
            })
            .collect();
        self.file = Some(FileState {
            starts,
            counted_at,
            counted,
            game: 0,
            last_row: None,
            moves: Vec::new(),
        });
        Ok(())
    }

    /// Counts a batch of the current file's keyed plies (`file_row_number`, `key`, `f`, `t`,
    /// `promote`), in row order.
    pub fn add_plies(&mut self, plies: &RecordBatch) -> Result<(), BookError> {
        let file = self
            .file
            .as_mut()
            .ok_or_else(|| error("book: plies before their file's games"))?;
        let rows = int64(plies, "file_row_number")?.values();
        let keys = column(plies, "key")?
            .as_primitive_opt::<Int64Type>()
            .ok_or_else(|| error("book: key must be int64"))?;
        let (from, to) = (texts(plies, "f")?, texts(plies, "t")?);
        let codes = move_codes(from, to, texts(plies, "promote")?, rows)?;
        let total = file.starts[file.starts.len() - 1];
        for (i, (&row, &code)) in rows.iter().zip(&codes).enumerate() {
            if file.last_row.is_some_and(|last| row <= last) || row >= total {
                return Err(error(format!(
                    "book: plies row {row} out of order or past the file's {total} plies"
                )));
            }
            file.last_row = Some(row);
            // Rows ascend: the game walks forward, over the games without keyed plies too.
            let mut game = file.game;
            while file.starts[game + 1] <= row {
                game += 1;
            }
            if game != file.game {
                file.game = game;
                file.moves.clear();
            }
            let ply = (row - file.starts[game]) as usize;
            if ply != file.moves.len() {
                return Err(error(format!(
                    "book: plies row {row} is keyed ply {ply} of its game, after {} keyed plies",
                    file.moves.len()
                )));
            }
            file.moves.push(code);
            let at = file.counted_at[game];
            if at == NOT_COUNTED || keys.is_null(i) {
                continue;
            }
            let game = &file.counted[at as usize];
            if ply == 0 && game.start_key.is_some_and(|start| start != keys.value(i)) {
                return Err(error(format!(
                    "book: plies row {row}, the first keyed ply of game {}, does not hold its start \
                     position's key: the plies do not fit their games",
                    game.game_key
                )));
            }
            let samples = &mut self.samples;
            let counts = self.rows.entry((keys.value(i), code)).or_insert_with(|| {
                samples.push(Sample::of(game, &file.moves));
                Row {
                    white_wins: 0,
                    draws: 0,
                    black_wins: 0,
                    games: 0,
                    rated: 0,
                    elo_sums: 0,
                    first_date: i64::MAX,
                    last_date: i64::MIN,
                    sample: samples.len() - 1,
                    sample_key: game.game_key,
                }
            });
            counts.games += 1;
            match game.outcome {
                Outcome::White => counts.white_wins += 1,
                Outcome::Draw => counts.draws += 1,
                Outcome::Black => counts.black_wins += 1,
                Outcome::Unknown => {}
            }
            if let Some(sum) = game.elo_sum {
                counts.rated += 1;
                counts.elo_sums += sum;
            }
            if let Some(date) = game.date {
                counts.first_date = counts.first_date.min(date);
                counts.last_date = counts.last_date.max(date);
            }
            if game.game_key < counts.sample_key {
                counts.sample_key = game.game_key;
                samples[counts.sample] = Sample::of(game, &file.moves);
            }
        }
        Ok(())
    }

    /// The book: a row per (key, move) of at least `min_games` games, sorted by key then UCI: `key`,
    /// `fen`, `uci`, `san`, `white_wins`, `draws`, `black_wins`, `games`, `rated`, `mean_rating` (of the
    /// rated games' mean Elos), `first_date`, `last_date`.
    pub fn finish(&self, min_games: i64) -> Result<RecordBatch, BookError> {
        let mut chosen: Vec<(i64, String, &Row)> = self
            .rows
            .iter()
            .filter(|(_, row)| row.games >= min_games)
            .map(|(&(key, code), row)| (key, uci(code), row))
            .collect();
        chosen.sort_unstable_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        let n = chosen.len();
        let mut keys = Int64Builder::with_capacity(n);
        let mut fens = StringBuilder::with_capacity(n, n * 60);
        let mut ucis = StringBuilder::with_capacity(n, n * 4);
        let mut sans = StringBuilder::with_capacity(n, n * 4);
        let mut counts: [Int64Builder; 5] = std::array::from_fn(|_| Int64Builder::with_capacity(n));
        let mut means = Float64Builder::with_capacity(n);
        let mut firsts = TimestampMillisecondBuilder::with_capacity(n).with_timezone("UTC");
        let mut lasts = TimestampMillisecondBuilder::with_capacity(n).with_timezone("UTC");
        for (key, uci, row) in &chosen {
            let (fen, san) = describe(&self.samples[row.sample])?;
            keys.append_value(*key);
            fens.append_value(fen);
            ucis.append_value(uci);
            sans.append_value(san);
            let values = [
                row.white_wins,
                row.draws,
                row.black_wins,
                row.games,
                row.rated,
            ];
            for (builder, value) in counts.iter_mut().zip(values) {
                builder.append_value(value);
            }
            means.append_option(
                (row.rated > 0).then(|| row.elo_sums as f64 / (2 * row.rated) as f64),
            );
            firsts.append_option((row.first_date != i64::MAX).then_some(row.first_date));
            lasts.append_option((row.last_date != i64::MIN).then_some(row.last_date));
        }
        let date = DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()));
        let mut fields = vec![
            Field::new("key", DataType::Int64, false),
            Field::new("fen", DataType::Utf8, false),
            Field::new("uci", DataType::Utf8, false),
            Field::new("san", DataType::Utf8, false),
        ];
        for name in ["white_wins", "draws", "black_wins", "games", "rated"] {
            fields.push(Field::new(name, DataType::Int64, false));
        }
        fields.push(Field::new("mean_rating", DataType::Float64, true));
        fields.push(Field::new("first_date", date.clone(), true));
        fields.push(Field::new("last_date", date, true));
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(keys.finish()),
            Arc::new(fens.finish()),
            Arc::new(ucis.finish()),
            Arc::new(sans.finish()),
        ];
        columns.extend(counts.iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef));
        columns.push(Arc::new(means.finish()));
        columns.push(Arc::new(firsts.finish()));
        columns.push(Arc::new(lasts.finish()));
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
            .map_err(|e| error(e.to_string()))
    }
}

/// The move code of each ply of a batch, from its squares (`e2`, `e4`) and promotion letter (either
/// case; null for none); `rows` name the plies in errors.
fn move_codes(
    from: &StringArray,
    to: &StringArray,
    promote: &StringArray,
    rows: &[i64],
) -> Result<Vec<MoveCode>, BookError> {
    (0..rows.len())
        .map(|i| {
            let role = match promote.is_valid(i) {
                true => promotion_role(promote.value(i)),
                false => Some(0),
            };
            match (square(from, i), square(to, i), role) {
                (Some(f), Some(t), Some(r)) => Ok(f | t << 6 | r << 12),
                _ => Err(error(format!(
                    "book: plies row {}: no move from {:?} to {:?} promoting to {:?}",
                    rows[i],
                    from.is_valid(i).then(|| from.value(i)),
                    to.is_valid(i).then(|| to.value(i)),
                    promote.is_valid(i).then(|| promote.value(i)),
                ))),
            }
        })
        .collect()
}

/// The square of `texts[i]` (`e2`: a file letter and a rank digit), read from the raw bytes: building a
/// `&str` per ply costs a third of the kernel's time.
fn square(texts: &StringArray, i: usize) -> Option<u16> {
    if texts.is_null(i) {
        return None;
    }
    let offsets = texts.value_offsets();
    let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
    match texts.value_data()[start..end] {
        [file @ b'a'..=b'h', rank @ b'1'..=b'8'] => {
            Some(u16::from(file - b'a') | u16::from(rank - b'1') << 3)
        }
        _ => None,
    }
}

/// A promotion letter's role number (either case).
fn promotion_role(letter: &str) -> Option<u16> {
    let mut letters = letter.chars();
    let role = Role::from_char(letters.next()?.to_ascii_lowercase())?;
    letters.next().is_none().then(|| u16::from(role))
}

/// The FEN before a sample's last move, and that move's SAN, by replaying its game from its start.
fn describe(sample: &Sample) -> Result<(String, String), BookError> {
    let mut pos = match &sample.start_fen {
        None => Chess::default(),
        Some(fen) => chess_from_fen(fen.trim(), false).map_err(|e| {
            error(format!(
                "book: game {}: invalid start_fen '{fen}': {e}",
                sample.game_key
            ))
        })?,
    };
    let (last, before) = sample
        .moves
        .split_last()
        .expect("a sample holds its row's move");
    for &code in before {
        let m = legal(&pos, code, sample.game_key)?;
        pos.play_unchecked(m);
    }
    let m = legal(&pos, *last, sample.game_key)?;
    let fen = Fen::from_position(&pos, EnPassantMode::Legal).to_string();
    Ok((fen, SanPlus::from_move(pos, m).to_string()))
}

fn legal(pos: &Chess, code: MoveCode, game_key: i64) -> Result<shakmaty::Move, BookError> {
    let (from, to, promotion) = squares(code);
    UciMove::Normal {
        from,
        to,
        promotion,
    }
    .to_move(pos)
    .map_err(|_| {
        error(format!(
            "book: game {game_key}: {} is not a legal move",
            uci(code)
        ))
    })
}

fn squares(code: MoveCode) -> (Square, Square, Option<Role>) {
    let square = |bits: u16| Square::new(u32::from(bits & 63));
    // Role numbers start at 1 (pawn); 0 is no promotion.
    let role = (code >> 12)
        .checked_sub(1)
        .and_then(|r| Role::ALL.get(usize::from(r)).copied());
    (square(code), square(code >> 6), role)
}

/// A move's UCI (`e2e4`, `e7e8q`), as python-chess writes it (castling as the king's two steps).
fn uci(code: MoveCode) -> String {
    let (from, to, promotion) = squares(code);
    UciMove::Normal {
        from,
        to,
        promotion,
    }
    .to_string()
}

fn column<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a ArrayRef, BookError> {
    batch
        .column_by_name(name)
        .ok_or_else(|| error(format!("book: the batch has no `{name}` column")))
}

fn int64<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a arrow_array::Int64Array, BookError> {
    column(batch, name)?
        .as_primitive_opt::<Int64Type>()
        .filter(|a| a.null_count() == 0)
        .ok_or_else(|| error(format!("book: `{name}` must be int64 without nulls")))
}

fn texts<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a StringArray, BookError> {
    column(batch, name)?
        .as_string_opt::<i32>()
        .ok_or_else(|| error(format!("book: `{name}` must be utf8")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn games(rows: &[i64], results: &[&str]) -> RecordBatch {
        let n = rows.len();
        let columns: Vec<(&str, ArrayRef)> = vec![
            (
                "row",
                Arc::new(arrow_array::Int64Array::from(rows.to_vec())),
            ),
            (
                "game_key",
                Arc::new(arrow_array::Int64Array::from_iter_values(
                    rows.iter().map(|r| 100 - r),
                )),
            ),
            ("result", Arc::new(StringArray::from(results.to_vec()))),
            (
                "elo_sum",
                Arc::new(arrow_array::Int32Array::from(vec![Some(3000); n])),
            ),
            (
                "date_ms",
                Arc::new(arrow_array::Int64Array::from(vec![None; n])),
            ),
            (
                "start_fen",
                Arc::new(StringArray::from(vec![None::<&str>; n])),
            ),
        ];
        RecordBatch::try_from_iter(columns).unwrap()
    }

    /// The keyed plies of games of `moves` (UCI), each game's first `keyed` plies, at their row numbers.
    fn plies(moves: &[&[&str]], keyed: usize) -> RecordBatch {
        let (mut rows, mut keys, mut from, mut to) = (vec![], vec![], vec![], vec![]);
        let mut row = 0;
        for game in moves {
            let mut pos = Chess::default();
            for (ply, uci) in game.iter().enumerate() {
                if ply < keyed {
                    let key = crate::zobrist::fen_key(
                        &Fen::from_position(&pos, EnPassantMode::Legal).to_string(),
                        false,
                    );
                    rows.push(row);
                    keys.push(key.unwrap());
                    from.push(uci[..2].to_string());
                    to.push(uci[2..].to_string());
                }
                let m = UciMove::from_ascii(uci.as_bytes())
                    .unwrap()
                    .to_move(&pos)
                    .unwrap();
                pos.play_unchecked(m);
                row += 1;
            }
        }
        let n = rows.len();
        let columns: Vec<(&str, ArrayRef)> = vec![
            (
                "file_row_number",
                Arc::new(arrow_array::Int64Array::from(rows)),
            ),
            ("key", Arc::new(arrow_array::Int64Array::from(keys))),
            ("f", Arc::new(StringArray::from(from))),
            ("t", Arc::new(StringArray::from(to))),
            (
                "promote",
                Arc::new(StringArray::from(vec![None::<&str>; n])),
            ),
        ];
        RecordBatch::try_from_iter(columns).unwrap()
    }

    const E4_E5: &[&str] = &["e2e4", "e7e5", "g1f3"];
    const E4_C5: &[&str] = &["e2e4", "c7c5"];

    #[test]
    fn counts_each_keyed_ply_under_its_game() {
        let mut book = BookCounts::new();
        let n_plies = arrow_array::Int32Array::from(vec![3, 2]);
        book.start_file(&n_plies, &games(&[0, 1], &["W", "B"]))
            .unwrap();
        book.add_plies(&plies(&[E4_E5, E4_C5], 2)).unwrap();
        let out = book.finish(1).unwrap();
        let column = |name: &str| out.column_by_name(name).unwrap().clone();
        let ucis: Vec<_> = column("uci")
            .as_string::<i32>()
            .iter()
            .map(|u| u.unwrap().to_string())
            .collect();
        let mut sorted = ucis.clone();
        sorted.sort();
        assert_eq!(sorted, ["c7c5", "e2e4", "e7e5"]);
        let at = |uci: &str| ucis.iter().position(|u| u == uci).unwrap();
        let games = column("games");
        let games = games.as_primitive::<Int64Type>();
        assert_eq!(games.value(at("e2e4")), 2);
        assert_eq!(games.value(at("c7c5")), 1);
        let sans = column("san");
        assert_eq!(sans.as_string::<i32>().value(at("c7c5")), "c5");
        let means = column("mean_rating");
        assert_eq!(
            means
                .as_primitive::<arrow_array::types::Float64Type>()
                .value(at("e2e4")),
            1500.0
        );
    }

    #[test]
    fn refuses_plies_that_do_not_fit_their_games() {
        let n_plies = arrow_array::Int32Array::from(vec![3, 2]);
        // A plies file missing its first row: every row number then names the ply after it.
        let full = plies(&[E4_E5, E4_C5], 3);
        let rows = arrow_array::Int64Array::from_iter_values(
            int64(&full, "file_row_number").unwrap().values()[1..]
                .iter()
                .map(|r| r - 1),
        );
        let mut columns = vec![Arc::new(rows) as ArrayRef];
        columns.extend(full.columns()[1..].iter().map(|c| c.slice(1, c.len() - 1)));
        let shifted = RecordBatch::try_new(full.schema(), columns).unwrap();
        let mut book = BookCounts::new();
        book.start_file(&n_plies, &games(&[0, 1], &["W", "B"]))
            .unwrap();
        let error = book.add_plies(&shifted).unwrap_err();
        assert!(error.0.contains("do not fit their games"), "{error}");
        // Rows past the file's plies.
        let mut book = BookCounts::new();
        book.start_file(
            &arrow_array::Int32Array::from(vec![1]),
            &games(&[0], &["D"]),
        )
        .unwrap();
        let error = book.add_plies(&plies(&[E4_E5], 2)).unwrap_err();
        assert!(error.0.contains("past the file's 1 plies"), "{error}");
    }

    #[test]
    fn move_codes_round_trip_through_uci() {
        let texts = |values: &[Option<&str>]| StringArray::from(values.to_vec());
        let from = texts(&[Some("e2"), Some("e7"), Some("a2"), Some("e1")]);
        let to = texts(&[Some("e4"), Some("e8"), Some("a1"), Some("g1")]);
        let promote = texts(&[None, Some("Q"), Some("n"), None]);
        let codes = move_codes(&from, &to, &promote, &[0, 1, 2, 3]).unwrap();
        let ucis: Vec<String> = codes.into_iter().map(uci).collect();
        assert_eq!(ucis, ["e2e4", "e7e8q", "a2a1n", "e1g1"]);
        for (f, t, p) in [
            ("e9", "e4", None),
            ("e2", "e4", Some("x")),
            ("e2", "", None),
        ] {
            let bad = move_codes(&texts(&[Some(f)]), &texts(&[Some(t)]), &texts(&[p]), &[7]);
            assert!(bad.unwrap_err().0.contains("row 7"));
        }
    }
}
