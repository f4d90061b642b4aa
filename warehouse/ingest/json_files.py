"""JSON games into the lake: BGN JSON-lines and study JSON, loaded as a PGN load is.

The JSON files of a load are a source (`JsonSource`) of the one load pipeline (`load.load_inputs`: one
record and commit for all of them, dedup, rejects, reconciliation), read a chunk of files at a time
(`CHUNK_BYTES`), a block of lines at a time by the Rust core, no Python object per game or move. BGN lines
are replayed from their fields by the reader's own replay (`_core.BgnReader`: no PGN text), so every move is
checked as a PGN move is, and a game whose moves replay to other fields than its line gives (capture,
checks, castling side, the piece's case) is rejected; its JSON id, when the lake can take it, is its
`game_id`, and its `san` is left null (its line holds none). Study documents are turned into PGN text
(`_core.study_lines`) in a scratch file in memory (`warehouse.scratch`: nothing of it outlives the
process) that the Rust reader replays; each of its batches is then taken back to the JSON inputs
(`_Chunk.adapt`): `source_file` and `source_offset` become the JSON file and the document's offset, and
the document's id, when the lake can take it, the game's `game_id`.

Inputs: a file (plain, .bz2, .zst, .gz, by its first bytes), a directory (its `.json`, `.jsonl`,
`.ndjson` files, compressed or not, recursively), a glob, or an `s3://` prefix or glob, as the BGN archive
is laid out (`<type>/<year>/<month>/G.<n>.<type>.json.bz2`). A file is JSON-lines, one game a line, unless
its first line is `{` alone: then it is one (pretty-printed) document. Its first game must open as JSON
(`opens_json`): any other file (PGN, say) is refused whole, nothing of it kept (the others load).

Memory does not grow with a line: a line (or document) is read up to `MAX_LINE_BYTES`, and one longer is
read past in chunks and rejected (`too_large`), never held whole (`texts`). docs/operations.md, "Memory".
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import zstandard

from warehouse import _core
from warehouse.errors import InputError, LoadError
from warehouse.ingest import bz2_streams
from warehouse.ingest.inputs import JSON_NAME, input_files
from warehouse.ingest.load import Inputs, LoadResult, Located, ReconciliationError, load_inputs
from warehouse.ingest.zstd_frames import starts_zstd
from warehouse.lake.layout import Partition
from warehouse.lake.location import Lake
from warehouse.lake.positions import reader_openings
from warehouse.lake.records import JSON, LoadedInput
from warehouse.lake.storage import filesystem, input_stream, is_s3
from warehouse.scratch import ScratchFile

RAW_LIMIT = 64 << 10  # as the reader's rejects: the first 64 KiB of the game's text
# Kinds of the games refused by the JSON reading (`warehouse.lake.records.JSON_REJECT_KINDS`, beside the
# reader's own kinds, `_core.REJECT_KINDS`, for what the replay refuses): not JSON, not UTF-8, or nested
# deeper than Python's JSON reader goes; a missing field, a wrong type, a number out of its column's range
# (all worded by the core; a clock's or an eval's range is the replay's `out_of_range`, as a PGN load tells
# it); and the moves replay to other fields than the line gives (`disagrees`).
TOO_LARGE = "too_large"  # the reader's kind for a game too large to hold
# The longest line (or document) read: half the reader's largest game (a line is held whole while the core
# makes it PGN).
MAX_LINE_BYTES = _core.MAX_GAME_BYTES // 2
# Decompressed bytes read at once past a line too long to keep.
CHUNK = 1 << 20


def json_inputs(inputs: list[str]) -> list[str]:
    """The JSON files `inputs` name (files, directories, globs, `s3://` prefixes), each sorted.

    :raises InputError: for an input that names no JSON file.
    """
    found: list[str] = []
    for given in inputs:
        names = [n for n in input_files(given, JSON_NAME) if is_s3(n) or os.path.exists(n)]
        if not names:
            raise InputError(f"{given}: no JSON file (.json, .jsonl, .ndjson, plain or .bz2/.zst/.gz)")
        found += names
    return found


class _Hashing(io.RawIOBase):
    """Reads `raw` and hashes the bytes read: the input's SHA-256 and size, as the PGN reader gives."""

    def __init__(self, raw: IO[bytes]):
        self.raw, self.digest, self.size = raw, hashlib.sha256(), 0

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        if not self.closed:
            self.raw.close()
        super().close()

    def readinto(self, buffer: Any) -> int:
        data = self.raw.read(len(buffer))
        buffer[: len(data)] = data
        self.digest.update(data)
        self.size += len(data)
        return len(data)


def _open_raw(path: str) -> IO[bytes]:
    if is_s3(path):
        fs, key = filesystem(path)
        return input_stream(fs, key)
    return open(path, "rb")


class _Chunks(io.RawIOBase):
    """A stream of the byte strings `chunks` gives, one after the other."""

    def __init__(self, chunks: Iterator[bytes]):
        self.chunks, self.chunk, self.at = chunks, memoryview(b""), 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while self.at == len(self.chunk):
            next_chunk = next(self.chunks, None)
            if next_chunk is None:
                return 0
            self.chunk, self.at = memoryview(next_chunk), 0
        count = min(len(buffer), len(self.chunk) - self.at)
        buffer[:count] = self.chunk[self.at : self.at + count]
        self.at += count
        return count


def _decompressed(raw: _Hashing, jobs: int) -> tuple[IO[bytes], str]:
    """The decompressed stream and its compression, from the first bytes. bz2 is decompressed on `jobs`
    threads, a stream a thread (`bz2_streams`)."""
    head = io.BufferedReader(raw, 1 << 20)
    magic = head.peek(4)[:4]
    if magic.startswith(b"BZh"):
        return io.BufferedReader(_Chunks(bz2_streams.decompressed(head, jobs)), 1 << 20), "bzip2"
    if starts_zstd(magic):
        reader = zstandard.ZstdDecompressor().stream_reader(head, read_across_frames=True)
        return io.BufferedReader(reader, 1 << 20), "zstd"
    if magic.startswith(b"\x1f\x8b"):
        return gzip.GzipFile(fileobj=head), "gzip"  # type: ignore[return-value]
    return head, "json"


@dataclass
class Document:
    """One game's text in the input: its byte offset and length (decompressed), its line number, and its
    bytes (at most its first `RAW_LIMIT` when it is too long to keep)."""

    offset: int
    length: int
    line: int
    data: bytes


@dataclass
class Lines:
    """Whole lines of an input, `data[start:end]`, or its one (pretty-printed) document (`whole`): the
    decompressed offset of their first byte and the number of their first line."""

    offset: int
    line: int
    data: bytes
    end: int
    whole: bool = False
    start: int = 0


# Decompressed bytes read at once: the core takes the whole lines among them in one call.
BLOCK_BYTES = 4 << 20


def texts(stream: IO[bytes], limit: int) -> Iterator[Lines | Document]:
    """The input's games, as blocks of whole lines, or the whole input when its first line is `{` alone.
    A line or document longer than `limit` bytes that does not fit a block is read past in chunks, and
    comes as a `Document` holding its first bytes (unless they are blank: a blank line is no game)."""
    first = stream.readline(limit + 1)
    if first.strip() == b"{":
        data = first + stream.read(limit + 1 - len(first))
        if len(data) <= limit:
            yield Lines(0, 1, data, len(data), whole=True)
        elif data[:RAW_LIMIT].strip():
            yield Document(
                0, len(data) + _bytes_past(lambda: stream.read(CHUNK), line=False), 1, data[:RAW_LIMIT]
            )
        return
    offset, number, carry = 0, 1, first
    while True:
        more = stream.read(BLOCK_BYTES)
        start = 0
        if carry and (start := more.find(b"\n") + 1):
            # The line left unfinished ends in `more`: that line alone is joined, not the whole block (a
            # block joined was a fresh 4 MiB object a block, each of its pages faulted in).
            head = carry + more[:start]
            yield Lines(offset, number, head, len(head))
            offset, number, carry = offset + len(head), number + _core.line_breaks(head, len(head)), b""
        data = carry + more if carry else more
        if len(data) == start:
            if not more:
                return
            continue
        end = data.rfind(b"\n") + 1 if more else len(data)
        if end == 0 and len(data) > limit:
            length = len(data) + _bytes_past(lambda: stream.readline(CHUNK), line=True)
            if data[:RAW_LIMIT].strip():
                yield Document(offset, length, number, data[:RAW_LIMIT])
            offset, number, carry = offset + length, number + 1, b""
            continue
        if end > start:
            yield Lines(offset, number, data, end, start=start)
            # `data[:start]`, the end of the line joined above, holds one line break.
            offset, number = offset + end - start, number + _core.line_breaks(data, end) - (start > 0)
        carry = data[end:]
        if not more:
            return


def _bytes_past(read: Callable[[], bytes], line: bool) -> int:
    """The bytes `read` (a chunk a call) gives to the end of the input, or of the line (`line`)."""
    count = 0
    while part := read():
        count += len(part)
        if line and part.endswith(b"\n"):
            break
    return count


def first_game(text: Lines | Document) -> bytes | None:
    """The first bytes of the first game of `text` (its first line that is not blank), if any."""
    if isinstance(text, Document) or text.whole:
        return text.data[:RAW_LIMIT]
    start = text.start
    while start < text.end:
        stop = text.data.find(b"\n", start, text.end) + 1 or text.end
        if text.data[start:stop].strip():
            return text.data[start : min(stop, start + RAW_LIMIT)]
        start = stop
    return None


def opens_json(data: bytes) -> bool:
    """Whether an input's first game opens as JSON games do: a `{` (a line that is no JSON after all is that
    line's reject), or as `_core.looks_like_json` reads an array (PGN's first `[` opens a tag)."""
    return data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{") or _core.looks_like_json(data)


def not_json(data: bytes) -> str:
    """Why a line the core found no JSON is not, in the words of Python's JSON reader (the reasons the
    load has always given)."""
    try:
        json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        return f"not UTF-8 (byte {e.start})"
    except json.JSONDecodeError as e:
        return f"not JSON: {e.msg} at column {e.colno}"
    except RecursionError:
        return "nested deeper than the JSON reader goes (about 1,000 levels)"
    return "not JSON: NaN, Infinity or the like, which JSON (RFC 8259) has not"


def _readable(games: Iterator[Lines | Document], path: str, compression: str) -> Iterator[Lines | Document]:
    """`games`, a damaged input's failure as the one-line error of a bad file (nothing of it is loaded:
    unlike a PGN input's, a JSON line cut by the damage cannot be told from a whole one)."""
    try:
        yield from games
    except (EOFError, OSError, zstandard.ZstdError) as e:
        raise InputError(f"{path}: damaged {compression} data ({e}); nothing of it was loaded") from None


# Bytes of JSON lines in a chunk (its BGN games replayed and held as batches, its study documents made
# PGN) before it is handed on: a chunk ends with the block of lines that reaches it, and an input that goes
# on goes on in the next chunk. Two chunks are held (the one read and the one made), so memory stays
# bounded whatever the inputs' number or size. A damaged input is refused whole, but one found damaged
# after a chunk of its games was read: that load is abandoned (`_Chunk.add`).
CHUNK_BYTES = 64 << 20


# Per study game of a chunk: where its PGN starts in the chunk's text, its input (an index in `files`),
# offset, length and line there, and its JSON id (when the lake can keep it).
GAMES = pa.schema(
    [("pgn_start", pa.int64()), ("file", pa.int64()), ("offset", pa.int64()), ("length", pa.int64()),
     ("line", pa.int64()), ("id", pa.string())]
)  # fmt: skip


class _Input:
    """One JSON input being read, in one chunk or over several: its decompressed text, block by block, the
    replay of its BGN games, and its outcome (its counts grow as its games are read)."""

    def __init__(self, path: str, jobs: int, batch_games: int):
        self.path = path
        self.bgn = _core.BgnReader(path, batch_games=batch_games, openings=reader_openings())
        try:
            self.raw = _Hashing(_open_raw(path))
        except OSError as e:
            raise InputError(f"{path}: {e}") from e
        try:
            stream, compression = _decompressed(self.raw, jobs)
        except BaseException:
            self.raw.close()
            raise
        self.texts = _readable(texts(stream, MAX_LINE_BYTES), path, compression)
        self.opened = False  # its first game was seen to open as JSON
        self.in_earlier_chunk = False  # games of it went into a chunk made before
        self.outcome = LoadedInput(input=path, compression=compression)
        self.held: Lines | Document | None = None  # a block read that went into no chunk yet

    def next_text(self) -> Lines | Document | None:
        """Its next block of lines (or document), None at its end."""
        text, self.held = self.held, None
        return text if text is not None else next(self.texts, None)

    def close(self) -> None:
        """Once every block is read: its size and checksum."""
        self.raw.close()
        self.outcome.size = self.raw.size
        self.outcome.sha256 = self.raw.digest.hexdigest()


class _Chunk:
    """Consecutive inputs of a load read together (an input too big for one chunk goes on in the next:
    `add`): their BGN games' batches, and their study documents' games as one PGN text in a scratch file
    with what it takes to bring the reader's batches of that text back to the inputs: each game's input,
    offset, line and id (`GAMES`)."""

    def __init__(self, stop: threading.Event):
        self.stop = stop  # set: the load is over, the chunk is ended where it is and dropped
        self.text = ScratchFile("games.pgn")
        self.pgn_path, self.out = self.text.path, self.text.out
        self.files: list[str] = []
        self.early: Located = []  # games refused before any batch (offsets in their input)
        self.outcomes: list[LoadedInput] = []
        self.ended: list[LoadedInput] = []  # the inputs whose last games are in this chunk
        # The BGN games replayed: each partition's batches, as the inputs' readers handed them over.
        self.replayed: list[tuple[Partition, list[pa.RecordBatch]]] = []
        self.lines_bytes = 0  # bytes of the JSON lines read into the chunk
        self.games: list[pa.RecordBatch] = []
        self.made = 0  # study games made PGN
        # The inputs' compressed bytes read when the chunk was begun and ended (for progress).
        self.raw_start = self.raw_end = 0

    def full(self) -> bool:
        return self.lines_bytes >= CHUNK_BYTES or self.stop.is_set()

    def discard(self) -> None:
        """Deletes its PGN text, once read."""
        self.text.discard()

    def add(self, given: _Input) -> bool:
        """Reads the input's next blocks after the games before them, until it ends (True) or the chunk is
        full (False: the rest goes into the next chunk).

        :raises InputError: for an input that is damaged or not JSON: nothing of it is kept.
        :raises LoadError: for such an input whose first games went into a chunk made before (read, or
            being read, and written): the load fails whole.
        """
        mark = (
            self.out.tell(),
            len(self.games),
            self.made,
            len(self.early),
            len(self.replayed),
            self.lines_bytes,
        )
        file = len(self.files)
        self.files.append(given.path)
        self.outcomes.append(given.outcome)
        try:
            ended = self._add(file, given)
        except InputError as e:
            given.raw.close()
            if given.in_earlier_chunk:
                raise LoadError(f"{e} (its first games were read: the load is abandoned)") from None
            self.out.seek(mark[0])
            self.out.truncate()
            del self.games[mark[1] :], self.files[file:], self.outcomes[file:]
            self.made = mark[2]
            del self.early[mark[3] :], self.replayed[mark[4] :]
            self.lines_bytes = mark[5]
            raise
        if ended:
            given.close()
            self._replayed(given.bgn.finish())
            self.ended.append(given.outcome)
        return ended

    def _add(self, file: int, given: _Input) -> bool:
        while (text := given.next_text()) is not None:
            if self.full():
                given.held = text
                return False
            if not given.opened and (first := first_game(text)) is not None:
                if not opens_json(first):
                    raise InputError(f"{given.path}: not JSON (PGN games load with pgn2parquet)")
                given.opened = True
            if isinstance(text, Document):
                self._refuse(file, text, TOO_LARGE, f"longer than {MAX_LINE_BYTES} bytes: skipped")
            else:
                self._add_lines(file, given, text)
        return True

    def _add_lines(self, file: int, given: _Input, lines: Lines) -> None:
        """The games of `lines`: BGN games replayed by the core, then study documents made PGN."""
        written, refused, studies = given.bgn.block(
            lines.data, lines.start, lines.end, lines.whole, MAX_LINE_BYTES, RAW_LIMIT, lines.offset
        )
        self.lines_bytes += lines.end - lines.start
        self.outcomes[file].games_seen += written
        self._replayed(given.bgn.full_batches())
        self._refuse_lines(file, lines, refused)
        if studies:
            self._add_studies(file, lines, studies)

    def _replayed(self, batches: list[tuple[tuple[str, int, int], _core.GameBatches]]) -> None:
        """Keeps the partitions' games a BGN reader handed over, for the chunk's reading."""
        for partition, games in batches:
            self.replayed.append((Partition(*partition), pa.table(games).to_batches()))

    def _add_studies(self, file: int, lines: Lines, studies: list[tuple[int, int, int]]) -> None:
        pgn, made, refused = _core.study_lines(lines.data, lines.start, studies)
        if made:
            offsets, lengths, numbers, starts, ids = zip(*made, strict=True)
            start = self.out.tell()
            self._add_games(
                len(made),
                pgn_start=[start + pgn_start for pgn_start in starts],
                file=[file] * len(made),
                offset=[lines.offset + offset for offset in offsets],
                length=list(lengths),
                line=[lines.line + number - 1 for number in numbers],
                id=list(ids),
            )
            self.out.write(pgn)
        self._refuse_lines(file, lines, refused)

    def _refuse_lines(
        self, file: int, lines: Lines, refused: list[tuple[int, int, int, str, str | None]]
    ) -> None:
        """The lines the core refused (offsets from `lines.start`), a line that is no JSON worded by
        `not_json`."""
        for offset, length, line, kind, reason in refused:
            data = lines.data[lines.start + offset : lines.start + offset + length]
            document = Document(lines.offset + offset, length, lines.line + line - 1, data)
            self._refuse(file, document, kind, not_json(data) if reason is None else reason)

    def _add_games(self, count: int, **columns: Any) -> None:
        if count:
            self.games.append(pa.record_batch(columns, schema=GAMES))
            self.made += count

    def _refuse(self, file: int, document: Document, kind: str, reason: str) -> None:
        raw = document.data[:RAW_LIMIT].decode("utf-8", "replace").rstrip("\r\n")
        reject = (document.offset, document.length, kind, f"line {document.line}: {reason}", raw)
        self.early.append((self.files[file], reject))
        self.outcomes[file].games_seen += 1
        self.outcomes[file].games_rejected += 1

    def close(self) -> None:
        """Ends the PGN text: what the reader reads next."""
        self.out.close()
        games = pa.Table.from_batches(self.games, schema=GAMES)
        self.games = []  # `games` holds them now: each game's place not held twice
        # Each column made one array once (a table's `combine_chunks` then a column's copied it twice).
        self._starts, self._file_of, self._offsets, self._lengths, self._lines = (
            games.column(name).to_numpy() for name in ("pgn_start", "file", "offset", "length", "line")
        )
        self._ids = games.column("id").combine_chunks()
        self._names = pa.array(self.files, pa.string())

    def _games(self, pgn_offsets: Any) -> Any:
        """The index of the input game each PGN offset belongs to."""
        return np.searchsorted(self._starts, np.asarray(pgn_offsets, dtype=np.int64), side="right") - 1

    def _count(self, games: Any, field: str) -> None:
        # Only the inputs these games came from: a chunk may hold thousands of inputs (study files), and
        # a batch the games of a few.
        files, counts = np.unique(self._file_of[games], return_counts=True)
        for file, n in zip(files.tolist(), counts.tolist(), strict=True):
            setattr(self.outcomes[file], field, getattr(self.outcomes[file], field) + n)

    def locate(self, rejects: list[_core.Reject]) -> Located:
        """The reader's rejects, located in the inputs."""
        if not rejects:
            return []
        games = self._games([offset for offset, *_ in rejects])
        self._count(games, "games_seen")
        self._count(games, "games_rejected")
        return [
            (
                self.files[self._file_of[g]],
                (int(self._offsets[g]), int(self._lengths[g]), kind, f"line {self._lines[g]}: {reason}", raw),
            )
            for g, (_, _, kind, reason, raw) in zip(games.tolist(), rejects, strict=True)
        ]

    def adapt(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """A batch read from the PGN as the inputs' games: source file and offset in the input, and the
        document's id as `game_id` when it has one."""
        games = self._games(batch.column("source_offset").to_numpy())
        self._count(games, "games_seen")
        ids = pc.coalesce(self._ids.take(pa.array(games)), batch.column("game_id"))
        columns = dict(zip(batch.schema.names, batch.columns, strict=True))
        columns["game_id"] = ids
        columns["game_key"] = pa.array(_core.game_keys(ids))
        columns["source_file"] = self._names.take(pa.array(self._file_of[games]))
        columns["source_offset"] = pa.array(self._offsets[games])
        return pa.RecordBatch.from_arrays(list(columns.values()), schema=batch.schema)


class _ChunkMaker:
    """Makes a load's chunks, one after the other (`next`): the inputs left, and the one that goes on from
    the last chunk. One thread at a time calls it."""

    def __init__(self, paths: list[str], jobs: int, batch_games: int, refused: list[str]):
        self.pending = list(reversed(paths))
        self.going: _Input | None = None  # an input that did not fit the last chunk
        self.jobs, self.batch_games, self.refused = jobs, batch_games, refused
        self.stop = threading.Event()
        self.raw_done = 0  # compressed bytes of the inputs made into chunks and ended

    def raw_read(self) -> int:
        """Compressed bytes of the inputs read so far."""
        return self.raw_done + (self.going.raw.size if self.going is not None else 0)

    def next(self) -> _Chunk | None:
        """The next chunk, read and closed; None when every input is read."""
        if not (self.pending or self.going) or self.stop.is_set():
            return None
        chunk = _Chunk(self.stop)
        chunk.raw_start = self.raw_read()
        try:
            while (self.pending or self.going) and not chunk.full():
                try:
                    self.going = self.going or _Input(self.pending.pop(), self.jobs, self.batch_games)
                    if chunk.add(self.going):
                        self.raw_done += self.going.raw.size
                        self.going = None
                except InputError as e:
                    self.raw_done += self.going.raw.size if self.going is not None else 0
                    self.going = None
                    self.refused.append(str(e))
        except BaseException:
            chunk.close()
            chunk.discard()
            raise
        chunk.close()
        chunk.raw_end = self.raw_read()
        if self.going is not None:
            self.going.in_earlier_chunk = True
        return chunk

    def close(self) -> None:
        if self.going is not None:
            self.going.raw.close()


class JsonSource(Inputs):
    """JSON inputs as a load reads them (`load.Source`), a chunk of inputs at a time (`CHUNK_BYTES`): their
    BGN games replayed by the core, their study documents made PGN that the Rust reader replays."""

    format = JSON

    def batches(self) -> Iterator[tuple[Partition | None, list[pa.RecordBatch], Located]]:
        maker = _ChunkMaker(self.paths, self.jobs, self.batch_games, self.refused)
        with ThreadPoolExecutor(1, thread_name_prefix="json-chunks") as pool:
            making = pool.submit(maker.next)
            try:
                while (chunk := making.result()) is not None:
                    # The next chunk is made while this one is read: the making is mostly the core's,
                    # which lets the reader's threads and the encoders run beside it.
                    making = pool.submit(maker.next)
                    try:
                        yield from self._read_chunk(chunk)
                    finally:
                        chunk.discard()
            finally:
                maker.stop.set()
                with contextlib.suppress(Exception):
                    if (left := making.result()) is not None:
                        left.discard()
                maker.close()

    def _read_chunk(self, chunk: _Chunk) -> Iterator[tuple[Partition | None, list[pa.RecordBatch], Located]]:
        if not chunk.files:
            return
        if chunk.early:
            yield None, [], chunk.early
        # The BGN games, replayed as the chunk was made; then the study documents' games, read from their PGN.
        replayed = _Replayed(sum(b.num_rows for _, games in chunk.replayed for b in games))
        self.reader = self.progress.follow(replayed, (chunk.raw_start, chunk.raw_end))
        for key, games in chunk.replayed:
            yield key, games, []
        self.progress.done()
        if chunk.made:
            # A study document's SAN is user text: compared, kept where it differs, and repaired.
            reader = self.open_reader(chunk.pgn_path, made=True)
            self.reader = self.progress.follow(reader, (chunk.raw_end, chunk.raw_end))
            for partition, arrow_batch, rejects in reader:
                located = chunk.locate(rejects)
                parts = []
                if partition is not None:
                    parts = [chunk.adapt(part) for part in pa.table(arrow_batch).to_batches()]
                yield Partition(*partition) if partition is not None else None, parts, located
            if reader.games_seen != chunk.made:
                made, read = chunk.made, reader.games_seen
                raise ReconciliationError(
                    f"{chunk.files[0]}…: the PGN made of {made:,} games was read as {read:,}"
                )
            self.progress.done()
        self.read += chunk.ended


@dataclass
class _Replayed:
    """A chunk's BGN games, replayed as it was made, as a progress bar reads them (`load.Reading`): read."""

    games_seen: int
    raw_bytes_read: int = 1
    input_size: int | None = 1


def load_json(path: str, lake: Lake, **options: Any) -> LoadResult:
    """Loads one JSON input into `lake`, as `load_input` loads a PGN input, with the same `options`."""
    return load_json_files([path], lake, **options)


def load_json_files(paths: list[str], lake: Lake, **options: Any) -> LoadResult:
    """Loads JSON inputs (`json_inputs` names them) into `lake` as one load (`load_inputs`, with its
    `options`)."""
    return load_inputs(paths, lake, source=JsonSource, **options)
