//! From an input to batches of games and their rejects.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;
use std::thread::JoinHandle;

use arrow_array::RecordBatch;

use std::collections::HashMap;

use crate::columns::{partition, GameColumns, Partition};
use crate::framer::Framer;
use crate::input::Input;
use crate::parse::GameParser;
use crate::replay::Replayer;

/// A game kept out of the lake, and why.
#[derive(Debug)]
pub struct Reject {
    pub offset: u64,
    pub reason: String,
    pub raw: String,
}

/// Accepted games as Arrow, plus the games rejected while reading them.
pub struct Batch {
    pub games: RecordBatch,
    pub rejects: Vec<Reject>,
}

/// Live counts, readable from another thread while the reader works (progress bars).
#[derive(Default, Debug)]
pub struct Counters {
    pub seen: AtomicU64,
    pub written: AtomicU64,
    pub rejected: AtomicU64,
    pub decompressed: AtomicU64,
}

/// Limits of one read.
#[derive(Copy, Clone, Debug)]
pub struct Options {
    /// Games per batch.
    pub batch_games: usize,
    /// Longest game kept in memory; longer ones are rejected.
    pub max_game_bytes: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            batch_games: 8192,
            max_game_bytes: 64 << 20,
        }
    }
}

/// Reads games from an input and yields batches; single-threaded.
pub struct BatchReader {
    framer: Framer<Input>,
    replayer: Replayer,
    /// Games waiting to be emitted, one builder per partition, so that every batch belongs to one
    /// partition and the writer never has to split nested data.
    pending: HashMap<Partition, GameColumns>,
    pending_games: usize,
    /// Mainline moves of the games written so far, to size the builders of the next batches.
    plies_written: u64,
    source_name: String,
    latin1: String,
    parser: GameParser,
    options: Options,
    counters: Arc<Counters>,
    finished: bool,
}

impl BatchReader {
    pub fn new(input: Input, source_name: &str, options: Options) -> BatchReader {
        BatchReader {
            framer: Framer::new(input, options.max_game_bytes),
            replayer: Replayer::default(),
            pending: HashMap::new(),
            pending_games: 0,
            plies_written: 0,
            source_name: source_name.to_owned(),
            latin1: String::new(),
            parser: GameParser::default(),
            options,
            counters: Arc::new(Counters::default()),
            finished: false,
        }
    }

    pub fn counters(&self) -> Arc<Counters> {
        self.counters.clone()
    }

    /// The read error that cut the input short (damaged compressed data), once reading is done.
    pub fn damage(&self) -> Option<&str> {
        self.framer.error()
    }

    pub fn input(&self) -> &Input {
        self.framer.reader()
    }

    /// The next batch (games of one partition), or `None` when the input is exhausted.
    pub fn next_batch(&mut self) -> Option<Batch> {
        let mut rejects = Vec::new();
        let full = loop {
            if let Some(key) = self.full_partition() {
                break Some(key);
            }
            if self.finished {
                break self.pending.keys().next().copied();
            }
            let Some(frame) = self.framer.next_frame() else {
                self.finished = true;
                continue;
            };
            self.counters.seen.fetch_add(1, Ordering::Relaxed);
            let offset = frame.offset;
            let text = decode(frame.bytes, &mut self.latin1);
            let outcome = if frame.oversized {
                Err(format!(
                    "game longer than {} bytes: skipped (raw text truncated)",
                    self.options.max_game_bytes
                ))
            } else if let Some(cut) = &frame.cut_by {
                Err(format!("game cut short: {cut}"))
            } else {
                // A bug on some odd input must cost that game (rejected, with the reason), not the load.
                let parse = || self.parser.parse(&mut self.replayer, text.as_bytes());
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(parse)).unwrap_or_else(
                    |panic| {
                        self.parser = GameParser::default();
                        Err(format!(
                            "internal error while reading this game: {}",
                            panic_message(&panic)
                        ))
                    },
                )
            };
            match outcome {
                Ok(()) => {
                    let scratch = &self.replayer.scratch;
                    let key = partition(scratch);
                    // Size for a full batch, within what all partitions together may hold.
                    let batch = self.options.batch_games;
                    let games = batch.min(4 * batch - self.pending_games).max(1);
                    let plies = games * self.plies_per_game();
                    let columns = self.pending.entry(key).or_insert_with(|| {
                        GameColumns::with_capacity(&self.source_name, games, plies)
                    });
                    columns.append(scratch, offset);
                    self.plies_written += scratch.mainline().len() as u64;
                    self.pending_games += 1;
                    self.counters.written.fetch_add(1, Ordering::Relaxed);
                }
                Err(reason) => {
                    let raw = text.into_owned();
                    rejects.push(Reject {
                        offset,
                        reason,
                        raw,
                    });
                    self.counters.rejected.fetch_add(1, Ordering::Relaxed);
                }
            }
            if rejects.len() >= self.options.batch_games {
                break None; // a run of bad input: hand the rejects over, keep memory bounded
            }
        };
        self.counters
            .decompressed
            .store(self.framer.position(), Ordering::Relaxed);
        let games = match full.and_then(|key| self.pending.remove(&key)) {
            Some(mut columns) => {
                self.pending_games -= columns.len();
                columns.finish().expect("columns follow the schema")
            }
            None if rejects.is_empty() => return None,
            None => RecordBatch::new_empty(crate::columns::schema()),
        };
        Some(Batch { games, rejects })
    }

    /// Mainline moves per game to expect: the average so far (80 to begin with, about a lichess
    /// game's), with a margin.
    fn plies_per_game(&self) -> usize {
        let written = self.counters.written.load(Ordering::Relaxed);
        let average = match written {
            0 => 80,
            n => self.plies_written.div_ceil(n) as usize,
        };
        average * 9 / 8
    }

    /// A partition to emit now: one with a full batch, or the largest when all partitions together
    /// hold too many games (archives spanning many months).
    fn full_partition(&self) -> Option<Partition> {
        let batch = self.options.batch_games;
        let (key, largest) = self.pending.iter().max_by_key(|(_, c)| c.len())?;
        (largest.len() >= batch || self.pending_games >= 4 * batch).then_some(*key)
    }
}

/// The text of a panic's payload.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    match (panic.downcast_ref::<&str>(), panic.downcast_ref::<String>()) {
        (Some(s), _) => s,
        (_, Some(s)) => s,
        _ => "panic",
    }
}

/// UTF-8 as is; anything else read as Latin-1 (each byte one character), never dropped.
fn decode<'a>(bytes: &'a [u8], scratch: &'a mut String) -> Cow<'a, str> {
    // SIMD validation: every game's text is checked, and std's validator showed in profiles.
    match simdutf8::basic::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => {
            scratch.clear();
            scratch.extend(bytes.iter().map(|&b| b as char));
            Cow::Borrowed(scratch.as_str())
        }
    }
}

/// A `BatchReader` on its own thread, so that reading overlaps whatever the consumer does.
pub struct BatchStream {
    rx: Receiver<Batch>,
    worker: Option<JoinHandle<BatchReader>>,
    reader: Option<BatchReader>,
    counters: Arc<Counters>,
    raw_read: Arc<AtomicU64>,
}

impl BatchStream {
    pub fn spawn(reader: BatchReader) -> BatchStream {
        let (tx, rx) = sync_channel(2);
        let counters = reader.counters();
        let raw_read = reader.input().raw_read.clone();
        let worker = std::thread::spawn(move || {
            let mut reader = reader;
            while let Some(batch) = reader.next_batch() {
                if tx.send(batch).is_err() {
                    break; // the consumer is gone
                }
            }
            reader
        });
        BatchStream {
            rx,
            worker: Some(worker),
            reader: None,
            counters,
            raw_read,
        }
    }

    /// Blocks for the next batch; `None` at the end.
    pub fn next_batch(&mut self) -> Option<Batch> {
        match self.rx.recv() {
            Ok(batch) => Some(batch),
            Err(_) => {
                if let Some(worker) = self.worker.take() {
                    self.reader = Some(worker.join().expect("reader thread panicked"));
                }
                None
            }
        }
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Raw (compressed) bytes read so far.
    pub fn raw_read(&self) -> u64 {
        self.raw_read.load(Ordering::Relaxed)
    }

    /// The finished reader (after `next_batch` returned `None`): checksum and damage report.
    pub fn finished(&self) -> Option<&BatchReader> {
        self.reader.as_ref()
    }
}
