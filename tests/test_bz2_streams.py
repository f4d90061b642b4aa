"""bz2 input decompressed a stream a thread (warehouse/ingest/bz2_streams.py): the same text as Python's
`bz2` reads from the same bytes (the oracle), whatever the streams, false stream starts, damage or data
after the last stream."""

from __future__ import annotations

import bz2
import io
import random
import re

import pytest

from warehouse.ingest import bz2_streams

TEXT = b"".join(b'{"moves": [], "n": %d, "pad": "%s"}\n' % (n, b"x" * (n % 97)) for n in range(40_000))


def streams(text: bytes, size: int) -> bytes:
    """`text` as concatenated bz2 streams of `size` bytes of text each, as output.Bz2Writer writes it."""
    return b"".join(bz2.compress(text[i : i + size]) for i in range(0, len(text), size))


def read(data: bytes, jobs: int = 3) -> bytes:
    return b"".join(bz2_streams.decompressed(io.BufferedReader(io.BytesIO(data), 1 << 16), jobs))


@pytest.mark.parametrize("size", [1 << 30, 100_000, 7_000])
def test_streams_read_as_bz2_reads_them(size: int) -> None:
    data = streams(TEXT, size)
    assert read(data) == bz2.decompress(data) == TEXT
    assert read(data, jobs=1) == TEXT


def test_false_stream_starts_fall_back_to_one_decompressor(monkeypatch: pytest.MonkeyPatch) -> None:
    # Any byte 0x5a (`Z`) taken for a stream's start: most pieces are no whole stream.
    monkeypatch.setattr(bz2_streams, "STREAM_START", re.compile(rb"Z"))
    data = streams(TEXT, 50_000)
    assert read(data) == TEXT


def test_a_stream_longer_than_the_bound_is_read_on_serially(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bz2_streams, "MAX_STREAM_BYTES", 10_000)
    monkeypatch.setattr(bz2_streams, "READ_BYTES", 4_096)
    data = streams(TEXT, 10_000) + bz2.compress(TEXT) + streams(TEXT[:50_000], 10_000)
    assert read(data) == bz2.decompress(data)


def test_damage_raises_and_data_after_the_last_stream_is_ignored() -> None:
    """Cut or damaged data raises (`bz2` may drop a damaged stream after a whole one, unsaid: not here);
    data that is no stream after the last one is ignored, as `bz2` ignores it."""
    data = streams(TEXT, 100_000)
    with pytest.raises(EOFError):
        read(data[:-10])
    damaged = bytearray(data)
    rng = random.Random(5)
    for at in rng.sample(range(len(data) // 2, len(data)), 20):
        damaged[at] ^= 0xFF
    with pytest.raises(OSError):
        read(bytes(damaged))
    after = data + b"not bz2 at all"
    assert read(after) == bz2.BZ2File(io.BytesIO(after)).read() == TEXT


def test_a_stream_of_more_text_than_the_bound_comes_in_bounded_pieces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A few kB of bz2 can hold gigabytes of one byte repeated: no piece of text is longer than the bound
    (one piece of it all before), and the text is bz2's."""
    monkeypatch.setattr(bz2_streams, "MAX_TEXT_BYTES", 1 << 20)
    bomb = bz2.compress(b"\0" * (16 << 20))
    data = streams(TEXT, 100_000) + bomb + streams(TEXT[:50_000], 10_000)
    pieces = list(bz2_streams.decompressed(io.BufferedReader(io.BytesIO(data), 1 << 16), 2))
    assert max(map(len, pieces)) <= 1 << 20
    assert b"".join(pieces) == bz2.decompress(data)
