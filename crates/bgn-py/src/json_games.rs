//! BGN JSON lines replayed into the lake's games, a block of lines a call (see `bgn_core::json_games`).

use std::sync::Mutex;

use arrow_array::RecordBatch;
use bgn_core::derive::Partition;
use bgn_core::json_games::{self, Place, Refusal};
use bgn_core::reader::Options;
use pyo3::prelude::*;

use crate::{import_openings, lock, GameBatches, PartitionTuple};

/// A refused line: offset, length, line number, reject kind, reason (`None`: not JSON, the caller words
/// why).
pub type Refused = (usize, usize, u64, &'static str, Option<String>);

/// The refusals as Python takes them, a line too long worded with its `limit`.
pub fn refused_rows(refused: &[(Place, Refusal)], limit: usize) -> Vec<Refused> {
    (refused.iter())
        .map(|(p, r)| (p.offset, p.length, p.line, r.kind(), r.reason(limit)))
        .collect()
}

/// The BGN games of one JSON input, replayed from their lines' fields into batches of the lake's games
/// (see `bgn_core::json_games`): `block` reads a block of lines at a time, the batches come from
/// `full_batches` as partitions fill up and from `finish` at the input's end, each `(partition, games)` as
/// `PgnReader` gives them.
///
/// `source_name` is the games' `source_file`; `batch_games` and `openings` as `PgnReader`'s.
#[pyclass(module = "warehouse._core")]
pub struct BgnReader {
    // A mutex only to make the class `Sync`, as PyO3 requires; one thread reads.
    reader: Mutex<json_games::BgnReader>,
}

/// A partition's games, as `PgnReader` hands them.
type Games = (PartitionTuple, GameBatches);

#[pymethods]
impl BgnReader {
    #[new]
    #[pyo3(signature = (source_name, batch_games=None, openings=None))]
    fn new(
        source_name: &str,
        batch_games: Option<usize>,
        openings: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let defaults = Options::default();
        let options = Options {
            batch_games: batch_games.unwrap_or(defaults.batch_games).max(1),
            openings: openings.map(import_openings).transpose()?,
            ..defaults
        };
        Ok(BgnReader {
            reader: Mutex::new(json_games::BgnReader::new(source_name, options)),
        })
    }

    /// `(written, refused, studies)` for the lines of `data[start:end]` (or `data[start:end]` as one
    /// document when `whole`), `data[start]` being at `offset` in the input: the games written (to the
    /// partitions' batches); the refused lines (offset, length, line, kind, reason: `None` for a line
    /// that is no JSON, whose reason the caller words); the lines holding a study document (offset,
    /// length, line). Offsets are from `data[start]`, lines counted from 1; a line longer than `limit`
    /// bytes is refused, but for a blank start of `raw_limit` bytes.
    #[pyo3(signature = (data, start, end, whole, limit, raw_limit, offset))]
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn block(
        &self,
        py: Python<'_>,
        data: &[u8],
        start: usize,
        end: usize,
        whole: bool,
        limit: usize,
        raw_limit: usize,
        offset: u64,
    ) -> (u64, Vec<Refused>, Vec<(usize, usize, u64)>) {
        let end = end.min(data.len());
        let data = &data[start.min(end)..end];
        let reader = &self.reader;
        let block = py.detach(|| lock(reader).block(data, whole, limit, raw_limit, offset));
        let refused = refused_rows(&block.refused, limit);
        let studies = (block.studies.iter())
            .map(|p: &Place| (p.offset, p.length, p.line))
            .collect();
        (block.written, refused, studies)
    }

    /// The games of the partitions that are full now.
    fn full_batches(&self) -> Vec<Games> {
        handed(lock(&self.reader).full_batches())
    }

    /// The games of every partition: at the input's end.
    fn finish(&self) -> Vec<Games> {
        handed(lock(&self.reader).finish())
    }
}

fn handed(batches: Vec<(Partition, Vec<RecordBatch>)>) -> Vec<Games> {
    (batches.into_iter())
        .map(|(p, games)| ((p.kind, p.year, p.month), GameBatches::of(games)))
        .collect()
}

/// The `\n` bytes in `data[:end]`: a block's lines, counted as `bytes.count` counts them, at the speed of
/// `memchr`'s count (CPython's took ~1.5% of a BGN import's CPU).
#[pyfunction]
pub fn line_breaks(py: Python<'_>, data: &[u8], end: usize) -> usize {
    let data = &data[..end.min(data.len())];
    py.detach(|| json_games::line_breaks(data))
}
