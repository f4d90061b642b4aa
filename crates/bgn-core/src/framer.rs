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
pub struct RawGame<'a> {
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

/// Cuts a decompressed PGN stream into games (`RawGame`s), holding at most one game and a read chunk.
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
    /// Blank lines since the last tag line.
    blank_lines: u32,
    /// Only blanks since the last line break (or the stream's start): a `%` here opens an escape
    /// line, as pgn-reader's `skip_whitespace` reads it. Tracked, not looked up in `buf`, whose
    /// window may start anywhere.
    line_start: bool,
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
            blank_lines: 0,
            line_start: true,
            eof: false,
            error: None,
        }
    }

    /// A framer of a stream that is the part of a larger one from its byte `base` on (one reader of a
    /// file's zstd frames among several): offsets count from the larger stream's start.
    pub fn starting_at(reader: R, max_game: usize, base: u64) -> Framer<R> {
        Framer {
            base,
            game_offset: base,
            ..Framer::new(reader, max_game)
        }
    }

    /// The stream being cut.
    pub fn reader(&self) -> &R {
        &self.reader
    }

    /// The read error that ended the stream early, if any.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The next game, or `None` at the end of the stream.
    pub fn next_game(&mut self) -> Option<RawGame<'_>> {
        // Drop the previous game's bytes.
        self.start = self.pos;
        self.dropped = 0;
        self.state = State::Between;
        self.line_start = true; // a game ends at a line break or before a line's `[`
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

    fn frame(&mut self, game_end: usize, cut_by: Option<String>) -> RawGame<'_> {
        self.pos = game_end;
        RawGame {
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
                    b'\n' => {
                        self.line_start = true;
                        pos += 1;
                    }
                    b' ' | b'\t' | b'\r' => pos += 1,
                    b'%' if self.line_start => self.state = State::EscapeLine,
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
                        self.line_start = true;
                    }
                    None => pos = buf.len(),
                },
                State::TagLine => match memchr::memchr(b'\n', &buf[pos..]) {
                    Some(i) => {
                        pos += i + 1;
                        self.state = State::AfterTags;
                        self.blank_lines = 0;
                        self.line_start = true;
                    }
                    None => pos = buf.len(),
                },
                State::AfterTags => match buf[pos] {
                    b'\n' => {
                        self.blank_lines += 1;
                        self.line_start = true;
                        pos += 1;
                    }
                    b' ' | b'\t' | b'\r' => pos += 1,
                    // Two blank lines, then tags: a game of tags alone ends here, as python-chess
                    // reads it (it skips at most one blank line between tags). One blank line
                    // inside a tag block (ChessBase writes them) keeps the game whole.
                    b'[' if self.blank_lines >= 2 => {
                        self.pos = pos;
                        return Some(pos);
                    }
                    b'[' => self.state = State::TagLine,
                    b'%' if self.line_start => self.state = State::TagsEscapeLine,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands over at most the next of `sizes` bytes per read (cycling).
    struct Trickle<'a> {
        data: &'a [u8],
        sizes: Vec<usize>,
        reads: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.sizes[self.reads % self.sizes.len()]
                .min(out.len())
                .min(self.data.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            self.reads += 1;
            Ok(n)
        }
    }

    /// Every game's offset and text, reading `data` in pieces of `sizes` bytes.
    fn games(data: &[u8], sizes: Vec<usize>, max_game: usize) -> Vec<(u64, Vec<u8>, bool)> {
        let trickle = Trickle {
            data,
            sizes,
            reads: 0,
        };
        let mut framer = Framer::new(trickle, max_game);
        let mut out = Vec::new();
        while let Some(game) = framer.next_game() {
            out.push((game.offset, game.bytes.to_vec(), game.oversized));
        }
        out
    }

    const TRICKY: &str =
        "\u{feff}% escape line\n[Event \"a\"]\n\n1. e4 { a comment\n\n[with a blank line] }\
        e5 ; rest of line\n2. Nf3 *\n\n[Event \"b\"]\r\n[Site \"x\"]\r\n\r\n1. d4 d5 1-0\r\n\r\n\
        [Event \"tags only\"]\n \n\n[Event \"c\"]\n\n[Round \"1\"]\n\n1. c4 (1. b3) *\n\n\
        [Event \"d\"]\n%escape\n1. e4 *\n1. d4 *\n";

    #[test]
    fn splits_at_pgn_readers_boundaries() {
        let found = games(TRICKY.as_bytes(), vec![usize::MAX], 1 << 20);
        let texts: Vec<String> = found
            .iter()
            .map(|(_, bytes, _)| String::from_utf8_lossy(bytes).trim().to_owned())
            .collect();
        let starts: Vec<&str> = texts.iter().map(|t| &t[..t.len().min(13)]).collect();
        // The escape line before the first game is skipped (after the BOM, a line start); a blank
        // line inside a comment does not end a game; one blank line between tags does not either,
        // two do; movetext without a blank line after a game goes on with it.
        assert_eq!(
            starts,
            [
                "[Event \"a\"]\n\n",
                "[Event \"b\"]\r\n",
                "[Event \"tags ",
                "[Event \"c\"]\n\n",
                "[Event \"d\"]\n%",
            ]
        );
        assert!(texts[4].ends_with("1. e4 *\n1. d4 *"));
        for (offset, bytes, _) in &found {
            let at = *offset as usize;
            assert_eq!(&TRICKY.as_bytes()[at..at + bytes.len()], &bytes[..]);
        }
    }

    #[test]
    fn any_read_sizes_give_the_same_games() {
        let whole = games(TRICKY.as_bytes(), vec![usize::MAX], 1 << 20);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut random_sizes = || {
            (0..64)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    1 + (seed % 9) as usize
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(games(TRICKY.as_bytes(), vec![1], 1 << 20), whole);
        for _ in 0..50 {
            assert_eq!(games(TRICKY.as_bytes(), random_sizes(), 1 << 20), whole);
        }
    }

    #[test]
    fn an_oversized_game_keeps_its_head_and_the_next_game() {
        let long = format!(
            "[Event \"big\"]\n\n1. e4 {{{}}} *\n\n[Event \"next\"]\n\n1. d4 *\n",
            "x".repeat(5000)
        );
        let found = games(long.as_bytes(), vec![1, 7, 300], 1024);
        assert_eq!(found.len(), 2);
        assert!(found[0].2 && found[0].1.starts_with(b"[Event \"big\"]"));
        assert_eq!(found[1].1, b"[Event \"next\"]\n\n1. d4 *\n");
        assert!(!found[1].2);
    }
}
