//! BGN JSON lines (docs/exports.md) replayed from their fields, a block of lines at a time: no PGN text.
//!
//! A line is read into a [`Tape`]: the calls pgn-reader would make on the reader's replay
//! ([`crate::replay::Replayer`]) for a PGN text of the game (its tags, each move with every field it
//! carries as SAN, `Ng1xf3`, `Pe7e8=Q`, `O-O`; its NAGs, comments and variations; its result). The replay
//! then takes the tape as it takes a text's calls, and the game goes to its partition's columns as a PGN
//! game's does (`reader::append_game`). What the SAN does not check (the capture, the checks, the castling
//! side, the case of the piece) is checked after the replay: the line's fields, written as its signature,
//! against the moves replayed. A field of the wrong type or out of its column's range refuses the game
//! with one line saying what and where, in the words the load has always used (they quote values as
//! Python's `repr` writes them); a clock's or an eval's range is left to the replay, which checks it as it
//! checks a PGN game's ([`crate::annotations`]): here only their shape.
//!
//! A line that is no JSON is refused without a reason (`Refusal::NotJson`): the load words it as Python's
//! JSON reader does. A line holding a study document (a `metadata` key) is left to the load's study path.

use std::fmt::Write as _;
use std::ops::{ControlFlow, Range};
use std::sync::Arc;

use arrow_array::RecordBatch;
use pgn_reader::{KnownOutcome, Nag, Outcome, RawComment, SanPlus, Visitor};
use shakmaty::Color;

use crate::annotations::MAX_NAG;
use crate::columns::{square_name, GameColumns};
use crate::derive::Partition;
use crate::json_fields::{
    array, comment_text, digits, integer, is_clock, lake_id, object, string, tag_value, Refused,
};
use crate::json_value::{self, Arena, Json, JsonError, KeyOrder, Number, Object};
use crate::movetext::{comment_body, Part};
use crate::python_repr;
use crate::reader::{append_game, Counters, GameReader, Options, Pending};
use crate::reject::RejectReason;
use crate::replay::{MoveRec, Replayer, NO_SQUARE};

/// Nesting deeper than this is refused, as Python's JSON reader refuses it (`RecursionError` at ~997).
pub const MAX_DEPTH: usize = 995;
const INT16: i64 = 32767;
const INT32: i64 = (1 << 31) - 1;
const PIECES: &[u8] = b"PNBRQKpnbrqk";
const PROMOTIONS: &[u8] = b"NBRQKnbrqk";
/// A move's fields in a signature, in order.
const SIGNATURE_FIELDS: [&str; 7] = ["p", "f", "t", "x", "c", "castle", "promote"];

/// What became of one non-blank line of a block: `offset` and `length` (its newline included) in the
/// block's bytes, `line` its number counted from the block's first line (1).
#[derive(Debug, Clone, PartialEq)]
pub struct Place {
    pub offset: usize,
    pub length: usize,
    pub line: u64,
}

/// Why a line is refused.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// Not JSON (the load words why, as Python's JSON reader does).
    NotJson,
    /// Not UTF-8: the byte offset in the line of the first byte that is not.
    NotUtf8(usize),
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// Longer than the block's line limit.
    TooLarge,
    /// A field of the wrong type, out of range, or that PGN cannot carry: the reason.
    BadField(String),
    /// The replay refused the game (an illegal move, an invalid FEN, a clock out of range…).
    Replay(RejectReason),
    /// The moves replay to other fields than the line gives: where they first differ.
    Disagrees(String),
}

impl Refusal {
    /// The reject's kind, as the load names it (warehouse/lake/records.py, `JSON_REJECT_KINDS`, and the
    /// reader's kinds).
    pub fn kind(&self) -> &'static str {
        match self {
            Refusal::NotJson | Refusal::NotUtf8(_) | Refusal::TooDeep => "not_json",
            Refusal::TooLarge => "too_large",
            Refusal::BadField(_) => "bad_field",
            Refusal::Replay(reason) => reason.kind.name(),
            Refusal::Disagrees(_) => "disagrees",
        }
    }

    /// The reject's reason, `limit` the block's line limit; `None` for [`Refusal::NotJson`].
    pub fn reason(&self, limit: usize) -> Option<String> {
        match self {
            Refusal::NotJson => None,
            Refusal::NotUtf8(at) => Some(format!("not UTF-8 (byte {at})")),
            Refusal::TooDeep => {
                Some("nested deeper than the JSON reader goes (about 1,000 levels)".into())
            }
            Refusal::TooLarge => Some(format!("longer than {limit} bytes: skipped")),
            Refusal::BadField(reason) | Refusal::Disagrees(reason) => Some(reason.clone()),
            Refusal::Replay(reason) => Some(reason.message.clone()),
        }
    }
}

/// What became of a block's lines: those refused, those that hold study documents (left to the load),
/// and the games written (to the reader's partitions).
#[derive(Debug, Default)]
pub struct Block {
    pub refused: Vec<(Place, Refusal)>,
    pub studies: Vec<Place>,
    pub written: u64,
    /// Lines in the block, blank ones included (a last line without a newline counted).
    pub lines: u64,
}

/// The BGN games of one input, replayed from their lines into batches of the lake's games, one
/// partition a batch, as the PGN reader cuts them (`reader::Pending`).
pub struct BgnReader {
    games: GameReader,
    batches: Pending<GameColumns>,
    /// The partitions that filled up, their games in order: cut where the PGN reader cuts them, after
    /// the game that fills one.
    full: Vec<(Partition, Vec<RecordBatch>)>,
    source_name: String,
    tape: Tape,
    /// The moves replayed, written as a line's signature (a line at a time).
    replayed: String,
}

impl BgnReader {
    /// A reader of the input named `source_name` (its games' `source_file`); `options` as the PGN
    /// reader's (the moves' `san` is always dropped: a line holds none).
    pub fn new(source_name: &str, options: Options) -> BgnReader {
        let options = Options {
            drop_source_san: true,
            ..options
        };
        BgnReader {
            games: GameReader::new(&options),
            batches: Pending::new(options, Arc::new(Counters::default())),
            full: Vec::new(),
            source_name: source_name.to_owned(),
            tape: Tape::default(),
            replayed: String::new(),
        }
    }

    /// The lines of `data` (or `data` as one document when `whole`), `data` starting at `offset` in the
    /// input. A line longer than `limit` bytes (its newline included) is refused whole
    /// (`Refusal::TooLarge`) unless its first `raw_limit` bytes are blank, as a blank line is skipped.
    pub fn block(
        &mut self,
        data: &[u8],
        whole: bool,
        limit: usize,
        raw_limit: usize,
        offset: u64,
    ) -> Block {
        let mut block = Block::default();
        let mut arena = Arena::default();
        let mut at = 0;
        while at < data.len() {
            let end = if whole {
                data.len()
            } else {
                memchr::memchr(b'\n', &data[at..]).map_or(data.len(), |n| at + n + 1)
            };
            block.lines += 1;
            let place = Place {
                offset: at,
                length: end - at,
                line: block.lines,
            };
            let text = &data[at..end];
            at = end;
            if text.len() > limit {
                if !is_blank(&text[..raw_limit.min(text.len())]) {
                    block.refused.push((place, Refusal::TooLarge));
                }
            } else if !is_blank(text) {
                match self.line(text, &place, &arena, offset) {
                    Ok(Line::Written) => block.written += 1,
                    Ok(Line::Study) => block.studies.push(place),
                    Err(refusal) => block.refused.push((place, refusal)),
                }
                arena.reset();
            }
        }
        block
    }

    /// The games of the partitions that filled up (by games or bytes, as the PGN reader's) so far.
    pub fn full_batches(&mut self) -> Vec<(Partition, Vec<RecordBatch>)> {
        std::mem::take(&mut self.full)
    }

    /// The games of every partition, at the input's end.
    pub fn finish(&mut self) -> Vec<(Partition, Vec<RecordBatch>)> {
        let mut left = std::mem::take(&mut self.full);
        while let Some(key) = self.batches.any() {
            left.extend(self.batches.take(key).map(|games| (key, games)));
        }
        left
    }

    fn line(
        &mut self,
        text: &[u8],
        place: &Place,
        arena: &Arena,
        offset: u64,
    ) -> Result<Line, Refusal> {
        let doc = parse(text, arena)?;
        if doc.as_object().is_some_and(|d| d.contains_key("metadata")) {
            return Ok(Line::Study);
        }
        let tape = &mut self.tape;
        tape.clear();
        bgn_game(&doc, tape).map_err(Refusal::BadField)?;
        // Variations need the position before each move kept: only when a key may be `alt` (written
        // plainly, or with an escape).
        tape.branches = memchr::memmem::find(text, b"alt").is_some()
            || memchr::memmem::find(text, b"\\u").is_some();
        self.games
            .replay(|replayer| tape.play(replayer))
            .map_err(Refusal::Replay)?;
        if let Some(refusal) = disagreement(&self.games.replayer, tape, &mut self.replayed) {
            return Err(refusal);
        }
        let id = tape.id.as_ref().map(|r| &tape.text[r.clone()]);
        append_game(
            &mut self.batches,
            &self.source_name,
            &self.games,
            offset + place.offset as u64,
            place.length,
            id,
        );
        if let Some(key) = self.batches.full_partition() {
            self.full
                .extend(self.batches.take(key).map(|games| (key, games)));
        }
        Ok(Line::Written)
    }
}

/// A line read: a game written, or a study document's.
enum Line {
    Written,
    Study,
}

/// The `\n` bytes in `data`.
pub fn line_breaks(data: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', data).count()
}

/// Python's `bytes.strip()` leaves nothing.
fn is_blank(text: &[u8]) -> bool {
    text.iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
}

/// A BGN game as the replay takes it: the visitor's calls a PGN text of it would make, in order, their
/// text in `text`; its id and each line's signature. Kept from game to game (its room reused).
#[derive(Default)]
struct Tape {
    /// Tag names and values.
    tags: Vec<(&'static str, Range<usize>)>,
    /// The movetext's calls.
    calls: Vec<Call>,
    text: String,
    /// A move's token as SAN, room reused.
    token: Vec<u8>,
    id: Option<Range<usize>>,
    /// Each line's moves as its fields give them (`p.f.t.x.c.castle.promote`, space-separated): the
    /// mainline first, then each variation in the order it opens, which is the replay's (and the lake's
    /// `variations`) order. `lines` of them are in use.
    signatures: Vec<String>,
    lines: usize,
    /// A move may have variations: the replay keeps the position before each move.
    branches: bool,
}

/// One of the visitor's calls in the movetext.
enum Call {
    /// A comment's text between its braces.
    Comment(Range<usize>),
    San(SanPlus),
    Nag(u8),
    BeginVariation,
    EndVariation,
    Outcome(Outcome),
}

impl Tape {
    fn clear(&mut self) {
        self.tags.clear();
        self.calls.clear();
        self.text.clear();
        self.id = None;
        self.lines = 0;
    }

    fn push_text(&mut self, text: &str) -> Range<usize> {
        let start = self.text.len();
        self.text.push_str(text);
        start..self.text.len()
    }

    fn tag(&mut self, name: &'static str, value: &str) {
        let value = self.push_text(value);
        self.tags.push((name, value));
    }

    /// A comment of the parts that are not empty, if any.
    fn comment(&mut self, parts: &[Part]) {
        let start = self.text.len();
        if comment_body(parts, &mut self.text) {
            self.calls.push(Call::Comment(start..self.text.len()));
        }
    }

    /// A new line's signature, its index.
    fn new_line(&mut self) -> usize {
        if self.lines == self.signatures.len() {
            self.signatures.push(String::new());
        }
        self.signatures[self.lines].clear();
        self.lines += 1;
        self.lines - 1
    }

    /// The move whose SAN `token` holds.
    fn san(&mut self, here: Here) -> Refused<()> {
        let san = SanPlus::from_ascii(&self.token).map_err(|_| {
            format!(
                "{here} is no move ({})",
                String::from_utf8_lossy(&self.token)
            )
        })?;
        self.calls.push(Call::San(san));
        Ok(())
    }

    /// The calls played on `replayer`, as pgn-reader plays a game's; the replay's verdict.
    fn play(&self, replayer: &mut Replayer) -> Result<(), RejectReason> {
        replayer.no_variations = !self.branches;
        match self.calls(replayer) {
            ControlFlow::Break(verdict) => verdict,
            ControlFlow::Continue(()) => Visitor::end_game(replayer, ()),
        }
    }

    /// Every call but the game's end, until the replay refuses one.
    fn calls(&self, replayer: &mut Replayer) -> ControlFlow<Result<(), RejectReason>> {
        Visitor::begin_tags(replayer)?;
        for (name, value) in &self.tags {
            replayer.tag_text(name, &self.text[value.clone()]);
        }
        Visitor::begin_movetext(replayer, ())?;
        for call in &self.calls {
            match call {
                Call::Comment(r) => {
                    let text = self.text[r.clone()].as_bytes();
                    Visitor::comment(replayer, &mut (), RawComment(text))?;
                }
                Call::San(san) => Visitor::san(replayer, &mut (), *san)?,
                Call::Nag(nag) => Visitor::nag(replayer, &mut (), Nag(*nag))?,
                // The replay skips no variation (pgn-reader's `Skip(false)`).
                Call::BeginVariation => {
                    let _ = Visitor::begin_variation(replayer, &mut ())?;
                }
                Call::EndVariation => Visitor::end_variation(replayer, &mut ())?,
                Call::Outcome(outcome) => Visitor::outcome(replayer, &mut (), *outcome)?,
            }
        }
        ControlFlow::Continue(())
    }
}

/// Where the replayed moves first differ from the line's fields (its signature), if they do: the
/// refusal, worded as the load always has.
fn disagreement(replayer: &Replayer, tape: &Tape, replayed: &mut String) -> Option<Refusal> {
    let g = &replayer.scratch;
    let lines = g.lines();
    let expected = &tape.signatures[..tape.lines];
    let same = lines.len() == expected.len()
        && lines.iter().zip(expected).all(|(line, want)| {
            replayed.clear();
            signature(&line.moves, replayed);
            replayed == want
        });
    if same {
        return None;
    }
    let mut got = Vec::with_capacity(lines.len());
    for line in lines {
        let mut text = String::new();
        signature(&line.moves, &mut text);
        got.push(text);
    }
    Some(Refusal::Disagrees(difference(expected, &got)))
}

/// Moves replayed as a line's signature writes them.
fn signature(moves: &[MoveRec], out: &mut String) {
    let letter = |b: u8| if b == 0 { None } else { Some(b as char) };
    for (n, m) in moves.iter().enumerate() {
        if n > 0 {
            out.push(' ');
        }
        out.push(m.piece as char);
        out.push('.');
        if m.from != NO_SQUARE {
            out.push_str(square_name(m.from));
        }
        out.push('.');
        out.push_str(square_name(m.to));
        out.push('.');
        out.extend(letter(m.capture));
        out.push('.');
        if m.checks > 0 {
            let _ = write!(out, "{}", m.checks);
        }
        out.push('.');
        out.extend(letter(m.castle));
        out.push('.');
        out.extend(letter(m.promote));
    }
}

/// Where a BGN game's lines (`expected`) and their replay first disagree, in one line.
fn difference(expected: &[String], replayed: &[String]) -> String {
    for (n, (want, got)) in expected.iter().zip(replayed).enumerate() {
        for (ply, (a, b)) in want.split(' ').zip(got.split(' ')).enumerate() {
            if a == b {
                continue;
            }
            let place = match n {
                0 => "the mainline".to_owned(),
                n => format!("variation {n}"),
            };
            let fields: Vec<String> = SIGNATURE_FIELDS
                .iter()
                .zip(a.split('.').zip(b.split('.')))
                .filter(|(_, (x, y))| x != y)
                .map(|(name, (x, y))| {
                    let shown = |v: &str| {
                        if v.is_empty() {
                            "-".to_owned()
                        } else {
                            v.to_owned()
                        }
                    };
                    format!("{name} {} (replay: {})", shown(x), shown(y))
                })
                .collect();
            return format!(
                "move {} of {place} disagrees with its replay: {}",
                ply + 1,
                fields.join(", ")
            );
        }
    }
    "its lines disagree with their replay in number or length".into()
}

/// One JSON text, or why not.
fn parse<'a>(text: &'a [u8], arena: &'a Arena) -> Result<Json<'a>, Refusal> {
    let text = simdutf8::compat::from_utf8(text).map_err(|e| Refusal::NotUtf8(e.valid_up_to()))?;
    json_value::parse(text, arena, MAX_DEPTH).map_err(|e| match e {
        JsonError::TooDeep => Refusal::TooDeep,
        // Python reads a lone surrogate into a string, which then cannot be written as UTF-8.
        JsonError::LoneSurrogate => {
            Refusal::BadField("a string holds a lone surrogate (\\ud800-\\udfff)".into())
        }
        JsonError::Invalid => Refusal::NotJson,
    })
}

/// Where a value is in the line (`moves[3].a[0].clk`), written out only when a refusal names it.
#[derive(Clone, Copy)]
enum Here<'a> {
    Root(&'a str),
    Index(&'a Here<'a>, usize),
    Key(&'a Here<'a>, &'a str),
}

impl std::fmt::Display for Here<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Here::Root(name) => f.write_str(name),
            Here::Index(parent, index) => write!(f, "{parent}[{index}]"),
            Here::Key(parent, key) => write!(f, "{parent}.{key}"),
        }
    }
}

/// A game's tape: its tags, its movetext's calls, its id and each line's signature (a line's moves
/// space-separated, the mainline first then each line in the order its `(` would be written, which is the
/// lake's `variations` order).
fn bgn_game<'v>(doc: &'v Json<'v>, tape: &mut Tape) -> Refused<()> {
    let doc = object(doc, Here::Root("the line"))?;
    if let Some(id) = get(doc, "id") {
        let text = string(id, Here::Root("id"))?;
        if !lake_id(text) {
            return Err(format!(
                "id {} is neither a lichess id (8 letters or digits) nor 16 hex digits",
                repr(id)
            ));
        }
        tape.id = Some(tape.push_text(text));
    }
    let Some(moves) = doc.get("moves") else {
        return Err("missing required field 'moves'".into());
    };
    let (result, outcome) = match doc.get("result") {
        None => ("*", Outcome::Unknown),
        Some(Json::String(r)) if matches!(*r, "W" | "B" | "D" | "*") => match *r {
            "W" => ("1-0", decisive(Color::White)),
            "B" => ("0-1", decisive(Color::Black)),
            "D" => ("1/2-1/2", Outcome::Known(KnownOutcome::Draw)),
            _ => ("*", Outcome::Unknown),
        },
        Some(other) => return Err(format!("result {} is not one of W, B, D, *", repr(other))),
    };
    tags(doc, result, tape)?;
    let mut game = Lines {
        tape,
        parts: Vec::new(),
    };
    if let Some(comment) = get(doc, "comment") {
        let comment = comment_text(comment, Here::Root("comment"))?;
        game.tape.comment(&[Part::Text(comment)]);
    }
    let mainline = Here::Root("moves");
    game.line(array(moves, mainline)?, mainline)?;
    game.tape.calls.push(Call::Outcome(outcome));
    Ok(())
}

fn decisive(winner: Color) -> Outcome {
    Outcome::Known(KnownOutcome::Decisive { winner })
}

/// A key's value, a null as no value (Python's `dict.get`).
fn get<'a>(doc: &'a Object<'a>, key: &str) -> Option<&'a Json<'a>> {
    doc.get(key).filter(|v| !v.is_null())
}

fn tags(doc: &Object, result: &str, tape: &mut Tape) -> Refused<()> {
    // Onto the tape in the order a PGN export writes them: a line refused half-way leaves a tape that is
    // never played (the next line clears it).
    for (key, tag) in [("event", "Event"), ("site", "Site")] {
        if let Some(value) = doc.get(key) {
            tape.tag(tag, tag_value(value, Here::Root(key))?);
        }
    }
    if let Some(stamp) = get(doc, "datetime") {
        let text = string(stamp, Here::Root("datetime"))?;
        let Some((date, clock)) = datetime(text) else {
            return Err(format!(
                "datetime {} is not YYYY-MM-DDThh:mm:ssZ",
                repr(stamp)
            ));
        };
        tape.tag("Date", &date);
        tape.tag("UTCDate", &date);
        tape.tag("UTCTime", clock);
    }
    if let Some(round) = doc.get("round") {
        tape.tag("Round", tag_value(round, Here::Root("round"))?);
    }
    let players = match doc.get("players") {
        None => &[][..],
        Some(players) => array(players, Here::Root("players"))?,
    };
    if players.len() > 2 {
        return Err(format!("players holds {} entries, not 2", players.len()));
    }
    let mut sides = [Side::default(), Side::default()];
    for (index, player) in players.iter().enumerate() {
        let here = Here::Index(&Here::Root("players"), index);
        sides[index] = side(object(player, here)?, here)?;
    }
    for (side, tag) in sides.iter().zip(["White", "Black"]) {
        if let Some(name) = &side.name {
            tape.tag(tag, name.as_str());
        }
    }
    tape.tag("Result", result);
    for (field, tags) in [
        (0, ["WhiteTitle", "BlackTitle"]),
        (1, ["WhiteElo", "BlackElo"]),
        (2, ["WhiteRatingDiff", "BlackRatingDiff"]),
    ] {
        for (side, tag) in sides.iter().zip(tags) {
            let value = [&side.title, &side.elo, &side.diff][field];
            if let Some(value) = value {
                tape.tag(tag, value.as_str());
            }
        }
    }
    if let Some(variant) = doc.get("variant") {
        tape.tag("Variant", tag_value(variant, Here::Root("variant"))?);
    }
    if let Some(opening) = doc.get("opening") {
        let opening = object(opening, Here::Root("opening"))?;
        for (key, tag) in [("ECO", "ECO"), ("verbose", "Opening")] {
            if let Some(value) = opening.get(key) {
                let value = tag_value(value, Here::Key(&Here::Root("opening"), key))?;
                tape.tag(tag, value);
            }
        }
    }
    for (key, tag) in [
        ("timeControl", "TimeControl"),
        ("termination", "Termination"),
    ] {
        if let Some(value) = doc.get(key) {
            tape.tag(tag, tag_value(value, Here::Root(key))?);
        }
    }
    if let Some(fen) = doc.get("fen") {
        let fen = tag_value(fen, Here::Root("fen"))?;
        tape.tag("SetUp", "1");
        tape.tag("FEN", fen);
    }
    Ok(())
}

/// A player's tags: name, Elo, rating difference and title.
#[derive(Default)]
struct Side {
    name: Option<String>,
    title: Option<String>,
    elo: Option<String>,
    diff: Option<String>,
}

fn side(player: &Object, here: Here) -> Refused<Side> {
    let mut side = Side::default();
    if let Some(handle) = player.get("handle") {
        let at = Here::Key(&here, "handle");
        let handle = object(handle, at)?;
        let value = handle.get("value").unwrap_or(&Json::Null);
        side.name = Some(tag_value(value, Here::Key(&at, "value"))?.to_owned());
    }
    let entries = player.entries(KeyOrder::Sorted);
    let elos: Vec<&(&str, &Json)> = entries
        .iter()
        .filter(|(k, _)| k.starts_with("ELO_"))
        .collect();
    if elos.len() > 1 {
        return Err(format!("{here} holds {} ELO_ keys, not one", elos.len()));
    }
    if let Some((key, value)) = elos.first() {
        let elo = integer(value, Here::Key(&here, key), 0, INT32)?;
        side.elo = Some(elo.to_string());
    }
    if let Some(diff) = player.get("ratingDiff") {
        let diff = integer(diff, Here::Key(&here, "ratingDiff"), -INT32, INT32)?;
        side.diff = Some(format!("{diff:+}"));
    }
    if let Some(title) = player.get("title") {
        side.title = Some(tag_value(title, Here::Key(&here, "title"))?.to_owned());
    }
    Ok(side)
}

/// `YYYY-MM-DDThh:mm:ssZ` as PGN's date (`YYYY.MM.DD`) and time.
fn datetime(text: &str) -> Option<(String, &str)> {
    let b = text.as_bytes();
    let shape = b"dddd-dd-ddTdd:dd:ddZ";
    let fits = b.len() == shape.len()
        && b.iter().zip(shape).all(|(&c, &s)| {
            if s == b'd' {
                c.is_ascii_digit()
            } else {
                c == s
            }
        });
    fits.then(|| {
        (
            format!("{}.{}.{}", &text[0..4], &text[5..7], &text[8..10]),
            &text[11..19],
        )
    })
}

/// A game's movetext being read onto its tape.
struct Lines<'t, 'v> {
    tape: &'t mut Tape,
    /// A move's comment parts, room kept from move to move (not an allocation a move).
    parts: Vec<Part<'v>>,
}

impl<'v> Lines<'_, 'v> {
    /// A line's moves (and the lines nested in them).
    fn line(&mut self, moves: &'v [Json<'v>], where_: Here) -> Refused<()> {
        let mainline = matches!(where_, Here::Root(_));
        let line = self.tape.new_line();
        for (index, mv) in moves.iter().enumerate() {
            let here = Here::Index(&where_, index);
            let mv = object(mv, here)?;
            let notes = get(mv, "a");
            if let (Some(Json::Array(notes)), true) = (notes, index == 0 && !mainline) {
                let mut precomments = Vec::new();
                for note in *notes {
                    if let Some(p) = note.as_object().and_then(|n| n.get("precomment")) {
                        precomments
                            .push(Part::Text(comment_text(p, Here::Key(&here, "precomment"))?));
                    }
                }
                self.tape.comment(&precomments);
            }
            let tape = &mut *self.tape;
            let signature = &mut tape.signatures[line];
            if index > 0 {
                signature.push(' ');
            }
            tape.token.clear();
            move_fields(mv, here, &mut tape.token, signature)?;
            tape.san(here)?;
            if let Some(notes) = notes {
                let alts = self.annotate(notes, here, index == 0 && !mainline)?;
                let at = Here::Key(&here, "alt");
                for (n, alt) in alts.into_iter().enumerate() {
                    self.tape.calls.push(Call::BeginVariation);
                    let here = Here::Index(&at, n);
                    self.line(array(alt, here)?, here)?;
                    self.tape.calls.push(Call::EndVariation);
                }
            }
        }
        Ok(())
    }

    /// A move's NAGs and comment (eval, clock, text); its alternate lines.
    fn annotate(
        &mut self,
        notes: &'v Json<'v>,
        here: Here,
        starts_variation: bool,
    ) -> Refused<Vec<&'v Json<'v>>> {
        let mut alts = Vec::new();
        let mut parts = std::mem::take(&mut self.parts);
        parts.clear();
        let at = Here::Key(&here, "a");
        for (i, note) in array(notes, at)?.iter().enumerate() {
            let note_at = Here::Index(&at, i);
            let note = object(note, note_at)?;
            if note.contains_key("precomment") && !starts_variation {
                return Err(format!(
                    "{here} has a precomment but does not start a variation"
                ));
            }
            if let Some(nag) = note.get("nag") {
                let nag = integer(nag, Here::Key(&note_at, "nag"), 1, MAX_NAG as i64)?;
                self.tape.calls.push(Call::Nag(nag as u8));
            }
            if let Some(eval) = note.get("eval") {
                let value = first_of(eval, Here::Key(&note_at, "eval"), bgn_eval, "an eval")?;
                parts.push(Part::Command("eval", value));
            }
            if let Some(clock) = note.get("clk") {
                let value = first_of(clock, Here::Key(&note_at, "clk"), is_clock, "a clock")?;
                parts.push(Part::Command("clk", value));
            }
            if let Some(comment) = note.get("comment") {
                parts.push(Part::Text(comment_text(
                    comment,
                    Here::Key(&note_at, "comment"),
                )?));
            }
            if let Some(alt) = note.get("alt") {
                alts.extend(array(alt, Here::Key(&note_at, "alt"))?);
            }
        }
        self.tape.comment(&parts);
        self.parts = parts;
        Ok(alts)
    }
}

/// A move's `p f t x c castle promote` (`SIGNATURE_FIELDS`) as `get` reads each, in one pass over its
/// entries: a key matched by length and bytes, not one scan of the entries a field, each key compared
/// by `memcmp`.
fn signature_fields<'v>(mv: &Object<'v>) -> [Option<&'v Json<'v>>; 7] {
    let mut fields = [None; 7];
    for (key, value) in mv.iter() {
        let at = match *key {
            "p" => 0,
            "f" => 1,
            "t" => 2,
            "x" => 3,
            "c" => 4,
            "castle" => 5,
            "promote" => 6,
            _ => continue,
        };
        fields[at] = Some(value).filter(|v| !v.is_null());
    }
    fields
}

/// A letter field: absent or empty (`""`), or one letter of `set`; `None` for anything else.
fn letter<'v>(field: Option<&'v Json<'v>>, set: &[u8]) -> Option<&'v str> {
    match field {
        None => Some(""),
        Some(Json::String(s))
            if s.is_empty() || (s.len() == 1 && set.contains(&s.as_bytes()[0])) =>
        {
            Some(*s)
        }
        _ => None,
    }
}

/// The move's PGN token written to `out` and its fields as the lake will hold them
/// (`p.f.t.x.c.castle.promote`) to `signature`. The common case is checked field by field at once; a
/// move that fails it is read again in the order that names the field at fault first.
fn move_fields(mv: &Object, here: Here, out: &mut Vec<u8>, signature: &mut String) -> Refused<()> {
    let [piece, from, to, capture, checks, castle, promote] = signature_fields(mv);
    let piece = piece.and_then(Json::as_str).filter(|p| is_piece(p));
    let from = from.and_then(Json::as_str).filter(|s| is_square(s));
    let to = to.and_then(Json::as_str).filter(|s| is_square(s));
    let checks = match checks {
        None => Some(None),
        Some(c) => int_of(c).filter(|c| (1..=INT16).contains(c)).map(Some),
    };
    let castle = match castle {
        None => Some(""),
        Some(Json::String(s)) if matches!(*s, "" | "K" | "Q" | "k" | "q") => Some(*s),
        _ => None,
    };
    if let (Some(p), Some(f), Some(t), Some(x), Some(c), Some(castle), Some(promote)) = (
        piece,
        from,
        to,
        letter(capture, PIECES),
        checks,
        castle,
        letter(promote, PROMOTIONS),
    ) {
        for (n, field) in [p, f, t, x].into_iter().enumerate() {
            if n > 0 {
                signature.push('.');
            }
            signature.push_str(field);
        }
        signature.push('.');
        if let Some(c) = c {
            let _ = write!(signature, "{c}");
        }
        for field in [castle, promote] {
            signature.push('.');
            signature.push_str(field);
        }
        if !castle.is_empty() {
            let token = if matches!(castle, "K" | "k") {
                "O-O"
            } else {
                "O-O-O"
            };
            out.extend_from_slice(token.as_bytes());
        } else {
            write_token(out, p, f, x, t, promote);
        }
        return Ok(());
    }
    let here = here.to_string();
    let token = bgn_token(mv, &here)?;
    signature.push_str(&bgn_signature(mv, &here)?);
    out.extend_from_slice(token.as_bytes());
    Ok(())
}

/// `Pe7xd8=Q`: the piece, its squares, the capture and the promotion.
fn write_token(out: &mut Vec<u8>, piece: &str, from: &str, capture: &str, to: &str, promote: &str) {
    // A piece and a promotion are one ASCII letter (checked).
    out.push(piece.as_bytes()[0].to_ascii_uppercase());
    out.extend_from_slice(from.as_bytes());
    if !capture.is_empty() {
        out.push(b'x');
    }
    out.extend_from_slice(to.as_bytes());
    if !promote.is_empty() {
        out.push(b'=');
        out.push(promote.as_bytes()[0].to_ascii_uppercase());
    }
}

fn is_piece(p: &str) -> bool {
    p.len() == 1 && PIECES.contains(&p.as_bytes()[0])
}

fn is_square(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 2 && (b'a'..=b'h').contains(&b[0]) && (b'1'..=b'8').contains(&b[1])
}

/// The move with every field the text can carry, each field checked in turn.
fn bgn_token(mv: &Object, here: &str) -> Refused<String> {
    let field = |key| get(mv, key);
    let piece = match field("p") {
        Some(Json::String(p)) if is_piece(p) => p,
        other => {
            return Err(format!(
                "{here}.p {} is not a piece letter",
                repr_opt(other)
            ))
        }
    };
    if field("f").is_none() && mv.contains_key("f") {
        return drop_token(mv, piece, here);
    }
    let mut squares = [""; 2];
    for (n, key) in ["f", "t"].into_iter().enumerate() {
        squares[n] = match field(key) {
            Some(Json::String(s)) if is_square(s) => s,
            other => return Err(format!("{here}.{key} {} is not a square", repr_opt(other))),
        };
    }
    if let Some(castle) = field("castle") {
        return match castle.as_str() {
            Some("K" | "k") => Ok("O-O".into()),
            Some("Q" | "q") => Ok("O-O-O".into()),
            _ => Err(format!(
                "{here}.castle {} is not K, Q, k or q",
                repr(castle)
            )),
        };
    }
    let capture = match field("x") {
        None => "",
        Some(Json::String(x)) if is_piece(x) => x,
        Some(other) => return Err(format!("{here}.x {} is not a piece letter", repr(other))),
    };
    let promote = match field("promote") {
        None => "",
        Some(Json::String(p)) if p.len() == 1 && PROMOTIONS.contains(&p.as_bytes()[0]) => p,
        Some(other) => {
            return Err(format!(
                "{here}.promote {} is not a piece letter",
                repr(other)
            ))
        }
    };
    let mut token = Vec::new();
    write_token(&mut token, piece, squares[0], capture, squares[1], promote);
    Ok(String::from_utf8_lossy(&token).into_owned())
}

/// A drop (Crazyhouse: `f` null): `N@f3`, the piece put on `t`, nothing captured, castled or promoted.
fn drop_token(mv: &Object, piece: &str, here: &str) -> Refused<String> {
    let to = match get(mv, "t") {
        Some(Json::String(t)) if is_square(t) => t,
        other => return Err(format!("{here}.t {} is not a square", repr_opt(other))),
    };
    for key in ["x", "castle", "promote"] {
        if get(mv, key).is_some() {
            return Err(format!("{here}.{key}: a drop (f null) has no {key}"));
        }
    }
    Ok(format!("{}@{to}", piece.to_ascii_uppercase()))
}

/// The move's fields as the lake will hold them, `.`-separated (Python's `str` of each value).
fn bgn_signature(mv: &Object, here: &str) -> Refused<String> {
    if let Some(checks) = get(mv, "c") {
        integer(checks, Here::Key(&Here::Root(here), "c"), 1, INT16)?;
    }
    let fields: Vec<String> = SIGNATURE_FIELDS
        .iter()
        .map(|key| match get(mv, key) {
            None => String::new(),
            Some(Json::String(s)) => s.to_string(),
            Some(other) => repr(other),
        })
        .collect();
    Ok(fields.join("."))
}

/// The first of a BGN list of evals or clocks (the lake keeps one a move).
fn first_of<'v>(
    values: &'v Json<'v>,
    here: Here,
    fits: fn(&str) -> bool,
    what: &str,
) -> Refused<&'v str> {
    let values = array(values, here)?;
    let Some(first) = values.first() else {
        return Err(format!("{here} is empty"));
    };
    let value = string(first, Here::Index(&here, 0))?;
    if !fits(value) {
        return Err(format!("{here}[0] {} is not {what}", repr(first)));
    }
    Ok(value)
}

/// Pawns of at most 10 digits (`-?[0-9]{1,10}(\.[0-9]{1,2})?`) or a mate (`#-?[0-9]+`).
fn bgn_eval(text: &str) -> bool {
    if let Some(mate) = text.strip_prefix('#') {
        return digits(mate.strip_prefix('-').unwrap_or(mate), 1, usize::MAX);
    }
    let text = text.strip_prefix('-').unwrap_or(text);
    match text.split_once('.') {
        None => digits(text, 1, 10),
        Some((whole, cents)) => digits(whole, 1, 10) && digits(cents, 1, 2),
    }
}

/// An integer (any size), or `None` for a fraction or exponent.
fn integer_of<'v>(value: &'v Json) -> Option<&'v Number<'v>> {
    match value {
        Json::Number(n) if n.is_integer() => Some(n),
        _ => None,
    }
}

fn int_of(value: &Json) -> Option<i64> {
    integer_of(value).and_then(Number::as_i64)
}

fn repr_opt(value: Option<&Json>) -> String {
    value.map_or_else(|| "None".into(), repr)
}

/// A value as a refusal quotes it: Python's `repr`, an object's keys sorted (as main's serde_json map read
/// them).
fn repr(value: &Json) -> String {
    python_repr::repr(value, KeyOrder::Sorted)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::replay::GameScratch;

    fn options() -> Options {
        Options {
            drop_source_san: true,
            ..Options::default()
        }
    }

    /// The reader after reading `line`, or the line's refusal.
    fn one(line: &str) -> Result<BgnReader, Refusal> {
        let mut reader = BgnReader::new("t.jsonl", options());
        let block = reader.block(line.as_bytes(), false, 1 << 20, 1 << 16, 0);
        if let Some((_, refusal)) = block.refused.first() {
            return Err(refusal.clone());
        }
        assert_eq!(block.written, 1, "{line}");
        Ok(reader)
    }

    fn refused(line: &str) -> String {
        match one(line) {
            Err(Refusal::BadField(reason)) => reason,
            Err(other) => panic!("{line}: {other:?}"),
            Ok(_) => panic!("{line}: read"),
        }
    }

    /// Everything a replay leaves in its scratch for the columns, written out.
    fn replayed(g: &GameScratch) -> String {
        let text = |r: &Option<Range<usize>>| r.as_ref().map(|r| g.str(r).to_owned());
        let mut out = format!("{:?} {:?} {:?}\n", g.variant, g.outcome, text(&g.comment));
        for (name, value, _) in &g.tags {
            out += &format!("[{} {:?}]\n", g.str(name), g.str(value));
        }
        for line in g.lines() {
            out += &format!(
                "line {} {} {} {:?}:",
                line.id,
                line.parent,
                line.ply,
                text(&line.comment)
            );
            for m in &line.moves {
                out += &format!(
                    " {}{}{}{}{}{}{} {:?} {:?} {:?} {:?} {:?} {:?};",
                    m.piece,
                    m.from,
                    m.to,
                    m.capture,
                    m.checks,
                    m.castle,
                    m.promote,
                    &g.nags[m.nags.clone()],
                    text(&m.comment),
                    m.eval,
                    m.clock,
                    text(&m.san),
                    text(&m.blast),
                );
            }
            out += "\n";
        }
        out
    }

    /// The game in `pgn` as the PGN reader replays it.
    fn read_pgn(pgn: &str) -> String {
        let mut games = GameReader::new(&options());
        games.read(pgn.as_bytes()).expect("a game");
        replayed(&games.replayer.scratch)
    }

    #[test]
    fn a_line_replays_as_its_pgn_reads() {
        // Every field, a variation opened with a precomment, Chess960 castling from a FEN, a promotion.
        let cases = [
            (
                r##"{"id":"abcdEFGH","event":"Rated \"x\"","datetime":"2025-05-01T10:00:01Z","result":"D","players":[{"handle":{"value":"a"},"ELO_blitz":1500,"ratingDiff":0},{"handle":{"value":"b"},"title":"GM"}],"comment":"hi","moves":[{"p":"P","f":"e2","t":"e4","a":[{"nag":1},{"eval":["0.2"],"clk":["0:03:00"]},{"alt":[[{"p":"P","f":"d2","t":"d4","a":[{"precomment":"or"},{"nag":3},{"comment":"also"}]},{"p":"n","f":"g8","t":"f6"}]]}]},{"p":"p","f":"e7","t":"e5","a":[{"eval":["#-3"]}]}]}"##,
                "[Event \"Rated \\\"x\\\"\"]\n[Date \"2025.05.01\"]\n[UTCDate \"2025.05.01\"]\n\
                 [UTCTime \"10:00:01\"]\n[White \"a\"]\n[Black \"b\"]\n[Result \"1/2-1/2\"]\n\
                 [BlackTitle \"GM\"]\n[WhiteElo \"1500\"]\n[WhiteRatingDiff \"+0\"]\n\n\
                 { hi } 1. Pe2e4 $1 { [%eval 0.2] [%clk 0:03:00] } ( { or } 1. Pd2d4 $3 { also } 1... Ng8f6 ) \
                 1... Pe7e5 { [%eval #-3] } 1/2-1/2\n\n",
            ),
            (
                r#"{"variant":"Chess960","fen":"rk5r/8/8/8/8/8/8/RK5R w HAha - 0 1","result":"W","moves":[{"p":"K","f":"b1","t":"g1","castle":"K"},{"p":"k","f":"b8","t":"c8"},{"p":"R","f":"a1","t":"a8","x":"r","c":1}]}"#,
                "[Result \"1-0\"]\n[Variant \"Chess960\"]\n[SetUp \"1\"]\n\
                 [FEN \"rk5r/8/8/8/8/8/8/RK5R w HAha - 0 1\"]\n\n1. O-O 1... Kb8c8 2. Ra1xa8 1-0\n\n",
            ),
            (
                r#"{"fen":"7k/P7/8/8/8/8/8/K7 w - - 0 1","moves":[{"p":"P","f":"a7","t":"a8","promote":"Q","c":1}]}"#,
                "[Result \"*\"]\n[SetUp \"1\"]\n[FEN \"7k/P7/8/8/8/8/8/K7 w - - 0 1\"]\n\n1. Pa7a8=Q *\n\n",
            ),
        ];
        for (line, pgn) in cases {
            let reader = one(line).unwrap_or_else(|r| panic!("{line}: {r:?}"));
            assert_eq!(
                replayed(&reader.games.replayer.scratch),
                read_pgn(pgn),
                "{line}"
            );
        }
        let reader = one(cases[0].0).unwrap();
        assert_eq!(
            reader.tape.signatures[..reader.tape.lines],
            ["P.e2.e4.... p.e7.e5....", "P.d2.d4.... n.g8.f6...."]
        );
    }

    #[test]
    fn a_game_is_written_under_its_line_id_at_its_offset() {
        let mut reader = BgnReader::new("t.jsonl", options());
        let lines = "\n{\"id\":\"abcdEFGH\",\"moves\":[]}\n{\"site\":\"https://lichess.org/ABCDefgh\",\"moves\":[]}\n";
        let block = reader.block(lines.as_bytes(), false, 1 << 20, 1 << 16, 100);
        assert_eq!((block.written, block.lines), (2, 3));
        let batches = reader.finish();
        assert_eq!(batches.len(), 1);
        let games = &batches[0].1[0];
        let column = |name: &str| games.column_by_name(name).expect("a column").clone();
        let ids = column("game_id");
        let ids = ids
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .unwrap();
        assert_eq!(
            ids.iter().collect::<Vec<_>>(),
            [Some("abcdEFGH"), Some("ABCDefgh")]
        );
        let offsets = column("source_offset");
        let offsets = offsets
            .as_any()
            .downcast_ref::<arrow_array::Int64Array>()
            .unwrap();
        assert_eq!(offsets.values().to_vec(), [101, 130]);
    }

    #[test]
    fn moves_the_replay_refuses_or_gives_otherwise() {
        let game = |moves: &str| format!(r#"{{"moves":[{moves}]}}"#);
        let e4 = r#"{"p":"P","f":"e2","t":"e4"}"#;
        for (moves, want) in [
            (
                format!(r#"{e4},{{"p":"p","f":"d7","t":"d5"}},{{"p":"P","f":"e4","t":"d5"}}"#),
                Refusal::Disagrees(
                    "move 3 of the mainline disagrees with its replay: x - (replay: p)".into(),
                ),
            ),
            (
                r#"{"p":"P","f":"e2","t":"e4","c":1}"#.into(),
                Refusal::Disagrees(
                    "move 1 of the mainline disagrees with its replay: c 1 (replay: -)".into(),
                ),
            ),
            (
                format!(
                    r#"{e4},{{"p":"p","f":"e7","t":"e5","a":[{{"alt":[[{{"p":"p","f":"d7","t":"d5","x":"P"}}]]}}]}}"#
                ),
                Refusal::Disagrees(
                    "move 1 of variation 1 disagrees with its replay: x P (replay: -)".into(),
                ),
            ),
            (
                r#"{"p":"N","f":"g1","t":"g3"}"#.into(),
                Refusal::Replay(RejectReason::new(
                    crate::reject::RejectKind::IllegalMove,
                    "illegal move 'Ng1g3' at ply 1",
                )),
            ),
        ] {
            assert_eq!(one(&game(&moves)).err(), Some(want), "{moves}");
        }
    }

    #[test]
    fn signature_fields_are_read_at_their_places_last_occurrence_first() {
        for (at, key) in SIGNATURE_FIELDS.iter().enumerate() {
            let text = format!(r#"{{"{key}": 1, "pf": 2, "{key}": "v", "castles": 3}}"#);
            let arena = Arena::default();
            let doc = json_value::parse(&text, &arena, MAX_DEPTH).unwrap();
            let fields = signature_fields(doc.as_object().unwrap());
            for (i, field) in fields.iter().enumerate() {
                assert_eq!(
                    field.and_then(Json::as_str),
                    (i == at).then_some("v"),
                    "{key}"
                );
            }
        }
        let arena = Arena::default();
        let doc = json_value::parse(r#"{"p": "P", "p": null}"#, &arena, MAX_DEPTH).unwrap();
        assert_eq!(signature_fields(doc.as_object().unwrap())[0], None);
    }

    #[test]
    fn refusals_name_the_field_as_python_did() {
        assert_eq!(
            refused(r#"{"moves": "e4"}"#),
            "moves is a string, not an array"
        );
        assert_eq!(
            refused(r#"{"moves": [{"p": 1, "f": "e2", "t": "e4"}]}"#),
            "moves[0].p 1 is not a piece letter"
        );
        assert_eq!(
            refused(r#"{"site": "x"}"#),
            "missing required field 'moves'"
        );
        assert_eq!(
            refused(r#"{"players": [{"ELO_blitz": 1000000000000000000000000000000}], "moves": []}"#),
            "players[0].ELO_blitz 1000000000000000000000000000000 is out of range (0 to 2147483647)"
        );
        assert_eq!(
            refused(r#"{"moves": [{"p": "P", "f": "e2", "t": "e4", "c": 1.0}]}"#),
            "moves[0].c is a number, not an integer"
        );
        assert_eq!(
            refused(r#"{"result": [1, "a'b", 1.5e-7, null, true], "moves": []}"#),
            r#"result [1, "a'b", 1.5e-07, None, True] is not one of W, B, D, *"#
        );
        assert_eq!(
            refused(r#"{"moves": [{"p": "P", "f": null, "t": "e4", "x": "p"}]}"#),
            "moves[0].x: a drop (f null) has no x"
        );
        assert_eq!(
            refused(r#"{"moves": [{"p": "P", "f": "e2", "t": "e4", "a": [{"clk": ["3:00"]}]}]}"#),
            "moves[0].a[0].clk[0] '3:00' is not a clock"
        );
        assert_eq!(
            refused(r#"{"event": "\ud800", "moves": []}"#),
            "a string holds a lone surrogate (\\ud800-\\udfff)"
        );
    }

    #[test]
    fn lines_that_are_not_json_too_deep_or_too_long() {
        assert_eq!(one("{not json").err(), Some(Refusal::NotJson));
        assert_eq!(one("{\"a\": \"caf\u{e9}\"").err(), Some(Refusal::NotJson));
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(one(&deep).err(), Some(Refusal::TooDeep));
        let fine = format!(
            r#"{{"x": {}{}, "moves": []}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        assert!(one(&fine).is_ok());
        let mut reader = BgnReader::new("t.jsonl", options());
        let block = reader.block(
            b"\n{\"moves\": []}\n  \n{\"metadata\": {}}\n[1]",
            false,
            8,
            4,
            0,
        );
        assert_eq!(block.lines, 5);
        assert_eq!(block.refused.len(), 3); // two too long, `[1]` not an object
        assert_eq!(block.refused[0].1, Refusal::TooLarge);
        let block = reader.block(b"{\"metadata\": {}}\n", false, 100, 4, 0);
        assert_eq!(
            block.studies,
            vec![Place {
                offset: 0,
                length: 17,
                line: 1
            }]
        );
    }
}
