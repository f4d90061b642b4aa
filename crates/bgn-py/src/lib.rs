//! `warehouse._core`: the Python face of bgn-core.
//!
//! Only Arrow data crosses the boundary, through the Arrow PyCapsule interface (`__arrow_c_array__`),
//! so pyarrow, polars or DuckDB take the batches without a copy. A call that reads or waits for a batch
//! releases the GIL.

use std::ffi::CString;
use std::sync::{Mutex, MutexGuard};

use arrow_array::cast::AsArray;
use arrow_array::ffi::FFI_ArrowArray;
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{
    Array, ArrayRef, Int64Array, LargeStringArray, RecordBatch, RecordBatchIterator, StructArray,
};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_data::ArrayData;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::DataType;
use bgn_core::derive;
use bgn_core::input::Input;
use bgn_core::parallel::ParallelReader;
use bgn_core::plies::{self, Openings};
use bgn_core::reader::{BatchReader, BatchStream, Options, Window};
use bgn_core::reject::RejectKind;
use bgn_core::san;
use bgn_core::zobrist;
use bgn_core::{export_json, export_pgn, export_study};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};

#[cfg(target_os = "linux")]
mod alloc;
mod book;
mod json_games;
mod study_json;

#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: alloc::Allocator = alloc::Allocator;

create_exception!(
    _core,
    PgnInputError,
    PyValueError,
    "An input that cannot be read as PGN: missing, a directory, or of an unknown format."
);

/// `(source_offset, source_length, kind, reason, raw_text)` of a rejected game; `raw_text` holds at
/// most `max_reject_raw` bytes of it.
type RejectTuple = (u64, u64, &'static str, String, String);

/// `(type, year, month)` of a batch's games.
pub(crate) type PartitionTuple = (&'static str, i16, i16);

/// One array, exported once through `__arrow_c_array__`: `pyarrow.array` takes it, and a batch of
/// games (a struct array) `pyarrow.record_batch`.
#[pyclass(module = "warehouse._core")]
struct ArrowArray {
    array: Option<ArrayRef>,
}

impl ArrowArray {
    fn of_batch(batch: RecordBatch) -> ArrowArray {
        ArrowArray {
            array: Some(std::sync::Arc::new(StructArray::from(batch))),
        }
    }
}

#[pymethods]
impl ArrowArray {
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema; // we only offer our own type
        let array = self
            .array
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this array was already exported"))?;
        export(py, &array.to_data())
    }
}

/// `(schema capsule, array capsule)` of `data`, as `__arrow_c_array__` returns them.
fn export<'py>(py: Python<'py>, data: &ArrayData) -> PyResult<Bound<'py, PyTuple>> {
    let (array, schema) =
        arrow_array::ffi::to_ffi(data).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let schema: FFI_ArrowSchema = schema;
    let schema = PyCapsule::new(py, schema, Some(CString::new("arrow_schema").unwrap()))?;
    let array = PyCapsule::new(py, array, Some(CString::new("arrow_array").unwrap()))?;
    PyTuple::new(py, [schema.into_any(), array.into_any()])
}

/// Imports any object of the Arrow PyCapsule interface (`__arrow_c_array__`: a pyarrow array, a
/// record batch as a struct array), without copying its buffers.
fn import(obj: &Bound<'_, PyAny>) -> PyResult<ArrayData> {
    if !obj.hasattr("__arrow_c_array__")? {
        let kind = obj.get_type().name()?;
        return Err(PyTypeError::new_err(format!(
            "expected an Arrow array or record batch (with __arrow_c_array__), got {kind}"
        )));
    }
    let capsules = obj.call_method0("__arrow_c_array__")?;
    let (schema, array): (Bound<'_, PyCapsule>, Bound<'_, PyCapsule>) = capsules.extract()?;
    let schema_name = CString::new("arrow_schema").unwrap();
    let array_name = CString::new("arrow_array").unwrap();
    let schema_ptr = schema.pointer_checked(Some(&schema_name))?;
    let array_ptr = array.pointer_checked(Some(&array_name))?;
    // SAFETY: the capsules are named as the PyCapsule interface says, so they hold these structs; the
    // array is moved out (its capsule is left released) and the schema only read while borrowed.
    unsafe {
        let array = FFI_ArrowArray::from_raw(array_ptr.cast::<FFI_ArrowArray>().as_ptr());
        let schema = schema_ptr.cast::<FFI_ArrowSchema>().as_ref();
        arrow_array::ffi::from_ffi(array, schema)
    }
    .map_err(|e| PyValueError::new_err(format!("cannot import this Arrow data: {e}")))
}

/// The `game_key` of each game id (bgn_core::derive::game_key): an int64 array.
///
/// `ids` is a utf8 array (anything with `__arrow_c_array__`); a null, or an id that is neither a
/// lichess id nor a content id, raises ValueError.
#[pyfunction]
fn game_keys(py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<ArrowArray> {
    let ids = arrow_array::make_array(import(ids)?);
    if ids.data_type() == &DataType::Null && !ids.is_empty() {
        return Err(PyValueError::new_err("game id at row 0 is null"));
    }
    if !matches!(
        ids.data_type(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null
    ) {
        let kind = ids.data_type();
        return Err(PyTypeError::new_err(format!(
            "game ids must be strings, got {kind}"
        )));
    }
    let keys = py.detach(|| -> Result<Int64Array, String> {
        let keyed = |i: usize, id: Option<&str>| match id {
            None => Err(format!("game id at row {i} is null")),
            Some(id) => derive::game_key(id).ok_or_else(|| {
                format!("game id {id:?} at row {i} is neither a lichess id nor a content id")
            }),
        };
        let collect = |ids: &mut dyn Iterator<Item = Option<&str>>| {
            ids.enumerate()
                .map(|(i, id)| keyed(i, id))
                .collect::<Result<Vec<i64>, String>>()
        };
        let keys = match ids.data_type() {
            DataType::Utf8 => collect(&mut ids.as_string::<i32>().iter())?,
            DataType::LargeUtf8 => collect(&mut ids.as_string::<i64>().iter())?,
            DataType::Utf8View => collect(&mut ids.as_string_view().iter())?,
            _ => Vec::new(), // an empty array of nulls
        };
        Ok(Int64Array::from(keys))
    });
    let keys = keys.map_err(PyValueError::new_err)?;
    Ok(ArrowArray {
        array: Some(std::sync::Arc::new(keys)),
    })
}

/// The games of one batch handed over by the reader: record batches of one schema, in order. Take them
/// as a stream (`__arrow_c_stream__`: `pyarrow.table(games).to_batches()`, no copy) or as one record
/// batch (`__arrow_c_array__`: `pyarrow.record_batch(games)`, a copy when there are several).
#[pyclass(module = "warehouse._core")]
pub(crate) struct GameBatches {
    batches: Option<Vec<RecordBatch>>,
}

impl GameBatches {
    pub(crate) fn of(batches: Vec<RecordBatch>) -> GameBatches {
        GameBatches {
            batches: Some(batches),
        }
    }

    fn take(&mut self) -> PyResult<Vec<RecordBatch>> {
        self.batches
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("these games were already exported"))
    }
}

#[pymethods]
impl GameBatches {
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema; // we only offer our own type
        let batches = self.take()?;
        let batch = match batches.is_empty() {
            true => RecordBatch::new_empty(bgn_core::columns::schema()),
            false => py.detach(|| bgn_core::parallel::concat(&batches)),
        };
        export(py, &StructArray::from(batch).to_data())
    }

    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema; // we only offer our own type
        let batches = self.take()?;
        let schema = match batches.first() {
            Some(batch) => batch.schema(),
            None => bgn_core::columns::schema(),
        };
        let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), schema);
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        let name = CString::new("arrow_array_stream").unwrap();
        PyCapsule::new(py, stream, Some(name))
    }
}

/// Reads a PGN input (path or `-`) into batches of games.
///
/// Iterating yields `(partition, batch, rejects)`: `partition` is the `(type, year, month)` of the
/// batch's games (`None` for a batch of rejects alone), `batch` their `GameBatches` (pass it to
/// `pyarrow.record_batch`, or to `pyarrow.table` without a copy), `rejects` is a list of `(source_offset, source_length, kind, reason,
/// raw_text)`.
///
/// `jobs` worker threads parse and replay, beside a thread that decompresses and frames; with 1 (the
/// default) the single-threaded reader reads on the calling thread, as `__next__` asks, or with
/// `own_thread` on a thread of its own, two batches ahead at most (the caller's thread left free for
/// what it does with them). The batches, their rows and the rejects are the same for any `jobs`.
///
/// `openings` (the chess-openings table, see `derive_plies`): each batch also holds its games' position
/// columns and, in a last column `plies`, their plies, derived from the same replay.
#[pyclass(module = "warehouse._core")]
struct PgnReader {
    // A mutex only to make the class `Sync`, as PyO3 requires; one thread iterates.
    stream: Mutex<BatchStream>,
    compression: &'static str,
    input_size: Option<u64>,
}

#[pymethods]
impl PgnReader {
    #[new]
    #[pyo3(signature = (path, source_name=None, batch_games=None, batch_bytes=None, max_game_bytes=None, jobs=1, frames=None, first_game=None, openings=None, own_thread=false, checksum=true, source_san=true))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: &str,
        source_name: Option<&str>,
        batch_games: Option<usize>,
        batch_bytes: Option<usize>,
        max_game_bytes: Option<usize>,
        jobs: usize,
        frames: Option<(u64, u64, u64)>,
        first_game: Option<u64>,
        openings: Option<&Bound<'_, PyAny>>,
        own_thread: bool,
        checksum: bool,
        source_san: bool,
    ) -> PyResult<Self> {
        let defaults = Options::default();
        let options = Options {
            batch_games: batch_games.unwrap_or(defaults.batch_games).max(1),
            batch_bytes: batch_bytes.unwrap_or(defaults.batch_bytes).max(1),
            max_game_bytes: max_game_bytes.unwrap_or(defaults.max_game_bytes).max(1),
            openings: openings.map(import_openings).transpose()?,
            drop_source_san: !source_san,
            ..defaults
        };
        let source_name = source_name.unwrap_or(path);
        // Without the GIL: opening reads the input's head, and a pipe's writer may be a Python thread.
        let opened = py.detach(|| match frames {
            Some((raw_offset, _, _)) => Input::open_at(path, raw_offset),
            None => Input::open_hashed(path, checksum),
        });
        // A refusal names the input as its games do (a pipe's `/proc/self/fd/N` by its S3 URL).
        let input =
            opened.map_err(|e| PgnInputError::new_err(e.to_string().replace(path, source_name)))?;
        let compression = input.compression.name();
        let input_size = input.size;
        let stream = if let Some((_, base, end)) = frames {
            if jobs > 1 {
                return Err(PyValueError::new_err(
                    "a reader of frames runs on one thread (jobs=1)",
                ));
            }
            let window = Window {
                base,
                first: first_game,
                end,
            };
            BatchStream::inline(BatchReader::windowed(input, source_name, options, window))
        } else if jobs > 1 {
            // Tests cut tiny chunks, so that small files cross chunk boundaries everywhere.
            let chunk_bytes = std::env::var("BGN_CHUNK_BYTES")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(bgn_core::parallel::CHUNK_BYTES);
            let reader =
                ParallelReader::with_chunk_bytes(input, source_name, options, jobs, chunk_bytes);
            BatchStream::spawn(reader)
        } else if own_thread {
            BatchStream::spawn(BatchReader::new(input, source_name, options))
        } else {
            // One job, one thread: the caller's, so that `jobs` counts the cores a load uses.
            BatchStream::inline(BatchReader::new(input, source_name, options))
        };
        let stream = Mutex::new(stream);
        Ok(PgnReader {
            stream,
            compression,
            input_size,
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(
        &mut self,
        py: Python<'_>,
    ) -> Option<(Option<PartitionTuple>, GameBatches, Vec<RejectTuple>)> {
        let stream = &self.stream;
        let batch = py.detach(|| lock(stream).next_batch())?;
        let partition = batch.partition.map(|p| (p.kind, p.year, p.month));
        let rejects = batch
            .rejects
            .into_iter()
            .map(|r| {
                let kind = r.reason.kind.name();
                (r.offset, r.length, kind, r.reason.message, r.raw)
            })
            .collect();
        let games = GameBatches::of(batch.games);
        Some((partition, games, rejects))
    }

    /// `pgn`, `zstd`, `bzip2` or `gzip`: what the input's first bytes say it is.
    #[getter]
    fn compression(&self) -> &'static str {
        self.compression
    }

    /// Size of the raw input in bytes (`None` for stdin and pipes).
    #[getter]
    fn input_size(&self) -> Option<u64> {
        self.input_size
    }

    /// Raw (compressed) bytes read so far: for progress.
    #[getter]
    fn raw_bytes_read(&self) -> u64 {
        self.stream().raw_read()
    }

    #[getter]
    fn games_seen(&self) -> u64 {
        load(&self.stream().counters().seen)
    }

    #[getter]
    fn games_written(&self) -> u64 {
        load(&self.stream().counters().written)
    }

    #[getter]
    fn games_rejected(&self) -> u64 {
        load(&self.stream().counters().rejected)
    }

    /// SHA-256 of the raw input (hex), once it has been read to the end.
    #[getter]
    fn sha256(&self) -> Option<String> {
        self.stream().finished().and_then(|r| r.input().sha256())
    }

    /// Why the input ended early (damaged compressed data), once it has been read to the end.
    #[getter]
    fn damage(&self) -> Option<String> {
        self.stream()
            .finished()
            .and_then(|r| r.damage().map(str::to_owned))
    }

    /// A reader of frames: where its first game starts, once read to the end.
    #[getter]
    fn first_game(&self) -> Option<u64> {
        self.stream().finished().and_then(|r| r.first_game)
    }

    /// A reader of frames: where the game after its part starts (it stopped there), once read to the
    /// end; `None` when it read to the input's end.
    #[getter]
    fn stopped_at(&self) -> Option<u64> {
        self.stream().finished().and_then(|r| r.stopped_at)
    }
}

impl PgnReader {
    fn stream(&self) -> MutexGuard<'_, BatchStream> {
        lock(&self.stream)
    }
}

fn lock<T>(stream: &Mutex<T>) -> MutexGuard<'_, T> {
    stream
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn load(counter: &std::sync::atomic::AtomicU64) -> u64 {
    counter.load(std::sync::atomic::Ordering::Relaxed)
}

/// `games` (a record batch of lake games holding at least `moves`, `start_fen` and `variant`, and
/// `variations` and `game_id` when it has them) with every null `san`, in `moves` and in
/// `variations[].moves`, set to the SAN the position gives (`+`/`#` included). Other columns are passed
/// on without a copy. Raises ValueError for a move that is not legal where it stands (naming the game
/// and the ply) or a batch without the columns needed.
#[pyfunction]
fn fill_san(py: Python<'_>, games: &Bound<'_, PyAny>) -> PyResult<ArrowArray> {
    let games = import_games(games, "fill_san")?;
    let filled = py
        .detach(|| san::fill_san(&games))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(ArrowArray::of_batch(filled))
}

/// The PGN text of each game of `games` (a lake batch with its SAN filled: `fill_san`), as a
/// large_string array: its data buffer is the batch's PGN, game after game.
#[pyfunction]
fn pgn_texts(py: Python<'_>, games: &Bound<'_, PyAny>) -> PyResult<ArrowArray> {
    let games = import_games(games, "pgn_texts")?;
    let texts = py.detach(|| export_pgn::pgn_texts(&games));
    texts_array(texts)
}

/// The BGN JSON line (ending in a newline) of each game of `games` (a lake batch with its partition's
/// `type`), as a large_string array: its data buffer is the lines, one after the other.
#[pyfunction]
fn json_lines(py: Python<'_>, games: &Bound<'_, PyAny>) -> PyResult<ArrowArray> {
    let games = import_games(games, "json_lines")?;
    let lines = py.detach(|| export_json::json_lines(&games));
    texts_array(lines)
}

/// `(documents, game_ids)`: the study JSON document (ending in a newline) of each game of `games` (a
/// lake batch with its SAN filled: `fill_san`), and the `game_id` each document writes, as two
/// large_string arrays (the documents' data buffer is the batch's, one after the other). `fen`: each
/// move with the position after it, as python-chess writes it.
#[pyfunction]
fn study_documents<'py>(
    py: Python<'py>,
    games: &Bound<'py, PyAny>,
    fen: bool,
) -> PyResult<(ArrowArray, ArrowArray)> {
    let games = import_games(games, "study_documents")?;
    let (documents, ids) = py
        .detach(|| export_study::study_documents(&games, fen))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((texts_array(Ok(documents))?, texts_array(Ok(ids))?))
}

/// A large_string array of texts written one after the other, `ends` where each ends.
fn texts_array(
    texts: Result<(Vec<u8>, Vec<usize>), export_pgn::ExportError>,
) -> PyResult<ArrowArray> {
    let (text, ends) = texts.map_err(|e| PyValueError::new_err(e.to_string()))?;
    let offsets = std::iter::once(0i64).chain(ends.iter().map(|&e| e as i64));
    let offsets = OffsetBuffer::new(ScalarBuffer::from_iter(offsets));
    // SAFETY: `text` is made of `&str`s joined, cut at their ends: every slice is UTF-8.
    let array = unsafe { LargeStringArray::new_unchecked(offsets, Buffer::from_vec(text), None) };
    Ok(ArrowArray {
        array: Some(std::sync::Arc::new(array)),
    })
}

/// A record batch of games (a struct array without nulls), imported without a copy.
fn import_games(games: &Bound<'_, PyAny>, what: &str) -> PyResult<RecordBatch> {
    let data = import(games)?;
    if !matches!(data.data_type(), DataType::Struct(_)) {
        let kind = data.data_type();
        return Err(PyTypeError::new_err(format!(
            "{what} takes a record batch of games, got an array of {kind}"
        )));
    }
    let games = StructArray::from(data);
    if games.null_count() > 0 {
        return Err(PyValueError::new_err(format!(
            "{what} takes a record batch of games, got a struct array with nulls"
        )));
    }
    Ok(RecordBatch::from(games))
}

/// `(plies, finals)`: the PolyGlot key (as int64) of the position before each move of `moves` (the
/// flattened list values) for the first `keyed_plies` plies of each game, null after; and of each
/// game's final position. Games of variants other than Standard and Chess960 get nulls.
#[pyfunction]
fn position_keys(
    py: Python<'_>,
    games: &Bound<'_, PyAny>,
    keyed_plies: usize,
) -> PyResult<(ArrowArray, ArrowArray)> {
    let games = import_games(games, "position_keys")?;
    let keys = py
        .detach(|| zobrist::position_keys(&games, keyed_plies))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let wrap = |a: Int64Array| ArrowArray {
        array: Some(std::sync::Arc::new(a)),
    };
    Ok((wrap(keys.plies), wrap(keys.finals)))
}

/// The chess-openings table (`warehouse.lake.openings`) as a record batch: `key` (sorted int64), `eco`,
/// `name`, `code`.
pub(crate) fn import_openings(openings: &Bound<'_, PyAny>) -> PyResult<std::sync::Arc<Openings>> {
    let batch = import_games(openings, "openings")?;
    let openings = Openings::of(&batch).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(std::sync::Arc::new(openings))
}

/// Stored games with their position columns and plies derived from their moves, as a `PgnReader` given
/// `openings` emits them (`bgn_core::plies`): the batch, its position columns replaced, and `plies`.
#[pyfunction]
fn derive_plies(
    py: Python<'_>,
    games: &Bound<'_, PyAny>,
    openings: &Bound<'_, PyAny>,
) -> PyResult<ArrowArray> {
    let games = import_games(games, "derive_plies")?;
    let openings = import_openings(openings)?;
    let derived = py
        .detach(|| plies::derive_stored(&games, openings))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(ArrowArray::of_batch(derived))
}

/// For each game, the first ply from `from_ply` on whose position (before the move; `n_plies` for the
/// final position) has PolyGlot key `key` (as int64); null when none.
#[pyfunction]
fn find_position(
    py: Python<'_>,
    games: &Bound<'_, PyAny>,
    key: i64,
    from_ply: usize,
) -> PyResult<ArrowArray> {
    let games = import_games(games, "find_position")?;
    let found = py
        .detach(|| zobrist::find_position(&games, key, from_ply))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(ArrowArray {
        array: Some(std::sync::Arc::new(found)),
    })
}

/// The PolyGlot key (as int64) of the position of `fen`; `chess960` reads its castling as Chess960's.
#[pyfunction]
#[pyo3(signature = (fen, chess960=false))]
fn fen_key(fen: &str, chess960: bool) -> PyResult<i64> {
    zobrist::fen_key(fen, chess960).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Whether `head` (an input's first decompressed bytes) opens as JSON: the PGN reader refuses such an
/// input, the JSON import any other.
#[pyfunction]
fn looks_like_json(head: &[u8]) -> bool {
    bgn_core::input::looks_like_json(head)
}

/// Whether `name` is a tag name the lake keeps (python-chess's grammar; see `tags::is_tag_name`).
#[pyfunction]
fn is_tag_name(name: &str) -> bool {
    bgn_core::tags::is_tag_name(name.as_bytes())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PgnReader>()?;
    m.add_class::<ArrowArray>()?;
    m.add_class::<GameBatches>()?;
    m.add_function(wrap_pyfunction!(game_keys, m)?)?;
    m.add_function(wrap_pyfunction!(fill_san, m)?)?;
    m.add_function(wrap_pyfunction!(pgn_texts, m)?)?;
    m.add_function(wrap_pyfunction!(json_lines, m)?)?;
    m.add_function(wrap_pyfunction!(study_documents, m)?)?;
    m.add_function(wrap_pyfunction!(position_keys, m)?)?;
    m.add_function(wrap_pyfunction!(derive_plies, m)?)?;
    m.add_function(wrap_pyfunction!(find_position, m)?)?;
    m.add_function(wrap_pyfunction!(fen_key, m)?)?;
    m.add_function(wrap_pyfunction!(looks_like_json, m)?)?;
    m.add_function(wrap_pyfunction!(is_tag_name, m)?)?;
    m.add_class::<json_games::BgnReader>()?;
    m.add_function(wrap_pyfunction!(study_json::study_lines, m)?)?;
    m.add_function(wrap_pyfunction!(json_games::line_breaks, m)?)?;
    m.add("MAX_GAME_BYTES", Options::default().max_game_bytes)?;
    m.add("MAX_NAG", bgn_core::annotations::MAX_NAG)?;
    m.add("KEYED_PLIES", plies::KEYED_PLIES)?;
    m.add_class::<book::BookCounter>()?;
    m.add_class::<book::BookRows>()?;
    m.add_function(wrap_pyfunction!(book::book_rows, m)?)?;
    m.add("PgnInputError", m.py().get_type::<PgnInputError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    let kinds: Vec<_> = RejectKind::ALL.iter().map(|k| k.name()).collect();
    m.add("REJECT_KINDS", kinds)?;
    Ok(())
}
