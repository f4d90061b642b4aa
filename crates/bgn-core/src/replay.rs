//! A pgn-reader visitor that replays one game with shakmaty and records every ply in BGN terms.
//!
//! State lives in reusable scratch buffers (`GameScratch`) so that a game costs no allocation once the
//! buffers have grown: strings go to one arena, moves to per-line vectors that are kept between games.
//! Nothing reaches the Arrow builders until the whole game has replayed: a game that fails half-way
//! leaves no trace but its reject.

use std::ops::{ControlFlow, Range};

use pgn_reader::{Nag, Outcome, RawComment, RawTag, SanPlus, Skip, Visitor};
use shakmaty::san::{San, SanError, Suffix};
use shakmaty::variant::Variant;
use shakmaty::{Bitboard, CastlingSide, Color, Move, Position, Role};

use crate::annotations::{self, Eval};
use crate::reject::{RejectKind, RejectReason};
use crate::san_move;
use crate::tags::Known;
use crate::variant::{self, Board, GameVariant, Tagged};

/// The `from` of a drop (Crazyhouse): the piece comes from the pocket, not from a square.
pub const NO_SQUARE: u8 = u8::MAX;

/// One ply, in BGN terms. Letters are ASCII bytes, `0` meaning none.
#[derive(Clone, Debug, Default)]
pub struct MoveRec {
    pub piece: u8,
    /// `NO_SQUARE` for a drop.
    pub from: u8,
    pub to: u8,
    pub capture: u8,
    /// Checks given so far by the mover, this one included; 0 when this move gives none (or mates).
    pub checks: u16,
    pub castle: u8,
    pub promote: u8,
    /// Atomic: the pieces the capture's explosion removed around its square (`blast`), in the arena.
    pub blast: Option<Range<usize>>,
    /// The move's SAN as the source wrote it (normalized by the parse: `0-0` is `O-O`), in the text
    /// arena; `None` when it is the SAN the position gives (disambiguation and `+`/`#` suffix
    /// included), which the lake leaves null (`crate::san` fills it back).
    pub san: Option<Range<usize>>,
    pub nags: Range<usize>,
    /// The raw comments after the move, joined as python-chess joins them.
    pub raw_comment: Option<Range<usize>>,
    // Filled from `raw_comment` when the game ends:
    pub comment: Option<Range<usize>>,
    pub eval: Option<Eval>,
    pub clock: Option<i64>,
}

/// A line of play: 0 is the mainline, the others are variations.
#[derive(Debug, Default)]
pub struct Line {
    pub id: i32,
    pub parent: i32,
    pub ply: i32,
    /// A variation's starting comment (before its first move); raw until the game ends.
    pub comment: Option<Range<usize>>,
    pub moves: Vec<MoveRec>,
}

/// Where play continues in the current line: one open line of play on the replay's stack, the
/// mainline at the bottom, a variation per `(`.
struct LineCursor {
    line: usize,
    pos: Board,
    /// The position before the line's last move, and the check counters then: a variation starts there.
    before_last: Option<(Board, [u16; 2])>,
    checks: [u16; 2],
    /// `(`s opened on this line with no move to branch from, not closed yet: python-chess ignores
    /// them, and so do we (a count, so that a run of them costs no memory and no walk).
    ignored: usize,
}

/// Moves, variations (each `(`, ignored ones too) and NAGs one game may hold: each costs the replay
/// some hundred bytes (a move's record, a line's), far more than its few bytes of text, so that
/// `Options::max_game_bytes` alone would let one game of sibling variations take gigabytes.
/// A game beyond is rejected (`too_large`). docs/operations.md, "Limits".
pub const MAX_GAME_MOVES: usize = 1_000_000;
/// Variations open inside one another: each holds two positions while open (~20 MB at the bound).
pub const MAX_VARIATION_DEPTH: usize = 100_000;

/// Everything one game produces; reused from game to game.
#[derive(Default)]
pub struct GameScratch {
    /// Arena for tag names and values, SAN and finished comments.
    pub text: String,
    /// Arena for comments as read, until the game ends.
    raw: String,
    pub tags: Vec<(Range<usize>, Range<usize>, Option<Known>)>,
    /// Index in `tags` of each known tag (the last one wins, as in python-chess's header dict).
    known: [Option<u16>; Known::COUNT],
    pub nags: Vec<u8>,
    lines: Vec<Line>,
    pub n_lines: usize,
    pub comment: Option<Range<usize>>,
    pub outcome: Option<Outcome>,
    pub variant: GameVariant,
    pub start_fen: Option<Range<usize>>,
    pub final_is_mate: bool,
    stack: Vec<LineCursor>,
    /// Moves, variations and NAGs so far (`MAX_GAME_MOVES`).
    items: usize,
    /// A long comment arriving in pieces.
    partial: String,
}

impl GameScratch {
    /// The text at `r` in the arena.
    pub fn str(&self, r: &Range<usize>) -> &str {
        &self.text[r.clone()]
    }

    /// The index in `tags` of the occurrence of `tag` the columns use (the last one).
    pub fn tag_index(&self, tag: Known) -> Option<usize> {
        self.known[tag as usize].map(usize::from)
    }

    /// The value of a known tag (its last occurrence, as python-chess's header dict keeps).
    pub fn tag(&self, tag: Known) -> Option<&str> {
        let i = self.known[tag as usize]?;
        Some(self.str(&self.tags[usize::from(i)].1))
    }

    /// The game's lines of play: the mainline first, then its variations.
    pub fn lines(&self) -> &[Line] {
        &self.lines[..self.n_lines]
    }

    /// The mainline's moves.
    pub fn mainline(&self) -> &[MoveRec] {
        &self.lines[0].moves
    }

    fn reset(&mut self) {
        self.text.clear();
        self.raw.clear();
        self.tags.clear();
        self.known = [None; Known::COUNT];
        self.nags.clear();
        self.n_lines = 0;
        self.comment = None;
        self.outcome = None;
        self.variant = GameVariant::Standard;
        self.start_fen = None;
        self.final_is_mate = false;
        self.stack.clear();
        self.items = 0;
        self.partial.clear();
    }

    fn push_text(&mut self, s: &str) -> Range<usize> {
        let start = self.text.len();
        self.text.push_str(s);
        start..self.text.len()
    }

    fn new_line(&mut self, parent: i32, ply: i32) -> usize {
        if self.n_lines == self.lines.len() {
            self.lines.push(Line::default());
        }
        let idx = self.n_lines;
        self.n_lines += 1;
        let line = &mut self.lines[idx];
        line.id = idx as i32;
        line.parent = parent;
        line.ply = ply;
        line.comment = None;
        line.moves.clear();
        idx
    }

    fn cursor(&mut self) -> &mut LineCursor {
        self.stack
            .last_mut()
            .expect("the mainline cursor is never popped")
    }

    /// Counts one more move, variation or NAG; `Err` once the game holds more than `MAX_GAME_MOVES`.
    fn count_item(&mut self) -> Verdict {
        self.items += 1;
        if self.items > MAX_GAME_MOVES {
            return Err(RejectReason::new(
                RejectKind::TooLarge,
                format!("game of more than {MAX_GAME_MOVES} moves, variations and NAGs: skipped"),
            ));
        }
        Ok(())
    }

    /// Appends a finished comment to whatever it annotates.
    /// The fast path for a move's first comment when it holds only `[%eval]`/`[%clk]` commands, as
    /// most lichess comments do: its eval and clock go straight to the move, no text is kept.
    fn take_commands_only(&mut self, raw: &[u8]) -> bool {
        let line = self.cursor().line;
        let Some(m) = self.lines[line].moves.last_mut() else {
            return false;
        };
        if m.raw_comment.is_some() || m.eval.is_some() || m.clock.is_some() {
            return false;
        }
        match annotations::commands_only(raw) {
            Some(found) => {
                m.eval = found.eval;
                m.clock = found.clock;
                true
            }
            None => false,
        }
    }

    fn add_comment(&mut self, raw: &str) {
        // python-chess drops one space after `{` and one before `}`, then joins comments with a space.
        let raw = raw.strip_prefix(' ').unwrap_or(raw);
        let raw = raw.strip_suffix(' ').unwrap_or(raw);
        let line = self.cursor().line;
        let has_move = !self.lines[line].moves.is_empty();
        if has_move {
            let idx = self.lines[line].moves.len() - 1;
            let old = self.lines[line].moves[idx].raw_comment.clone();
            let joined = self.join(old, raw);
            self.lines[line].moves[idx].raw_comment = joined;
        } else if line == 0 {
            self.comment = self.join(self.comment.clone(), raw);
        } else {
            let old = self.lines[line].comment.clone();
            self.lines[line].comment = self.join(old, raw);
        }
    }

    /// Joins a comment to the raw comments already there (in the `raw` arena).
    fn join(&mut self, old: Option<Range<usize>>, new: &str) -> Option<Range<usize>> {
        let raw = &mut self.raw;
        let start = raw.len();
        match old {
            _ if new.is_empty() => return old,
            None => {}
            Some(r) if r.end == raw.len() => {
                raw.push(' ');
                raw.push_str(new);
                return Some(r.start..raw.len());
            }
            Some(r) => {
                raw.extend_from_within(r);
                raw.push(' ');
            }
        }
        raw.push_str(new);
        Some(start..raw.len())
    }

    /// Moves a raw comment to the text arena, trimmed; `None` when only whitespace.
    fn finish_plain(&mut self, raw: Option<Range<usize>>) -> Option<Range<usize>> {
        let trimmed = self.raw[raw?].trim();
        (!trimmed.is_empty()).then(|| {
            let start = self.text.len();
            self.text.push_str(trimmed);
            start..self.text.len()
        })
    }

    /// Turns raw comments into comment text, eval and clock; `Err` for a clock or eval out of the
    /// lake's range.
    fn finish_comments(&mut self) -> Verdict {
        self.comment = self.finish_plain(self.comment.clone());
        for l in 0..self.n_lines {
            self.lines[l].comment = self.finish_plain(self.lines[l].comment.clone());
            for i in 0..self.lines[l].moves.len() {
                let m = &mut self.lines[l].moves[i];
                let Some(raw) = m.raw_comment.clone() else {
                    continue;
                };
                let mut found = annotations::Annotations::default();
                let start = self.text.len();
                annotations::extract(&self.raw[raw], &mut self.text, &mut found).map_err(|e| {
                    let at = ply_label(l as i32, i);
                    let annotations::OutOfRange {
                        what,
                        command,
                        range,
                    } = e;
                    RejectReason::new(
                        RejectKind::OutOfRange,
                        format!("{what} '{command}' at ply {at} is out of range ({range})"),
                    )
                })?;
                let trimmed = trim_range(&self.text, start..self.text.len());
                m.comment = (!trimmed.is_empty()).then_some(trimmed);
                // A first comment of commands only was read already (`take_commands_only`): it wins.
                m.eval = m.eval.or(found.eval);
                m.clock = m.clock.or(found.clock);
            }
        }
        Ok(())
    }
}

/// Text as UTF-8: the framer hands over valid UTF-8 (Latin-1 was converted), so the lossy path is
/// only a safety net.
fn decode_text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

fn trim_range(text: &str, r: Range<usize>) -> Range<usize> {
    let s = &text[r.clone()];
    let lead = s.len() - s.trim_start().len();
    let trail = s.len() - s.trim_end().len();
    if lead == s.len() {
        r.start..r.start
    } else {
        r.start + lead..r.end - trail
    }
}

/// The visitor: replays into `scratch`; its output is `Err(reason)` for a game to reject.
#[derive(Default)]
pub struct Replayer {
    /// The game replayed last.
    pub scratch: GameScratch,
    /// The movetext has no `(`: no variation can branch off, so the position before each move need
    /// not be kept (a copy per ply saved).
    pub no_variations: bool,
    /// `reader::Options::drop_source_san`.
    pub drop_source_san: bool,
}

/// The replay's verdict on a game: kept, or rejected and why.
type Verdict = Result<(), RejectReason>;

impl Visitor for Replayer {
    type Tags = ();
    type Movetext = ();
    type Output = Verdict;

    fn begin_tags(&mut self) -> ControlFlow<Verdict> {
        self.scratch.reset();
        ControlFlow::Continue(())
    }

    fn tag(&mut self, _: &mut (), name: &[u8], value: RawTag<'_>) -> ControlFlow<Verdict> {
        let name = name.trim_ascii();
        self.tag_text(&decode_text(name), &decode_text(&value.decode()));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, _: ()) -> ControlFlow<Verdict> {
        match self.start_position() {
            Ok(pos) => {
                let line = self.scratch.new_line(0, 0);
                self.scratch.stack.push(LineCursor {
                    line,
                    pos,
                    before_last: None,
                    checks: [0, 0],
                    ignored: 0,
                });
                ControlFlow::Continue(())
            }
            Err(reason) => ControlFlow::Break(Err(reason)),
        }
    }

    fn san(&mut self, _: &mut (), san_plus: SanPlus) -> ControlFlow<Verdict> {
        match self.play(san_plus) {
            Ok(()) => ControlFlow::Continue(()),
            Err(reason) => ControlFlow::Break(Err(reason)),
        }
    }

    fn nag(&mut self, _: &mut (), nag: Nag) -> ControlFlow<Verdict> {
        let s = &mut self.scratch;
        let line = s.cursor().line;
        let nags_len = s.nags.len();
        let Some(m) = s.lines[line].moves.last_mut() else {
            return ControlFlow::Continue(());
        };
        // A move's NAGs are contiguous unless a variation came between: then copy them to the end
        // (each copied NAG counts as one more: a game cannot make the copies grow without bound).
        let copied = if m.nags.end == nags_len {
            0
        } else {
            let old = m.nags.clone();
            s.nags.extend_from_within(old);
            m.nags = nags_len..s.nags.len();
            m.nags.len()
        };
        s.nags.push(nag.0);
        m.nags.end = s.nags.len();
        s.items += copied;
        match s.count_item() {
            Ok(()) => ControlFlow::Continue(()),
            Err(reason) => ControlFlow::Break(Err(reason)),
        }
    }

    fn partial_comment(&mut self, _: &mut (), comment: RawComment<'_>) -> ControlFlow<Verdict> {
        self.scratch
            .partial
            .push_str(&decode_text(comment.as_bytes()));
        ControlFlow::Continue(())
    }

    fn comment(&mut self, _: &mut (), comment: RawComment<'_>) -> ControlFlow<Verdict> {
        let s = &mut self.scratch;
        if s.partial.is_empty() && s.take_commands_only(comment.as_bytes()) {
            return ControlFlow::Continue(());
        }
        let chunk = decode_text(comment.as_bytes());
        if s.partial.is_empty() {
            s.add_comment(&chunk);
        } else {
            let mut whole = std::mem::take(&mut s.partial);
            whole.push_str(&chunk);
            s.add_comment(&whole);
        }
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _: &mut ()) -> ControlFlow<Verdict, Skip> {
        let s = &mut self.scratch;
        if let Err(reason) = s.count_item() {
            return ControlFlow::Break(Err(reason));
        }
        let depth = s.stack.len();
        let cursor = s.cursor();
        let Some((pos, checks)) = cursor.before_last.clone() else {
            cursor.ignored += 1;
            return ControlFlow::Continue(Skip(false));
        };
        if depth > MAX_VARIATION_DEPTH {
            return ControlFlow::Break(Err(RejectReason::new(
                RejectKind::TooLarge,
                format!("variations nested more than {MAX_VARIATION_DEPTH} deep: skipped"),
            )));
        }
        let parent = cursor.line;
        let ply = s.lines[parent].moves.len() as i32 - 1;
        let line = s.new_line(parent as i32, ply);
        s.stack.push(LineCursor {
            line,
            pos,
            before_last: None,
            checks,
            ignored: 0,
        });
        ControlFlow::Continue(Skip(false))
    }

    fn end_variation(&mut self, _: &mut ()) -> ControlFlow<Verdict> {
        let s = &mut self.scratch;
        let depth = s.stack.len();
        let cursor = s.cursor();
        if cursor.ignored > 0 {
            cursor.ignored -= 1;
        } else if depth > 1 {
            s.stack.pop();
        } // else an unmatched `)`: ignored, as python-chess does
        ControlFlow::Continue(())
    }

    fn outcome(&mut self, _: &mut (), outcome: Outcome) -> ControlFlow<Verdict> {
        // Only outside every `(`, ignored ones too.
        if self.scratch.stack.len() == 1 && self.scratch.cursor().ignored == 0 {
            self.scratch.outcome = Some(outcome);
        }
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, _: ()) -> Verdict {
        let s = &mut self.scratch;
        if !s.partial.is_empty() {
            return Err(RejectReason::new(
                RejectKind::UnterminatedComment,
                "unterminated comment",
            ));
        }
        // Text between games that is no game at all (noise, a stray paragraph, even one holding a
        // `*` or `1-0`): no tag and no move. python-chess would make an empty game of it; here it
        // goes to the rejects.
        if s.tags.is_empty() && s.lines[0].moves.is_empty() {
            return Err(RejectReason::new(
                RejectKind::NotAGame,
                "no tags and no moves: not a game",
            ));
        }
        if let Some(main) = s.stack.first() {
            s.final_is_mate = main.pos.is_checkmate();
        }
        s.finish_comments()
    }
}

impl Replayer {
    /// A tag pair as read (its value unescaped): what `Visitor::tag` records, and what a source that
    /// holds tags as values (the BGN import, `crate::json_games`) gives directly.
    pub fn tag_text(&mut self, name: &str, value: &str) {
        let s = &mut self.scratch;
        let known = Known::of(name.as_bytes());
        let name = s.push_text(name);
        let value = s.push_text(value);
        if let (Some(k), Ok(i)) = (known, u16::try_from(s.tags.len())) {
            s.known[k as usize] = Some(i);
        }
        s.tags.push((name, value, known));
    }

    fn start_position(&mut self) -> Result<Board, RejectReason> {
        let s = &mut self.scratch;
        let variant = match variant::tagged(s.tag(Known::Variant)) {
            Tagged::Chess { chess960: false } => GameVariant::Standard,
            Tagged::Chess { chess960: true } => GameVariant::Chess960,
            Tagged::Lichess(v) => GameVariant::Lichess(v),
            Tagged::Unsupported => {
                return Err(variant::unsupported(s.tag(Known::Variant).unwrap_or("")));
            }
        };
        s.variant = variant;
        let fen_tag = s.known[Known::Fen as usize].map(|i| s.tags[usize::from(i)].1.clone());
        let Some(fen_range) = fen_tag else {
            return Ok(Board::start(variant));
        };
        let fen_text = s.str(&fen_range).trim();
        let (pos, chess960) = Board::from_fen(fen_text, variant).map_err(|e| {
            RejectReason::new(RejectKind::BadFen, format!("invalid FEN '{fen_text}': {e}"))
        })?;
        if chess960 && variant == GameVariant::Standard {
            s.variant = GameVariant::Chess960;
        }
        s.start_fen = Some(fen_range);
        Ok(pos)
    }

    fn play(&mut self, san_plus: SanPlus) -> Verdict {
        let s = &mut self.scratch;
        s.count_item()?;
        let nags_at = s.nags.len();
        let cursor = s
            .stack
            .last_mut()
            .expect("the mainline cursor is never popped");
        let line = cursor.line;
        let next = s.lines[line].moves.len();
        if san_plus.san == San::Null {
            return Err(RejectReason::new(
                RejectKind::NullMove,
                format!("null move '--' at ply {}", ply_label(line as i32, next)),
            ));
        }
        if !self.no_variations {
            cursor.before_last = Some((cursor.pos.clone(), cursor.checks));
        }
        let mover = match &cursor.pos {
            Board::Chess(p) => p.turn(),
            Board::Variant(p) => p.turn(),
        };
        let kept = !self.drop_source_san;
        let played = match &mut cursor.pos {
            Board::Chess(pos) => step(pos, san_plus.san, None, kept),
            Board::Variant(pos) => step(pos, san_plus.san, Some(pos.variant()), kept),
        };
        let played = played.map_err(|e| {
            let (kind, what) = match e {
                SanError::AmbiguousSan => (RejectKind::AmbiguousMove, "ambiguous move"),
                SanError::IllegalSan => (RejectKind::IllegalMove, "illegal move"),
            };
            let at = ply_label(line as i32, next);
            RejectReason::new(kind, format!("{what} '{san_plus}' at ply {at}"))
        })?;
        let checks = if played.counts_check {
            let n = &mut cursor.checks[mover as usize];
            *n += 1;
            *n
        } else {
            0
        };
        let san =
            (kept && (!played.canonical_san || san_plus.suffix != played.suffix)).then(|| {
                let start = s.text.len();
                san_plus.append_to_string(&mut s.text);
                start..s.text.len()
            });
        let blast = played.blast.map(|(squares, before)| {
            let start = s.text.len();
            write_blast(&mut s.text, squares, &before);
            start..s.text.len()
        });
        let MoveLetters {
            piece,
            from,
            to,
            capture,
            castle,
            promote,
        } = played.letters;
        let moves = &mut s.lines[line].moves;
        if moves.capacity() == 0 {
            // Most variations hold a move or two: not the four `push` would make room for.
            moves.reserve_exact(1);
        }
        moves.push(MoveRec {
            piece,
            from,
            to,
            capture,
            checks,
            castle,
            promote,
            blast,
            san,
            nags: nags_at..nags_at,
            raw_comment: None,
            comment: None,
            eval: None,
            clock: None,
        });
        Ok(())
    }
}

/// A move read from SAN and played: what `Replayer::play` records of it.
struct Played {
    letters: MoveLetters,
    /// The source's SAN, its suffix aside, is the one the position gives.
    canonical_san: bool,
    /// The `+`/`#` the position gives the move.
    suffix: Option<Suffix>,
    /// The move adds to the mover's `c`.
    counts_check: bool,
    /// Atomic: the squares the explosion emptied (none empty: `None`) and the board before it.
    blast: Option<(Bitboard, shakmaty::Board)>,
}

/// Reads `san` on `pos` (of lichess variant `variant`, `None` for standard chess) and plays it: strict
/// SAN first, then as python-chess reads it (`lenient_move`); `Err` is the strict reading's error.
/// `compare`: whether the SAN is compared with the one the position gives (else it counts as that one).
/// Generic so that standard chess runs on `Chess` itself, not through `VariantPosition`'s dispatch.
fn step<P: Position>(
    pos: &mut P,
    san: San,
    variant: Option<Variant>,
    compare: bool,
) -> Result<Played, SanError> {
    let fast = match variant {
        None => san_move::standard_move(pos, san),
        Some(_) => None,
    };
    let (m, strict) = match fast.map_or_else(|| san.to_move(pos), Ok) {
        Ok(m) => (m, true),
        Err(e) => (lenient_move(pos, san).ok_or(e)?, false),
    };
    // Whether the source's SAN (its suffix aside) is the one the position gives, so that the
    // lake need not store it. Read strictly, the common shapes are canonical by construction,
    // which spares a move generation and a comparison on most moves: a piece move without
    // disambiguation had a single candidate; a pawn move names its file exactly when it
    // captures (the capture mark and file were checked against the move); castling is `O-O`.
    let canonical_san = !compare
        || match san {
            San::Normal {
                role: Role::Pawn,
                file,
                rank: None,
                capture,
                ..
            } if strict => file.is_some() == capture,
            San::Normal {
                file: None,
                rank: None,
                ..
            }
            | San::Castle(_)
            | San::Put { .. }
                if strict =>
            {
                true
            }
            _ => San::from_move(pos, m) == san,
        };
    let letters = describe(m, pos.turn());
    let atomic_capture = variant == Some(Variant::Atomic) && m.is_capture();
    let before = atomic_capture.then(|| pos.board().clone());
    pos.play_unchecked(m);
    let (suffix, counts_check) = match variant {
        // Standard chess: `#` is checkmate, which the position's check tells apart cheaply.
        None => match pos.is_check() {
            false => (None, false),
            true if san_move::standard_checkmate(pos) => (Some(Suffix::Checkmate), false),
            true => (Some(Suffix::Check), true),
        },
        // A variant's `#` is any move that wins (an explosion, the hill, the third check…), as
        // python-chess and shakmaty write it. Three-check counts every check, the winning one too.
        Some(v) => {
            let suffix = Suffix::from_position(pos);
            let check = pos.is_check();
            let counts = check && (v == Variant::ThreeCheck || suffix != Some(Suffix::Checkmate));
            (suffix, counts)
        }
    };
    let blast = before.and_then(|before| {
        let squares = variant::blast(m, before.occupied(), pos.board().occupied());
        squares.any().then_some((squares, before))
    });
    Ok(Played {
        letters,
        canonical_san,
        suffix,
        counts_check,
        blast,
    })
}

/// Writes the pieces that stood on `squares` of `before` as `blast` spells them: letter and square
/// each, in square order (a1 … h8), separated by spaces (`Nf6 pg7`).
fn write_blast(text: &mut String, squares: Bitboard, before: &shakmaty::Board) {
    for (i, sq) in squares.into_iter().enumerate() {
        if i > 0 {
            text.push(' ');
        }
        if let Some(piece) = before.piece_at(sq) {
            text.push(piece.char());
        }
        text.push_str(&sq.to_string());
    }
}

/// Reads SAN as python-chess does when strict SAN fails: the capture mark is ignored (`Raf8` for
/// `Raxf8`, `ed3` for `exd3`), and a move naming its full from-square is taken as such, piece letter
/// or not (`g1f3`, `Be2c4`, castling as `e1g1`). `None` unless exactly one legal move fits.
fn lenient_move<P: Position>(pos: &P, san: San) -> Option<Move> {
    let San::Normal {
        role,
        file,
        rank,
        to,
        promotion,
        ..
    } = san
    else {
        return None;
    };
    let full_square = file.is_some() && rank.is_some();
    let mut found = None;
    for m in pos.legal_moves() {
        let Some(from) = m.from() else {
            continue; // a drop: SAN names no square it comes from
        };
        // Castling only by its king's squares in full (`e1g1`, `e1c1`), as python-chess's UCI reading.
        let (target, readable) = match m.castling_side() {
            Some(side) => (side.king_to(pos.turn()), full_square),
            None => (m.to(), true),
        };
        let fits = readable
            && target == to
            && m.promotion() == promotion
            && file.is_none_or(|f| from.file() == f)
            && rank.is_none_or(|r| from.rank() == r)
            && (m.role() == role || (full_square && role == Role::Pawn));
        if fits {
            if found.is_some() {
                return None;
            }
            found = Some(m);
        }
    }
    found
}

/// `12` on the mainline, `2 of variation 3` elsewhere: the ply of move `index` (0-based) of the line
/// `line` (its id), 1-based, for a reason.
fn ply_label(line: i32, index: usize) -> String {
    let ply = index + 1;
    if line == 0 {
        format!("{ply}")
    } else {
        format!("{ply} of variation {line}")
    }
}

/// A legal move's BGN fields, in `MoveRec`'s order: letters are ASCII (uppercase for White), `0`
/// meaning none; squares are indices (a1 = 0 … h8 = 63).
pub(crate) struct MoveLetters {
    pub piece: u8,
    pub from: u8,
    pub to: u8,
    pub capture: u8,
    pub castle: u8,
    pub promote: u8,
}

/// The BGN fields of legal move `m` played by `mover`.
pub(crate) fn describe(m: Move, mover: Color) -> MoveLetters {
    let letter = |role: Role, color: Color| {
        let c = role.char() as u8;
        if color == Color::White {
            c.to_ascii_uppercase()
        } else {
            c
        }
    };
    let them = !mover;
    let none = MoveLetters {
        piece: 0,
        from: 0,
        to: 0,
        capture: 0,
        castle: 0,
        promote: 0,
    };
    match m {
        Move::Normal {
            role,
            from,
            capture,
            to,
            promotion,
        } => MoveLetters {
            piece: letter(role, mover),
            from: from as u8,
            to: to as u8,
            capture: capture.map_or(0, |r| letter(r, them)),
            promote: promotion.map_or(0, |r| letter(r, mover)),
            ..none
        },
        Move::EnPassant { from, to } => MoveLetters {
            piece: letter(Role::Pawn, mover),
            from: from as u8,
            to: to as u8,
            capture: letter(Role::Pawn, them),
            ..none
        },
        Move::Castle { king, rook } => {
            let side = CastlingSide::from_king_side(rook.file() > king.file());
            let castle = match (side, mover) {
                (CastlingSide::KingSide, Color::White) => b'K',
                (CastlingSide::QueenSide, Color::White) => b'Q',
                (CastlingSide::KingSide, Color::Black) => b'k',
                (CastlingSide::QueenSide, Color::Black) => b'q',
            };
            MoveLetters {
                piece: letter(Role::King, mover),
                from: king as u8,
                to: side.king_to(mover) as u8,
                castle,
                ..none
            }
        }
        Move::Put { role, to } => MoveLetters {
            piece: letter(role, mover),
            from: NO_SQUARE,
            to: to as u8,
            ..none
        },
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::GameParser;

    use super::*;

    /// The stored `san` of each move of each line of `pgn`'s game.
    fn stored(pgn: &str) -> Vec<Vec<Option<String>>> {
        let mut replayer = Replayer::default();
        GameParser::default()
            .parse(&mut replayer, pgn.as_bytes())
            .expect("a valid game");
        let g = &replayer.scratch;
        let text = |m: &MoveRec| m.san.as_ref().map(|r| g.str(r).to_owned());
        g.lines()
            .iter()
            .map(|line| line.moves.iter().map(text).collect())
            .collect()
    }

    /// Why `pgn`'s game is rejected, or `None` when it is kept.
    fn rejected(pgn: &str) -> Option<RejectReason> {
        GameParser::default()
            .parse(&mut Replayer::default(), pgn.as_bytes())
            .err()
    }

    #[test]
    fn a_moves_nags_stay_its_own_around_variations_with_nags() {
        let mut replayer = Replayer::default();
        let pgn = "1. e4 $1 (1. d4 $2 $4) $3 (1. c4 $5) $6 e5 *";
        GameParser::default()
            .parse(&mut replayer, pgn.as_bytes())
            .expect("a valid game");
        let g = &replayer.scratch;
        let nags = |m: &MoveRec| g.nags[m.nags.clone()].to_vec();
        let lines: Vec<Vec<Vec<u8>>> = g
            .lines()
            .iter()
            .map(|l| l.moves.iter().map(nags).collect())
            .collect();
        assert_eq!(
            lines,
            [vec![vec![1, 3, 6], vec![]], vec![vec![2, 4]], vec![vec![5]]]
        );
    }

    #[test]
    fn a_game_of_too_many_moves_variations_or_nags_is_too_large() {
        let head = "[Event \"v\"]\n\n1. e4 ";
        let siblings = format!("{head}{}*", "(1. d4) ".repeat(MAX_GAME_MOVES / 2));
        let reason = rejected(&siblings).expect("too large");
        assert_eq!(reason.kind, RejectKind::TooLarge, "{}", reason.message);
        let fewer = format!("{head}{}*", "(1. d4) ".repeat(MAX_GAME_MOVES / 2 - 1));
        assert_eq!(rejected(&fewer), None);
        let empty = format!("{head}{}*", "() ".repeat(MAX_GAME_MOVES));
        assert_eq!(rejected(&empty).map(|r| r.kind), Some(RejectKind::TooLarge));
        let nags = format!("{head}{}*", "$1 (1. d4 $2) ".repeat(2000));
        assert_eq!(rejected(&nags).map(|r| r.kind), Some(RejectKind::TooLarge));
        let moves = ["d4", "c4", "Nf3", "b3"];
        let nest = |n: usize| -> String {
            let opens: String = (0..n).map(|i| format!("(1. {} ", moves[i % 4])).collect();
            format!("{head}{opens}{} *", ")".repeat(n))
        };
        assert_eq!(rejected(&nest(MAX_VARIATION_DEPTH)), None);
        let deep = rejected(&nest(MAX_VARIATION_DEPTH + 1)).expect("too deep");
        assert_eq!(deep.kind, RejectKind::TooLarge, "{}", deep.message);
    }

    #[test]
    fn a_run_of_ignored_parentheses_is_read_in_linear_time() {
        let n = 400_000;
        let pgn = format!(
            "[Event \"v\"]\n\n{} 1. e4 {} *",
            "(".repeat(n),
            ")".repeat(n)
        );
        let start = std::time::Instant::now();
        assert_eq!(stored(&pgn), vec![vec![None]]);
        // Quadratic, as it was, this took minutes.
        assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
    }

    #[test]
    fn a_clock_or_eval_beyond_its_column_rejects_the_game_with_its_ply() {
        let pgn = "1. e4 { [%clk 0:03:00] } e5 (1... c5 { [%clk 100000:00:00] }) *";
        let reason = rejected(pgn).expect("out of range");
        assert_eq!(reason.kind, RejectKind::OutOfRange);
        assert_eq!(
            reason.message,
            "clock '[%clk 100000:00:00]' at ply 1 of variation 1 is out of range (at most \
             27777:46:39.9)"
        );
        let reason = rejected("1. e4 { [%eval #40000] } *").expect("out of range");
        assert!(reason
            .message
            .starts_with("eval '[%eval #40000]' at ply 1 is out"));
    }

    #[test]
    fn san_is_stored_only_where_the_source_differs() {
        let pgn = "1. e2e4 e5 2. Ngf3 d6 3. Bb5 c6 4. Bc4 Be7 5. Bf7 Kxf7 6. Ng5+ Bxg5 \
                   7. Qh5 (7. Qf3 Ke8) 7... g6 8. Qxg5+ Qxg5 9. 0-0 Qxd2 *";
        let some = |s: &str| Some(s.to_owned());
        let mainline = vec![
            some("e2e4"),  // e4: a from-square in full
            None,          // e5
            some("Ngf3"),  // Nf3: a disambiguation not needed
            None,          // d6
            some("Bb5"),   // Bb5+: the check not marked
            None,          // c6
            None,          // Bc4
            None,          // Be7
            some("Bf7"),   // Bxf7+: no capture mark, no check
            None,          // Kxf7
            None,          // Ng5+
            None,          // Bxg5
            some("Qh5"),   // Qh5+
            None,          // g6
            some("Qxg5+"), // Qxg5: a check that is none
            None,          // Qxg5
            None,          // O-O: `0-0` reads as `O-O`
            None,          // Qxd2
        ];
        let variation = vec![some("Qf3"), None]; // Qf3+ Ke8
        assert_eq!(stored(pgn), vec![mainline, variation]);
    }

    #[test]
    fn mate_and_promotion_suffixes_are_compared_too() {
        let mate = "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0";
        assert_eq!(stored(mate), vec![vec![None; 7]]);
        let mate_as_check = "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7+ 1-0";
        assert_eq!(stored(mate_as_check)[0][6].as_deref(), Some("Qxf7+"));
        let promotion = "[FEN \"4k3/P6P/8/8/8/8/1p4p1/R3K3 w Q - 0 1\"]\n\n\
                         1. a8=Q+ Kd7 2. h8=N bxa1=R 3. Kd2 g1=Q 4. Qb7+ Ke8 *";
        let mut expected = vec![None; 8];
        expected[3] = Some("bxa1=R".to_owned()); // bxa1=R+
        assert_eq!(stored(promotion), vec![expected]);
    }
}
