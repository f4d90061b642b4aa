//! The reader on several threads, yielding exactly the batches of the single-threaded one.
//!
//! One thread decompresses and frames (the [`Framer`] is the only splitter: its games go into chunks
//! of whole games, each game with its exact offset); `jobs` worker threads, each with its own parser,
//! replayer and builders, turn a chunk into one batch per partition plus the chunk's steps (a game
//! written, rejected or held back for its missing result); the collector takes the chunks back in
//! input order and replays the steps through the single-threaded reader's batching ([`Pending`],
//! [`Rejects`]): the same batches, rows, rejects and counts, in the same order, for any `jobs`. A batch's
//! games go out as slices of the workers' batches, not copied into one (a copy cost ~9 µs a game on the
//! collector's one thread, measured: a quarter of the parallel reading's extra CPU).
//!
//! Decompression and framing stay on one thread: `zstd -d` runs at ~1 GB/s and the framer at several
//! hundred MB/s, against ~60 MB/s a core for parse and replay, so one thread feeds up to ~10 workers.
//!
//! Memory: at most `2 × jobs + 2` chunks are in flight (framed, being read, or waiting to be put back
//! in order), and at most that many times [`CHUNK_BYTES`] of text, unless one chunk alone is larger (a
//! giant game then travels alone); a worker that read a giant game frees its buffers. The batching
//! holds what the single-threaded reader does (see [`Options`]).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use arrow_array::{make_array, Array, RecordBatch, RecordBatchOptions};
use arrow_data::transform::MutableArrayData;

use crate::columns::GameColumns;
use crate::derive::{derive, Partition};
use crate::framer::Framer;
use crate::input::Input;
use crate::reader::{
    decode, hand_over, panic_message, truncated, unreadable, Batch, BatchSource, Counters,
    Finished, GameReader, Options, Pending, Reject, Rejects, Rows,
};

/// Bytes of game text per chunk (a chunk ends after the game that reaches it), once an input is under
/// way. A chunk costs its worker a fixed ~7 ms besides its games (a batch per partition met: its builders
/// created, grown and cut to their rows, each buffer a mapping or a reallocation): with chunks of 2 MiB
/// (~900 lichess games) the reader threads spent ~25% more CPU a game than the single-threaded reader
/// (200,000-game bench dump, 2026-11-25), and a 1M-game `--jobs 2` load 7% more CPU than with 4 MiB.
/// 8 MiB saved no more CPU on that load and raised its peak RSS by ~90 MB (the chunks in flight).
pub const CHUNK_BYTES: usize = 4 << 20;
/// The first chunk's bytes; each next chunk doubles them up to the chunk size, so that every worker has
/// work from the start, in an input of a few MiB too.
const FIRST_CHUNK_BYTES: usize = 1 << 20;
/// Games per chunk at most.
pub const CHUNK_GAMES: usize = 8192;
/// A worker that read a game longer than this starts afresh, its buffers freed.
const BIG_GAME: usize = 4 << 20;

/// Games framed in a row, with their exact place in the source.
struct Chunk {
    seq: u64,
    text: Vec<u8>,
    frames: Vec<Frame>,
    /// The input ends after this chunk: its last game is followed by no other.
    last: bool,
}

/// One game of a chunk: `text[start..end]`, as the framer cut it.
struct Frame {
    offset: u64,
    length: u64,
    start: usize,
    end: usize,
    oversized: bool,
    cut_by: Option<String>,
}

impl Chunk {
    fn new(seq: u64, chunk_bytes: usize) -> Chunk {
        Chunk {
            seq,
            text: Vec::with_capacity(chunk_bytes + (chunk_bytes >> 2)),
            frames: Vec::new(),
            last: false,
        }
    }

    fn full(&self, chunk_bytes: usize) -> bool {
        self.text.len() >= chunk_bytes || self.frames.len() >= CHUNK_GAMES
    }
}

/// What became of one game of a chunk, in input order.
enum Step {
    /// Written into the chunk's batch of partition `parts[part]`, as its next row. `held`: it has no
    /// result marker, so the single-threaded reader holds it back until the next game shows it whole.
    Game {
        part: usize,
        text_len: usize,
        plies: usize,
        held: bool,
    },
    Reject(Reject),
    /// The input's last game, without a result marker: rejected once the input ends.
    Truncated(Reject),
}

/// A chunk, read.
struct ChunkResult {
    seq: u64,
    last: bool,
    /// Bytes of text of the chunk, to give back to the budget.
    text_len: usize,
    /// One batch per partition met, in the order met.
    parts: Vec<(Partition, Arc<RecordBatch>)>,
    steps: Vec<Step>,
    /// A worker's panic, passed on to the consumer.
    panic: Option<String>,
}

/// One worker: a parser, a replayer and per-partition builders of its own.
struct Worker {
    games: GameReader,
    latin1: String,
    source_name: Arc<str>,
    options: Options,
    plies_written: u64,
    games_written: u64,
}

impl Worker {
    fn read(&mut self, chunk: &Chunk) -> (Vec<(Partition, Arc<RecordBatch>)>, Vec<Step>) {
        let mut parts: Vec<(Partition, GameColumns)> = Vec::new();
        let mut steps = Vec::with_capacity(chunk.frames.len());
        let n = chunk.frames.len();
        for (i, frame) in chunk.frames.iter().enumerate() {
            let text = decode(&chunk.text[frame.start..frame.end], &mut self.latin1);
            let outcome = match unreadable(frame.oversized, &frame.cut_by, &self.options) {
                Some(reason) => Err(reason),
                None => self.games.read(text.as_bytes()),
            };
            let max_raw = self.options.max_reject_raw;
            let scratch = &self.games.replayer.scratch;
            let step = match outcome {
                Err(reason) => Step::Reject(Reject::new(
                    frame.offset,
                    frame.length,
                    reason,
                    &text,
                    max_raw,
                )),
                Ok(()) if scratch.outcome.is_none() && chunk.last && i + 1 == n => {
                    let length = text.len() as u64;
                    Step::Truncated(Reject::new(
                        frame.offset,
                        length,
                        truncated(),
                        &text,
                        max_raw,
                    ))
                }
                Ok(()) => {
                    let row = derive(scratch, None);
                    let part = match parts.iter().position(|(key, _)| *key == row.partition) {
                        Some(part) => part,
                        None => {
                            // The first partition is sized for the rest of the chunk.
                            let games = if parts.is_empty() { n - i } else { 64 };
                            let average = match self.games_written {
                                0 => 80,
                                g => self.plies_written.div_ceil(g) as usize,
                            };
                            let columns = GameColumns::with_capacity(
                                &self.source_name,
                                games,
                                games * average * 9 / 8,
                                self.games.openings.as_ref(),
                            );
                            parts.push((row.partition, columns));
                            parts.len() - 1
                        }
                    };
                    parts[part]
                        .1
                        .append(scratch, &row, frame.offset, &self.games.positions);
                    let plies = scratch.mainline().len();
                    self.plies_written += plies as u64;
                    self.games_written += 1;
                    Step::Game {
                        part,
                        text_len: text.len(),
                        plies,
                        held: scratch.outcome.is_none(),
                    }
                }
            };
            steps.push(step);
        }
        let parts = parts
            .into_iter()
            .map(|(key, mut columns)| {
                let batch = columns.finish().expect("columns follow the schema");
                (key, Arc::new(compact(batch)))
            })
            .collect();
        (parts, steps)
    }

    /// Reads chunks until there are none, or nobody to take the results.
    fn run(mut self, chunks: Arc<Mutex<Receiver<Chunk>>>, results: SyncSender<ChunkResult>) {
        loop {
            let chunk = {
                let chunks = chunks.lock().unwrap_or_else(|p| p.into_inner());
                chunks.recv()
            };
            let Ok(chunk) = chunk else { return };
            let biggest = chunk.frames.iter().map(|f| f.end - f.start).max();
            let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.read(&chunk)));
            let result = match read {
                Ok((parts, steps)) => ChunkResult {
                    seq: chunk.seq,
                    last: chunk.last,
                    text_len: chunk.text.len(),
                    parts,
                    steps,
                    panic: None,
                },
                Err(panic) => ChunkResult {
                    seq: chunk.seq,
                    last: chunk.last,
                    text_len: chunk.text.len(),
                    parts: Vec::new(),
                    steps: Vec::new(),
                    panic: Some(panic_message(&panic).to_owned()),
                },
            };
            if biggest.unwrap_or(0) > BIG_GAME {
                // The parser's and replayer's buffers grew to that game's size: let them go, so that
                // jobs workers do not each keep one giant game's worth.
                self.games = GameReader::new(&self.options);
                self.latin1 = String::new();
            }
            if results.send(result).is_err() {
                return;
            }
        }
    }
}

/// `batch` with each buffer cut to its rows. A worker's builders are sized for more games than their
/// partition gets (the chunk's first partition for the whole chunk): its batches held 1.85 times their
/// bytes (`get_array_memory_size` against the rows' slices, 2026-11-25), until the writer had encoded
/// them; the writer bounds what it holds by the batches' bytes (`nbytes`).
fn compact(batch: RecordBatch) -> RecordBatch {
    let (schema, mut columns, rows) = batch.into_parts();
    columns.iter_mut().for_each(Array::shrink_to_fit);
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(schema, columns, &options).expect("the batch's own columns")
}

/// Chunks in flight, between the framer and the collector: at most `max_chunks`, and at most
/// `max_bytes` of text unless a single chunk is larger (a game of tens of megabytes goes alone).
struct Budget {
    state: Mutex<InFlight>,
    freed: Condvar,
    max_chunks: usize,
    max_bytes: usize,
}

#[derive(Default)]
struct InFlight {
    chunks: usize,
    bytes: usize,
    /// The collector is gone: nothing will be freed any more.
    closed: bool,
}

impl Budget {
    fn lock(&self) -> std::sync::MutexGuard<'_, InFlight> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for room for a chunk of `bytes`; `false` once closed.
    fn acquire(&self, bytes: usize) -> bool {
        let mut state = self.lock();
        loop {
            if state.closed {
                return false;
            }
            let empty = state.chunks == 0;
            if empty || (state.chunks < self.max_chunks && state.bytes + bytes <= self.max_bytes) {
                state.chunks += 1;
                state.bytes += bytes;
                return true;
            }
            state = self.freed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn release(&self, bytes: usize) {
        let mut state = self.lock();
        state.chunks -= 1;
        state.bytes -= bytes;
        self.freed.notify_all();
    }

    fn close(&self) {
        self.lock().closed = true;
        self.freed.notify_all();
    }
}

/// Closes the budget when the collector goes, so that the framer never waits for it.
struct CloseOnDrop(Arc<Budget>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Frames `input` into chunks of whole games of `chunk_bytes` (the first ones smaller, from
/// [`FIRST_CHUNK_BYTES`]), within the budget of chunks in flight.
fn frame_chunks(
    mut framer: Framer<Input>,
    chunk_bytes: usize,
    chunks: SyncSender<Chunk>,
    budget: Arc<Budget>,
) -> Framer<Input> {
    let mut seq = 0;
    let mut size = chunk_bytes.min(FIRST_CHUNK_BYTES);
    let mut chunk = Chunk::new(seq, size);
    let send = |chunk: Chunk| budget.acquire(chunk.text.len()) && chunks.send(chunk).is_ok();
    while let Some(frame) = framer.next_game() {
        if chunk.full(size) {
            // Another game follows: the chunk's last game is not the input's.
            seq += 1;
            size = (2 * size).min(chunk_bytes);
            let next = Chunk::new(seq, size);
            if !send(std::mem::replace(&mut chunk, next)) {
                return framer; // the consumer is gone
            }
        }
        let start = chunk.text.len();
        chunk.text.extend_from_slice(frame.bytes);
        chunk.frames.push(Frame {
            offset: frame.offset,
            length: frame.length,
            start,
            end: chunk.text.len(),
            oversized: frame.oversized,
            cut_by: frame.cut_by,
        });
    }
    chunk.last = true;
    send(chunk);
    framer
}

/// The rows of one partition: runs of rows of the workers' batches, emitted as slices of them, after
/// the copies of earlier runs (`joined`).
#[derive(Default)]
struct Pieces {
    joined: Vec<RecordBatch>,
    pieces: Vec<(Arc<RecordBatch>, usize, usize)>,
    len: usize,
}

/// Pieces a partition may hold before they are copied into one batch. A piece keeps its worker's whole
/// batch alive: a rare partition (ultrabullet, correspondence) fills a batch over thousands of chunks,
/// and held them all (a 1M-game load grew to 3.1 GB with `--jobs 2`). A common one fills its batch
/// from fewer chunks than this, and is never copied. Each run is copied once: joining the earlier copy
/// again each time copied a rare partition's rows over and over (quadratic in its batch's rows).
const MAX_PIECES: usize = 64;

impl Pieces {
    fn push(&mut self, batch: &Arc<RecordBatch>, row: usize) {
        self.len += 1;
        if let Some((last, start, len)) = self.pieces.last_mut() {
            if Arc::ptr_eq(last, batch) && *start + *len == row {
                *len += 1;
                return;
            }
        }
        if self.pieces.len() == MAX_PIECES {
            let runs = std::mem::take(&mut self.pieces);
            self.joined.push(concat(&slices(&runs)));
        }
        self.pieces.push((batch.clone(), row, 1));
    }
}

/// The runs as slices of their batches.
fn slices(runs: &[(Arc<RecordBatch>, usize, usize)]) -> Vec<RecordBatch> {
    (runs.iter())
        .map(|(batch, start, len)| batch.slice(*start, *len))
        .collect()
}

impl Rows for Pieces {
    fn len(&self) -> usize {
        self.len
    }

    /// The copies, then the runs as slices of the workers' batches: no copy (the writer takes chunked
    /// tables).
    fn finish(&mut self) -> Vec<RecordBatch> {
        let mut batches = std::mem::take(&mut self.joined);
        batches.extend(slices(&std::mem::take(&mut self.pieces)));
        batches
    }
}

/// `batches` (of one schema, at least one) as one batch: a copy, unless there is one.
pub fn concat(batches: &[RecordBatch]) -> RecordBatch {
    if let [batch] = batches {
        return batch.clone();
    }
    let schema = batches[0].schema();
    let rows = batches.iter().map(RecordBatch::num_rows).sum();
    let columns = (0..schema.fields().len())
        .map(|c| {
            let data: Vec<_> = batches.iter().map(|b| b.column(c).to_data()).collect();
            let mut out = MutableArrayData::new(data.iter().collect(), false, rows);
            for (i, batch) in batches.iter().enumerate() {
                out.extend(i, 0, batch.num_rows());
            }
            make_array(out.freeze())
        })
        .collect();
    RecordBatch::try_new(schema, columns).expect("batches of one schema")
}

/// A game written, as the collector meets it.
struct GameRef {
    key: Partition,
    batch: Arc<RecordBatch>,
    row: usize,
    text_len: usize,
    plies: usize,
}

/// The game read before the current one, kept back as the single-threaded reader keeps it.
enum Held {
    Game(GameRef),
    Truncated(Reject),
}

/// A step with its row resolved.
enum Resolved {
    Game(GameRef, bool),
    Reject(Reject),
    Truncated(Reject),
}

/// The chunk whose steps are being replayed.
struct Current {
    parts: Vec<(Partition, Arc<RecordBatch>)>,
    /// Rows of each part taken so far.
    cursors: Vec<usize>,
    steps: std::vec::IntoIter<Step>,
}

/// Reads an input on `jobs` worker threads; yields the batches [`crate::reader::BatchReader`] yields.
pub struct ParallelReader {
    results: Receiver<ChunkResult>,
    budget: Arc<Budget>,
    _close: CloseOnDrop,
    waiting: BTreeMap<u64, ChunkResult>,
    next_seq: u64,
    current: Option<Current>,
    /// The chunk marked last was taken: the input is all read.
    ended: bool,
    framer: Option<JoinHandle<Framer<Input>>>,
    workers: Vec<JoinHandle<()>>,
    batches: Pending<Pieces>,
    held: Option<Held>,
    options: Options,
    counters: Arc<Counters>,
    raw_read: Arc<AtomicU64>,
    finished: bool,
}

impl ParallelReader {
    /// A reader of `input` on `jobs` workers (at least one), whose games record `source_name` as their
    /// `source_file`.
    pub fn new(input: Input, source_name: &str, options: Options, jobs: usize) -> ParallelReader {
        Self::with_chunk_bytes(input, source_name, options, jobs, CHUNK_BYTES)
    }

    /// As `new`, with chunks of `chunk_bytes` (tests cut tiny chunks).
    pub fn with_chunk_bytes(
        input: Input,
        source_name: &str,
        options: Options,
        jobs: usize,
        chunk_bytes: usize,
    ) -> ParallelReader {
        let jobs = jobs.max(1);
        let in_flight = 2 * jobs + 2;
        let raw_read = input.raw_read.clone();
        let (chunk_tx, chunk_rx) = sync_channel::<Chunk>(jobs);
        let (result_tx, result_rx) = sync_channel::<ChunkResult>(in_flight);
        let budget = Arc::new(Budget {
            state: Mutex::new(InFlight::default()),
            freed: Condvar::new(),
            max_chunks: in_flight,
            max_bytes: in_flight * chunk_bytes.max(CHUNK_BYTES),
        });
        let framer_budget = budget.clone();
        let framer = Framer::new(input, options.max_game_bytes);
        let framer = std::thread::Builder::new()
            .name("bgn-framer".into())
            .spawn(move || frame_chunks(framer, chunk_bytes.max(1), chunk_tx, framer_budget))
            .expect("spawn the framer thread");
        let chunk_rx = Arc::new(Mutex::new(chunk_rx));
        let source_name: Arc<str> = source_name.into();
        let workers = (0..jobs)
            .map(|i| {
                let worker = Worker {
                    games: GameReader::new(&options),
                    latin1: String::new(),
                    source_name: source_name.clone(),
                    options: options.clone(),
                    plies_written: 0,
                    games_written: 0,
                };
                let (chunks, results) = (chunk_rx.clone(), result_tx.clone());
                std::thread::Builder::new()
                    .name(format!("bgn-reader-{i}"))
                    .spawn(move || worker.run(chunks, results))
                    .expect("spawn a reader thread")
            })
            .collect();
        let counters = Arc::new(Counters::default());
        ParallelReader {
            results: result_rx,
            _close: CloseOnDrop(budget.clone()),
            budget,
            waiting: BTreeMap::new(),
            next_seq: 0,
            current: None,
            ended: false,
            framer: Some(framer),
            workers,
            batches: Pending::new(options.clone(), counters.clone()),
            held: None,
            options,
            counters,
            raw_read,
            finished: false,
        }
    }

    /// The next chunk in input order, `None` after the last.
    fn next_chunk(&mut self) -> Option<ChunkResult> {
        if self.ended {
            return None;
        }
        let result = loop {
            if let Some(result) = self.waiting.remove(&self.next_seq) {
                break result;
            }
            match self.results.recv() {
                Ok(result) => {
                    self.waiting.insert(result.seq, result);
                }
                Err(_) => panic!("the reader threads stopped before the end of the input"),
            }
        };
        if let Some(panic) = &result.panic {
            panic!("a reader thread panicked: {panic}");
        }
        self.next_seq += 1;
        self.ended = result.last;
        // Its place in flight goes back to the framer.
        self.budget.release(result.text_len);
        Some(result)
    }

    /// The next game's step, in input order; `None` at the end of the input.
    fn next_step(&mut self) -> Option<Resolved> {
        loop {
            if let Some(current) = &mut self.current {
                if let Some(step) = current.steps.next() {
                    return Some(match step {
                        Step::Game {
                            part,
                            text_len,
                            plies,
                            held,
                        } => {
                            let (key, batch) = &current.parts[part];
                            let row = current.cursors[part];
                            current.cursors[part] += 1;
                            let game = GameRef {
                                key: *key,
                                batch: batch.clone(),
                                row,
                                text_len,
                                plies,
                            };
                            Resolved::Game(game, held)
                        }
                        Step::Reject(reject) => Resolved::Reject(reject),
                        Step::Truncated(reject) => Resolved::Truncated(reject),
                    });
                }
            }
            let chunk = self.next_chunk()?;
            self.current = Some(Current {
                cursors: vec![0; chunk.parts.len()],
                parts: chunk.parts,
                steps: chunk.steps.into_iter(),
            });
        }
    }

    fn append(&mut self, game: GameRef) {
        self.batches.append(
            game.key,
            game.text_len,
            game.plies,
            |_, _| Pieces::default(),
            |pieces| pieces.push(&game.batch, game.row),
        );
    }

    /// The next batch (games of one partition), or `None` when the input is exhausted: the steps of
    /// [`crate::reader::BatchReader::next_batch`], game for game.
    pub fn next_batch(&mut self) -> Option<Batch> {
        let mut rejects = Rejects::new(self.options.max_reject_raw);
        let full = loop {
            if let Some(key) = self.batches.full_partition() {
                break Some(key);
            }
            if self.finished {
                break self.batches.any();
            }
            let Some(step) = self.next_step() else {
                self.finished = true;
                match self.held.take() {
                    Some(Held::Truncated(reject)) => rejects.push(reject, &self.counters),
                    Some(Held::Game(game)) => self.append(game), // not met: the last is truncated
                    None => {}
                }
                continue;
            };
            // A game follows the one held back: that one was whole.
            match self.held.take() {
                Some(Held::Game(game)) => self.append(game),
                Some(Held::Truncated(reject)) => rejects.push(reject, &self.counters),
                None => {}
            }
            self.counters.seen.fetch_add(1, Ordering::Relaxed);
            match step {
                Resolved::Game(game, true) => self.held = Some(Held::Game(game)),
                Resolved::Game(game, false) => self.append(game),
                Resolved::Reject(reject) => rejects.push(reject, &self.counters),
                Resolved::Truncated(reject) => self.held = Some(Held::Truncated(reject)),
            }
            if rejects.full(&self.options) {
                break None; // a run of bad input: hand the rejects over, keep memory bounded
            }
        };
        hand_over(full, &mut self.batches, rejects)
    }

    /// The input and its damage, once `next_batch` returned `None`.
    pub fn into_finished(self) -> Finished {
        let ParallelReader {
            results,
            _close,
            framer,
            workers,
            ..
        } = self;
        // Whatever is still in flight (a consumer gone early) unwinds: the workers' results find
        // nobody, the framer no place for another chunk.
        drop((results, _close));
        let framer = framer.expect("the framer thread is joined once");
        let framer = framer.join().expect("framer thread panicked");
        for worker in workers {
            worker.join().expect("reader thread panicked");
        }
        Finished::new(framer)
    }
}

impl BatchSource for ParallelReader {
    fn next_batch(&mut self) -> Option<Batch> {
        ParallelReader::next_batch(self)
    }

    fn counters(&self) -> Arc<Counters> {
        self.counters.clone()
    }

    fn raw_read(&self) -> Arc<AtomicU64> {
        self.raw_read.clone()
    }

    fn into_finished(self) -> Finished {
        ParallelReader::into_finished(self)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use proptest::prelude::*;

    use super::*;
    use crate::reader::BatchReader;
    use crate::reject::RejectKind;

    fn game(site: &str, tc: &str, date: &str, result: &str) -> String {
        format!(
            "[Event \"e\"]\n[Site \"{site}\"]\n[White \"a\"]\n[Black \"b\"]\n[Result \"*\"]\n\
             [TimeControl \"{tc}\"]\n[UTCDate \"{date}\"]\n\n1. e4 {{ [%clk 0:03:00] }} e5 \
             2. Nf3 (2. f4 exf4) Nc6 3. Bb5 $1 a6 {result}\n\n"
        )
    }

    /// Games of several partitions, rejects, games without a result marker, Latin-1 text.
    fn mixed(n: usize) -> Vec<u8> {
        let mut text = Vec::new();
        for i in 0..n {
            let tc = ["180+0", "600+5", "30+0", "-"][i % 4];
            let date = ["2025.05.01", "2025.06.02", "2024.01.03"][i % 3];
            let result = if i % 7 == 3 { "" } else { "1-0" };
            text.extend(game(&format!("s{i}"), tc, date, result).into_bytes());
            if i % 11 == 5 {
                text.extend(b"[Event \"bad\"]\n\n1. e4 e5 2. Ke3 Zz9 1-0\n\n");
            }
            if i == 100 {
                // Longer than the framer's read window: too large under `small()`.
                let long = game("long", "180+0", "2025.05.01", "0-1");
                let comment = format!("a6 {{{}}}", "x".repeat(3 << 20));
                text.extend(long.replace("a6", &comment).into_bytes());
            }
            if i % 13 == 6 {
                text.extend(b"[Event \"caf\xe9\"]\n[Result \"1-0\"]\n\n1. e4 e5 1-0\n\n");
            }
        }
        text
    }

    fn input(bytes: Vec<u8>) -> Input {
        Input::from_reader("t", Box::new(Cursor::new(bytes)), None).expect("readable input")
    }

    type RejectSeen = (u64, u64, RejectKind, String, String);
    type Seen = (
        Vec<(Option<Partition>, Option<RecordBatch>, Vec<RejectSeen>)>,
        [u64; 3],
        Option<String>,
    );

    /// Everything a read yields, as text to compare: batches (partition, rows, rejects), counts, damage.
    fn drain(mut source: impl BatchSource) -> Seen {
        let counters = source.counters();
        let mut out = Vec::new();
        while let Some(batch) = source.next_batch() {
            let rejects: Vec<_> = (batch.rejects.into_iter())
                .map(|r| (r.offset, r.length, r.reason.kind, r.reason.message, r.raw))
                .collect();
            // Compared as rows: the parallel reader hands over runs of its workers' batches.
            let games = (!batch.games.is_empty()).then(|| concat(&batch.games));
            out.push((batch.partition, games, rejects));
        }
        let counts = [
            counters.seen.load(Ordering::Relaxed),
            counters.written.load(Ordering::Relaxed),
            counters.rejected.load(Ordering::Relaxed),
        ];
        let finished = source.into_finished();
        (out, counts, finished.damage().map(str::to_owned))
    }

    fn both(bytes: &[u8], options: Options, jobs: usize, chunk_bytes: usize) -> (Seen, Seen) {
        let serial = drain(BatchReader::new(
            input(bytes.to_vec()),
            "t",
            options.clone(),
        ));
        let parallel = drain(ParallelReader::with_chunk_bytes(
            input(bytes.to_vec()),
            "t",
            options,
            jobs,
            chunk_bytes,
        ));
        (serial, parallel)
    }

    fn small() -> Options {
        Options {
            batch_games: 5,
            batch_bytes: 4096,
            max_game_bytes: 600,
            max_reject_raw: 50,
            max_partitions: 3,
            ..Options::default()
        }
    }

    #[test]
    fn same_batches_as_one_thread_whatever_the_chunks() {
        let text = mixed(200);
        for options in [Options::default(), small()] {
            for (jobs, chunk_bytes) in [(1, 1), (2, 1), (3, 300), (4, 5000), (2, 1 << 20)] {
                let (serial, parallel) = both(&text, options.clone(), jobs, chunk_bytes);
                assert!(serial.1[0] > 200 && serial.1[2] > 0, "{:?}", serial.1);
                let kinds: std::collections::BTreeSet<_> =
                    serial.0.iter().flat_map(|b| &b.2).map(|r| r.2).collect();
                assert!(kinds.contains(&RejectKind::IllegalMove), "{kinds:?}");
                if options.max_game_bytes == 600 {
                    assert!(kinds.contains(&RejectKind::TooLarge), "{kinds:?}");
                }
                assert_eq!(serial, parallel, "jobs {jobs}, chunks of {chunk_bytes}");
            }
        }
    }

    #[test]
    fn last_game_without_result_is_truncated_in_any_chunk() {
        let mut text = mixed(20);
        text.extend(game("last", "180+0", "2025.05.01", "").into_bytes());
        for chunk_bytes in [1, 700, 1 << 20] {
            let (serial, parallel) = both(&text, small(), 3, chunk_bytes);
            let last = serial.0.iter().flat_map(|b| &b.2).last().expect("a reject");
            assert_eq!(last.2, RejectKind::Truncated);
            assert_eq!(serial, parallel);
        }
    }

    #[test]
    fn damaged_zstd_and_empty_input() {
        let text = mixed(300);
        let mut zst = zstd::encode_all(&text[..], 1).unwrap();
        let cut = zst.len() * 2 / 3;
        zst.truncate(cut);
        zst.extend_from_slice(&[0xAB; 40]);
        for chunk_bytes in [1, 2000] {
            let (serial, parallel) = both(&zst, small(), 2, chunk_bytes);
            assert!(serial.2.is_some(), "damage reported");
            assert_eq!(serial, parallel);
        }
        let (serial, parallel) = both(b"\n\n", small(), 2, 10);
        assert_eq!(serial.1, [0, 0, 0]);
        assert_eq!(serial, parallel);
    }

    #[test]
    fn concat_keeps_rows_in_order() {
        let text = mixed(30);
        let batch = |skip: usize| {
            let mut r = BatchReader::new(input(text[skip..].to_vec()), "t", Options::default());
            let mut out = Vec::new();
            while let Some(mut b) = r.next_batch() {
                if b.num_rows() > 2 {
                    out.push(b.games.remove(0));
                }
            }
            out
        };
        let a = batch(0);
        let (x, y) = (&a[0], &a[1]);
        let expect = [x.slice(1, 2), y.slice(0, 2), x.slice(0, 1)];
        let joined = concat(&expect);
        assert_eq!(joined.num_rows(), 5);
        for (i, e) in [(0, &expect[0]), (2, &expect[1]), (4, &expect[2])] {
            assert_eq!(&joined.slice(i, e.num_rows()), e);
        }
        // One batch goes out as is.
        let whole = concat(std::slice::from_ref(x));
        assert_eq!(
            whole.column(0).to_data().buffers()[0].as_ptr(),
            x.column(0).to_data().buffers()[0].as_ptr()
        );
    }

    #[test]
    fn a_partition_of_rows_from_many_chunks_holds_few_of_their_batches() {
        // A row from each of 1,000 workers' batches (a rare partition over 1,000 chunks): the pieces
        // are joined on the way, so that at most MAX_PIECES batches stay alive, each row copied once at most;
        // the rows unchanged.
        let text = mixed(30);
        let mut r = BatchReader::new(input(text), "t", Options::default());
        let first = r.next_batch().expect("a batch").games.remove(0);
        let chunks: Vec<Arc<RecordBatch>> = (0..1000).map(|_| Arc::new(first.clone())).collect();
        let mut pieces = Pieces::default();
        for (i, batch) in chunks.iter().enumerate() {
            pieces.push(batch, i % first.num_rows());
            assert!(
                pieces.pieces.len() <= MAX_PIECES,
                "{} pieces",
                pieces.pieces.len()
            );
        }
        assert_eq!(pieces.len(), 1000);
        let batches = pieces.finish();
        // Each row copied once at most: no copy holds an earlier copy's rows again.
        assert!(
            batches.iter().all(|b| b.num_rows() <= MAX_PIECES),
            "{:?}",
            batches
                .iter()
                .map(RecordBatch::num_rows)
                .collect::<Vec<_>>()
        );
        let rows = concat(&batches);
        assert_eq!(rows.num_rows(), 1000);
        for i in [0, 63, 64, 65, 500, 999] {
            let row = i % first.num_rows();
            assert_eq!(rows.slice(i, 1), first.slice(row, 1));
        }
        drop(rows);
        assert!(
            chunks.iter().all(|c| Arc::strong_count(c) == 1),
            "a batch still held"
        );
    }

    /// The chunks the framer cuts `text` into (up to 1,000, all in flight at once).
    fn framed(text: Vec<u8>) -> Vec<Chunk> {
        let framer = Framer::new(input(text), Options::default().max_game_bytes);
        let (tx, rx) = sync_channel(1000);
        let budget = Arc::new(Budget {
            state: Mutex::new(InFlight::default()),
            freed: Condvar::new(),
            max_chunks: 1000,
            max_bytes: usize::MAX,
        });
        frame_chunks(framer, CHUNK_BYTES, tx, budget);
        rx.iter().collect()
    }

    #[test]
    fn a_workers_batches_hold_what_they_contain() {
        // A chunk of games of a dozen partitions: each partition's builders were sized for more games
        // than it got, and its batch kept that capacity until the writer had encoded it.
        let options = Options::default();
        let text: String = (0..2400)
            .map(|i| {
                let tc = ["180+0", "600+5", "30+0", "-"][i % 4];
                let date = ["2025.05.01", "2025.06.02", "2024.01.03"][i % 3];
                game(&format!("s{i}"), tc, date, "1-0")
            })
            .collect();
        let chunk = framed(text.into_bytes()).remove(0);
        let mut worker = Worker {
            games: GameReader::new(&options),
            latin1: String::new(),
            source_name: "t".into(),
            options,
            plies_written: 0,
            games_written: 0,
        };
        let (parts, _) = worker.read(&chunk);
        assert!(parts.len() >= 12, "{} partitions", parts.len());
        let held: usize = parts.iter().map(|(_, b)| b.get_array_memory_size()).sum();
        let rows: usize = (parts.iter().flat_map(|(_, b)| b.columns()))
            .map(|c| c.to_data().get_slice_memory_size().expect("valid arrays"))
            .sum();
        assert!(
            held < rows + rows / 4,
            "{held} bytes held for {rows} bytes of rows"
        );
    }

    #[test]
    fn chunks_grow_to_their_size_from_a_small_first() {
        // A chunk costs its worker a fixed overhead: chunks of CHUNK_BYTES, after smaller first ones
        // (every worker busy early in a small input).
        // Games of ~2 KB, as lichess's: chunks end by their bytes, not by CHUNK_GAMES.
        let comment = format!("a6 {{{}}}", "x".repeat(2000));
        let one = game("s", "180+0", "2025.05.01", "1-0").replace("a6", &comment);
        let text = one.repeat((20 << 20) / one.len());
        let sizes: Vec<usize> = framed(text.into_bytes())
            .iter()
            .map(|c| c.text.len())
            .collect();
        let expected = [1 << 20, 2 << 20, 4 << 20, 4 << 20, 4 << 20];
        for (size, expected) in sizes.iter().zip(expected) {
            assert!((expected..expected + one.len()).contains(size), "{sizes:?}");
        }
        assert!(sizes.len() > expected.len(), "{sizes:?}");
    }

    #[test]
    fn a_consumer_gone_early_stops_every_thread() {
        let text = mixed(500);
        let mut reader = ParallelReader::with_chunk_bytes(input(text), "t", small(), 3, 200);
        reader.next_batch().expect("a batch");
        let _ = reader.into_finished(); // joins the framer and the workers
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]
        #[test]
        fn same_batches_on_spliced_games(
            picks in prop::collection::vec(0usize..6, 0..60),
            cut in 0usize..4000,
            jobs in 1usize..4,
            chunk_bytes in 1usize..3000,
        ) {
            let pieces: [&[u8]; 6] = [
                b"[Result \"1-0\"]\n\n1. e4 e5 1-0\n\n",
                b"1. d4 d5 2. c4\n\n",
                b"[Event \"x\"]\n[UTCDate \"2021.02.03\"]\n[TimeControl \"60+0\"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n",
                b"{ open comment\n\n[Event \"y\"]\n",
                b"\r\n[Site \"z\"]\r\n\r\n1. Nf3 *\r\n\r\n",
                b"[Event \"q\"]\n\n1. e4 Ke7 2. Zz 1-0\n\n",
            ];
            let mut text: Vec<u8> = picks.iter().flat_map(|&p| pieces[p].to_vec()).collect();
            text.truncate(cut.min(text.len()));
            // A cut that leaves no tag pair and no move (`[`, `1. d`) is refused before any read.
            if let Err(refused) = Input::from_reader("t", Box::new(Cursor::new(text.clone())), None) {
                prop_assert!(refused.to_string().contains("not PGN"), "{}", refused);
                return Ok(());
            }
            let (serial, parallel) = both(&text, small(), jobs, chunk_bytes);
            prop_assert_eq!(serial, parallel);
        }
    }
}
