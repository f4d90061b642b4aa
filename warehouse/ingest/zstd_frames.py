"""The frames of a `.zst` file, found from their headers alone (RFC 8878): where each starts, its
compressed size, and its decompressed size. lichess publishes its dumps in many frames, which is what
lets a cluster load read one month on many executors (`warehouse.ingest.spark_load`): a frame can be
decompressed without the ones before it.

Reading the headers costs one small read per block (at most 128 KiB of data each), not a decompression.
"""

from __future__ import annotations

import os
from typing import BinaryIO, NamedTuple, Protocol

ZSTD_MAGIC = 0xFD2FB528
# Skippable frames (any magic 0x184D2A50..5F) carry no data: skipped.
SKIPPABLE_MAGIC, SKIPPABLE_MASK = 0x184D2A50, 0xFFFFFFF0
_FCS_BYTES = (0, 2, 4, 8)  # by Frame_Content_Size_flag (0: one byte if Single_Segment, else absent)
_DICT_BYTES = (0, 1, 2, 4)


class Frame(NamedTuple):
    offset: int  # where the frame starts in the file
    size: int  # compressed bytes
    content_size: int  # decompressed bytes


def zstd_frames(path: str) -> list[Frame] | None:
    """The file's zstd frames in order; None when it is not zstd, a frame does not state its
    decompressed size, or the file ends inside a frame (it is then read as a whole, as a local load
    reads it)."""
    frames = []
    with open(path, "rb") as f:
        end = f.seek(0, 2)
        f.seek(0)
        while magic := f.read(4):
            offset = f.tell() - 4
            number = int.from_bytes(magic.ljust(4, b"\0"), "little")
            if number & SKIPPABLE_MASK == SKIPPABLE_MAGIC:
                f.seek(int.from_bytes(f.read(4), "little"), 1)
                continue
            header = _header(f) if number == ZSTD_MAGIC else None
            if header is None:
                return None
            content_size, checksum = header
            _skip_blocks(f)
            f.seek(4 if checksum else 0, 1)
            if f.tell() > end:
                return None
            frames.append(Frame(offset, f.tell() - offset, content_size))
    return frames or None


def _header(f: BinaryIO) -> tuple[int, bool] | None:
    """Reads a frame header after its magic number: its Frame_Content_Size (None when not stated) and
    whether a checksum ends the frame."""
    descriptor = f.read(1)
    if not descriptor:
        return None
    fcs_flag, single_segment = descriptor[0] >> 6, (descriptor[0] >> 5) & 1
    checksum, dict_flag = (descriptor[0] >> 2) & 1, descriptor[0] & 3
    f.seek((0 if single_segment else 1) + _DICT_BYTES[dict_flag], 1)  # Window_Descriptor, Dictionary_ID
    fcs_bytes = _FCS_BYTES[fcs_flag] or (1 if single_segment else 0)
    if not fcs_bytes:
        return None
    value = int.from_bytes(f.read(fcs_bytes), "little")
    return (value + 256 if fcs_bytes == 2 else value), bool(checksum)


def _skip_blocks(f: BinaryIO) -> None:
    """Moves past a frame's blocks (to its checksum, if any)."""
    while True:
        header = f.read(3)
        if len(header) < 3:
            return
        number = int.from_bytes(header, "little")
        last, kind, size = number & 1, (number >> 1) & 3, number >> 3
        f.seek(1 if kind == 1 else size, 1)  # an RLE block holds one byte
        if last:
            return


def starts_zstd(head: bytes) -> bool:
    """Whether `head`, a file's first 4 bytes, opens a zstd stream: a frame, or a skippable frame (pzstd
    writes one first), which the decoder skips (as the Rust core's `input::starts_zstd` reads them)."""
    number = int.from_bytes(head[:4].ljust(4, b"\0"), "little")
    return number == ZSTD_MAGIC or number & SKIPPABLE_MASK == SKIPPABLE_MAGIC


def frame_parts(path: str, part_bytes: int) -> list[tuple[int, int, int]]:
    """A multi-frame zstd file's parts of whole frames, each at least `part_bytes` decompressed (but the
    last): (raw offset, decompressed start, decompressed end) each; none for one part, or another file."""
    frames = zstd_frames(path) if os.path.isfile(path) else None
    parts: list[tuple[int, int, int]] = []
    start = size = raw = 0
    for n, frame in enumerate(frames or []):
        if size == 0:
            raw = frame.offset
        size += frame.content_size
        if size >= part_bytes or n == len(frames or []) - 1:
            parts.append((raw, start, start + size))
            start, size = start + size, 0
    return parts if len(parts) > 1 else []


class PartRead(Protocol):
    """A part read by a reader of frames (`PgnReader(frames=)`, or a Spark task's report): where its first
    game started and where it stopped (None: at the input's end), and its damage."""

    @property
    def first_game(self) -> int | None: ...
    @property
    def stopped_at(self) -> int | None: ...
    @property
    def damage(self) -> str | None: ...


def input_goes_on(before: PartRead) -> bool:
    """Whether the parts after `before` hold games of the input: not when it ended or was damaged there."""
    return before.damage is None and before.stopped_at is not None


def starts_where_stopped(before: PartRead, part: PartRead) -> bool:
    """Whether `part` began with the game the part before stopped at; if not, it guessed its first game
    wrong and is read again, told where to start."""
    return part.first_game == before.stopped_at
