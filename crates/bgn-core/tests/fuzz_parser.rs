//! A short fuzz of the whole reader through its public API: bytes in, batches and rejects out.
//!
//! Inputs are random bytes, token soup from PGN's own alphabet (tags, SAN, comments, variations, NAGs,
//! results, NUL, BOM, CR) and real games with bytes flipped, cut or spliced. For each one the reader must
//! not panic, must account for every game it saw (seen = written + rejected, written = rows handed
//! out), and must give every reject a one-line reason. A few hundred cases run in a few seconds under
//! `cargo test`; `PROPTEST_CASES=100000 cargo test --release --test fuzz_parser` fuzzes longer.

use std::io::Cursor;
use std::sync::atomic::Ordering;

use bgn_core::input::Input;
use bgn_core::reader::{BatchReader, Options};
use proptest::prelude::*;

const GAME: &str = "[Event \"Rated Blitz game\"]\n[Site \"https://lichess.org/ENPo6ReH\"]\n\
[White \"a\"]\n[Black \"b\"]\n[Result \"1-0\"]\n[TimeControl \"180+0\"]\n[UTCDate \"2025.05.01\"]\n\n\
1. e4 { [%eval 0.2] [%clk 0:03:00] } e5 2. Nf3 (2. f4 exf4 (2... d5)) Nc6 3. Bb5 $1 a6?! \
4. Bxc6 dxc6 5. O-O f6 6. d4 exd4 7. Nxd4 c5 8. Nb3 Qxd1 9. Rxd1 1-0\n\n";

const TOKENS: &[&str] = &[
    "[Event \"x\"]\n",
    "[FEN \"8/8/8/8/8/8/8/K6k w - - 0 1\"]\n",
    "[Variant \"Atomic\"]\n",
    "[White \"a\\\"b\\\\\"]\n",
    "[SetUp \"1\"]\n",
    "\n\n",
    "1.",
    "2...",
    " e4",
    " e5",
    " Nf3",
    " Nc6",
    " O-O",
    " 0-0-0",
    " exd5",
    " e8=Q+",
    " Qh7#",
    " --",
    " Zz9",
    " {",
    " }",
    " {c}",
    " (",
    " )",
    " ;x\n",
    " $1",
    " !?",
    " 1-0",
    " 0-1",
    " 1/2-1/2",
    " *",
    "\0",
    "\u{feff}",
    "\r\n",
    "%esc\n",
    "[",
    "]",
    "\"",
    "\u{e9}",
    "\\",
];

/// Runs the reader over `bytes`; panics (failing the property) on any broken promise.
fn read_all(bytes: Vec<u8>) {
    let input = match Input::from_reader("fuzz", Box::new(Cursor::new(bytes)), None) {
        Ok(input) => input,
        Err(e) => {
            assert!(
                !e.0.is_empty() && !e.0.contains('\n'),
                "input error not one line: {:?}",
                e.0
            );
            return;
        }
    };
    let options = Options {
        batch_games: 3,
        batch_bytes: 512,
        max_game_bytes: 2048,
        max_reject_raw: 100,
        max_partitions: 2,
        ..Options::default()
    };
    let mut reader = BatchReader::new(input, "fuzz", options);
    let (mut rows, mut rejects) = (0u64, 0u64);
    while let Some(batch) = reader.next_batch() {
        rows += batch.num_rows() as u64;
        assert_eq!(
            batch.partition.is_some(),
            batch.num_rows() > 0,
            "a batch of games has its partition, a batch of rejects alone none"
        );
        for reject in &batch.rejects {
            let reason = reject.reason.message.trim();
            assert!(
                !reason.is_empty(),
                "empty reason at offset {}",
                reject.offset
            );
            assert!(
                !reject.reason.message.contains('\n'),
                "reason not one line: {:?}",
                reject.reason
            );
        }
        rejects += batch.rejects.len() as u64;
    }
    let counters = reader.counters();
    let seen = counters.seen.load(Ordering::Relaxed);
    let written = counters.written.load(Ordering::Relaxed);
    let rejected = counters.rejected.load(Ordering::Relaxed);
    assert_eq!(seen, written + rejected, "seen != written + rejected");
    assert_eq!(
        (written, rejected),
        (rows, rejects),
        "counters disagree with the batches"
    );
}

fn token_soup() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..200)
        .prop_map(|t| t.concat().into_bytes())
}

fn mutated_games() -> impl Strategy<Value = Vec<u8>> {
    let games = GAME.repeat(3).into_bytes();
    let len = games.len();
    (
        prop::collection::vec((0..len, any::<u8>()), 0..12),
        0..=len,
        prop::collection::vec(any::<u8>(), 0..64),
    )
        .prop_map(move |(flips, cut, splice)| {
            let mut bytes = games.clone();
            for (at, byte) in flips {
                bytes[at] = byte;
            }
            bytes.truncate(cut);
            bytes.extend(splice);
            bytes
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        read_all(bytes);
    }

    #[test]
    fn token_soups(bytes in token_soup()) {
        read_all(bytes);
    }

    #[test]
    fn mutated_real_games(bytes in mutated_games()) {
        read_all(bytes);
    }

    #[test]
    fn compressed_and_cut(bytes in mutated_games(), cut in 0usize..2000, level in 1i32..4) {
        let mut zst = zstd::encode_all(&bytes[..], level).expect("zstd in memory");
        zst.truncate(cut.max(4).min(zst.len()));
        read_all(zst);
    }
}
