"""Where exports write: files on a local disk or S3, compressed (bz2 in parallel, zstd) or plain.

bz2 is slow (~10 MB/s a core) and the bottleneck of a JSON export, so `Bz2Writer` cuts the text into
chunks and compresses them on a thread pool (`bz2.compress` releases the GIL), writing the compressed
chunks in order as independent bz2 streams, one after the other. A file of concatenated bz2 streams is a
valid bz2 file: `bzip2 -d`, Python's `bz2`, and Hadoop's codec (Spark's `spark.read.json`) read them all.

Every command that writes a file or a folder of its own (the exports, json2pgn, the book, the opening
graph, the positions' PGN, the opening tables) writes it through here: `output_location` says where, and
refuses an output inside the lake the command reads (a book's `.parquet` in `games/` would break every
query); `output_file` writes one file, `staged_directory` a folder of them.

Outputs appear whole or not at all. A local file is written under a hidden temporary name
(``.<name>.tmp``) and renamed when complete; an S3 object only appears when its upload completes. An
export of many files (JSON) stages them out of the output (`staged_directory`) and publishes them at the
end. A failure (a full disk) deletes what was written and names the output; leftovers of a killed export
are taken over by the next export into the same output; locks keep two exports from writing one output
at once.
"""

from __future__ import annotations

import bz2
import contextlib
import errno
import fcntl
import os
import shutil
import sys
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Protocol

import pyarrow.fs as pafs
import zstandard

from warehouse.cores import default_jobs
from warehouse.errors import OutputError, describe
from warehouse.lake.location import Lake
from warehouse.lake.storage import filesystem, output_stream

# Text per bz2 stream: a few of bz2's 900 kB blocks, so streams cost no ratio and keep every core busy.
BZ2_CHUNK_BYTES = 4 << 20
BZ2_LEVEL = 9


class Sink(Protocol):
    def write(self, data: bytes | memoryview) -> object: ...

    def close(self) -> object: ...


class Bz2Writer:
    """Writes bz2 to `out`: chunks of `chunk_bytes` compressed on `pool`, written in order.

    At most two chunks per pool thread are in flight, so memory stays bounded whatever the input size.
    """

    def __init__(self, out: Sink, pool: ThreadPoolExecutor, chunk_bytes: int | None = None):
        self.out, self.pool = out, pool
        self.chunk_bytes = chunk_bytes or BZ2_CHUNK_BYTES
        self.buffer: list[bytes] = []
        self.buffered = 0
        self.pending: deque[Future[bytes]] = deque()
        self.max_pending = 2 * (os.cpu_count() or 1)

    def write(self, data: bytes | memoryview) -> None:
        self.buffer.append(bytes(data))
        self.buffered += len(data)
        if self.buffered >= self.chunk_bytes:
            data = b"".join(self.buffer)
            whole = len(data) - len(data) % self.chunk_bytes
            for start in range(0, whole, self.chunk_bytes):
                self._submit(data[start : start + self.chunk_bytes])
            self.buffer, self.buffered = [data[whole:]], len(data) - whole

    def _submit(self, chunk: bytes) -> None:
        """Queues `chunk` (any bytes: streams need not end at a line) and writes the finished ones."""
        if chunk:
            self.pending.append(self.pool.submit(bz2.compress, chunk, BZ2_LEVEL))
        while len(self.pending) > self.max_pending or (self.pending and self.pending[0].done()):
            self.out.write(self.pending.popleft().result())

    def close(self) -> None:
        self._submit(b"".join(self.buffer))
        self.buffer, self.buffered = [], 0
        while self.pending:
            self.out.write(self.pending.popleft().result())
        self.out.close()


class OutputFile:
    """A file being written on `fs` at `path`, compressed by its name's suffix (.bz2, .zst, else plain),
    visible at `path` only once `close()` returns.

    A local file is written as ``.<name>.tmp`` beside `path`, locked while this export writes it (see
    `Lock`): a leftover of a killed export is taken over, the file of an export still running is refused.
    `shown` names the output in messages.

    :raises OutputError: when `path` exists or another export is writing it; when writing fails (a full
        disk), naming `shown`.
    """

    def __init__(self, fs: pafs.FileSystem, path: str, pool: ThreadPoolExecutor, shown: str):
        self.fs, self.path, self.shown = fs, path, shown
        self.lock: Lock | None = None
        refuse_existing(fs, path, shown)  # before anything is made
        if isinstance(fs, pafs.LocalFileSystem):
            os.makedirs(parent(path), exist_ok=True)
            self.written = temp_path(path)
            self.lock = Lock(self.written, shown)
            try:
                # Again under the lock: an export that held it may have published `path` meanwhile.
                refuse_existing(fs, path, shown)
            except OutputError:
                os.unlink(self.written)
                self._unlock()
                raise
        else:
            self.written = path
        self.raw: IO[bytes] = open(self.written, "wb") if self.lock else output_stream(fs, path)  # noqa: SIM115
        # Where the bytes go, compressed by the name: a file object, for writers that want one (Parquet's).
        self.sink: Sink = compressor(path, self.raw, pool)

    def write(self, data: bytes | memoryview) -> None:
        with naming(self.shown):
            self.sink.write(data)

    def close(self) -> int:
        """Finishes the file and moves it into place; returns its size in bytes (also `size`)."""
        with naming(self.shown):
            self.sink.close()
            if self.lock:
                os.rename(self.written, self.path)
        self._unlock()
        self.size: int = self.fs.get_file_info(self.path).size or 0
        return self.size

    def abort(self) -> None:
        """Drops what was written, without finishing it (the rest is not compressed)."""
        try:
            # A full disk fails the flush of what is buffered too: the file is deleted all the same.
            with contextlib.suppress(OSError):
                self.raw.close()
            with contextlib.suppress(FileNotFoundError):
                if self.lock:
                    os.unlink(self.written)
                else:
                    # Closing an S3 stream completes its upload: the object must go again.
                    self.fs.delete_file(self.path)
        finally:
            self._unlock()

    def _unlock(self) -> None:
        if self.lock:
            self.lock.release()


@contextmanager
def naming(shown: str) -> Iterator[None]:
    """An `OSError` of the disk or the network in the block (a full disk's names no file) as an
    `OutputError` naming the output `shown`."""
    try:
        yield
    except OSError as e:
        raise OutputError(f"{shown}: {describe(e)}") from e


def refuse_existing(fs: pafs.FileSystem, path: str, shown: str) -> None:
    """:raises OutputError: when something (a file, a directory) is at `path`."""
    info = fs.get_file_info(path)
    if info.type == pafs.FileType.Directory:
        raise OutputError(f"{shown}: already exists, as a directory")
    if info.type != pafs.FileType.NotFound:
        raise OutputError(f"{shown}: already exists")


class Lock:
    """An exclusive lock (flock) on the local file or directory `path`, created if missing, held until
    `release()` (or the death of the process: a killed export's leftovers are unlocked).

    Checked after locking: `path` is still the node that was locked, not one the previous holder renamed
    into place before letting go (the holder renames, then releases).

    :raises OutputError: when another process holds it.
    """

    def __init__(self, path: str, shown: str):
        self.fd = os.open(path, os.O_RDONLY if os.path.isdir(path) else os.O_RDONLY | os.O_CREAT, 0o666)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if not same_node(os.fstat(self.fd), path):
                raise BlockingIOError
        except BlockingIOError:
            os.close(self.fd)
            raise OutputError(f"{shown}: another export is writing it") from None

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def same_node(opened: os.stat_result, path: str) -> bool:
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    return (opened.st_dev, opened.st_ino) == (now.st_dev, now.st_ino)


def compressor(path: str, raw: IO[bytes], pool: ThreadPoolExecutor) -> Sink:
    if path.endswith(".bz2"):
        return Bz2Writer(raw, pool)
    if path.endswith(".zst"):
        # zstd's own worker threads; `closefd` closes `raw` with the writer.
        return zstandard.ZstdCompressor(level=6, threads=-1).stream_writer(raw, closefd=True)
    return raw


def temp_path(path: str) -> str:
    head, _, name = path.rpartition("/")
    return f"{head}/.{name}.tmp"


def parent(path: str) -> str:
    return path.rpartition("/")[0]


def output_location(out: str | os.PathLike[str], lake: Lake | None) -> tuple[pafs.FileSystem, str]:
    """The filesystem and path of the output `out` (see `storage.filesystem`) of a command that reads
    `lake` (None: reads none).

    :raises OutputError: when `out` is `lake`, or inside it: resolved (symbolic links followed) on a local
        disk, by its key on S3.
    """
    fs, path = filesystem(out)
    if lake is not None and isinstance(fs, pafs.LocalFileSystem) == lake.local:
        place, root = (path, lake.root) if not lake.local else map(os.path.realpath, (path, lake.root))
        if place == root or place.startswith(root.rstrip("/") + "/"):
            raise OutputError(f"{out}: inside the lake {lake.location}; write outputs outside it")
    return fs, path


@contextmanager
def output_file(out: str | os.PathLike[str], lake: Lake | None) -> Iterator[OutputFile]:
    """The new file `out` (local or s3://, compressed by its name: see `OutputFile`), for the block to write;
    it appears when the block ends, and is deleted if the block fails. `lake`: the lake the command reads
    (see `output_location`).

    :raises OutputError: when `out` is refused (exists, inside `lake`, written by another export), or
        writing it fails.
    """
    fs, path = output_location(out, lake)
    with thread_pool() as pool:
        file = OutputFile(fs, path, pool, str(out))
        try:
            yield file
            # Inside the `try`: an interrupt while the last chunks compress drops the file too.
            file.close()
        except BaseException:
            file.abort()
            raise


def write_texts(
    out: str | os.PathLike[str], texts: Iterable[str], lake: Lake | None
) -> tuple[int, int, str | None]:
    """Writes `texts`, one game each, one after the other (see `write_blocks`)."""
    return write_blocks(out, ((1, text.encode()) for text in texts), lake)


def write_blocks(
    out: str | os.PathLike[str], blocks: Iterable[tuple[int, bytes | memoryview]], lake: Lake | None
) -> tuple[int, int, str | None]:
    """Writes `blocks`, each `(games, their text in UTF-8)`, one after the other to the file `out` (see
    `output_file`; `lake`: the lake they come from), or to standard output when `out` is `-`. Returns the
    games written, the bytes of the file and its path (None for stdout)."""
    games = 0
    if str(out) == "-":
        sys.stdout.flush()
        for count, data in blocks:
            sys.stdout.buffer.write(data)
            games += count
        sys.stdout.buffer.flush()
        return games, 0, None
    with output_file(out, lake) as file:
        for count, data in blocks:
            file.write(data)
            games += count
    return games, file.size, file.path


@contextmanager
def work_folder(out: Path) -> Iterator[Path]:
    """The hidden folder beside the local output `out` (`.<name>.work`) for what a command writes on its way
    to it (a book's sorted runs, the book before it is renamed into place: `out`'s filesystem), removed at
    the end; one a killed command left is taken over by the next into the same output."""
    work = out.parent / f".{out.name}.work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def thread_pool() -> ThreadPoolExecutor:
    """The compression pool of one export: one thread per core this process may use."""
    return ThreadPoolExecutor(max_workers=default_jobs(), thread_name_prefix="compress")


def staged_directory(fs: pafs.FileSystem, path: str, shown: str) -> LocalStaging | S3Staging:
    """Where an export of many files writes them (`write()`, or under `.root`) before `publish()` puts them
    all at `path`, which must be empty or absent; `discard()` drops them. `shown` names the output in
    messages.

    :raises OutputError: when `path` holds files, is a file, or another export is writing it.
    """
    if isinstance(fs, pafs.LocalFileSystem):
        return LocalStaging(path, shown)
    return S3Staging(fs, path, shown)


class Staging:
    """What both stagings share: writing one file."""

    fs: pafs.FileSystem
    root: str
    shown: str

    def write(self, name: str, data: bytes) -> None:
        """Writes the file `name` (a path below the output) at once.

        :raises OutputError: when it cannot be written (a full disk), naming the output."""
        with naming(f"{self.shown}/{name}"), output_stream(self.fs, f"{self.root}/{name}") as stream:
            stream.write(data)


class LocalStaging(Staging):
    """Files written under ``.<name>.partial`` beside `path` (locked, see `Lock`), then renamed to `path`
    in one step: `path` never holds part of an export. A leftover of a killed export is cleared."""

    def __init__(self, path: str, shown: str):
        self.fs, self.path, self.shown = pafs.LocalFileSystem(), path, shown
        head, _, name = path.rpartition("/")
        self.root = f"{head}/.{name}.partial"
        listing(pafs.LocalFileSystem(), path, shown)  # refused before anything is made
        os.makedirs(self.root, exist_ok=True)
        self.lock = Lock(self.root, shown)
        try:
            # Again under the lock: an export that held it may have published `path` meanwhile.
            listing(pafs.LocalFileSystem(), path, shown)
            clear(self.root)
        except BaseException:
            self.discard()
            raise

    def publish(self) -> None:
        """Renames the staging directory to `path` (replacing an empty directory, never one with files)."""
        try:
            os.rename(self.root, self.path)
        except OSError as e:
            if e.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
                raise
            raise OutputError(f"{self.shown}: already holds files (written while this export ran)") from None
        self.lock.release()

    def discard(self) -> None:
        try:
            shutil.rmtree(self.root, ignore_errors=True)
        finally:
            self.lock.release()


# S3 has no rename of a prefix: files are staged under `<path>/_staging/` (out of the archive's globs, and
# skipped by Hadoop and Spark as a `_` name), then moved one by one, and `_staging/` deleted last.
S3_STAGING = "_staging"


class S3Staging(Staging):
    """Files written under `path`/_staging/, then moved to their names. A `_staging/` alone is what an
    export killed before publishing left: it is deleted. Beside other files it marks an export killed while
    moving them: that output is refused (its archive is incomplete)."""

    def __init__(self, fs: pafs.FileSystem, path: str, shown: str):
        self.fs, self.path, self.shown = fs, path, shown
        self.root = f"{path}/{S3_STAGING}"
        names = listing(fs, path, shown, allowed=self.root)
        if self.root in names:
            if len(names) > 1:
                raise OutputError(
                    f"{shown}: an earlier export into it was killed while moving its files into place "
                    f"(its {S3_STAGING}/ is left): delete it and export again"
                )
            fs.delete_dir(self.root)

    def publish(self) -> None:
        for info in self.fs.get_file_info(pafs.FileSelector(self.root, recursive=True)):
            if info.type == pafs.FileType.File:
                self.fs.move(info.path, self.path + info.path[len(self.root) :])
        self.fs.delete_dir(self.root)

    def discard(self) -> None:
        if self.fs.get_file_info(self.root).type != pafs.FileType.NotFound:
            self.fs.delete_dir(self.root)


def listing(fs: pafs.FileSystem, path: str, shown: str, allowed: str | None = None) -> list[str]:
    """The entries of the directory `path` (none when absent).

    :raises OutputError: when `path` is a file, or holds an entry other than `allowed`.
    """
    if fs.get_file_info(path).type == pafs.FileType.File:
        raise OutputError(f"{shown}: is a file, not a directory")
    names = [i.path for i in fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))]
    if any(name != allowed for name in names):
        raise OutputError(f"{shown}: already holds files; export into an empty or new directory")
    return names


def clear(directory: str) -> None:
    """Deletes what `directory` holds."""
    for entry in os.scandir(directory):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)
