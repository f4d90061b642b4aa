//! Splits a PGN byte stream into games, before any parsing.
//!
//! Framing first gives every game its byte offset and raw text (for the rejects file) and isolates
//! games from one another: a broken game can never swallow or derail the next one's parse.
//! The boundaries are pgn-reader's own (`Reader::skip_movetext`): in movetext, a line break followed
//! by a blank line or by `[` ends the game; `{comments}` and `; comments` may hide either.
//! The scanner is a resumable state machine so that it can run over a fixed window of the stream and
//! keep memory bounded whatever the input holds.

use std::io::{self, Read};

/// Where the scanner stands in the current game.
#[derive(Copy, Clone, Debug, Eq, PartialEq)]
enum State {
    /// Between games: whitespace, a BOM and `%` escape lines are skipped.
    Between,
    /// Inside a tag line (`[Name "value"]`), up to its line break.
    TagLine,
    /// After a tag line: whitespace, then another tag or the movetext.
    AfterTags,
    /// A `%` escape line after the tags (pgn-reader skips it there, blank lines after it included).
    TagsEscapeLine,
    Movetext,
    /// Just after a line break inside movetext.
    MovetextNewline,
    /// After a line break and a `\r`.
    MovetextNewlineCr,
    /// Inside `{ ... }`.
    Comment,
    /// Inside a `;` comment or a `%` escape line of movetext, up to the line break.
    RestOfLine,
    /// A `%` escape line between games.
    EscapeLine,
}

/// One game's bytes, as read.
#[derive(Debug)]
pub struct Frame<'a> {
    /// Offset of the game's first byte in the (decompressed) stream.
    pub offset: u64,
    pub bytes: &'a [u8],
    /// The game's length in the stream: more than `bytes` holds when it is oversized.
    pub length: u64,
    /// The game was longer than the frame limit: `bytes` holds only its beginning.
    pub oversized: bool,
    /// The stream failed inside this game (damaged compressed data): the game is cut.
    pub cut_by: Option<String>,
}

pub struct Framer<R> {
    reader: R,
    buf: Vec<u8>,
    /// `buf[start..end]` holds unconsumed bytes; `start` is the current game's first byte.
    start: usize,
    end: usize,
    /// Scan position, `start <= pos <= end`.
    pos: usize,
    /// Stream offset of `buf[0]`.
    base: u64,
    state: State,
    max_game: usize,
    /// Stream offset of the current game's first byte.
    game_offset: u64,
    /// Bytes of the current game dropped because it outgrew `max_game`.
    dropped: u64,
    eof: bool,
    error: Option<String>,
}

const READ_CHUNK: usize = 1 << 20;

impl<R: Read> Framer<R> {
    /// `max_game` bounds memory: a longer game is reported truncated (and rejected by the caller).
    pub fn new(reader: R, max_game: usize) -> Framer<R> {
        Framer {
            reader,
            buf: Vec::with_capacity(READ_CHUNK * 2),
            start: 0,
            end: 0,
            pos: 0,
            base: 0,
            state: State::Between,
            max_game,
            game_offset: 0,
            dropped: 0,
            eof: false,
            error: None,
        }
    }

    pub fn reader(&self) -> &R {
        &self.reader
    }

    /// The read error that ended the stream early, if any.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Decompressed bytes consumed so far.
    pub fn position(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// The next game, or `None` at the end of the stream.
    pub fn next_frame(&mut self) -> Option<Frame<'_>> {
        // Drop the previous game's bytes.
        self.start = self.pos;
        self.dropped = 0;
        self.state = State::Between;
        loop {
            if let Some(game_end) = self.scan() {
                return Some(self.frame(game_end, None));
            }
            if self.eof {
                return if self.state == State::Between {
                    self.start = self.end;
                    self.pos = self.end;
                    None
                } else {
                    let cut = self.error.clone();
                    Some(self.frame(self.end, cut))
                };
            }
            self.fill();
        }
    }

    fn frame(&mut self, game_end: usize, cut_by: Option<String>) -> Frame<'_> {
        self.pos = game_end;
        Frame {
            offset: self.game_offset,
            bytes: &self.buf[self.start..game_end],
            length: (game_end - self.start) as u64 + self.dropped,
            oversized: self.dropped > 0,
            cut_by,
        }
    }

    /// Reads more of the stream, moving the current game to the front of the buffer first; a game
    /// over the limit loses its middle (its head stays for the reject record).
    fn fill(&mut self) {
        let game_len = self.end - self.start;
        if game_len >= self.max_game {
            let keep = self.start + (self.max_game / 2).min(1 << 16);
            let drop = self.end - keep;
            self.dropped += drop as u64;
            self.base += drop as u64;
            // The kept head sits at [start, keep); bytes after `keep` are already scanned.
            self.end = keep;
            self.pos = keep;
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.base += self.start as u64;
            self.end -= self.start;
            self.pos -= self.start;
            self.start = 0;
        }
        if self.buf.len() < self.end + READ_CHUNK {
            self.buf.resize(self.end + READ_CHUNK, 0);
        }
        loop {
            match self.reader.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return;
                }
                Ok(n) => {
                    self.end += n;
                    return;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.error = Some(format!(
                        "input damaged at decompressed byte {}: {e}",
                        self.base + self.end as u64
                    ));
                    self.eof = true;
                    return;
                }
            }
        }
    }

    /// Advances `pos` through the buffered bytes. Returns the end of the game once found.
    fn scan(&mut self) -> Option<usize> {
        let buf = &self.buf[..self.end];
        let mut pos = self.pos;
        while pos < buf.len() {
            match self.state {
                State::Between => match buf[pos] {
                    b' ' | b'\t' | b'\r' | b'\n' => pos += 1,
                    b'%' if pos == 0 || buf[pos - 1] == b'\n' => self.state = State::EscapeLine,
                    0xef if buf[pos..].starts_with(b"\xef\xbb\xbf") => pos += 3,
                    // Maybe a BOM cut by the read: wait for more bytes.
                    0xef if buf.len() - pos < 3 && !self.eof => break,
                    b => {
                        self.start = pos;
                        self.game_offset = self.base + pos as u64;
                        self.state = if b == b'[' {
                            State::TagLine
                        } else {
                            State::Movetext
                        };
                    }
                },
                State::EscapeLine => match memchr::memchr(b'\n', &buf[pos..]) {
                    Some(i) => {
                        pos += i + 1;
                        self.state = State::Between;
                    }
                    None => pos = buf.len(),
                },
                State::TagLine => match memchr::memchr(b'\n', &buf[pos..]) {
                    Some(i) => {
                        pos += i + 1;
                        self.state = State::AfterTags;
                    }
                    None => pos = buf.len(),
                },
                State::AfterTags => match buf[pos] {
                    b' ' | b'\t' | b'\r' | b'\n' => pos += 1,
                    b'[' => self.state = State::TagLine,
                    b'%' if buf[pos - 1] == b'\n' => self.state = State::TagsEscapeLine,
                    _ => self.state = State::Movetext,
                },
                State::TagsEscapeLine => match memchr::memchr(b'\n', &buf[pos..]) {
                    Some(i) => {
                        pos += i + 1;
                        self.state = State::AfterTags;
                    }
                    None => pos = buf.len(),
                },
                State::Movetext => match memchr::memchr3(b'\n', b'{', b';', &buf[pos..]) {
                    Some(i) => {
                        pos += i;
                        self.state = match buf[pos] {
                            b'{' => State::Comment,
                            b';' => State::RestOfLine,
                            _ => State::MovetextNewline,
                        };
                        pos += 1;
                    }
                    None => pos = buf.len(),
                },
                State::MovetextNewline => match buf[pos] {
                    b'[' | b'\n' => {
                        self.pos = pos;
                        return Some(pos);
                    }
                    b'%' => self.state = State::RestOfLine,
                    b'\r' => {
                        pos += 1;
                        self.state = State::MovetextNewlineCr;
                    }
                    _ => self.state = State::Movetext,
                },
                State::MovetextNewlineCr => {
                    if buf[pos] == b'\n' {
                        self.pos = pos;
                        return Some(pos);
                    }
                    self.state = State::Movetext;
                }
                State::Comment => match memchr::memchr(b'}', &buf[pos..]) {
                    Some(i) => {
                        pos += i + 1;
                        self.state = State::Movetext;
                    }
                    None => pos = buf.len(),
                },
                // The line break is left for the movetext state, which may end the game on it.
                State::RestOfLine => match memchr::memchr(b'\n', &buf[pos..]) {
                    Some(i) => {
                        pos += i;
                        self.state = State::Movetext;
                    }
                    None => pos = buf.len(),
                },
            }
        }
        if matches!(self.state, State::Between | State::EscapeLine) {
            self.start = pos; // nothing of a game yet: let the skipped bytes go
        }
        self.pos = pos;
        None
    }
}
