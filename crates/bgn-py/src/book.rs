//! `BookCounter`: bgn-core's book counts (`bgn_core::book`), fed file by file from Python.

use arrow_array::{make_array, RecordBatch};
use bgn_core::book::{BookCounts, BookError};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::{import, import_games, ArrowArray};

/// Counts an opening book over the lake's files: `start_file(n_plies, counted)` with a file's games,
/// then `add_plies(batch)` with its keyed plies in row order (as many batches as needed), and for the
/// next file again; `finish(min_games)` returns the book as a record batch. Calls release the GIL.
#[pyclass(module = "warehouse._core")]
pub struct BookCounter {
    counts: BookCounts,
}

fn value_error(e: BookError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

#[pymethods]
impl BookCounter {
    #[new]
    fn new() -> BookCounter {
        BookCounter {
            counts: BookCounts::new(),
        }
    }

    /// Starts a file: `n_plies` (int32) of each of its games in file order; `counted` the games whose
    /// plies count (`row`, `game_key`, `result`, `elo_sum`, `date_ms`, `start_fen`).
    fn start_file(
        &mut self,
        py: Python<'_>,
        n_plies: &Bound<'_, PyAny>,
        counted: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let n_plies = make_array(import(n_plies)?);
        let counted = import_games(counted, "BookCounter.start_file")?;
        let counts = &mut self.counts;
        py.detach(|| counts.start_file(&n_plies, &counted))
            .map_err(value_error)
    }

    /// Counts a batch of the file's keyed plies (`file_row_number`, `key`, `f`, `t`, `promote`).
    fn add_plies(&mut self, py: Python<'_>, plies: &Bound<'_, PyAny>) -> PyResult<()> {
        let plies: RecordBatch = import_games(plies, "BookCounter.add_plies")?;
        let counts = &mut self.counts;
        py.detach(|| counts.add_plies(&plies)).map_err(value_error)
    }

    /// The book's rows of at least `min_games` games, sorted by key then UCI.
    fn finish(&self, py: Python<'_>, min_games: i64) -> PyResult<ArrowArray> {
        let counts = &self.counts;
        let book = py
            .detach(|| counts.finish(min_games))
            .map_err(value_error)?;
        Ok(ArrowArray::of_batch(book))
    }
}
