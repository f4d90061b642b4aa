//! BGN JSON lines as PGN for the reader, a block of lines a call (see `bgn_core::json_games`).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray, UInt64Array};

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

/// `(pgn, games, refused, studies, signatures)` for the lines of `data[:end]` (or `data[:end]` as one
/// document when `whole`): the games' PGN one after the other; a record batch of the games (`pgn_start`,
/// `offset`, `length`, `line`, `id`, `signature_hash`, `signature_start`, `signature_end`); the refused
/// lines (offset, length, line, kind, reason); the lines holding a study document (offset, length,
/// line); and the games' signatures one after the other, each at `signature_start..signature_end`.
/// Offsets are in `data`, lines counted from 1; a line longer than `limit` bytes is refused, but for a
/// blank start of `raw_limit` bytes.
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
    Bound<'py, PyBytes>,
)> {
    let data = &data[..end.min(data.len())];
    let (block, (batch, signatures)) = py.detach(|| {
        let block = json_games::bgn_block(data, whole, limit, raw_limit);
        let games = games_batch(&block.games);
        (block, games)
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
        PyBytes::new(py, &signatures),
    ))
}

/// The games' batch, and their signatures one after the other (each at `signature_start..signature_end`).
fn games_batch(games: &[json_games::Game]) -> (RecordBatch, Vec<u8>) {
    let int = |f: &dyn Fn(&json_games::Game) -> i64| -> ArrayRef {
        Arc::new(games.iter().map(f).collect::<Int64Array>())
    };
    let ids: StringArray = games.iter().map(|g| g.id.as_deref()).collect();
    let hashes: UInt64Array = (games.iter())
        .map(|g| Some(json_games::signature_hash(&g.signature)))
        .collect();
    let mut signatures = Vec::new();
    let (mut starts, mut ends) = (
        Vec::with_capacity(games.len()),
        Vec::with_capacity(games.len()),
    );
    for game in games {
        starts.push(signatures.len() as i64);
        signatures.extend_from_slice(game.signature.as_bytes());
        ends.push(signatures.len() as i64);
    }
    let batch = RecordBatch::try_from_iter([
        ("pgn_start", int(&|g| g.pgn_start as i64)),
        ("offset", int(&|g| g.place.offset as i64)),
        ("length", int(&|g| g.place.length as i64)),
        ("line", int(&|g| g.place.line as i64)),
        ("id", Arc::new(ids) as ArrayRef),
        ("signature_hash", Arc::new(hashes) as ArrayRef),
        (
            "signature_start",
            Arc::new(Int64Array::from(starts)) as ArrayRef,
        ),
        (
            "signature_end",
            Arc::new(Int64Array::from(ends)) as ArrayRef,
        ),
    ])
    .expect("columns of one length");
    (batch, signatures)
}

/// `(disagreeing, games)` for `games` (a batch the reader made of BGN games' PGN) and `expected` (a
/// uint64 array, a row a game: the signature hash `bgn_lines` gave the game, null for a game not BGN):
/// the BGN games whose moves replayed to another signature, each as its row and that signature (written
/// as `bgn_lines` writes a line's); and `games` with `san` null in the BGN games' moves.
#[pyfunction]
pub fn bgn_replayed(
    py: Python<'_>,
    games: &Bound<'_, PyAny>,
    expected: &Bound<'_, PyAny>,
) -> PyResult<(Vec<(usize, String)>, ArrowArray)> {
    let games = import_games(games, "bgn_replayed")?;
    let expected = arrow_array::make_array(import(expected)?);
    let Some(expected) = expected.as_primitive_opt::<UInt64Type>() else {
        return Err(PyTypeError::new_err(
            "bgn_replayed: `expected` must be a uint64 array",
        ));
    };
    if expected.len() != games.num_rows() {
        return Err(PyValueError::new_err(
            "bgn_replayed: `expected` must have a row a game",
        ));
    }
    let (disagreeing, games) = py
        .detach(|| bgn_core::bgn_replayed::bgn_replayed(&games, expected))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((disagreeing, ArrowArray::of_batch(games)))
}

/// The `\n` bytes in `data[:end]`: a block's lines, counted as `bytes.count` counts them, at the speed of
/// `memchr`'s count (CPython's took ~1.5% of a BGN import's CPU).
#[pyfunction]
pub fn line_breaks(py: Python<'_>, data: &[u8], end: usize) -> usize {
    let data = &data[..end.min(data.len())];
    py.detach(|| json_games::line_breaks(data))
}
