//! The book's rows out of its counts ([`crate::book`]): the runs spilled to disk and the rows left in
//! memory merged (k-way, by key then move), the counts of a row found in several summed, the rows of
//! fewer than `min_games` games left out, and the rows kept named (FEN, UCI, SAN) from their board.
//!
//! A run is a file of fixed-size little-endian records (`RECORD` bytes: key, move, counts, packed
//! board) sorted by key then move. Runs past `FAN_IN` are first merged into longer runs, `FAN_IN` at
//! a time, so that the final merge reads a bounded number of files at once.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{
    Float64Builder, Int64Builder, StringBuilder, TimestampMillisecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use shakmaty::fen::Epd;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Square};

use crate::book::{error, move_parts, BookCounts, BookError, Counts, MoveCode, Slot, GAME_END};
use crate::variant::chess_from_fen;
use crate::zobrist::{Board, Packed, PACKED};

/// A row of the book: a position's key, a move (or `GAME_END`), its counts, and the position's board.
#[derive(Clone, Debug)]
pub struct Entry {
    pub key: i64,
    pub code: MoveCode,
    pub counts: Counts,
    pub board: Packed,
}

/// Bytes of a run's record: key, move, the eight counts, the board.
const RECORD: usize = 8 + 2 + 8 * 8 + PACKED;
/// Runs merged at once.
const FAN_IN: usize = 32;
/// The buffer of each run read or written.
const RUN_BUFFER: usize = 1 << 18;

fn io_error(path: &Path, e: std::io::Error) -> BookError {
    error(format!("book: {}: {e}", path.display()))
}

/// A run being written, its entries given sorted by key then move.
pub(crate) struct RunWriter {
    path: PathBuf,
    out: BufWriter<File>,
}

impl RunWriter {
    pub(crate) fn create(path: PathBuf) -> Result<RunWriter, BookError> {
        let file = File::create(&path).map_err(|e| io_error(&path, e))?;
        Ok(RunWriter {
            out: BufWriter::with_capacity(RUN_BUFFER, file),
            path,
        })
    }

    pub(crate) fn push(&mut self, entry: &Entry) -> Result<(), BookError> {
        self.out
            .write_all(&encode(entry))
            .map_err(|e| io_error(&self.path, e))
    }

    /// The run's path, once all of it is written.
    pub(crate) fn finish(mut self) -> Result<PathBuf, BookError> {
        self.out.flush().map_err(|e| io_error(&self.path, e))?;
        Ok(self.path)
    }
}

fn encode(entry: &Entry) -> [u8; RECORD] {
    let mut record = [0u8; RECORD];
    record[..8].copy_from_slice(&entry.key.to_le_bytes());
    record[8..10].copy_from_slice(&entry.code.to_le_bytes());
    let c = &entry.counts;
    let counts = [
        c.games,
        c.white_wins,
        c.draws,
        c.black_wins,
        c.rated,
        c.elo_sums,
        c.first_date,
        c.last_date,
    ];
    for (i, value) in counts.iter().enumerate() {
        record[10 + 8 * i..18 + 8 * i].copy_from_slice(&value.to_le_bytes());
    }
    record[RECORD - PACKED..].copy_from_slice(&entry.board);
    record
}

fn decode(record: &[u8; RECORD]) -> Entry {
    let int = |at: usize| i64::from_le_bytes(record[at..at + 8].try_into().expect("8 bytes"));
    let mut board = [0; PACKED];
    board.copy_from_slice(&record[RECORD - PACKED..]);
    Entry {
        key: int(0),
        code: u16::from_le_bytes([record[8], record[9]]),
        counts: Counts {
            games: int(10),
            white_wins: int(18),
            draws: int(26),
            black_wins: int(34),
            rated: int(42),
            elo_sums: int(50),
            first_date: int(58),
            last_date: int(66),
        },
        board,
    }
}

/// A run being read; its file is deleted once read to its end, or dropped.
struct RunReader {
    path: PathBuf,
    input: BufReader<File>,
}

impl RunReader {
    fn open(path: PathBuf) -> Result<RunReader, BookError> {
        let file = File::open(&path).map_err(|e| io_error(&path, e))?;
        Ok(RunReader {
            input: BufReader::with_capacity(RUN_BUFFER, file),
            path,
        })
    }

    fn next(&mut self) -> Result<Option<Entry>, BookError> {
        let mut record = [0u8; RECORD];
        match self.input.read_exact(&mut record) {
            Ok(()) => Ok(Some(decode(&record))),
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(io_error(&self.path, e)),
        }
    }
}

impl Drop for RunReader {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// One sorted input of a merge: a run, or the rows a counter held in memory (in `order`).
enum Source {
    Run(RunReader),
    Memory {
        slots: Vec<Slot>,
        order: std::vec::IntoIter<u32>,
    },
}

impl Source {
    fn next(&mut self) -> Result<Option<Entry>, BookError> {
        match self {
            Source::Run(run) => run.next(),
            Source::Memory { slots, order } => {
                Ok(order.next().map(|i| slots[i as usize].entry.clone()))
            }
        }
    }
}

/// The entries of several sorted sources in order, those of one (key, move) combined into one.
struct Merge {
    sources: Vec<Source>,
    heads: Vec<Option<Entry>>,
    heap: BinaryHeap<Reverse<(i64, MoveCode, usize)>>,
}

impl Merge {
    fn new(mut sources: Vec<Source>) -> Result<Merge, BookError> {
        let mut heads = Vec::with_capacity(sources.len());
        let mut heap = BinaryHeap::with_capacity(sources.len());
        for (i, source) in sources.iter_mut().enumerate() {
            let head = source.next()?;
            if let Some(entry) = &head {
                heap.push(Reverse((entry.key, entry.code, i)));
            }
            heads.push(head);
        }
        Ok(Merge {
            sources,
            heads,
            heap,
        })
    }

    /// The head of source `i`, replaced by its next entry.
    fn pop(&mut self, i: usize) -> Result<Entry, BookError> {
        let next = self.sources[i].next()?;
        if let Some(entry) = &next {
            self.heap.push(Reverse((entry.key, entry.code, i)));
        }
        Ok(std::mem::replace(&mut self.heads[i], next).expect("a source in the heap has a head"))
    }

    fn next(&mut self) -> Result<Option<Entry>, BookError> {
        let Some(Reverse((key, code, i))) = self.heap.pop() else {
            return Ok(None);
        };
        let mut entry = self.pop(i)?;
        while let Some(&Reverse((k, c, j))) = self.heap.peek() {
            if (k, c) != (key, code) {
                break;
            }
            self.heap.pop();
            let other = self.pop(j)?;
            entry.counts.merge(&other.counts);
        }
        Ok(Some(entry))
    }
}

/// The rows of the book counted by `counters`, merged: a [`BookRows`] that gives them in batches.
pub fn book_rows(
    counters: Vec<BookCounts>,
    min_games: i64,
    spill_dir: &Path,
) -> Result<BookRows, BookError> {
    let mut sources = Vec::new();
    let mut runs = Vec::new();
    for counts in counters {
        let counted = counts.finish()?;
        sources.push(Source::Memory {
            slots: counted.slots,
            order: counted.order.into_iter(),
        });
        runs.extend(counted.runs);
    }
    let mut merged = 0;
    while runs.len() > FAN_IN {
        // The oldest runs first, so that no run is merged again before the others were once.
        let group: Vec<PathBuf> = runs.drain(..FAN_IN).collect();
        let mut run = RunWriter::create(spill_dir.join(format!("merged-{merged}.run")))?;
        merged += 1;
        let readers = group
            .into_iter()
            .map(|p| RunReader::open(p).map(Source::Run))
            .collect::<Result<Vec<_>, _>>()?;
        let mut merge = Merge::new(readers)?;
        while let Some(entry) = merge.next()? {
            run.push(&entry)?;
        }
        runs.push(run.finish()?);
    }
    for path in runs {
        sources.push(Source::Run(RunReader::open(path)?));
    }
    Ok(BookRows {
        merge: Merge::new(sources)?,
        min_games,
        pending: None,
    })
}

/// The merged rows of a book, a position's rows at a time, as record batches.
pub struct BookRows {
    merge: Merge,
    min_games: i64,
    /// The first entry of the next position, read past the end of the previous one.
    pending: Option<Entry>,
}

/// The columns of a batch of rows being built.
struct Columns {
    keys: Int64Builder,
    fens: StringBuilder,
    ucis: StringBuilder,
    sans: StringBuilder,
    counts: [Int64Builder; 5],
    means: Float64Builder,
    firsts: TimestampMillisecondBuilder,
    lasts: TimestampMillisecondBuilder,
    positions: [Int64Builder; 4],
    rows: usize,
}

impl Columns {
    fn new() -> Columns {
        Columns {
            keys: Int64Builder::new(),
            fens: StringBuilder::new(),
            ucis: StringBuilder::new(),
            sans: StringBuilder::new(),
            counts: std::array::from_fn(|_| Int64Builder::new()),
            means: Float64Builder::new(),
            firsts: TimestampMillisecondBuilder::new().with_timezone("UTC"),
            lasts: TimestampMillisecondBuilder::new().with_timezone("UTC"),
            positions: std::array::from_fn(|_| Int64Builder::new()),
            rows: 0,
        }
    }

    fn push(&mut self, key: i64, fen: &str, names: (String, String), c: &Counts, at: &Counts) {
        self.keys.append_value(key);
        self.fens.append_value(fen);
        self.ucis.append_value(names.0);
        self.sans.append_value(names.1);
        let values = [c.white_wins, c.draws, c.black_wins, c.games, c.rated];
        for (builder, value) in self.counts.iter_mut().zip(values) {
            builder.append_value(value);
        }
        self.means
            .append_option((c.rated > 0).then(|| c.elo_sums as f64 / (2 * c.rated) as f64));
        self.firsts
            .append_option((c.first_date != i64::MAX).then_some(c.first_date));
        self.lasts
            .append_option((c.last_date != i64::MIN).then_some(c.last_date));
        let totals = [at.white_wins, at.draws, at.black_wins, at.games];
        for (builder, value) in self.positions.iter_mut().zip(totals) {
            builder.append_value(value);
        }
        self.rows += 1;
    }

    fn finish(mut self) -> Result<RecordBatch, BookError> {
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
        for name in POSITION_COLUMNS {
            fields.push(Field::new(name, DataType::Int64, false));
        }
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(self.keys.finish()),
            Arc::new(self.fens.finish()),
            Arc::new(self.ucis.finish()),
            Arc::new(self.sans.finish()),
        ];
        columns.extend(
            self.counts
                .iter_mut()
                .map(|b| Arc::new(b.finish()) as ArrayRef),
        );
        columns.push(Arc::new(self.means.finish()));
        columns.push(Arc::new(self.firsts.finish()));
        columns.push(Arc::new(self.lasts.finish()));
        columns.extend(
            self.positions
                .iter_mut()
                .map(|b| Arc::new(b.finish()) as ArrayRef),
        );
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
            .map_err(|e| error(e.to_string()))
    }
}

/// The columns of a row's position: the games that stood in it (played a move from it, or ended
/// there), all its moves counted before any is left out.
pub const POSITION_COLUMNS: [&str; 4] = [
    "position_white_wins",
    "position_draws",
    "position_black_wins",
    "position_games",
];

impl BookRows {
    /// The next batch of at least `rows` rows (fewer at the end; a position's rows are never split),
    /// `None` after the last: `key`, `fen` (the position's, without move counters), `uci`, `san`,
    /// `white_wins`, `draws`, `black_wins`, `games`, `rated`, `mean_rating` (of the rated games' mean
    /// Elos), `first_date`, `last_date`, and the position's totals (`POSITION_COLUMNS`). A row is kept
    /// when it and its position have at least `min_games` games; sorted by key, then UCI.
    pub fn next_batch(&mut self, rows: usize) -> Result<Option<RecordBatch>, BookError> {
        let mut columns = Columns::new();
        let mut position = Vec::new();
        loop {
            let first = match self.pending.take() {
                Some(entry) => entry,
                None => match self.merge.next()? {
                    Some(entry) => entry,
                    None => break,
                },
            };
            position.clear();
            let key = first.key;
            position.push(first);
            while let Some(entry) = self.merge.next()? {
                if entry.key != key {
                    self.pending = Some(entry);
                    break;
                }
                position.push(entry);
            }
            self.name_position(&position, &mut columns)?;
            if columns.rows >= rows {
                break;
            }
        }
        match columns.rows {
            0 => Ok(None),
            _ => columns.finish().map(Some),
        }
    }

    /// Appends the kept rows of one position's entries (all of one key) to `columns`.
    fn name_position(&self, entries: &[Entry], columns: &mut Columns) -> Result<(), BookError> {
        let mut total = Counts::EMPTY;
        for entry in entries {
            total.merge(&entry.counts);
        }
        let kept = |e: &&Entry| e.code != GAME_END && e.counts.games >= self.min_games;
        if total.games < self.min_games || !entries.iter().any(|e| kept(&e)) {
            return Ok(());
        }
        let mut namer: Option<Namer> = None;
        for entry in entries.iter().filter(kept) {
            let namer = match &mut namer {
                Some(namer) => namer,
                None => namer.insert(Namer::new(entry)?),
            };
            columns.push(
                entry.key,
                &namer.epd,
                namer.name(entry.code)?,
                &entry.counts,
                &total,
            );
        }
        Ok(())
    }
}

/// A position's FEN, and its moves' names.
struct Namer {
    pos: Chess,
    epd: String,
    fen: String,
}

impl Namer {
    fn new(entry: &Entry) -> Result<Namer, BookError> {
        let fen = Board::unpack(&entry.board, entry.key as u64).fen();
        let pos = chess_from_fen(&fen, false).map_err(|e| {
            error(format!(
                "book: the board of key {} is no position ({fen}): {e}",
                entry.key
            ))
        })?;
        let epd = Epd::from_position(&pos, EnPassantMode::Legal).to_string();
        Ok(Namer { pos, epd, fen })
    }

    /// The UCI (castling as the king's two steps, as python-chess writes it) and SAN of a move.
    fn name(&self, code: MoveCode) -> Result<(String, String), BookError> {
        let (from, to, promotion) = move_parts(code);
        let uci = UciMove::Normal {
            from: Square::new(u32::from(from)),
            to: Square::new(u32::from(to)),
            promotion,
        };
        let m = uci.to_move(&self.pos).map_err(|_| {
            error(format!(
                "book: {uci} is no legal move in {}: the lake's moves are damaged",
                self.fen
            ))
        })?;
        let name = m.to_uci(CastlingMode::Standard).to_string();
        Ok((name, SanPlus::from_move(self.pos.clone(), m).to_string()))
    }
}
