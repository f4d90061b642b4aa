//! BGN JSON lines as PGN for the reader, a block of lines a call (see `bgn_core::json_games`).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};

use bgn_core::json_games::{self, Place, Refusal};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::{import, import_games, ArrowArray};

/// A refused line: offset, length, line number, reject kind, reason (`None`: not JSON, the caller words
/// why).
pub type Refused = (usize, usize, u64, &'static str, Option<String>);

/// The refusals as Python takes them, a line too long worded with its `limit`.
pub fn refused_rows(refused: &[(Place, Refusal)], limit: usize) -> Vec<Refused> {
    (refused.iter())
        .map(|(p, r)| (p.offset, p.length, p.line, r.kind(), r.reason(limit)))
        .collect()
}

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
    let refused = refused_rows(&block.refused, limit);
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

/// `(signatures, games)`: each game of `games` (a batch the reader made of BGN games' PGN) with its
/// moves as the replay gave them, written as `bgn_lines` writes a line's signature; and `games` with
/// `san` null in the moves of the games `bgn` (a boolean array, a row a game) marks.
#[pyfunction]
pub fn bgn_replayed(
    py: Python<'_>,
    games: &Bound<'_, PyAny>,
    bgn: &Bound<'_, PyAny>,
) -> PyResult<(ArrowArray, ArrowArray)> {
    let games = import_games(games, "bgn_replayed")?;
    let bgn = arrow_array::make_array(import(bgn)?);
    let Some(bgn) = bgn.as_boolean_opt() else {
        return Err(PyTypeError::new_err(
            "bgn_replayed: `bgn` must be a boolean array",
        ));
    };
    if bgn.len() != games.num_rows() {
        return Err(PyValueError::new_err(
            "bgn_replayed: `bgn` must have a row a game",
        ));
    }
    let (signatures, games) = py
        .detach(|| bgn_core::bgn_replayed::bgn_replayed(&games, bgn))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((
        ArrowArray {
            array: Some(Arc::new(signatures)),
        },
        ArrowArray::of_batch(games),
    ))
}
