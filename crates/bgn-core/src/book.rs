//! Opening-book counts over the lake's stored position keys, without a join and without reading the
//! moves: two consecutive keys of a game name the move between them, so a book row is a pair of keys
//! (the position, the one its move reaches), counted with the game's result, Elos and date. Only the
//! rows kept are named (FEN, UCI, SAN), at the end, by following one game's keys from its start: the
//! legal move whose position has the next key (`Namer`).
//!
//! The plies come without their games: a `games/` file and its `plies/` twin hold the same games in the
//! same order, each game's plies in a row (`n_plies` of them), so a ply's row in its file says whose it
//! is. Each file is fed in two steps: [`BookCounts::start_file`] with all its games in order (which
//! count, their results, Elos…), then [`BookCounts::add_keys`] with its plies' `key` column in row
//! order, in as many batches as the reader gives; [`BookCounts::finish`] returns the book.
//!
//! A book of depth `d` counts the moves of the first `d` plies of each game: the key before ply `d` must
//! be stored (the keys stored run one ply deeper than the book), or the move be the game's last, whose
//! position is the game's `final_key`.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use arrow_array::builder::{
    Float64Builder, Int64Builder, StringBuilder, TimestampMillisecondBuilder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position};

use crate::variant::chess_from_fen;
use crate::zobrist::{fen_key, moves_with_keys, position_key};

/// Why a book cannot be counted: a batch without the columns it needs, or keys that do not fit their
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

/// Hashes integers by a folded multiply (the high and low halves of a 128-bit product, XORed): fast, and
/// every bit of the input reaches the low bits the table indexes by (game keys' low bits repeat), and a
/// pair of Zobrist keys does not hash as their XOR (the same move from many positions).
#[derive(Default)]
struct MixHasher(u64);

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        let product = u128::from(self.0.rotate_left(23) ^ n) * 0x9E37_79B9_7F4A_7C15;
        self.0 = (product as u64) ^ (product >> 64) as u64;
    }

    fn write_i64(&mut self, n: i64) {
        self.write_u64(n as u64);
    }
}

type Mixed = BuildHasherDefault<MixHasher>;

/// The counts of one row of the book: a position key and the key its move reaches.
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

/// The game of least `game_key` that played a row's move: its keys from its start to the position the
/// move reaches, followed by [`describe`] for the row's FEN, UCI and SAN.
struct Sample {
    game_key: i64,
    start_fen: Option<Arc<str>>,
    keys: Box<[i64]>,
}

/// A game's result, as the `result` column spells it.
#[derive(Clone, Copy)]
enum Outcome {
    White,
    Draw,
    Black,
    Unknown,
}

/// A game whose moves count: what each of them adds to its row.
struct CountedGame {
    game_key: i64,
    /// The key of its start position, which its first stored key must be: a check that the plies'
    /// row numbers fit the games' (a plies file missing a row would shift every key to another game).
    start_key: i64,
    final_key: Option<i64>,
    outcome: Outcome,
    elo_sum: Option<i64>,
    date: Option<i64>,
    start_fen: Option<Arc<str>>,
}

/// The file being read: where each game's plies start, which games count, and where the reading is.
struct FileState {
    /// `starts[g]..starts[g + 1]`: the plies rows of game `g`.
    starts: Vec<i64>,
    /// For each game of the file, its index in `games`, or `NOT_COUNTED`.
    counted_at: Vec<u32>,
    games: Vec<CountedGame>,
    game: usize,
    next_row: i64,
    /// The keys of game `game` read so far, from its ply 0.
    keys: Vec<i64>,
}

const NOT_COUNTED: u32 = u32::MAX;

/// The book being counted.
pub struct BookCounts {
    depth: usize,
    rows: HashMap<(i64, i64), Row, Mixed>,
    /// Out of `rows`, which the counting reads and writes for every move: a sample changes rarely.
    samples: Vec<Sample>,
    file: Option<FileState>,
    standard_key: i64,
}

const STANDARD_START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

impl BookCounts {
    /// A book of the moves of each game's first `depth` plies.
    pub fn new(depth: usize) -> BookCounts {
        BookCounts {
            depth,
            rows: HashMap::default(),
            samples: Vec::new(),
            file: None,
            standard_key: fen_key(STANDARD_START, false).expect("the standard start has a key"),
        }
    }

    /// Starts a file: its games, all of them in file order, a batch of `n_plies` (int32), `game_key`,
    /// `counted` (bool: whether the game's moves count), and for the games counted `result`, `elo_sum`
    /// (White's Elo + Black's, int32, null unless both known), `date_ms` (milliseconds since 1970, UTC),
    /// `start_fen`, `final_key`.
    pub fn start_file(&mut self, games: &RecordBatch) -> Result<(), BookError> {
        self.end_file()?;
        let n_plies = column(games, "n_plies")?
            .as_primitive_opt::<Int32Type>()
            .filter(|a| a.null_count() == 0)
            .ok_or_else(|| error("book: n_plies must be int32 without nulls"))?;
        let counted = column(games, "counted")?
            .as_boolean_opt()
            .ok_or_else(|| error("book: counted must be bool"))?;
        let (keys, results) = (int64(games, "game_key")?, texts(games, "result")?);
        let elo_sums = column(games, "elo_sum")?
            .as_primitive_opt::<Int32Type>()
            .ok_or_else(|| error("book: elo_sum must be int32"))?;
        let dates = primitive(games, "date_ms")?;
        let finals = primitive(games, "final_key")?;
        let fens = texts(games, "start_fen")?;
        let mut starts = Vec::with_capacity(games.num_rows() + 1);
        starts.push(0i64);
        let mut counted_at = Vec::with_capacity(games.num_rows());
        let mut file_games = Vec::with_capacity(counted.true_count());
        for i in 0..games.num_rows() {
            starts.push(starts[i] + i64::from(n_plies.value(i).max(0)));
            if !(counted.is_valid(i) && counted.value(i)) {
                counted_at.push(NOT_COUNTED);
                continue;
            }
            let start_key = match fens.is_valid(i) {
                // A stored FEN, read as the load read it.
                true => chess_from_fen(fens.value(i).trim(), false)
                    .map(|pos| position_key(&pos))
                    .map_err(|e| {
                        let fen = fens.value(i);
                        error(format!(
                            "book: game {}: invalid start_fen '{fen}': {e}",
                            keys.value(i)
                        ))
                    })?,
                false => self.standard_key,
            };
            counted_at.push(file_games.len() as u32);
            file_games.push(CountedGame {
                game_key: keys.value(i),
                start_key,
                final_key: finals.is_valid(i).then(|| finals.value(i)),
                outcome: match results.is_valid(i).then(|| results.value(i)) {
                    Some("W") => Outcome::White,
                    Some("D") => Outcome::Draw,
                    Some("B") => Outcome::Black,
                    _ => Outcome::Unknown,
                },
                elo_sum: elo_sums.is_valid(i).then(|| i64::from(elo_sums.value(i))),
                date: dates.is_valid(i).then(|| dates.value(i)),
                start_fen: fens.is_valid(i).then(|| Arc::from(fens.value(i))),
            });
        }
        self.file = Some(FileState {
            starts,
            counted_at,
            games: file_games,
            game: 0,
            next_row: 0,
            keys: Vec::with_capacity(self.depth + 1),
        });
        Ok(())
    }

    /// Ends the file being read, checking that its plies were as many as its games': fewer would leave
    /// games uncounted. `start_file` and `finish` end a file left open.
    pub fn end_file(&mut self) -> Result<(), BookError> {
        if let Some(file) = self.file.take() {
            let total = file.starts[file.starts.len() - 1];
            if file.next_row != total {
                return Err(error(format!(
                    "book: {} plies rows for games of {total} plies: the plies do not fit their games",
                    file.next_row
                )));
            }
        }
        Ok(())
    }

    /// Counts the next rows of the current file's plies: their `key` column (int64, null where no key
    /// is stored), in row order.
    pub fn add_keys(&mut self, keys: &dyn Array) -> Result<(), BookError> {
        let keys = keys
            .as_primitive_opt::<Int64Type>()
            .ok_or_else(|| error("book: key must be int64"))?;
        let depth = self.depth;
        let file = self
            .file
            .as_mut()
            .ok_or_else(|| error("book: plies before their file's games"))?;
        let total = file.starts[file.starts.len() - 1];
        let first = file.next_row;
        if first + keys.len() as i64 > total {
            return Err(error(format!(
                "book: plies rows past the file's {total} plies: the plies do not fit their games"
            )));
        }
        let mut i = 0;
        while i < keys.len() {
            let row = first + i as i64;
            while file.starts[file.game + 1] <= row {
                file.game += 1;
                file.keys.clear();
            }
            let (start, end) = (file.starts[file.game], file.starts[file.game + 1]);
            let stop = i + ((end - row) as usize).min(keys.len() - i);
            let at = file.counted_at[file.game];
            if at != NOT_COUNTED {
                let game = &file.games[at as usize];
                let n_plies = (end - start) as usize;
                let needed = n_plies.min(depth + 1);
                while file.keys.len() < needed && i < stop {
                    if keys.is_null(i) {
                        return Err(error(format!(
                            "book: plies row {}, ply {} of game {}, has no key: the plies do not fit \
                             their games",
                            first + i as i64,
                            file.keys.len(),
                            game.game_key
                        )));
                    }
                    file.keys.push(keys.value(i));
                    i += 1;
                    if file.keys.len() == needed {
                        count_game(
                            &mut self.rows,
                            &mut self.samples,
                            game,
                            &file.keys,
                            n_plies,
                            depth,
                        )?;
                    }
                }
            }
            i = stop;
        }
        file.next_row += keys.len() as i64;
        Ok(())
    }

    /// The book: a row per (key, move) of at least `min_games` games, sorted by key then UCI: `key`,
    /// `fen`, `uci`, `san`, `white_wins`, `draws`, `black_wins`, `games`, `rated`, `mean_rating` (of the
    /// rated games' mean Elos), `first_date`, `last_date`.
    pub fn finish(&mut self, min_games: i64) -> Result<RecordBatch, BookError> {
        self.end_file()?;
        let mut namer = Namer::default();
        let mut chosen = Vec::new();
        for (&(key, _), row) in &self.rows {
            if row.games >= min_games {
                let (fen, uci, san) = namer.describe(&self.samples[row.sample])?;
                chosen.push((key, uci, fen, san, row));
            }
        }
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
        for (key, uci, fen, san, row) in &chosen {
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

/// Counts the moves of `game`'s first `depth` plies, from `keys`, its stored keys from ply 0 (as many
/// as the moves counted and one more, but for a game that ends sooner: its final key follows them).
fn count_game(
    rows: &mut HashMap<(i64, i64), Row, Mixed>,
    samples: &mut Vec<Sample>,
    game: &CountedGame,
    keys: &[i64],
    n_plies: usize,
    depth: usize,
) -> Result<(), BookError> {
    if keys[0] != game.start_key {
        return Err(error(format!(
            "book: the first key of game {} is not its start position's: the plies do not fit their \
             games",
            game.game_key
        )));
    }
    for ply in 0..n_plies.min(depth) {
        let next = match keys.get(ply + 1) {
            Some(&key) => key,
            None => game
                .final_key
                .ok_or_else(|| error(format!("book: game {} has no final_key", game.game_key)))?,
        };
        let path = || -> Box<[i64]> { keys[..=ply].iter().copied().chain([next]).collect() };
        let counts = rows.entry((keys[ply], next)).or_insert_with(|| {
            samples.push(Sample {
                game_key: game.game_key,
                start_fen: game.start_fen.clone(),
                keys: path(),
            });
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
            samples[counts.sample] = Sample {
                game_key: game.game_key,
                start_fen: game.start_fen.clone(),
                keys: path(),
            };
        }
    }
    Ok(())
}

/// Names moves by the keys of the positions before and after them: each position met is expanded once,
/// its legal moves with the keys they reach (positions of one key share their legal moves).
#[derive(Default)]
struct Namer {
    moves: HashMap<i64, Vec<(i64, Move)>, Mixed>,
}

impl Namer {
    /// The move from `pos` (of key `from`) to the position of key `to`.
    fn step(&mut self, pos: &Chess, from: i64, to: i64) -> Option<Move> {
        let moves = self
            .moves
            .entry(from)
            .or_insert_with(|| moves_with_keys(pos));
        moves.iter().find(|(key, _)| *key == to).map(|&(_, m)| m)
    }

    /// The FEN before a sample's last move, that move's UCI (castling as the king's two steps, as
    /// python-chess writes it) and its SAN, by following the sample's keys from its start: the
    /// position's counters are then those of a game that played it.
    fn describe(&mut self, sample: &Sample) -> Result<(String, String, String), BookError> {
        let mut pos = match &sample.start_fen {
            None => Chess::default(),
            Some(fen) => chess_from_fen(fen.trim(), false).map_err(|e| {
                error(format!(
                    "book: game {}: invalid start_fen '{fen}': {e}",
                    sample.game_key
                ))
            })?,
        };
        let last = sample.keys.len() - 2;
        for (ply, pair) in sample.keys.windows(2).enumerate() {
            let m = self.step(&pos, pair[0], pair[1]).ok_or_else(|| {
                error(format!(
                    "book: game {}: no legal move at ply {ply} reaches the key stored after it: the \
                     keys are damaged",
                    sample.game_key
                ))
            })?;
            if ply == last {
                let fen = Fen::from_position(&pos, EnPassantMode::Legal).to_string();
                let uci = m.to_uci(CastlingMode::Standard).to_string();
                return Ok((fen, uci, SanPlus::from_move(pos, m).to_string()));
            }
            pos.play_unchecked(m);
        }
        unreachable!("a sample holds two keys at least")
    }
}

fn column<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a ArrayRef, BookError> {
    batch
        .column_by_name(name)
        .ok_or_else(|| error(format!("book: the batch has no `{name}` column")))
}

fn primitive<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a Int64Array, BookError> {
    column(batch, name)?
        .as_primitive_opt::<Int64Type>()
        .ok_or_else(|| error(format!("book: `{name}` must be int64")))
}

fn int64<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a Int64Array, BookError> {
    Some(primitive(batch, name)?)
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
    use crate::zobrist::position_key;
    use shakmaty::uci::UciMove;

    /// Games of `moves` (UCI) from the start, as the lake holds them: their batch for `start_file` (game
    /// keys 100, 99…; results `results`; all counted), and their plies' keys, stored for the first
    /// `stored` plies and null after.
    fn lake(moves: &[&[&str]], results: &[&str], stored: usize) -> (RecordBatch, Int64Array) {
        let (mut keys, mut finals) = (vec![], vec![]);
        for game in moves {
            let mut pos = Chess::default();
            for (ply, uci) in game.iter().enumerate() {
                keys.push((ply < stored).then(|| position_key(&pos)));
                let m = UciMove::from_ascii(uci.as_bytes())
                    .unwrap()
                    .to_move(&pos)
                    .unwrap();
                pos.play_unchecked(m);
            }
            finals.push(position_key(&pos));
        }
        let n = moves.len();
        let columns: Vec<(&str, ArrayRef)> = vec![
            (
                "n_plies",
                Arc::new(arrow_array::Int32Array::from_iter_values(
                    moves.iter().map(|g| g.len() as i32),
                )),
            ),
            (
                "game_key",
                Arc::new(Int64Array::from_iter_values((0..n as i64).map(|g| 100 - g))),
            ),
            (
                "counted",
                Arc::new(arrow_array::BooleanArray::from(vec![true; n])),
            ),
            ("result", Arc::new(StringArray::from(results.to_vec()))),
            (
                "elo_sum",
                Arc::new(arrow_array::Int32Array::from(vec![Some(3000); n])),
            ),
            ("date_ms", Arc::new(Int64Array::from(vec![None; n]))),
            (
                "start_fen",
                Arc::new(StringArray::from(vec![None::<&str>; n])),
            ),
            ("final_key", Arc::new(Int64Array::from(finals))),
        ];
        (
            RecordBatch::try_from_iter(columns).unwrap(),
            Int64Array::from(keys),
        )
    }

    fn counted(moves: &[&[&str]], results: &[&str], stored: usize, depth: usize) -> RecordBatch {
        let (games, keys) = lake(moves, results, stored);
        let mut book = BookCounts::new(depth);
        book.start_file(&games).unwrap();
        // In two batches, the first ending inside a game.
        book.add_keys(&keys.slice(0, 3)).unwrap();
        book.add_keys(&keys.slice(3, keys.len() - 3)).unwrap();
        book.finish(1).unwrap()
    }

    fn strings(batch: &RecordBatch, name: &str) -> Vec<String> {
        let column = batch.column_by_name(name).unwrap().as_string::<i32>();
        column.iter().map(|v| v.unwrap().to_string()).collect()
    }

    const E4_E5: &[&str] = &["e2e4", "e7e5", "g1f3", "b8c6"];
    const E4_C5: &[&str] = &["e2e4", "c7c5"];

    #[test]
    fn counts_each_move_under_its_game() {
        // Keys stored before plies 0-2: a book of depth 2; the 2-ply game's last move reaches its final key.
        let out = counted(&[E4_E5, E4_C5], &["W", "B"], 3, 2);
        let ucis = strings(&out, "uci");
        assert_eq!(ucis, {
            let mut sorted = ucis.clone();
            sorted.sort_by_key(|u| {
                let at = ucis.iter().position(|v| v == u).unwrap();
                (
                    out.column(0).as_primitive::<Int64Type>().value(at),
                    u.clone(),
                )
            });
            sorted
        });
        let mut moves = ucis.clone();
        moves.sort();
        assert_eq!(moves, ["c7c5", "e2e4", "e7e5"]);
        let at = |uci: &str| ucis.iter().position(|u| u == uci).unwrap();
        let games = out
            .column_by_name("games")
            .unwrap()
            .as_primitive::<Int64Type>();
        assert_eq!(games.value(at("e2e4")), 2);
        assert_eq!(games.value(at("c7c5")), 1);
        assert_eq!(strings(&out, "san")[at("c7c5")], "c5");
        assert_eq!(
            strings(&out, "fen")[at("e7e5")],
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
        );
        let means = out.column_by_name("mean_rating").unwrap();
        assert_eq!(
            means
                .as_primitive::<arrow_array::types::Float64Type>()
                .value(at("e2e4")),
            1500.0
        );
    }

    #[test]
    fn names_castling_as_the_kings_two_steps() {
        let castles: &[&str] = &[
            "e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "e1g1", "f6e4",
        ];
        let out = counted(&[castles], &["D"], 8, 7);
        let ucis = strings(&out, "uci");
        let at = ucis.iter().position(|u| u == "e1g1").unwrap();
        assert_eq!(strings(&out, "san")[at], "O-O");
        assert_eq!(ucis.len(), 7);
    }

    #[test]
    fn refuses_keys_that_do_not_fit_their_games() {
        let (games, keys) = lake(&[E4_E5, E4_C5], &["W", "B"], 3);
        let start = |book: &mut BookCounts| book.start_file(&games).unwrap();
        // A plies file missing its first row: every key then belongs to the ply before it.
        let mut book = BookCounts::new(2);
        start(&mut book);
        let error = book.add_keys(&keys.slice(1, keys.len() - 1)).unwrap_err();
        assert!(error.0.contains("do not fit their games"), "{error}");
        // Rows past the file's plies, and a file cut short.
        let mut book = BookCounts::new(2);
        start(&mut book);
        let longer = Int64Array::from_iter(keys.iter().chain([None]));
        assert!(book
            .add_keys(&longer)
            .unwrap_err()
            .0
            .contains("past the file's 6 plies"));
        let mut book = BookCounts::new(2);
        start(&mut book);
        book.add_keys(&keys.slice(0, 5)).unwrap();
        assert!(book
            .finish(1)
            .unwrap_err()
            .0
            .contains("5 plies rows for games of 6 plies"));
        // A key no legal move reaches.
        let mut damaged: Vec<Option<i64>> = keys.iter().collect();
        damaged[1] = Some(12345);
        let mut book = BookCounts::new(2);
        start(&mut book);
        book.add_keys(&Int64Array::from(damaged)).unwrap();
        assert!(book
            .finish(1)
            .unwrap_err()
            .0
            .contains("the keys are damaged"));
    }
}
