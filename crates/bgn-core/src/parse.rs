//! One framed game through the repairs, pgn-reader and the replayer.

use std::io::{self, Read};
use std::sync::{Arc, Mutex, PoisonError};

use crate::reject::{RejectKind, RejectReason};
use crate::repair;
use crate::replay::Replayer;
use crate::variant;

/// Served after each game's text: the blank line that ends a game. Nothing more: pgn-reader refills
/// its buffer when fewer than 257 bytes are left, so blank space after the game would spare it a few
/// refills at the game's end, but it then walks all of that space, byte by byte, to find that no game
/// follows, which costs more (measured with cachegrind).
const PADDING: &[u8] = b"\n\n";

/// Tags that pgn-reader's default buffer (16 KiB, filled whole at a game's start) always holds.
const TAGS_IN_FIRST_FILL: usize = 8 << 10;

/// What pgn-reader reads: the current game's text, then `PADDING`, then the end of input. Shared
/// with the parser, which puts the next game in once pgn-reader has read the previous one to its end.
#[derive(Clone, Default)]
struct Feed(Arc<Mutex<FeedState>>);

#[derive(Default)]
struct FeedState {
    text: Vec<u8>,
    /// Bytes of text then padding served so far.
    served: usize,
}

impl Read for Feed {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let text_len = state.text.len();
        let n = if state.served < text_len {
            let n = out.len().min(text_len - state.served);
            out[..n].copy_from_slice(&state.text[state.served..state.served + n]);
            n
        } else {
            let pad = &PADDING[(state.served - text_len).min(PADDING.len())..];
            let n = out.len().min(pad.len());
            out[..n].copy_from_slice(&pad[..n]);
            n
        };
        state.served += n;
        Ok(n)
    }
}

/// Parses framed games one at a time with one pgn-reader `Reader`, whose 16 KiB buffer would
/// otherwise be allocated and zeroed for every game.
pub struct GameParser {
    feed: Feed,
    pgn: pgn_reader::Reader<Feed>,
    rewritten: Vec<u8>,
    scratch: Vec<u8>,
}

impl Default for GameParser {
    fn default() -> Self {
        let feed = Feed::default();
        GameParser {
            pgn: pgn_reader::Reader::new(feed.clone()),
            feed,
            rewritten: Vec::new(),
            scratch: Vec::new(),
        }
    }
}

impl GameParser {
    /// Parses and replays one game's text into `replayer`; `Err` is the reason to reject the game.
    pub fn parse(&mut self, replayer: &mut Replayer, text: &[u8]) -> Result<(), RejectReason> {
        let checked = repair::game(text, &mut self.scratch, &mut self.rewritten)
            .map_err(|e| variant::unsupported_in(text).unwrap_or(e))?;
        let text = if checked.rewritten {
            &self.rewritten[..]
        } else {
            text
        };
        replayer.no_variations = !checked.variations;
        // pgn-reader reads a tag only if the whole line is in its buffer, which it refills below
        // 255 bytes: when the tags do not all fit its first fill, a game with long tag lines gets a
        // reader of its own, sized for its longest (else a valid game is "unterminated tag").
        let wide = checked.tags_len > TAGS_IN_FIRST_FILL && checked.longest_tag > 255;
        if wide {
            self.pgn = pgn_reader::Reader::build(self.feed.clone())
                .set_supported_tag_line_length(checked.longest_tag)
                .finish();
        }
        {
            let mut state = self.feed.0.lock().unwrap_or_else(PoisonError::into_inner);
            state.text.clear();
            state.text.extend_from_slice(text);
            state.served = 0;
        }
        let outcome = match self.pgn.read_game(replayer) {
            // The framer cut exactly one game: pgn-reader must agree.
            Ok(Some(outcome)) => match self.pgn.has_more() {
                Ok(false) => outcome,
                _ => Err(RejectReason::new(
                    RejectKind::Unparsable,
                    "text after the game's end could not be read as a game",
                )),
            },
            Ok(None) => Err(RejectReason::new(
                RejectKind::Unparsable,
                "no game in this text",
            )),
            Err(e) => Err(RejectReason::from_pgn_reader(&e)),
        };
        if outcome.is_err() || wide {
            // pgn-reader may have stopped mid-game, with bytes buffered or a skip pending (or holds
            // a buffer sized for one odd game): start over.
            self.pgn = pgn_reader::Reader::new(self.feed.clone());
        }
        outcome
    }
}
