//! BGN JSON lines as PGN for the reader, a block of lines a call (see `bgn_core::json_games`).

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use bgn_core::json_games::{self, Place};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::ArrowArray;

/// A refused line: offset, length, line number, reject kind, reason (`None`: not JSON, the caller words
/// why).
type Refused = (usize, usize, u64, &'static str, Option<String>);

/// `(pgn, games, refused, studies)` for the lines of `data[:end]` (or `data[:end]` as one
/// document when `whole`): the games' PGN one after the other; a record batch of the games (`pgn_start`,
/// `offset`, `length`, `line`, `id`, `signature`); the refused lines (offset, length, line, kind, reason);
/// and the lines holding a study document (offset, length, line). Offsets are in
/// `data`, lines counted from 1; a line longer than `limit` bytes is refused, but for a blank start of
/// `raw_limit` bytes.
#[pyfunction]
#[pyo3(signature = (data, end, whole, limit, raw_limit))]
#[allow(clippy::type_complexity)]
pub fn bgn_lines<'py>(
    py: Python<'py>,
    data: &[u8],
    end: usize,
    whole: bool,
    limit: usize,
    raw_limit: usize,
) -> PyResult<(
    Bound<'py, PyBytes>,
    ArrowArray,
    Vec<Refused>,
    Vec<(usize, usize, u64)>,
)> {
    let data = &data[..end.min(data.len())];
    let (block, batch) = py.detach(|| {
        let block = json_games::bgn_block(data, whole, limit, raw_limit);
        let batch = games_batch(&block.games);
        (block, batch)
    });
    let refused = block
        .refused
        .iter()
        .map(|(p, r)| (p.offset, p.length, p.line, r.kind(), r.reason(limit)))
        .collect();
    let studies = block
        .studies
        .iter()
        .map(|p: &Place| (p.offset, p.length, p.line))
        .collect();
    Ok((
        PyBytes::new(py, &block.pgn),
        ArrowArray::of_batch(batch),
        refused,
        studies,
    ))
}

fn games_batch(games: &[json_games::Game]) -> RecordBatch {
    let int = |f: &dyn Fn(&json_games::Game) -> i64| -> ArrayRef {
        Arc::new(games.iter().map(f).collect::<Int64Array>())
    };
    let ids: StringArray = games.iter().map(|g| g.id.as_deref()).collect();
    let signatures: StringArray = games.iter().map(|g| Some(g.signature.as_str())).collect();
    RecordBatch::try_from_iter([
        ("pgn_start", int(&|g| g.pgn_start as i64)),
        ("offset", int(&|g| g.place.offset as i64)),
        ("length", int(&|g| g.place.length as i64)),
        ("line", int(&|g| g.place.line as i64)),
        ("id", Arc::new(ids) as ArrayRef),
        ("signature", Arc::new(signatures) as ArrayRef),
    ])
    .expect("columns of one length")
}
