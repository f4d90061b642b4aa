//! From an input to batches of games and their rejects.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;
use std::thread::JoinHandle;

use arrow_array::RecordBatch;

use crate::columns::GameColumns;
use crate::derive::{derive, Partition};
use crate::framer::Framer;
use crate::input::Input;
use crate::parse::GameParser;
use crate::plies::{Openings, Positions};
use crate::reject::{RejectKind, RejectReason};
use crate::replay::Replayer;
use crate::zobrist::{letter_code, MoveCodes};

/// A game kept out of the lake, and why.
#[derive(Debug)]
pub struct Reject {
    pub offset: u64,
    /// The game's length in the (decompressed) source: `raw` may hold only its beginning.
    pub length: u64,
    pub reason: RejectReason,
    /// The game's text, up to `Options::max_reject_raw` bytes.
    pub raw: String,
}

/// Accepted games of one partition as Arrow, plus the games rejected while reading them. A batch of
/// rejects alone has no partition and no rows.
pub struct Batch {
    pub partition: Option<Partition>,
    /// The games in order, in record batches of one schema: one from the single-threaded reader; runs of
    /// the workers' batches from the parallel one, handed over without a copy (none: no games).
    pub games: Vec<RecordBatch>,
    pub rejects: Vec<Reject>,
}

impl Batch {
    /// Games in the batch.
    pub fn num_rows(&self) -> usize {
        self.games.iter().map(RecordBatch::num_rows).sum()
    }
}

/// Live counts, readable from another thread while the reader works (progress bars).
#[derive(Default, Debug)]
pub struct Counters {
    pub seen: AtomicU64,
    pub written: AtomicU64,
    pub rejected: AtomicU64,
}

/// Limits of one read. Memory held by the reader is bounded by them, whatever the games hold:
/// `max_game_bytes` (the framer's window) + `PENDING_BATCHES × batch_bytes` (games waiting in
/// their partitions) + `batch_bytes` (one batch of rejects), and the replay of one game, bounded by
/// what it may hold (`crate::replay::MAX_GAME_MOVES`), not by its bytes.
#[derive(Clone)]
pub struct Options {
    /// Games per batch.
    pub batch_games: usize,
    /// Bytes of game text per batch (annotated games can be megabytes each).
    pub batch_bytes: usize,
    /// Longest game kept in memory; longer ones are rejected.
    pub max_game_bytes: usize,
    /// Most of a rejected game's text copied into its reject; the rest is found by offset and length.
    pub max_reject_raw: usize,
    /// Partitions holding games at once; one more sends the least recently used one on its way.
    pub max_partitions: usize,
    /// The chess-openings table: given, each batch carries its games' position columns and plies too
    /// (`crate::plies`), derived from the replay.
    pub openings: Option<Arc<Openings>>,
    /// The moves' `san` left null: the source's SAN is not compared with the one the position gives
    /// (a move generation a move) nor kept where it differs. For games whose SAN nobody keeps: a BGN
    /// JSON import's, its moves given by their fields (`crate::json_games`).
    pub drop_source_san: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            batch_games: 8192,
            batch_bytes: 16 << 20,
            max_game_bytes: 64 << 20,
            max_reject_raw: 64 << 10,
            max_partitions: 64,
            openings: None,
            drop_source_san: false,
        }
    }
}

/// All partitions together hold at most this many batches' worth of games.
pub const PENDING_BATCHES: usize = 4;

/// Partitions that get builders sized for a whole batch up front; more are rare (an archive spanning
/// many months) and start small.
const PRESIZED_PARTITIONS: usize = 8;

pub(crate) fn truncated() -> RejectReason {
    RejectReason::new(
        RejectKind::Truncated,
        "game cut short: the input ends before its result (no 1-0, 0-1, 1/2-1/2 or * after the moves)",
    )
}

/// What is left of a read once its batches are all out: the input (its checksum) and the damage
/// that cut it short, if any.
pub struct Finished {
    framer: Framer<Input>,
    /// A windowed read ([`Window`]): the offset of its first game, and of the game after its part
    /// where it stopped (`None`: it read to the input's end).
    pub first_game: Option<u64>,
    pub stopped_at: Option<u64>,
}

impl Finished {
    pub(crate) fn new(framer: Framer<Input>) -> Finished {
        Finished {
            framer,
            first_game: None,
            stopped_at: None,
        }
    }

    /// The input that was read (its checksum once read to the end).
    pub fn input(&self) -> &Input {
        self.framer.reader()
    }

    /// The read error that cut the input short (damaged compressed data).
    pub fn damage(&self) -> Option<&str> {
        self.framer.error()
    }
}

/// A reader of batches: the single-threaded [`BatchReader`] or the parallel
/// [`crate::parallel::ParallelReader`], which yield the same batches from the same input.
pub trait BatchSource: Send + 'static {
    /// The next batch (games of one partition), or `None` when the input is exhausted.
    fn next_batch(&mut self) -> Option<Batch>;
    /// The live counts, to read from another thread.
    fn counters(&self) -> Arc<Counters>;
    /// Raw (compressed) bytes read so far, shared with whoever shows progress.
    fn raw_read(&self) -> Arc<AtomicU64>;
    /// The input and its damage, once `next_batch` returned `None`.
    fn into_finished(self) -> Finished;
}

/// The part of a larger input that one reader of several reads (a Spark task: some of a file's zstd
/// frames, decompressed from byte `base` of the whole stream). A game belongs to the part where it
/// starts: the reader skips the end of a game begun before `base` and reads on past `end` to finish
/// its last game, stopping at the next one, which it does not count. Where its first game starts is
/// `first` when the reader before has told (its `stopped_at`), else guessed: the first game the framer
/// cuts from `base` that opens with a tag. A guess is right when it equals the reader before's
/// `stopped_at`: from a game's start on, the framer cuts the same games whatever came before.
#[derive(Copy, Clone, Debug)]
pub struct Window {
    pub base: u64,
    pub first: Option<u64>,
    pub end: u64,
}

impl Window {
    /// Whether a game that starts at `offset` with `bytes` comes before this part's first game.
    fn before(&self, offset: u64, bytes: &[u8]) -> bool {
        match self.first {
            Some(first) => offset < first,
            None => bytes.first() != Some(&b'['),
        }
    }
}

/// Reads games from an input and yields batches; single-threaded.
pub struct BatchReader {
    framer: Framer<Input>,
    games: GameReader,
    batches: Pending<GameColumns>,
    source_name: String,
    /// A game read without a result marker: complete if another game follows it, else cut short by
    /// the end of the input. Kept as text until the next frame tells.
    held: Option<(u64, String)>,
    /// Text of a game that is not UTF-8, read as Latin-1.
    latin1: String,
    options: Options,
    counters: Arc<Counters>,
    finished: bool,
    window: Option<Window>,
    first_game: Option<u64>,
    stopped_at: Option<u64>,
}

impl BatchReader {
    /// A reader of `input`, whose games record `source_name` as their `source_file`.
    pub fn new(input: Input, source_name: &str, options: Options) -> BatchReader {
        let framer = Framer::new(input, options.max_game_bytes);
        BatchReader::of_framer(framer, source_name, options, None)
    }

    /// A reader of one part of a larger input (see [`Window`]); `input` starts at the part's `base`.
    /// Told where its first game starts, the reader skips the text before it unread: from there on,
    /// its framer starts between games, as the reader before left it, and cuts the same games.
    pub fn windowed(
        mut input: Input,
        source_name: &str,
        options: Options,
        window: Window,
    ) -> BatchReader {
        let start = window
            .first
            .map_or(window.base, |first| first.max(window.base));
        let skipped = io::copy(&mut (&mut input).take(start - window.base), &mut io::sink());
        // Damage there is met again by the framer, which reports it.
        let base = window.base + skipped.unwrap_or(0);
        let framer = Framer::starting_at(input, options.max_game_bytes, base);
        BatchReader::of_framer(framer, source_name, options, Some(window))
    }

    fn of_framer(
        framer: Framer<Input>,
        source_name: &str,
        options: Options,
        window: Option<Window>,
    ) -> BatchReader {
        let counters = Arc::new(Counters::default());
        BatchReader {
            framer,
            games: GameReader::new(&options),
            batches: Pending::new(options.clone(), counters.clone()),
            source_name: source_name.to_owned(),
            held: None,
            latin1: String::new(),
            options,
            counters,
            finished: false,
            window,
            first_game: None,
            stopped_at: None,
        }
    }

    /// The live counts, to read from another thread.
    pub fn counters(&self) -> Arc<Counters> {
        self.counters.clone()
    }

    /// The read error that cut the input short (damaged compressed data), once reading is done.
    pub fn damage(&self) -> Option<&str> {
        self.framer.error()
    }

    /// The input being read (its checksum once read to the end).
    pub fn input(&self) -> &Input {
        self.framer.reader()
    }

    /// The next batch (games of one partition), or `None` when the input is exhausted.
    pub fn next_batch(&mut self) -> Option<Batch> {
        let mut rejects = Rejects::new(self.options.max_reject_raw);
        let full = loop {
            if let Some(key) = self.batches.full_partition() {
                break Some(key);
            }
            if self.finished {
                break self.batches.any();
            }
            let Some(frame) = self.framer.next_game() else {
                self.finished = true;
                if let Some((offset, text)) = self.held.take() {
                    let length = text.len() as u64;
                    rejects.add(offset, length, truncated(), &text, &self.counters);
                }
                continue;
            };
            let mut past_end = false;
            if let Some(window) = self.window {
                if self.first_game.is_none() {
                    if window.before(frame.offset, frame.bytes) {
                        continue; // the end of a game of the part before
                    }
                    self.first_game = Some(frame.offset);
                }
                past_end = frame.offset >= window.end;
            }
            // A game follows the one held back: that one was whole.
            if let Some((offset, text)) = self.held.take() {
                match self.games.read(text.as_bytes()) {
                    Ok(()) => append_game(
                        &mut self.batches,
                        &self.source_name,
                        &self.games,
                        offset,
                        text.len(),
                        None,
                    ),
                    Err(reason) => {
                        let length = text.len() as u64;
                        rejects.add(offset, length, reason, &text, &self.counters);
                    }
                }
            }
            if past_end {
                // The next part's first game: it told that the game held back was whole.
                self.finished = true;
                self.stopped_at = Some(frame.offset);
                continue;
            }
            self.counters.seen.fetch_add(1, Ordering::Relaxed);
            let (offset, length) = (frame.offset, frame.length);
            let text = decode(frame.bytes, &mut self.latin1);
            let outcome = match unreadable(frame.oversized, &frame.cut_by, &self.options) {
                Some(reason) => Err(reason),
                None => self.games.read(text.as_bytes()),
            };
            if outcome.is_ok() && self.games.replayer.scratch.outcome.is_none() {
                self.held = Some((offset, text.into_owned()));
            } else if outcome.is_ok() {
                append_game(
                    &mut self.batches,
                    &self.source_name,
                    &self.games,
                    offset,
                    text.len(),
                    None,
                );
            } else if let Err(reason) = outcome {
                rejects.add(offset, length, reason, &text, &self.counters);
            }
            if rejects.full(&self.options) {
                break None; // a run of bad input: hand the rejects over, keep memory bounded
            }
        };
        hand_over(full, &mut self.batches, rejects)
    }

    /// The input and its damage, once `next_batch` returned `None`.
    pub fn into_finished(self) -> Finished {
        Finished {
            first_game: self.first_game,
            stopped_at: self.stopped_at,
            ..Finished::new(self.framer)
        }
    }
}

/// What a reader hands over: the games of the partition that filled up (`full`) with the rejects met
/// on the way, or the rejects alone; `None` when there is neither (the input is done).
pub(crate) fn hand_over<R: Rows>(
    full: Option<Partition>,
    batches: &mut Pending<R>,
    rejects: Rejects,
) -> Option<Batch> {
    let (partition, games) = match full.and_then(|key| Some((key, batches.take(key)?))) {
        Some((key, batch)) => (Some(key), batch),
        None if rejects.list.is_empty() => return None,
        None => (None, Vec::new()),
    };
    Some(Batch {
        partition,
        games,
        rejects: rejects.list,
    })
}

impl BatchSource for BatchReader {
    fn next_batch(&mut self) -> Option<Batch> {
        BatchReader::next_batch(self)
    }

    fn counters(&self) -> Arc<Counters> {
        self.counters.clone()
    }

    fn raw_read(&self) -> Arc<AtomicU64> {
        self.input().raw_read.clone()
    }

    fn into_finished(self) -> Finished {
        BatchReader::into_finished(self)
    }
}

/// Why a frame cannot be read at all: longer than the limit, or cut by damaged input.
pub(crate) fn unreadable(
    oversized: bool,
    cut_by: &Option<String>,
    options: &Options,
) -> Option<RejectReason> {
    if oversized {
        Some(RejectReason::new(
            RejectKind::TooLarge,
            format!(
                "game longer than {} bytes: skipped (raw text truncated)",
                options.max_game_bytes
            ),
        ))
    } else {
        cut_by.as_ref().map(|cut| {
            RejectReason::new(RejectKind::DamagedInput, format!("game cut short: {cut}"))
        })
    }
}

/// Adds the game in `scratch` to its partition's columns, under its source's `id` when it has one (a BGN
/// line's, which the lake can keep) instead of the one its tags give.
pub(crate) fn append_game(
    batches: &mut Pending<GameColumns>,
    source_name: &str,
    games: &GameReader,
    offset: u64,
    text_len: usize,
    id: Option<&str>,
) {
    let scratch = &games.replayer.scratch;
    let row = derive(scratch, id);
    let plies = scratch.mainline().len();
    let openings = games.openings.as_ref();
    batches.append(
        row.partition,
        text_len,
        plies,
        |games, plies| GameColumns::with_capacity(source_name, games, plies, openings),
        |columns| columns.append(scratch, &row, offset, &games.positions),
    );
}

/// Reads one game's text: the parser and the replayer, and with `openings` the positions of its
/// mainline (their keys), for its plies.
pub(crate) struct GameReader {
    parser: GameParser,
    pub(crate) replayer: Replayer,
    pub(crate) openings: Option<Arc<Openings>>,
    pub(crate) positions: Positions,
}

impl GameReader {
    pub(crate) fn new(options: &Options) -> GameReader {
        GameReader {
            parser: GameParser::default(),
            openings: options.openings.clone(),
            replayer: Replayer {
                drop_source_san: options.drop_source_san,
                ..Replayer::default()
            },
            positions: Positions::default(),
        }
    }

    /// Parses and replays `text` into `self.replayer.scratch` (and `self.positions`); `Err` is the
    /// reason to reject it.
    pub(crate) fn read(&mut self, text: &[u8]) -> Result<(), RejectReason> {
        self.guarded(|parser, replayer| parser.parse(replayer, text))
    }

    /// Replays the game `play` drives the replayer through (its visitor's calls, from a source that is
    /// no PGN text: `crate::json_games`), as `read` replays a text's.
    pub(crate) fn replay(
        &mut self,
        play: impl FnOnce(&mut Replayer) -> Result<(), RejectReason>,
    ) -> Result<(), RejectReason> {
        self.guarded(|_, replayer| play(replayer))
    }

    fn guarded(
        &mut self,
        play: impl FnOnce(&mut GameParser, &mut Replayer) -> Result<(), RejectReason>,
    ) -> Result<(), RejectReason> {
        let internal = |why: &str| {
            RejectReason::new(
                RejectKind::InternalError,
                format!("internal error while reading this game: {why}"),
            )
        };
        // A bug on some odd input must cost that game (rejected, with the reason), not the load.
        let (parser, replayer) = (&mut self.parser, &mut self.replayer);
        let played = || play(parser, replayer);
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(played)).unwrap_or_else(|panic| {
            self.parser = GameParser::default();
            Err(internal(panic_message(&panic)))
        })?;
        if self.openings.is_some() {
            let g = &self.replayer.scratch;
            let moves = g.mainline().iter().map(|m| MoveCodes {
                piece: letter_code(m.piece),
                from: m.from,
                to: m.to,
                promote: letter_code(m.promote),
                castle: m.castle,
            });
            let start_fen = g.start_fen.as_ref().map(|r| g.str(r));
            // The key replay follows any game shakmaty replayed: a failure is a bug.
            self.positions
                .replay(start_fen, g.variant.name(), moves)
                .map_err(|e| internal(&format!("{e:?}")))?;
        }
        Ok(())
    }
}

/// The rejects of one batch, their text copied up to a cap.
pub(crate) struct Rejects {
    pub(crate) list: Vec<Reject>,
    bytes: usize,
    max_raw: usize,
}

impl Reject {
    /// The reject of the game at `offset`, its text copied up to `max_raw` bytes.
    pub(crate) fn new(
        offset: u64,
        length: u64,
        reason: RejectReason,
        text: &str,
        max_raw: usize,
    ) -> Reject {
        let mut end = text.len().min(max_raw);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        Reject {
            offset,
            length,
            reason,
            raw: text[..end].to_owned(),
        }
    }
}

impl Rejects {
    pub(crate) fn new(max_raw: usize) -> Rejects {
        Rejects {
            list: Vec::new(),
            bytes: 0,
            max_raw,
        }
    }

    fn add(
        &mut self,
        offset: u64,
        length: u64,
        reason: RejectReason,
        text: &str,
        counters: &Counters,
    ) {
        self.push(
            Reject::new(offset, length, reason, text, self.max_raw),
            counters,
        );
    }

    /// Adds a reject made elsewhere (by a worker of the parallel reader).
    pub(crate) fn push(&mut self, reject: Reject, counters: &Counters) {
        self.bytes += reject.raw.len();
        self.list.push(reject);
        counters.rejected.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn full(&self, options: &Options) -> bool {
        self.list.len() >= options.batch_games || self.bytes >= options.batch_bytes
    }
}

/// The rows of one partition waiting to be emitted: the builders of the single-threaded reader, or
/// pieces of batches built by the workers of the parallel one.
pub(crate) trait Rows {
    /// Games held.
    fn len(&self) -> usize;
    /// The games held, in order.
    fn finish(&mut self) -> Vec<RecordBatch>;
}

impl Rows for GameColumns {
    fn len(&self) -> usize {
        GameColumns::len(self)
    }

    fn finish(&mut self) -> Vec<RecordBatch> {
        vec![GameColumns::finish(self).expect("columns follow the schema")]
    }
}

/// Games waiting to be emitted, one set of rows per partition, so that every batch belongs to one
/// partition and the writer never has to split nested data. Which partition goes out when depends
/// only on the sequence of games (ties are broken by partition), so that the single-threaded and the
/// parallel reader cut the same batches.
pub(crate) struct Pending<R> {
    partitions: HashMap<Partition, PartitionRows<R>>,
    games: usize,
    bytes: usize,
    /// Mainline moves and games appended so far, to size the builders of the next batches.
    plies_written: u64,
    games_written: u64,
    options: Options,
    counters: Arc<Counters>,
}

struct PartitionRows<R> {
    rows: R,
    bytes: usize,
    /// `games_written` when a game last went in: the least recently used partition goes first.
    last_used: u64,
}

/// A total order of partitions, for ties.
fn order(p: &Partition) -> (&'static str, i16, i16, bool) {
    (p.kind, p.year, p.month, p.analysed)
}

impl<R: Rows> Pending<R> {
    pub(crate) fn new(options: Options, counters: Arc<Counters>) -> Pending<R> {
        Pending {
            counters,
            partitions: HashMap::new(),
            games: 0,
            bytes: 0,
            plies_written: 0,
            games_written: 0,
            options,
        }
    }

    /// Adds a game of partition `key` (a game written), whose text is `text_len` bytes long and
    /// which has `plies` mainline moves: `make(games, plies)` creates the partition's rows when it
    /// holds none, sized for that many games and moves; `add` appends the game to them.
    pub(crate) fn append(
        &mut self,
        key: Partition,
        text_len: usize,
        plies: usize,
        make: impl FnOnce(usize, usize) -> R,
        add: impl FnOnce(&mut R),
    ) {
        let presized = self.partitions.len() < PRESIZED_PARTITIONS;
        // Size for a full batch, within what all partitions together may hold.
        let batch = self.options.batch_games;
        let games = if presized {
            batch
                .min((PENDING_BATCHES * batch).saturating_sub(self.games))
                .max(1)
        } else {
            64
        };
        let capacity_plies = games * self.plies_per_game();
        let entry = self.partitions.entry(key).or_insert_with(|| PartitionRows {
            rows: make(games, capacity_plies),
            bytes: 0,
            last_used: 0,
        });
        add(&mut entry.rows);
        entry.bytes += text_len;
        entry.last_used = self.games_written;
        self.plies_written += plies as u64;
        self.games_written += 1;
        self.games += 1;
        self.bytes += text_len;
        self.counters.written.fetch_add(1, Ordering::Relaxed);
    }

    /// Mainline moves per game to expect: the average so far (80 to begin with, about a lichess
    /// game's), with a margin.
    fn plies_per_game(&self) -> usize {
        let average = match self.games_written {
            0 => 80,
            n => self.plies_written.div_ceil(n) as usize,
        };
        average * 9 / 8
    }

    /// A partition to emit now: one with a full batch (by games or bytes); the largest when all
    /// partitions together hold too much; the least recently used when too many hold games.
    pub(crate) fn full_partition(&self) -> Option<Partition> {
        let o = &self.options;
        let (key, largest) = self
            .partitions
            .iter()
            .max_by_key(|(k, p)| (p.bytes, order(k)))?;
        let (most_games, fullest) = self
            .partitions
            .iter()
            .max_by_key(|(k, p)| (p.rows.len(), order(k)))?;
        if fullest.rows.len() >= o.batch_games {
            return Some(*most_games);
        }
        if largest.bytes >= o.batch_bytes
            || self.games >= PENDING_BATCHES * o.batch_games
            || self.bytes >= PENDING_BATCHES * o.batch_bytes
        {
            return Some(*key);
        }
        if self.partitions.len() > o.max_partitions {
            return self
                .partitions
                .iter()
                .min_by_key(|(k, p)| (p.last_used, order(k)))
                .map(|(k, _)| *k);
        }
        None
    }

    /// Any partition holding games (at the end of the input): the first in partition order.
    pub(crate) fn any(&self) -> Option<Partition> {
        self.partitions.keys().min_by_key(|k| order(k)).copied()
    }

    /// The games of partition `key`; its rows are dropped.
    pub(crate) fn take(&mut self, key: Partition) -> Option<Vec<RecordBatch>> {
        let mut p = self.partitions.remove(&key)?;
        self.games -= p.rows.len();
        self.bytes -= p.bytes;
        Some(p.rows.finish())
    }
}

/// The text of a panic's payload.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    match (panic.downcast_ref::<&str>(), panic.downcast_ref::<String>()) {
        (Some(s), _) => s,
        (_, Some(s)) => s,
        _ => "panic",
    }
}

/// UTF-8 as is; anything else read as Latin-1 (each byte one character), never dropped.
pub(crate) fn decode<'a>(bytes: &'a [u8], scratch: &'a mut String) -> Cow<'a, str> {
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

/// A reader of batches for a consumer: on a thread of its own, so that reading overlaps whatever the
/// consumer does ([`BatchStream::spawn`]), or on the consumer's thread ([`BatchStream::inline`]).
pub struct BatchStream {
    source: Source,
    finished: Option<Finished>,
    counters: Arc<Counters>,
    raw_read: Arc<AtomicU64>,
}

enum Source {
    Thread {
        rx: Receiver<Batch>,
        worker: Option<JoinHandle<Finished>>,
    },
    /// `None` once read to the end.
    Inline(Option<Box<BatchReader>>),
}

impl BatchStream {
    /// Starts `reader` on a thread of its own, two batches ahead of the consumer at most.
    pub fn spawn(reader: impl BatchSource) -> BatchStream {
        let (tx, rx) = sync_channel(2);
        let counters = reader.counters();
        let raw_read = reader.raw_read();
        let worker = std::thread::Builder::new()
            .name("bgn-reader".into())
            .spawn(move || {
                let mut reader = reader;
                while let Some(batch) = reader.next_batch() {
                    if tx.send(batch).is_err() {
                        break; // the consumer is gone
                    }
                }
                reader.into_finished()
            })
            .expect("spawn the reader thread");
        BatchStream {
            source: Source::Thread {
                rx,
                worker: Some(worker),
            },
            finished: None,
            counters,
            raw_read,
        }
    }

    /// Reads with `reader` on the thread that asks for the batches: one thread in all, for a load
    /// that is to use one core.
    pub fn inline(reader: BatchReader) -> BatchStream {
        BatchStream {
            counters: reader.counters(),
            raw_read: reader.raw_read(),
            source: Source::Inline(Some(Box::new(reader))),
            finished: None,
        }
    }

    /// Blocks for the next batch; `None` at the end.
    pub fn next_batch(&mut self) -> Option<Batch> {
        match &mut self.source {
            Source::Thread { rx, worker } => match rx.recv() {
                Ok(batch) => Some(batch),
                Err(_) => {
                    if let Some(worker) = worker.take() {
                        self.finished = Some(worker.join().expect("reader thread panicked"));
                    }
                    None
                }
            },
            Source::Inline(reader) => {
                let batch = reader.as_mut()?.next_batch();
                if batch.is_none() {
                    self.finished = reader.take().map(|r| r.into_finished());
                }
                batch
            }
        }
    }

    /// The live counts of the reader.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Raw (compressed) bytes read so far.
    pub fn raw_read(&self) -> u64 {
        self.raw_read.load(Ordering::Relaxed)
    }

    /// What is left of the read (after `next_batch` returned `None`): checksum and damage report.
    pub fn finished(&self) -> Option<&Finished> {
        self.finished.as_ref()
    }
}

#[cfg(test)]
mod window_tests {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;

    use super::*;

    /// Games with and without a result marker, a rejected one, and comments that hold a blank line
    /// and a tag line (where a part starting inside them guesses its first game wrong).
    fn games() -> Vec<u8> {
        let mut text = String::new();
        for i in 0..40 {
            let result = if i % 5 == 2 { "" } else { "1-0" };
            let comment = if i % 6 == 1 {
                "{ a\n\n[Event \"not a game\"]\n}"
            } else {
                "{ b }"
            };
            text += &format!(
                "[Event \"e\"]\n[Site \"s{i}\"]\n[UTCDate \"2025.05.01\"]\n[TimeControl \"180+0\"]\n\n\
                 1. e4 {comment} e5 2. Nf3 Nc6 {result}\n\n"
            );
            if i % 9 == 4 {
                text += "[Event \"bad\"]\n\n1. e4 e5 2. Ke3 1-0\n\n";
            }
        }
        text.into_bytes()
    }

    /// Games written and rejects (offsets, kinds) of a read, and where it started and stopped.
    type Read = (Vec<i64>, Vec<(u64, RejectKind)>, Option<u64>, Option<u64>);

    fn read(text: &[u8], window: Option<Window>) -> Read {
        // A file of its own for each read (the tests run on several threads), deleted once read.
        static READS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = READS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let base = window.map_or(0, |w| w.base);
        let name = format!("bgn-window-{}-{n}.pgn", std::process::id());
        let path = std::env::temp_dir().join(name);
        std::fs::write(&path, text).expect("temp file");
        let input = Input::open_at(path.to_str().expect("UTF-8"), base).expect("readable");
        let mut reader = match window {
            Some(w) => BatchReader::windowed(input, "t", Options::default(), w),
            None => BatchReader::new(input, "t", Options::default()),
        };
        let (mut games, mut rejects) = (Vec::new(), Vec::new());
        while let Some(batch) = reader.next_batch() {
            for part in &batch.games {
                let offsets = part.column_by_name("source_offset").expect("column");
                games.extend(offsets.as_primitive::<Int64Type>().values().iter().copied());
            }
            rejects.extend(batch.rejects.iter().map(|r| (r.offset, r.reason.kind)));
        }
        let finished = reader.into_finished();
        std::fs::remove_file(&path).expect("temp file");
        games.sort_unstable();
        (games, rejects, finished.first_game, finished.stopped_at)
    }

    #[test]
    fn two_parts_read_what_one_reader_reads_wherever_the_cut() {
        let text = games();
        let (whole_games, whole_rejects, _, _) = read(&text, None);
        assert!(!whole_rejects.is_empty());
        let mut wrong_guesses = 0;
        for cut in (1..text.len() as u64).step_by(7) {
            let first = read(
                &text,
                Some(Window {
                    base: 0,
                    first: Some(0),
                    end: cut,
                }),
            );
            let guess = Window {
                base: cut,
                first: None,
                end: u64::MAX,
            };
            let mut second = read(&text, Some(guess));
            match first.3 {
                None => second = (Vec::new(), Vec::new(), None, None),
                Some(stop) if second.2 != Some(stop) => {
                    wrong_guesses += 1;
                    second = read(
                        &text,
                        Some(Window {
                            first: Some(stop),
                            ..guess
                        }),
                    );
                    assert_eq!(second.2, Some(stop));
                }
                Some(_) => {}
            }
            let mut games = [first.0, second.0].concat();
            games.sort_unstable();
            assert_eq!(games, whole_games, "cut at {cut}");
            assert_eq!([first.1, second.1].concat(), whole_rejects, "cut at {cut}");
        }
        assert!(
            wrong_guesses > 0,
            "some cuts should fall inside a comment or a game's tags"
        );
    }
}
