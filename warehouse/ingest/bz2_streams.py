"""bz2 input decompressed on every core: a file of concatenated bz2 streams (BGN's archive, as
`output.Bz2Writer` writes it: a stream per 4 MiB of text) is cut at its streams' starts and the streams
decompressed on a thread pool (`bz2.decompress` releases the GIL), their text given in order.

A stream starts with `BZh1`-`BZh9` and its first block's magic (`STREAM_START`); the same ten bytes can,
rarely, sit inside compressed data, so each piece must decompress to exactly one whole stream. If one does
not (a false start, or damage), the file is read on from that piece by one decompressor, as a file of one
stream is (`_serial`): the text is the same, and damage raises as `bz2` raises it (`OSError`, `EOFError`),
but that a damaged stream after a whole one raises too, where `bz2` may drop it unsaid. Memory: the pieces
in flight (twice the threads), one stream's compressed bytes at most `MAX_STREAM_BYTES` (a longer stream is
read serially), and its text at most `MAX_TEXT_BYTES`: bz2 turns a few bytes into gigabytes of one byte
repeated, so a stream of more text is read serially too, `MAX_TEXT_BYTES` at a time.
"""

from __future__ import annotations

import bz2
import re
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO

# A stream's header (`BZh` and its block size) and its first block's magic (the digits of pi).
STREAM_START = re.compile(rb"BZh[1-9]\x31\x41\x59\x26\x53\x59")
READ_BYTES = 1 << 20
MAX_STREAM_BYTES = 64 << 20
MAX_TEXT_BYTES = 64 << 20


class _NotOneStream(Exception):
    """A piece that is not exactly one whole bz2 stream."""


def _one_stream(piece: bytes) -> bytes:
    decompressor = bz2.BZ2Decompressor()
    try:
        text = decompressor.decompress(piece, MAX_TEXT_BYTES)
    except OSError:
        raise _NotOneStream from None
    if not decompressor.eof or decompressor.unused_data:  # not one stream, or more text than the bound
        raise _NotOneStream
    return text


def decompressed(raw: IO[bytes], jobs: int) -> Iterator[bytes]:
    """The text of the bz2 data `raw` (at its start), a stream at a time, decompressed on `jobs` threads.

    :raises OSError, EOFError: for damaged or cut data, as `bz2` raises them.
    """
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="bz2") as pool:
        pending: deque[tuple[bytes, Future[bytes]]] = deque()
        pieces = _pieces(raw)
        streams = 0
        for piece in pieces:
            pending.append((piece, pool.submit(_one_stream, piece)))
            while len(pending) > 2 * jobs or (pending and pending[0][1].done()):
                if (text := _result(pending)) is None:
                    yield from _serial(pending, pieces, raw, streams > 0)
                    return
                streams += 1
                yield text
        while pending:
            if (text := _result(pending)) is None:
                yield from _serial(pending, pieces, raw, streams > 0)
                return
            streams += 1
            yield text


def _result(pending: deque[tuple[bytes, Future[bytes]]]) -> bytes | None:
    """The first pending piece's text, or None (left pending) when it is not one whole stream."""
    try:
        text = pending[0][1].result()
    except _NotOneStream:
        return None
    pending.popleft()
    return text


def _pieces(raw: IO[bytes]) -> Iterator[bytes]:
    """The compressed data cut before each stream's start but the first. A stream longer than
    `MAX_STREAM_BYTES` ends the cutting: the rest is left in `raw`, its start the last piece."""
    data = bytearray()
    searched = 1  # where the next start may begin (a file's first start is no cut)
    while more := raw.read(READ_BYTES):
        data += more
        start = 0
        for match in STREAM_START.finditer(data, searched):
            yield bytes(data[start : match.start()])
            start = match.start()
        # A start whose ten bytes are not all read yet is found on the next round.
        searched = max(1, len(data) - start - len(b"BZh9") - 5)
        del data[:start]
        if len(data) > MAX_STREAM_BYTES:
            break
    if data:
        yield bytes(data)


def _serial(
    pending: deque[tuple[bytes, Future[bytes]]], pieces: Iterator[bytes], raw: IO[bytes], after_stream: bool
) -> Iterator[bytes]:
    """The text from the first pending piece on, by one decompressor a stream, as `bz2.BZ2File` reads a
    file (data after a whole stream that does not start another is ignored, as it ignores it);
    `after_stream`: whether whole streams came before."""
    for _, future in pending:
        future.cancel()
    compressed = [piece for piece, _ in pending]

    def rest() -> Iterator[bytes]:
        yield from compressed
        yield from pieces
        while more := raw.read(READ_BYTES):
            yield more

    decompressor, fed = bz2.BZ2Decompressor(), False
    for data in rest():
        while data or fed:
            try:
                text = decompressor.decompress(data, MAX_TEXT_BYTES)
            except OSError:
                if fed or not after_stream or data.startswith(b"BZh"):
                    raise  # a damaged stream (which `bz2` drops unsaid when it starts a buffer)
                return  # not a stream, after a whole one
            fed = True
            if text:
                yield text
            if not decompressor.eof:
                if decompressor.needs_input:
                    break
                data = b""  # more text of the data given: the next `MAX_TEXT_BYTES` of it
                continue
            data = decompressor.unused_data
            decompressor, fed, after_stream = bz2.BZ2Decompressor(), False, True
    if fed and not decompressor.eof:
        raise EOFError("Compressed file ended before the end-of-stream marker was reached")
