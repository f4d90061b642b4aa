//! Reads a PGN input into Arrow batches and reports games/s: the core alone, without Python.
//!
//!     cargo run --release --example pgn2arrow -- dump.pgn.zst

use std::time::Instant;

use bgn_core::input::Input;
use bgn_core::reader::{BatchReader, Options};

fn main() {
    let path = std::env::args().nth(1).expect("usage: pgn2arrow INPUT");
    let input = Input::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let start = Instant::now();
    let mut reader = BatchReader::new(input, &path, Options::default());
    let (mut games, mut rejects, mut bytes) = (0, 0, 0);
    while let Some(batch) = reader.next_batch() {
        games += batch.num_rows();
        rejects += batch.rejects.len();
        bytes += (batch.games.iter())
            .map(|g| g.get_array_memory_size())
            .sum::<usize>();
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{games} games, {rejects} rejects, {:.0} MB of Arrow in {secs:.2} s: {:.0} games/s",
        bytes as f64 / 1e6,
        (games + rejects) as f64 / secs
    );
}
