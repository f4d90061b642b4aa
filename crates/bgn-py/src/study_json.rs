//! Study JSON documents as PGN for the reader, a block of lines a call (see `bgn_core::study_json`).

use bgn_core::json_games::Place;
use bgn_core::study_json;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::json_games::{refused_rows, Refused};

/// A game made: offset, length, line number, start of its PGN, id (when the lake can keep it).
type Made = (usize, usize, u64, usize, Option<String>);

/// `(pgn, made, refused)` for the study documents at `places` (offset, length, line) in `data[start:]`, as
/// `BgnReader.block` gives them: the games' PGN one after the other, the games made and the documents refused.
///
/// :raises ValueError: for a place past the end of `data`.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn study_lines<'py>(
    py: Python<'py>,
    data: &[u8],
    start: usize,
    places: Vec<(usize, usize, u64)>,
) -> PyResult<(Bound<'py, PyBytes>, Vec<Made>, Vec<Refused>)> {
    let data = &data[start.min(data.len())..];
    let mut within = Vec::with_capacity(places.len());
    for (offset, length, line) in places {
        if offset
            .checked_add(length)
            .is_none_or(|end| end > data.len())
        {
            return Err(PyValueError::new_err(format!(
                "a study at {offset} of {length} bytes is past the data's {} bytes",
                data.len()
            )));
        }
        within.push(Place {
            offset,
            length,
            line,
        });
    }
    let studies = py.detach(|| study_json::study_games(data, &within));
    let made = studies
        .games
        .into_iter()
        .map(|g| {
            (
                g.place.offset,
                g.place.length,
                g.place.line,
                g.pgn_start,
                g.id,
            )
        })
        .collect();
    // A document is never refused as too long here: `BgnReader.block` refused those lines.
    let refused = refused_rows(&studies.refused, 0);
    Ok((PyBytes::new(py, &studies.pgn), made, refused))
}
