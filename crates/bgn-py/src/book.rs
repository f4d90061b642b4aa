//! `BookCounter` and `book_rows`: bgn-core's book counts (`bgn_core::book`), fed file by file from
//! Python, and their merged rows (`bgn_core::book_rows`).

use std::path::PathBuf;

use arrow_array::make_array;
use bgn_core::book::{BookCounts, BookError};
use bgn_core::book_rows::BookRows as CoreRows;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::{import, import_games, ArrowArray};

/// Counts an opening book over the lake's files: for each file `start_file(games)` with all its games
/// in order, `add_moves(f, t, promote)` with its plies' move columns in row order (as many batches as
/// needed) and `end_file()`; `book_rows` merges counters into the book's rows. Calls release the GIL:
/// counters on several threads count at once.
#[pyclass(module = "warehouse._core")]
pub struct BookCounter {
    counts: Option<BookCounts>,
}

fn value_error(e: BookError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

impl BookCounter {
    fn counts(&mut self) -> PyResult<&mut BookCounts> {
        self.counts
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("this counter's rows were already merged"))
    }
}

#[pymethods]
impl BookCounter {
    /// A book of the moves of each game's first `max_ply` plies, holding at most `memory` bytes of
    /// rows before spilling them, sorted, to files `name`-N.run in `spill_dir`.
    #[new]
    fn new(max_ply: usize, memory: usize, spill_dir: PathBuf, name: &str) -> BookCounter {
        BookCounter {
            counts: Some(BookCounts::new(max_ply, memory, &spill_dir, name)),
        }
    }

    /// Starts a file: all its games in file order, a record batch of `n_plies`, `game_key`, `counted`
    /// (bool), `result`, `elo_sum`, `date_ms`, `start_fen`.
    fn start_file(&mut self, py: Python<'_>, games: &Bound<'_, PyAny>) -> PyResult<()> {
        let games = import_games(games, "BookCounter.start_file")?;
        let counts = self.counts()?;
        py.detach(|| counts.start_file(&games)).map_err(value_error)
    }

    /// Counts the next rows of the file's plies: their `f`, `t` and `promote` columns, in row order.
    fn add_moves(
        &mut self,
        py: Python<'_>,
        from: &Bound<'_, PyAny>,
        to: &Bound<'_, PyAny>,
        promote: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (from, to, promote) = (
            make_array(import(from)?),
            make_array(import(to)?),
            make_array(import(promote)?),
        );
        let counts = self.counts()?;
        py.detach(|| counts.add_moves(&from, &to, &promote))
            .map_err(value_error)
    }

    /// Ends the file, checking that its plies were as many as its games'.
    fn end_file(&mut self, py: Python<'_>) -> PyResult<()> {
        let counts = self.counts()?;
        py.detach(|| counts.end_file()).map_err(value_error)
    }
}

/// The merged rows of a book: iterating yields record batches (`ArrowArray`s) of a position's rows at
/// least, `rows` or so each.
#[pyclass(module = "warehouse._core")]
pub struct BookRows {
    rows: CoreRows,
    batch_rows: usize,
}

#[pymethods]
impl BookRows {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<ArrowArray>> {
        let (rows, batch_rows) = (&mut self.rows, self.batch_rows);
        let batch = py
            .detach(|| rows.next_batch(batch_rows))
            .map_err(value_error)?;
        Ok(batch.map(ArrowArray::of_batch))
    }
}

/// The rows of the book `counters` counted (each is emptied), merged with their runs (runs merged
/// first into longer ones go to `spill_dir`): the rows of at least `min_games` games whose position
/// has as many, in batches of about `batch_rows`.
#[pyfunction]
pub fn book_rows(
    py: Python<'_>,
    counters: Vec<PyRefMut<'_, BookCounter>>,
    min_games: i64,
    spill_dir: PathBuf,
    batch_rows: usize,
) -> PyResult<BookRows> {
    let mut counts = Vec::with_capacity(counters.len());
    for mut counter in counters {
        counts.push(
            counter.counts.take().ok_or_else(|| {
                PyRuntimeError::new_err("this counter's rows were already merged")
            })?,
        );
    }
    let rows = py
        .detach(|| bgn_core::book_rows::book_rows(counts, min_games, &spill_dir))
        .map_err(value_error)?;
    Ok(BookRows {
        rows,
        batch_rows: batch_rows.max(1),
    })
}
