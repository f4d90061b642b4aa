//! BGN JSON lines (docs/exports.md) as PGN text for the reader to replay, a block of lines at a time.
//!
//! The PGN is what the reader checks: each move is written with every field it carries (`Ng1xf3`,
//! `Pe7e8=Q`, `O-O`), and what the reader does not check from the text (the capture, the checks, the
//! castling side, the case of the piece) is given back as the game's signature, which the load compares
//! with the replay (warehouse/ingest/json_files.py). A field of the wrong type or out of its column's range
//! refuses the game here with one line saying what and where, in the words the load has always used (they
//! quote values as Python's `repr` writes them); a clock's or an eval's range is left to the reader, which
//! checks it as it checks a PGN game's ([`crate::annotations`]): here only their shape.
//!
//! A line that is no JSON is refused without a reason (`Outcome::NotJson`): the load words it as Python's
//! JSON reader does. A line holding a study document (a `metadata` key) is left to the load's study path.

use std::borrow::Cow;
use std::fmt::Write as _;

use crate::annotations::MAX_NAG;
use crate::export_pgn::write_tags;
use crate::json_fields::{
    array, comment_text, digits, integer, is_clock, lake_id, object, string, tag_value, Refused,
};
use crate::json_value::{self, Arena, Json, JsonError, KeyOrder, Number, Object};
use crate::movetext::{Part, Tokens};
use crate::python_repr;

/// Nesting deeper than this is refused, as Python's JSON reader refuses it (`RecursionError` at ~997).
pub const MAX_DEPTH: usize = 995;
const INT16: i64 = 32767;
const INT32: i64 = (1 << 31) - 1;
const PIECES: &[u8] = b"PNBRQKpnbrqk";
const PROMOTIONS: &[u8] = b"NBRQKnbrqk";
/// A move's fields in a signature, in order.
pub const SIGNATURE_FIELDS: [&str; 7] = ["p", "f", "t", "x", "c", "castle", "promote"];

/// What became of one non-blank line of a block: `offset` and `length` (its newline included) in the
/// block's bytes, `line` its number counted from the block's first line (1).
#[derive(Debug, Clone, PartialEq)]
pub struct Place {
    pub offset: usize,
    pub length: usize,
    pub line: u64,
}

/// The hash the load compares a game's signature by (its text is kept aside, read only to word a
/// disagreement): each side's text made once, not carried through Arrow columns and compared there.
pub fn signature_hash(signature: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(signature.as_bytes())
}

/// A BGN game: its PGN is `Block::pgn[pgn_start..pgn_end]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Game {
    pub place: Place,
    pub pgn_start: usize,
    pub pgn_end: usize,
    pub id: Option<String>,
    pub signature: String,
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
}

impl Refusal {
    /// The reject's kind, as the load names it (warehouse/lake/records.py, `JSON_REJECT_KINDS`).
    pub fn kind(&self) -> &'static str {
        match self {
            Refusal::NotJson | Refusal::NotUtf8(_) | Refusal::TooDeep => "not_json",
            Refusal::TooLarge => "too_large",
            Refusal::BadField(_) => "bad_field",
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
            Refusal::BadField(reason) => Some(reason.clone()),
        }
    }
}

/// A block of lines made into PGN: its games in order, the refused lines, and the lines that hold study
/// documents (left to the load).
#[derive(Debug, Default)]
pub struct Block {
    pub pgn: Vec<u8>,
    pub games: Vec<Game>,
    pub refused: Vec<(Place, Refusal)>,
    pub studies: Vec<Place>,
    /// Lines in the block, blank ones included (a last line without a newline counted).
    pub lines: u64,
}

/// The lines of `data` (or `data` as one document when `whole`) made into PGN. A line longer than
/// `limit` bytes (its newline included) is refused whole (`Refusal::TooLarge`) unless its first
/// `raw_limit` bytes are blank, as a blank line is skipped.
pub fn bgn_block(data: &[u8], whole: bool, limit: usize, raw_limit: usize) -> Block {
    // A game's PGN is shorter than its line: room for all at once, not grown (copied, or remapped and
    // faulted in again) a doubling at a time. Pages never written are never touched.
    let mut block = Block {
        pgn: Vec::with_capacity(data.len()),
        ..Block::default()
    };
    let mut arena = Arena::default();
    let mut offset = 0;
    while offset < data.len() {
        let end = if whole {
            data.len()
        } else {
            memchr::memchr(b'\n', &data[offset..]).map_or(data.len(), |n| offset + n + 1)
        };
        block.lines += 1;
        let place = Place {
            offset,
            length: end - offset,
            line: block.lines,
        };
        let text = &data[offset..end];
        offset = end;
        if text.len() > limit {
            if !is_blank(&text[..raw_limit.min(text.len())]) {
                block.refused.push((place, Refusal::TooLarge));
            }
        } else if !is_blank(text) {
            block.line(text, place, &arena);
            arena.reset();
        }
    }
    block
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

impl Block {
    fn line(&mut self, text: &[u8], place: Place, arena: &Arena) {
        let doc = match parse(text, arena) {
            Ok(doc) => doc,
            Err(refusal) => return self.refused.push((place, refusal)),
        };
        if doc.as_object().is_some_and(|d| d.contains_key("metadata")) {
            return self.studies.push(place);
        }
        let pgn_start = self.pgn.len();
        match bgn_game(&doc, &mut self.pgn) {
            Ok((id, signature)) => self.games.push(Game {
                place,
                pgn_start,
                pgn_end: self.pgn.len(),
                id,
                signature,
            }),
            Err(reason) => {
                self.pgn.truncate(pgn_start);
                self.refused.push((place, Refusal::BadField(reason)));
            }
        }
    }
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

/// A game's PGN written to `out`; its id and signature (a line's moves space-separated, lines
/// `|`-separated, the mainline first then each line in the order its `(` is written, which is the lake's
/// `variations` order).
fn bgn_game<'v>(doc: &'v Json<'v>, out: &mut Vec<u8>) -> Refused<(Option<String>, String)> {
    let doc = object(doc, Here::Root("the line"))?;
    let id = match get(doc, "id") {
        None => None,
        Some(id) => {
            let text = string(id, Here::Root("id"))?;
            if !lake_id(text) {
                return Err(format!(
                    "id {} is neither a lichess id (8 letters or digits) nor 16 hex digits",
                    repr(id)
                ));
            }
            Some(text.to_owned())
        }
    };
    let Some(moves) = doc.get("moves") else {
        return Err("missing required field 'moves'".into());
    };
    let result = match doc.get("result") {
        None => "*",
        Some(Json::String(r)) if matches!(*r, "W" | "B" | "D" | "*") => match *r {
            "W" => "1-0",
            "B" => "0-1",
            "D" => "1/2-1/2",
            _ => "*",
        },
        Some(other) => return Err(format!("result {} is not one of W, B, D, *", repr(other))),
    };
    tags(doc, result, out)?;
    out.push(b'\n');
    let mut game = Lines {
        tokens: Tokens::new(out),
        signatures: Vec::new(),
        parts: Vec::new(),
    };
    if let Some(comment) = get(doc, "comment") {
        let comment = comment_text(comment, Here::Root("comment"))?;
        game.tokens.braced(&[Part::Text(comment)]);
    }
    let fen = get(doc, "fen").and_then(Json::as_str);
    let mainline = Here::Root("moves");
    game.line(array(moves, mainline)?, start_ply(fen), mainline)?;
    game.tokens.token(result);
    game.tokens.out.extend_from_slice(b"\n\n");
    Ok((id, game.signatures.join("|")))
}

/// A key's value, a null as no value (Python's `dict.get`).
fn get<'a>(doc: &'a Object<'a>, key: &str) -> Option<&'a Json<'a>> {
    doc.get(key).filter(|v| !v.is_null())
}

fn tags(doc: &Object, result: &str, out: &mut Vec<u8>) -> Refused<()> {
    // Values borrowed from the line where they are written as they are, not an allocation a tag.
    let mut pairs: Vec<(&str, Cow<str>)> = Vec::new();
    for (key, tag) in [("event", "Event"), ("site", "Site")] {
        if let Some(value) = doc.get(key) {
            pairs.push((tag, tag_value(value, Here::Root(key))?.into()));
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
        pairs.push(("Date", date.clone().into()));
        pairs.push(("UTCDate", date.into()));
        pairs.push(("UTCTime", clock.into()));
    }
    if let Some(round) = doc.get("round") {
        pairs.push(("Round", tag_value(round, Here::Root("round"))?.into()));
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
            pairs.push((tag, name.as_str().into()));
        }
    }
    pairs.push(("Result", result.into()));
    for (field, tags) in [
        (0, ["WhiteTitle", "BlackTitle"]),
        (1, ["WhiteElo", "BlackElo"]),
        (2, ["WhiteRatingDiff", "BlackRatingDiff"]),
    ] {
        for (side, tag) in sides.iter().zip(tags) {
            let value = [&side.title, &side.elo, &side.diff][field];
            if let Some(value) = value {
                pairs.push((tag, value.as_str().into()));
            }
        }
    }
    if let Some(variant) = doc.get("variant") {
        pairs.push(("Variant", tag_value(variant, Here::Root("variant"))?.into()));
    }
    if let Some(opening) = doc.get("opening") {
        let opening = object(opening, Here::Root("opening"))?;
        for (key, tag) in [("ECO", "ECO"), ("verbose", "Opening")] {
            if let Some(value) = opening.get(key) {
                let value = tag_value(value, Here::Key(&Here::Root("opening"), key))?;
                pairs.push((tag, value.into()));
            }
        }
    }
    for (key, tag) in [
        ("timeControl", "TimeControl"),
        ("termination", "Termination"),
    ] {
        if let Some(value) = doc.get(key) {
            pairs.push((tag, tag_value(value, Here::Root(key))?.into()));
        }
    }
    if let Some(fen) = doc.get("fen") {
        let fen = tag_value(fen, Here::Root("fen"))?;
        pairs.push(("SetUp", "1".into()));
        pairs.push(("FEN", fen.into()));
    }
    let pairs: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(name, value)| (*name, value.as_ref()))
        .collect();
    write_tags(out, &pairs);
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

/// The ply of the first move: 0 for White's first move, 1 for Black's, from the FEN's side to move and
/// fullmove number.
fn start_ply(fen: Option<&str>) -> u64 {
    let Some(fen) = fen else { return 0 };
    let fields: Vec<&str> = fen.split_whitespace().collect();
    let black = fields.get(1) == Some(&"b");
    let fullmove = fields
        .get(5)
        .filter(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
        .map_or(1, |f| f.parse::<u64>().unwrap_or(u64::MAX / 4));
    2 * (fullmove.max(1) - 1) + u64::from(black)
}

/// A game's movetext being written: its tokens space-separated in `out`, and each line's signature.
struct Lines<'a, 'v> {
    tokens: Tokens<'a>,
    signatures: Vec<String>,
    /// A move's comment parts, room kept from move to move (not an allocation a move).
    parts: Vec<Part<'v>>,
}

impl<'v> Lines<'_, 'v> {
    /// A line's moves (and the lines nested in them).
    fn line(&mut self, moves: &'v [Json<'v>], first_ply: u64, where_: Here) -> Refused<()> {
        let mainline = matches!(where_, Here::Root(_));
        let line = self.signatures.len();
        self.signatures.push(String::new());
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
                self.tokens.braced(&precomments);
            }
            let ply = first_ply + index as u64;
            self.tokens.start_token();
            let dots = if ply.is_multiple_of(2) { "." } else { "..." };
            let _ = write!(VecWriter(self.tokens.out), "{}{dots} ", ply / 2 + 1);
            let signature = &mut self.signatures[line];
            if index > 0 {
                signature.push(' ');
            }
            move_fields(mv, here, self.tokens.out, signature)?;
            if let Some(notes) = notes {
                let alts = self.annotate(notes, here, index == 0 && !mainline)?;
                let at = Here::Key(&here, "alt");
                for (n, alt) in alts.into_iter().enumerate() {
                    self.tokens.token("(");
                    let here = Here::Index(&at, n);
                    self.line(array(alt, here)?, ply, here)?;
                    self.tokens.token(")");
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
                self.tokens.start_token();
                let _ = write!(VecWriter(self.tokens.out), "${nag}");
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
        self.tokens.braced(&parts);
        self.parts = parts;
        Ok(alts)
    }
}

/// `write!` into a byte vector.
struct VecWriter<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for VecWriter<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
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

    fn one(line: &str) -> Result<(String, String, Option<String>), Refusal> {
        let block = bgn_block(line.as_bytes(), false, 1 << 20, 1 << 16);
        if let Some((_, refusal)) = block.refused.first() {
            return Err(refusal.clone());
        }
        let game = &block.games[0];
        let pgn = String::from_utf8(block.pgn[game.pgn_start..game.pgn_end].to_vec()).unwrap();
        Ok((pgn, game.signature.clone(), game.id.clone()))
    }

    fn refused(line: &str) -> String {
        match one(line) {
            Err(Refusal::BadField(reason)) => reason,
            other => panic!("{line}: {other:?}"),
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
    fn a_line_becomes_pgn_with_every_field() {
        let (pgn, signature, id) = one(
            r#"{"id":"abcdEFGH","event":"Rated \"x\"","datetime":"2025-05-01T10:00:01Z","result":"D","players":[{"handle":{"value":"a"},"ELO_blitz":1500,"ratingDiff":0},{"handle":{"value":"b"},"title":"GM"}],"comment":"hi","moves":[{"p":"P","f":"e2","t":"e4","c":1,"a":[{"nag":1},{"eval":["0.2"],"clk":["0:03:00"]},{"alt":[[{"p":"P","f":"d2","t":"d4","a":[{"precomment":"or"}]}]]}]},{"p":"k","f":"e8","t":"g8","castle":"k"}]}"#,
        )
        .unwrap();
        assert_eq!(
            pgn,
            "[Event \"Rated \\\"x\\\"\"]\n[Date \"2025.05.01\"]\n[UTCDate \"2025.05.01\"]\n\
             [UTCTime \"10:00:01\"]\n[White \"a\"]\n[Black \"b\"]\n[Result \"1/2-1/2\"]\n\
             [BlackTitle \"GM\"]\n[WhiteElo \"1500\"]\n[WhiteRatingDiff \"+0\"]\n\n\
             { hi } 1. Pe2e4 $1 { [%eval 0.2] [%clk 0:03:00] } ( { or } 1. Pd2d4 ) 1... O-O 1/2-1/2\n\n"
        );
        assert_eq!(signature, "P.e2.e4..1.. k.e8.g8...k.|P.d2.d4....");
        assert_eq!(id.as_deref(), Some("abcdEFGH"));
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
        assert_eq!(one("{not json"), Err(Refusal::NotJson));
        assert_eq!(one("{\"a\": \"caf\u{e9}\""), Err(Refusal::NotJson));
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(one(&deep), Err(Refusal::TooDeep));
        let fine = format!(
            r#"{{"x": {}{}, "moves": []}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        assert!(one(&fine).is_ok());
        let block = bgn_block(
            b"\n{\"moves\": []}\n  \n{\"metadata\": {}}\n[1]",
            false,
            8,
            4,
        );
        assert_eq!(block.lines, 5);
        assert_eq!(block.refused.len(), 3); // two too long, `[1]` not an object
        assert_eq!(block.refused[0].1, Refusal::TooLarge);
        let block = bgn_block(b"{\"metadata\": {}}\n", false, 100, 4);
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
