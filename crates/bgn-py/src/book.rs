//! `BookCounter`: bgn-core's book counts (`bgn_core::book`), fed file by file from Python.

use arrow_array::make_array;
use bgn_core::book::{BookCounts, BookError};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::{import, import_games, ArrowArray};

/// Counts an opening book over the lake's files: for each file `start_file(games)` with all its games
/// in order, `add_keys(keys)` with its plies' `key` column in row order (as many batches as needed) and
/// `end_file()`; `finish(min_games)` returns the book as a record batch. Calls release the GIL.
#[pyclass(module = "warehouse._core")]
pub struct BookCounter {
    counts: BookCounts,
}

fn value_error(e: BookError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

#[pymethods]
impl BookCounter {
    /// A book of the moves of each game's first `depth` plies.
    #[new]
    fn new(depth: usize) -> BookCounter {
        BookCounter {
            counts: BookCounts::new(depth),
        }
    }

    /// Starts a file: all its games in file order, a record batch of `n_plies`, `game_key`, `counted`
    /// (bool), `result`, `elo_sum`, `date_ms`, `start_fen`, `final_key`.
    fn start_file(&mut self, py: Python<'_>, games: &Bound<'_, PyAny>) -> PyResult<()> {
        let games = import_games(games, "BookCounter.start_file")?;
        let counts = &mut self.counts;
        py.detach(|| counts.start_file(&games)).map_err(value_error)
    }

    /// Counts the next rows of the file's plies: their `key` column (int64), in row order.
    fn add_keys(&mut self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        let keys = make_array(import(keys)?);
        let counts = &mut self.counts;
        py.detach(|| counts.add_keys(&keys)).map_err(value_error)
    }

    /// Ends the file, checking that its plies were as many as its games'.
    fn end_file(&mut self, py: Python<'_>) -> PyResult<()> {
        let counts = &mut self.counts;
        py.detach(|| counts.end_file()).map_err(value_error)
    }

    /// The book's rows of at least `min_games` games, sorted by key then UCI.
    fn finish(&mut self, py: Python<'_>, min_games: i64) -> PyResult<ArrowArray> {
        let counts = &mut self.counts;
        let book = py
            .detach(|| counts.finish(min_games))
            .map_err(value_error)?;
        Ok(ArrowArray::of_batch(book))
    }
}
