"""An S3 object given to a reader that opens a path (the Rust PGN reader): a pipe whose read end the reader
opens as `/proc/self/fd/N`, fed the object's bytes as stored by a thread. Nothing is copied to disk and the
reader's own checksum is the object's.

A copy cut short (the network, the server) would look to the reader like the object's end: `Feed.check`,
once the reader is done, raises what stopped it, or says that fewer bytes came than the object holds, so
that the load fails whole instead of committing part of the input. A reader that stops before the end (a
damaged input) says why itself; what it left in the pipe is drained so that the feeder stops.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pyarrow.fs as pafs

from warehouse.errors import InputError, describe
from warehouse.lake.storage import filesystem, input_stream

COPY_BYTES = 1 << 20
# Where a process's open files have paths (Linux).
FD_FOLDER = "/proc/self/fd"


class Feed:
    """The object at `url` being written into a pipe; `path` names its read end, for the reader to open.

    This process keeps its own read end: once the reader is done (`check`) or given up (`close`), what is
    left in the pipe is drained so the thread can stop, whatever the reader still holds."""

    def __init__(self, url: str):
        """:raises InputError: for an object that is not there or cannot be read, naming `url`."""
        if not os.path.isdir(FD_FOLDER):
            raise InputError(f"{url}: a PGN input on S3 is read through {FD_FOLDER}, which this system lacks")
        self.url = url
        fs, key = filesystem(url)
        try:
            info = fs.get_file_info(key)
            if info.type != pafs.FileType.File:
                raise InputError(f"{url}: no such file")
            self.size = info.size or 0
            self._stream = input_stream(fs, key)
        except OSError as e:  # the server's refusal (access denied, the network)
            raise InputError(f"{url}: {describe(e)}") from e
        self._read_end, write_end = os.pipe()
        self._pipe = os.fdopen(write_end, "wb", buffering=0)
        self.path = f"{FD_FOLDER}/{self._read_end}"
        self.fed = 0
        self.error: BaseException | None = None
        self._stop = False
        self._ended = False  # set before the pipe closes: a reader at its end finds it set
        self._thread = threading.Thread(target=self._copy, name="s3-feed", daemon=True)
        self._thread.start()

    def _copy(self) -> None:
        try:
            while not self._stop and (chunk := self._stream.read(COPY_BYTES)):
                view = memoryview(chunk)
                while view:
                    view = view[self._pipe.write(view) or 0 :]
                self.fed += len(chunk)
        except BaseException as e:  # handed to `check`, on the reading thread
            self.error = e
        finally:
            self._ended = True
            self._stream.close()
            self._pipe.close()

    def check(self) -> None:
        """Once the reader has stopped: raises what cut the copy short, or says the copy was short, when the
        reader read to the pipe's end (a reader that stopped before it, at damage, says why itself).

        :raises InputError: for the copy's own error, or a copy of fewer bytes than the object's.
        """
        read_to_end = self._ended
        self.close()
        if self.error is not None:
            raise InputError(f"{self.url}: {describe(self.error)}") from self.error
        if read_to_end and self.fed != self.size:
            raise InputError(f"{self.url}: {self.fed:,} bytes read of its {self.size:,}")

    def close(self) -> None:
        """Stops the copy, drains the pipe and waits for the thread; closes this process's read end."""
        if self._read_end < 0:
            return
        self._stop = True
        while os.read(self._read_end, COPY_BYTES):
            pass
        self._thread.join()
        os.close(self._read_end)
        self._read_end = -1


@contextmanager
def s3_feed(url: str) -> Iterator[Feed]:
    """A `Feed` of `url`, its thread ended and its descriptors closed however the block ends."""
    feed = Feed(url)
    try:
        yield feed
    finally:
        feed.close()
