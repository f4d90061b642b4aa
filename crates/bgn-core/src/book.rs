//! Opening-book counts at any depth, replayed from the lake's move columns, in a bounded memory.
//!
//! A book row is a (position, move) of standard games: the position's PolyGlot key and the move
//! (`MoveCode`: its squares and promotion), with the results, Elos and dates of the games that played
//! it; and a row (`GAME_END`) for the games that ended in the position, so that a position's total is
//! every game that stood in it. Each row keeps the position's board (packed), from which the rows kept
//! are named at the end (`book_rows`), and the key its move reaches.
//!
//! The plies come without their games: a `games/` file and its `plies/` twin hold the same games in
//! the same order, each game's plies in a row (`n_plies` of them), so a ply's row in its file says
//! whose it is. Each file is fed in two steps: [`BookCounts::start_file`] with all its games in order
//! (which count, their results, Elos…), then [`BookCounts::add_moves`] with its plies' `f`, `t` and
//! `promote` columns in row order, in as many batches as the reader gives.
//!
//! A move already counted from a position names the key it reaches: a game that follows known rows
//! costs a hash lookup per ply, and a board is rebuilt (from the previous row's board and its move)
//! only where it leaves them. The rows live in memory up to a budget; a full table is spilled to a
//! sorted run on disk (`book_rows` merges the runs).

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, Int64Array, PrimitiveArray, RecordBatch, StringArray};
use shakmaty::{Chess, Role};

use crate::book_rows::{Entry, RunWriter};
use crate::san::{codes, Texts};
use crate::variant::chess_from_fen;
use crate::zobrist::{piece_code, role_of, square_code, Board, Packed, NONE, NO_SQUARE, PACKED};

/// Why a book cannot be counted: a batch without the columns it needs, moves that do not fit their
/// games (a damaged lake), or a run that cannot be written or read.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct BookError(pub String);

impl fmt::Display for BookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BookError {}

pub(crate) fn error(message: impl Into<String>) -> BookError {
    BookError(message.into())
}

/// Hashes integers by a folded multiply (the high and low halves of a 128-bit product, XORed): fast, and
/// every bit of the input reaches the low bits the table indexes by, and a (key, move) pair does not hash
/// as their XOR (the same move from many positions).
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

    fn write_u16(&mut self, n: u16) {
        self.write_u64(u64::from(n));
    }

    fn write_i64(&mut self, n: i64) {
        self.write_u64(n as u64);
    }
}

type Mixed = BuildHasherDefault<MixHasher>;

/// A move of standard chess as the book keys it: `(from * 64 + to) * 5 + promotion`, the squares
/// numbered file first (a1, a2, … h8) and the promotions as none, b, n, q, r, so that codes sort as
/// their UCI strings do.
pub type MoveCode = u16;
/// The row of the games that ended in a position (no move).
pub const GAME_END: MoveCode = u16::MAX;
const PROMOTIONS: [Option<Role>; 5] = [
    None,
    Some(Role::Bishop),
    Some(Role::Knight),
    Some(Role::Queen),
    Some(Role::Rook),
];

/// A square's number in UCI order (a1, a2, … h8) from its index (a1, b1, … h8).
fn uci_order(square: u8) -> u16 {
    u16::from(square % 8) * 8 + u16::from(square / 8)
}

/// The code of a move from square `from` to `to` (indices), promoting to `promotion`.
fn move_code(from: u8, to: u8, promotion: Option<Role>) -> Option<MoveCode> {
    if from >= 64 || to >= 64 {
        return None;
    }
    let promotion = PROMOTIONS.iter().position(|&r| r == promotion)? as u16;
    Some((uci_order(from) * 64 + uci_order(to)) * 5 + promotion)
}

/// The squares (indices) and promotion of a move's code.
pub(crate) fn move_parts(code: MoveCode) -> (u8, u8, Option<Role>) {
    let square = |order: u16| ((order % 8) * 8 + order / 8) as u8;
    let (squares, promotion) = (code / 5, code % 5);
    (
        square(squares / 64),
        square(squares % 64),
        PROMOTIONS[promotion as usize],
    )
}

/// What the games of a row add up to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    pub games: i64,
    pub white_wins: i64,
    pub draws: i64,
    pub black_wins: i64,
    /// Games with both Elos, and the sum of White's + Black's over them (twice the sum of their means).
    pub rated: i64,
    pub elo_sums: i64,
    /// The least and greatest date (ms since 1970) of its games: `i64::MAX`, `i64::MIN` while none has one.
    pub first_date: i64,
    pub last_date: i64,
}

impl Counts {
    pub const EMPTY: Counts = Counts {
        games: 0,
        white_wins: 0,
        draws: 0,
        black_wins: 0,
        rated: 0,
        elo_sums: 0,
        first_date: i64::MAX,
        last_date: i64::MIN,
    };

    fn add(&mut self, game: &CountedGame) {
        self.games += 1;
        match game.outcome {
            Outcome::White => self.white_wins += 1,
            Outcome::Draw => self.draws += 1,
            Outcome::Black => self.black_wins += 1,
            Outcome::Unknown => {}
        }
        if let Some(sum) = game.elo_sum {
            self.rated += 1;
            self.elo_sums += sum;
        }
        if let Some(date) = game.date {
            self.first_date = self.first_date.min(date);
            self.last_date = self.last_date.max(date);
        }
    }

    pub fn merge(&mut self, other: &Counts) {
        self.games += other.games;
        self.white_wins += other.white_wins;
        self.draws += other.draws;
        self.black_wins += other.black_wins;
        self.rated += other.rated;
        self.elo_sums += other.elo_sums;
        self.first_date = self.first_date.min(other.first_date);
        self.last_date = self.last_date.max(other.last_date);
    }
}

/// A row in memory: its entry, the key its move reaches (a game that plays it again goes on from there
/// without a board), and the row a game went on to from there.
pub(crate) struct Slot {
    pub(crate) entry: Entry,
    next: i64,
    /// The row the last game that played this one went on to, and its move (`GAME_END`: none yet).
    succ: u32,
    succ_code: MoveCode,
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
    outcome: Outcome,
    elo_sum: Option<i64>,
    date: Option<i64>,
    start_fen: Option<String>,
}

/// The file being read: where each game's plies start, which games count, and where the reading is.
struct FileState {
    /// `starts[g]..starts[g + 1]`: the plies rows of game `g`.
    starts: Vec<i64>,
    /// For each game of the file, its index in `games`, or `NOT_COUNTED`.
    counted_at: Vec<u32>,
    games: Vec<CountedGame>,
    /// The game entered last (`usize::MAX` before the first).
    game: usize,
    next_row: i64,
}

const NOT_COUNTED: u32 = u32::MAX;

impl FileState {
    fn total(&self) -> i64 {
        self.starts[self.starts.len() - 1]
    }
}

/// Where the current game's replay stands: the key of its position, and its board, or the row whose
/// board and move give it (`prev`) when the game has followed rows already counted.
struct Replay {
    key: i64,
    board: Option<Board>,
    prev: u32,
}

/// Bytes of memory a row costs: its slot, its share of the sort order, and of the hash table (a slot
/// of the index and its control byte per bucket, up to 16/7 buckets per row as the table doubles).
const ROW_BYTES: usize =
    std::mem::size_of::<Slot>() + 4 + (std::mem::size_of::<((i64, MoveCode), u32)>() + 1) * 16 / 7;
/// The fewest rows a table holds, whatever the budget.
const MIN_ROWS: usize = 16;

/// The book being counted.
pub struct BookCounts {
    max_ply: usize,
    /// The rows held in memory before they are spilled.
    capacity: usize,
    index: HashMap<(i64, MoveCode), u32, Mixed>,
    slots: Vec<Slot>,
    /// The folder of the runs, their files, and this counter's prefix for their names.
    spill_dir: PathBuf,
    runs: Vec<PathBuf>,
    name: String,
    file: Option<FileState>,
    replay: Replay,
    standard: Board,
}

impl BookCounts {
    /// A book of the moves of each game's first `max_ply` plies, holding at most `memory` bytes of rows
    /// (at least `MIN_ROWS` rows) before spilling them to runs in `spill_dir`, named `name`-N.
    pub fn new(max_ply: usize, memory: usize, spill_dir: &Path, name: &str) -> BookCounts {
        let capacity = (memory / ROW_BYTES).max(MIN_ROWS);
        let standard = Board::new(&Chess::default());
        BookCounts {
            max_ply,
            capacity,
            // Grown as rows come (a table sized for the budget up front would spread a small book's rows
            // over more memory than the caches hold).
            index: HashMap::default(),
            slots: Vec::new(),
            spill_dir: spill_dir.to_owned(),
            runs: Vec::new(),
            name: name.to_owned(),
            file: None,
            replay: Replay {
                key: standard.key as i64,
                board: None,
                prev: u32::MAX,
            },
            standard,
        }
    }

    /// Starts a file: its games, all of them in file order, a batch of `n_plies` (int32), `game_key`,
    /// `counted` (bool: whether the game's moves count), and for the games counted `result`, `elo_sum`
    /// (White's Elo + Black's, int32, null unless both known), `date_ms` (milliseconds since 1970, UTC),
    /// `start_fen`.
    pub fn start_file(&mut self, games: &RecordBatch) -> Result<(), BookError> {
        self.end_file()?;
        let n_plies = column(games, "n_plies")?
            .as_primitive_opt::<Int32Type>()
            .filter(|a| a.null_count() == 0)
            .ok_or_else(|| error("book: n_plies must be int32 without nulls"))?;
        let counted = column(games, "counted")?
            .as_boolean_opt()
            .ok_or_else(|| error("book: counted must be bool"))?;
        let keys = Some(primitive(games, "game_key")?)
            .filter(|a| a.null_count() == 0)
            .ok_or_else(|| error("book: `game_key` must be int64 without nulls"))?;
        let results = texts(games, "result")?;
        let elo_sums = column(games, "elo_sum")?
            .as_primitive_opt::<Int32Type>()
            .ok_or_else(|| error("book: elo_sum must be int32"))?;
        let dates = primitive(games, "date_ms")?;
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
            counted_at.push(file_games.len() as u32);
            file_games.push(CountedGame {
                game_key: keys.value(i),
                outcome: match results.is_valid(i).then(|| results.value(i)) {
                    Some("W") => Outcome::White,
                    Some("D") => Outcome::Draw,
                    Some("B") => Outcome::Black,
                    _ => Outcome::Unknown,
                },
                elo_sum: elo_sums.is_valid(i).then(|| i64::from(elo_sums.value(i))),
                date: dates.is_valid(i).then(|| dates.value(i)),
                start_fen: fens.is_valid(i).then(|| fens.value(i).to_owned()),
            });
        }
        let mut file = FileState {
            starts,
            counted_at,
            games: file_games,
            game: usize::MAX,
            next_row: 0,
        };
        self.enter_games(&mut file, 0)?;
        self.file = Some(file);
        Ok(())
    }

    /// Ends the file being read, checking that its plies were as many as its games': fewer would leave
    /// games uncounted. `start_file` and `finish` end a file left open.
    pub fn end_file(&mut self) -> Result<(), BookError> {
        if let Some(file) = self.file.take() {
            if file.next_row != file.total() {
                return Err(error(format!(
                    "book: {} plies rows for games of {} plies: the plies do not fit their games",
                    file.next_row,
                    file.total()
                )));
            }
        }
        Ok(())
    }

    /// Counts the next rows of the current file's plies: their `f`, `t` and `promote` columns
    /// (dictionary-encoded or plain strings), in row order.
    pub fn add_moves(
        &mut self,
        from: &ArrayRef,
        to: &ArrayRef,
        promote: &ArrayRef,
    ) -> Result<(), BookError> {
        let n = from.len();
        if to.len() != n || promote.len() != n {
            return Err(error("book: the move columns differ in length"));
        }
        let from = Field::of(from, NO_SQUARE, square_code)?;
        let to = Field::of(to, NO_SQUARE, square_code)?;
        let promote = Field::of(promote, NONE, piece_code)?;
        let mut file = self
            .file
            .take()
            .ok_or_else(|| error("book: plies before their file's games"))?;
        let first = file.next_row;
        if first + n as i64 > file.total() {
            return Err(error(format!(
                "book: plies rows past the file's {} plies: the plies do not fit their games",
                file.total()
            )));
        }
        let mut i = 0;
        while i < n {
            let row = first + i as i64;
            self.enter_games(&mut file, row)?;
            let (start, end) = (file.starts[file.game], file.starts[file.game + 1]);
            let stop = i + ((end - row) as usize).min(n - i);
            if let Some(at) = Some(file.counted_at[file.game]).filter(|&a| a != NOT_COUNTED) {
                let game = &file.games[at as usize];
                let n_plies = (end - start) as usize;
                let mut ply = (row - start) as usize;
                while i < stop && ply < self.max_ply {
                    let promotion = Some(promote.get(i)).filter(|&p| p != NONE).map(role_of);
                    self.step(game, ply, from.get(i), to.get(i), promotion)?;
                    i += 1;
                    ply += 1;
                    if ply == n_plies && n_plies < self.max_ply {
                        self.count_end(game)?;
                    }
                }
            }
            i = stop;
        }
        file.next_row += n as i64;
        let next_row = file.next_row;
        self.enter_games(&mut file, next_row)?;
        self.file = Some(file);
        Ok(())
    }

    /// Enters the games of `file` up to the one whose plies hold row `row` (the games without plies on
    /// the way end where they start); with `row` past every ply, every game left.
    fn enter_games(&mut self, file: &mut FileState, row: i64) -> Result<(), BookError> {
        loop {
            let next = file.game.wrapping_add(1);
            let current_holds_row = file.game != usize::MAX && file.starts[file.game + 1] > row;
            if next + 1 >= file.starts.len() || current_holds_row {
                return Ok(());
            }
            file.game = next;
            let at = file.counted_at[next];
            if at == NOT_COUNTED {
                continue;
            }
            let game = &file.games[at as usize];
            let board = match &game.start_fen {
                None => self.standard.clone(),
                Some(fen) => Board::new(&chess_from_fen(fen.trim(), false).map_err(|e| {
                    error(format!(
                        "book: game {}: invalid start_fen '{fen}': {e}",
                        game.game_key
                    ))
                })?),
            };
            self.replay = Replay {
                key: board.key as i64,
                board: Some(board),
                prev: u32::MAX,
            };
            if file.starts[next + 1] == file.starts[next] {
                self.count_end(game)?; // a game without moves ends where it starts
            }
        }
    }

    /// Counts `game`'s move at `ply` (its squares and promotion) from the position the replay stands
    /// in, and moves the replay on.
    fn step(
        &mut self,
        game: &CountedGame,
        ply: usize,
        from: u8,
        to: u8,
        promotion: Option<Role>,
    ) -> Result<(), BookError> {
        let unfit = |why: &str| {
            error(format!(
                "book: game {}, ply {}: {why}: the plies do not fit their games",
                game.game_key,
                ply + 1
            ))
        };
        let code =
            move_code(from, to, promotion).ok_or_else(|| unfit("a move without its squares"))?;
        let prev = self.replay.prev;
        // The row the previous row's last game went on to, when this game goes on the same way: no hash
        // lookup (games share their openings' lines).
        let predicted = self
            .slots
            .get(prev as usize)
            .filter(|slot| slot.succ_code == code)
            .map(|slot| slot.succ);
        let found = predicted.or_else(|| self.index.get(&(self.replay.key, code)).copied());
        if let Some(at) = found {
            if predicted.is_none() {
                self.link(prev, at, code);
            }
            let slot = &mut self.slots[at as usize];
            debug_assert_eq!((slot.entry.key, slot.entry.code), (self.replay.key, code));
            slot.entry.counts.add(game);
            self.replay = Replay {
                key: slot.next,
                board: None,
                prev: at,
            };
            return Ok(());
        }
        let mut board = match self.replay.board.take() {
            Some(board) => board,
            None => self.board_after(prev)?,
        };
        let spilled = self.slots.len() >= self.capacity;
        if spilled {
            self.spill()?;
        }
        let packed = board.pack();
        board
            .play_squares(from, to, promotion)
            .map_err(|why| unfit(&why))?;
        let next = board.key as i64;
        let at = self.insert(self.replay.key, code, game, packed, next);
        if !spilled {
            self.link(prev, at, code);
        }
        self.replay = Replay {
            key: next,
            board: Some(board),
            prev: at,
        };
        Ok(())
    }

    /// Notes that the last game through row `prev` (if any) went on to row `at` by move `code`.
    fn link(&mut self, prev: u32, at: u32, code: MoveCode) {
        if let Some(slot) = self.slots.get_mut(prev as usize) {
            slot.succ = at;
            slot.succ_code = code;
        }
    }

    /// The board after the move of row `at`: its position's board with its move played.
    fn board_after(&self, at: u32) -> Result<Board, BookError> {
        let entry = &self.slots[at as usize].entry;
        let mut board = Board::unpack(&entry.board, entry.key as u64);
        let (from, to, promotion) = move_parts(entry.code);
        board
            .play_squares(from, to, promotion)
            .map_err(|why| error(format!("book: a counted move no longer plays: {why}")))?;
        Ok(board)
    }

    /// Counts `game` as ended in the position the replay stands in.
    fn count_end(&mut self, game: &CountedGame) -> Result<(), BookError> {
        match self.index.get(&(self.replay.key, GAME_END)) {
            Some(&at) => self.slots[at as usize].entry.counts.add(game),
            None => {
                if self.slots.len() >= self.capacity {
                    self.spill()?;
                }
                let _ = self.insert(self.replay.key, GAME_END, game, [0; PACKED], 0);
            }
        }
        Ok(())
    }

    /// Adds a row of `game`'s move `code` from `key`, reaching `next`; returns its index.
    fn insert(
        &mut self,
        key: i64,
        code: MoveCode,
        game: &CountedGame,
        board: Packed,
        next: i64,
    ) -> u32 {
        let mut counts = Counts::EMPTY;
        counts.add(game);
        if self.slots.len() == self.slots.capacity() {
            // Doubling, but never past the budget's rows.
            let more = self
                .slots
                .len()
                .max(1024)
                .min(self.capacity - self.slots.len());
            self.slots.reserve_exact(more);
        }
        let at = self.slots.len() as u32;
        self.index.insert((key, code), at);
        self.slots.push(Slot {
            entry: Entry {
                key,
                code,
                counts,
                board,
            },
            next,
            succ: u32::MAX,
            succ_code: GAME_END,
        });
        at
    }

    /// Writes the rows held to a new run, sorted by key then move, and empties the table.
    fn spill(&mut self) -> Result<(), BookError> {
        let name = format!("{}-{}.run", self.name, self.runs.len());
        let mut run = RunWriter::create(self.spill_dir.join(name))?;
        for i in sorted_order(&self.slots) {
            run.push(&self.slots[i as usize].entry)?;
        }
        self.runs.push(run.finish()?);
        self.slots.clear();
        self.index.clear();
        Ok(())
    }

    /// The rows still in memory, sorted by key then move, and the runs spilled: what `book_rows` merges.
    pub(crate) fn finish(mut self) -> Result<Counted, BookError> {
        self.end_file()?;
        self.index = HashMap::default(); // its memory goes before the merge's
        Ok(Counted {
            order: sorted_order(&self.slots),
            slots: self.slots,
            runs: self.runs,
        })
    }
}

/// A counter's rows at the end: those in memory (`slots`, in `order`) and its runs.
pub(crate) struct Counted {
    pub(crate) slots: Vec<Slot>,
    pub(crate) order: Vec<u32>,
    pub(crate) runs: Vec<PathBuf>,
}

/// A move field of a batch of plies (`f`, `t`, `promote`) as codes, read row by row: the rows a book
/// skips (past its depth, other variants) cost nothing. The lake's dictionaries as pyarrow reads them
/// with `read_dictionary` (int32 keys: the pages' own, not cast to the stored schema's int8) are read
/// through a table of their values' codes; other layouts are coded whole (`san::codes`).
enum Field<'a> {
    Dictionary {
        keys: &'a PrimitiveArray<Int32Type>,
        /// The code of each key, `none` for keys outside the dictionary.
        table: [u8; 128],
        none: u8,
    },
    Coded(Vec<u8>),
}

impl<'a> Field<'a> {
    fn of(
        array: &'a ArrayRef,
        none: u8,
        code: impl Fn(&str) -> u8,
    ) -> Result<Field<'a>, BookError> {
        let fail = |e: crate::san::FillError| error(format!("book: {}", e.0));
        let Some(dictionary) = array.as_dictionary_opt::<Int32Type>() else {
            return Ok(Field::Coded(codes(array, none, code).map_err(fail)?));
        };
        let values = Texts::of(dictionary.values(), "a move field's dictionary").map_err(fail)?;
        let mut table = [none; 128];
        for (i, entry) in table
            .iter_mut()
            .enumerate()
            .take(dictionary.values().len().min(128))
        {
            *entry = values.get(i).map_or(none, &code);
        }
        Ok(Field::Dictionary {
            keys: dictionary.keys(),
            table,
            none,
        })
    }

    #[inline]
    fn get(&self, i: usize) -> u8 {
        match self {
            // A negative key, cast, lands past the table: `none`, as a key past the dictionary.
            Field::Dictionary { keys, table, none } => match keys.is_valid(i) {
                true => *table.get(keys.value(i) as usize).unwrap_or(none),
                false => *none,
            },
            Field::Coded(codes) => codes[i],
        }
    }
}

/// The order of `slots` by key then move.
fn sorted_order(slots: &[Slot]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..slots.len() as u32).collect();
    order.sort_unstable_by_key(|&i| {
        let entry = &slots[i as usize].entry;
        (entry.key, entry.code)
    });
    order
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

fn texts<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a StringArray, BookError> {
    column(batch, name)?
        .as_string_opt::<i32>()
        .ok_or_else(|| error(format!("book: `{name}` must be utf8")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book_rows::book_rows;
    use arrow_array::{BooleanArray, Int32Array};
    use shakmaty::uci::UciMove;
    use shakmaty::Position;
    use std::sync::Arc;

    /// Games of `moves` (UCI) from the start, as a lake's files hold them: the batch for `start_file`
    /// (game keys 100, 99…; results `results`; all counted) and their plies' `f`, `t`, `promote`.
    fn lake(moves: &[&[&str]], results: &[&str]) -> (RecordBatch, [ArrayRef; 3]) {
        let (mut from, mut to, mut promote) = (vec![], vec![], vec![]);
        for game in moves {
            for uci in game.iter() {
                from.push(uci[0..2].to_owned());
                to.push(uci[2..4].to_owned());
                promote.push(uci.get(4..).filter(|p| !p.is_empty()).map(str::to_owned));
            }
        }
        let n = moves.len();
        let columns: Vec<(&str, ArrayRef)> = vec![
            (
                "n_plies",
                Arc::new(Int32Array::from_iter_values(
                    moves.iter().map(|g| g.len() as i32),
                )),
            ),
            (
                "game_key",
                Arc::new(Int64Array::from_iter_values((0..n as i64).map(|g| 100 - g))),
            ),
            ("counted", Arc::new(BooleanArray::from(vec![true; n]))),
            ("result", Arc::new(StringArray::from(results.to_vec()))),
            ("elo_sum", Arc::new(Int32Array::from(vec![Some(3000); n]))),
            ("date_ms", Arc::new(Int64Array::from(vec![None; n]))),
            (
                "start_fen",
                Arc::new(StringArray::from(vec![None::<&str>; n])),
            ),
        ];
        let plies: [ArrayRef; 3] = [
            Arc::new(StringArray::from(from)),
            Arc::new(StringArray::from(to)),
            Arc::new(StringArray::from(promote)),
        ];
        (RecordBatch::try_from_iter(columns).unwrap(), plies)
    }

    fn spill_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("bgn-book-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The book of `moves` to `max_ply`, counted in `memory` bytes, the plies fed in batches of 3 rows;
    /// and the runs it spilled.
    fn book(
        moves: &[&[&str]],
        results: &[&str],
        max_ply: usize,
        memory: usize,
    ) -> (RecordBatch, usize) {
        book_of(moves, results, max_ply, memory, "plain", |a| a)
    }

    /// `book`, its plies' columns handed over as `encode` makes them (`name`: its runs' folder's).
    fn book_of(
        moves: &[&[&str]],
        results: &[&str],
        max_ply: usize,
        memory: usize,
        name: &str,
        encode: impl Fn(ArrayRef) -> ArrayRef,
    ) -> (RecordBatch, usize) {
        let dir = spill_dir(&format!("{name}-{max_ply}-{memory}"));
        let (games, plies) = lake(moves, results);
        let plies = plies.map(encode);
        let mut counts = BookCounts::new(max_ply, memory, &dir, "t");
        counts.start_file(&games).unwrap();
        let mut at = 0;
        while at < plies[0].len() {
            let n = 3.min(plies[0].len() - at);
            let [f, t, p] = plies.clone().map(|a| a.slice(at, n));
            counts.add_moves(&f, &t, &p).unwrap();
            at += n;
        }
        let runs = counts.runs.len();
        let mut rows = book_rows(vec![counts], 1, &dir).unwrap();
        let batch = rows.next_batch(1 << 20).unwrap().unwrap();
        assert!(rows.next_batch(1 << 20).unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
        (batch, runs)
    }

    fn strings(batch: &RecordBatch, name: &str) -> Vec<String> {
        let column = batch.column_by_name(name).unwrap().as_string::<i32>();
        column.iter().map(|v| v.unwrap().to_string()).collect()
    }

    fn ints(batch: &RecordBatch, name: &str) -> Vec<i64> {
        let column = batch
            .column_by_name(name)
            .unwrap()
            .as_primitive::<Int64Type>();
        column.values().to_vec()
    }

    const ITALIAN: &[&str] = &[
        "e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "e1g1", "f6e4",
    ];
    const SICILIAN: &[&str] = &["e2e4", "c7c5"];
    const PROMOTES: &[&str] = &[
        "a2a4", "b7b5", "a4b5", "a7a6", "b5a6", "c8b7", "a6b7", "b8c6", "b7a8q",
    ];

    #[test]
    fn move_codes_sort_as_their_uci_and_give_their_squares_back() {
        let mut moves = vec![];
        for from in 0..64u8 {
            for to in 0..64u8 {
                for promotion in PROMOTIONS {
                    let code = move_code(from, to, promotion).unwrap();
                    assert_eq!(move_parts(code), (from, to, promotion));
                    let uci = UciMove::Normal {
                        from: shakmaty::Square::new(u32::from(from)),
                        to: shakmaty::Square::new(u32::from(to)),
                        promotion,
                    };
                    moves.push((code, uci.to_string()));
                }
            }
        }
        let mut by_code = moves.clone();
        by_code.sort();
        moves.sort_by(|a, b| a.1.cmp(&b.1));
        assert_eq!(by_code, moves);
        assert!(moves.iter().all(|&(code, _)| code != GAME_END));
    }

    #[test]
    fn counts_each_move_and_the_games_ended_in_a_position() {
        let (out, _) = book(&[ITALIAN, SICILIAN, ITALIAN], &["W", "B", "D"], 6, 1 << 20);
        let ucis = strings(&out, "uci");
        let at = |uci: &str| ucis.iter().position(|u| u == uci).unwrap();
        assert_eq!(ucis.len(), 7, "{ucis:?}"); // e2e4 e7e5 c7c5 g1f3 b8c6 f1c4 g8f6
        assert_eq!(ints(&out, "games")[at("e2e4")], 3);
        assert_eq!(ints(&out, "games")[at("c7c5")], 1);
        assert_eq!(ints(&out, "draws")[at("g8f6")], 1);
        assert_eq!(strings(&out, "san")[at("c7c5")], "c5");
        assert_eq!(
            strings(&out, "fen")[at("e7e5")],
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -"
        );
        // After 1. e4, three games stood: two played e5, one c5. The Sicilian ended after c5 (no row).
        assert_eq!(ints(&out, "position_games")[at("c7c5")], 3);
        assert!(out
            .column_by_name("key")
            .unwrap()
            .as_primitive::<Int64Type>()
            .values()
            .is_sorted());
    }

    #[test]
    fn spilled_runs_merge_into_the_book_held_in_memory() {
        let games: &[&[&str]] = &[ITALIAN, SICILIAN, PROMOTES, ITALIAN, PROMOTES, SICILIAN];
        let results = ["W", "B", "D", "B", "W", "*"];
        let (whole, none) = book(games, &results, 40, 1 << 20);
        // The fewest rows a table holds: a run every MIN_ROWS rows, some in the middle of a game.
        let (spilled, runs) = book(games, &results, 40, 1);
        assert_eq!((none, runs), (0, 2));
        assert_eq!(whole, spilled);
        let sans = strings(&whole, "san");
        assert!(sans.contains(&"O-O".to_owned()) && sans.contains(&"bxa8=Q".to_owned()));
        assert_eq!(
            strings(&whole, "uci")[sans.iter().position(|s| s == "O-O").unwrap()],
            "e1g1"
        );
    }

    /// `strings` (a plain string column) dictionary-encoded with keys of type `K`.
    fn dictionary<K: arrow_array::types::ArrowDictionaryKeyType>(strings: ArrayRef) -> ArrayRef {
        let strings = strings.as_string::<i32>();
        Arc::new(strings.iter().collect::<arrow_array::DictionaryArray<K>>())
    }

    #[test]
    fn dictionary_columns_count_as_plain_strings() {
        // int32 keys: pyarrow's `read_dictionary` (the table of codes); int8: the lake's schema (coded
        // whole). Batches of 3 rows: keys and nulls at an offset.
        let games: &[&[&str]] = &[ITALIAN, PROMOTES, SICILIAN, PROMOTES];
        let results = ["W", "D", "B", "*"];
        let of = |name, encode: fn(ArrayRef) -> ArrayRef| {
            book_of(games, &results, 40, 1 << 20, name, encode).0
        };
        let plain = of("dict-plain", |a| a);
        let int32 = of("dict-int32", dictionary::<Int32Type>);
        let int8 = of("dict-int8", dictionary::<arrow_array::types::Int8Type>);
        assert_eq!(plain, int32);
        assert_eq!(plain, int8);
        assert!(strings(&plain, "san").contains(&"bxa8=Q".to_owned()));
    }

    #[test]
    fn refuses_moves_that_do_not_fit_their_games() {
        let dir = spill_dir("unfit");
        let (games, [f, t, p]) = lake(&[ITALIAN, SICILIAN], &["W", "B"]);
        // A plies file missing its first row: every move then belongs to the ply before it.
        let mut counts = BookCounts::new(40, 1 << 20, &dir, "t");
        counts.start_file(&games).unwrap();
        let n = f.len() - 1;
        let error = counts
            .add_moves(&f.slice(1, n), &t.slice(1, n), &p.slice(1, n))
            .unwrap_err();
        assert!(error.0.contains("do not fit their games"), "{error}");
        // A file cut short, and rows past its plies.
        let mut counts = BookCounts::new(40, 1 << 20, &dir, "t");
        counts.start_file(&games).unwrap();
        counts
            .add_moves(&f.slice(0, n), &t.slice(0, n), &p.slice(0, n))
            .unwrap();
        let error = counts.end_file().unwrap_err();
        assert!(
            error.0.contains("9 plies rows for games of 10 plies"),
            "{error}"
        );
        counts.start_file(&games).unwrap();
        let (_, [f, t, p]) = lake(&[ITALIAN, SICILIAN, SICILIAN], &["W", "B", "B"]);
        let error = counts.add_moves(&f, &t, &p).unwrap_err();
        assert!(error.0.contains("past the file's 10 plies"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn plays_on_the_board_the_moves_shakmaty_plays() {
        let mut board = Board::new(&Chess::default());
        let mut pos = Chess::default();
        for uci in PROMOTES.iter().chain(&["e7e5"]) {
            let m = UciMove::from_ascii(uci.as_bytes())
                .unwrap()
                .to_move(&pos)
                .unwrap();
            let (from, to) = (m.from().unwrap() as u8, m.to() as u8);
            board.play_squares(from, to, m.promotion()).unwrap();
            pos.play_unchecked(m);
            assert_eq!(
                board.key as i64,
                crate::zobrist::position_key(&pos),
                "{uci}"
            );
        }
    }
}
