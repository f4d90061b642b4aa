"""The lake as study JSON (the schema of ../shared/specs/study-game.schema.json): one document a game,
variations nested in the moves they replace, to any depth.

Where the lake's fields go (docs/exports.md, "Study JSON"): the eight metadata fields; every other tag in
`metadata.other_tags`, in PGN export order; NAGs as `$n` in `annotations.tags`, with the free tags a
`[%tags [...]]` command of the move's comment keeps; evals as `+0.20` / `#-3`; clocks in
`annotations.clock`; the comment before the first move in `notes`; a line's starting comment as its
`label`. The Rust core writes a batch's documents (`_core.study_documents`, crates/bgn-core/src/
export_study.rs, with the PGN export's tags and the clock text): one buffer a batch, no Python object per
move.

With `fen`, each move also gets the position after it, as python-chess writes it
(`board.fen(en_passant="fen")`), replayed by the Rust core: the lake stores no positions.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pyarrow as pa

from warehouse import _core
from warehouse.exports.bgn_json import ExportResult, text_ends
from warehouse.exports.lake_scan import ALL, Batches, ScanProgress, Selection, scan, with_san
from warehouse.exports.pgn import COLUMNS
from warehouse.file_names import name_part
from warehouse.lake.location import Lake
from warehouse.output import output_location, staged_directory, write_blocks


def study_batches(
    lake: Lake, selection: Selection = ALL, fen: bool = False, progress: ScanProgress | None = None
) -> Iterator[tuple[pa.Array, pa.Array]]:
    """`(documents, game_ids)` of each batch of the selected games, in lake order: large_string arrays,
    each document ending in a newline (`_core.study_documents`). `progress`: as `lake_scan.scan` calls it.

    :raises LakeError: at once, when `lake` is not a lake or a non-empty `selection` matches none of its
        partitions.
    """
    return _documents(scan(lake, COLUMNS, selection, progress=progress), fen)


def _documents(batches: Batches, fen: bool) -> Iterator[tuple[pa.Array, pa.Array]]:
    for _, batch in with_san(batches):
        documents, ids = _core.study_documents(batch, fen)
        yield pa.array(documents), pa.array(ids)


def study_documents(lake: Lake, selection: Selection = ALL, fen: bool = False) -> Iterator[tuple[str, str]]:
    """`(game_id, study JSON text)` of every selected game, in lake order (see `study_batches`)."""
    batches = study_batches(lake, selection, fen)
    return (
        (game_id, text[:-1])
        for documents, ids in batches
        for game_id, text in zip(ids.to_pylist(), documents.to_pylist(), strict=True)
    )


def file_name(game_id: str, taken: set[str]) -> str:
    """`<game_id>.json`, its id made a safe, bounded part of a file name (`warehouse.file_names`), unique
    among `taken`."""
    stem = name_part(game_id, "game")
    name, n = f"{stem}.json", 1
    while name in taken:
        n += 1
        name = f"{stem}-{n}.json"
    taken.add(name)
    return name


def export_study(
    lake: Lake,
    out: str | os.PathLike[str],
    lines: bool = False,
    selection: Selection = ALL,
    fen: bool = False,
    progress: ScanProgress | None = None,
) -> ExportResult:
    """Writes the selected games of `lake` as study JSON: one `<game_id>.json` a game in the directory
    `out` (empty or new, published whole, as the BGN export's), or with `lines` one document a line in the
    file `out` (`.bz2`/`.zst` compressed; `-`: standard output), which appears only when complete.
    `fen`: each move with the position after it. `progress`: as `lake_scan.scan` calls it.

    :raises OutputError: when `out` exists (a file) or holds files, is inside `lake`, or another export is
        writing it.
    :raises LakeError: when `lake` is not a lake, or a non-empty `selection` matches none of its partitions.
    """
    batches = study_batches(lake, selection, fen, progress)  # the lake's errors before any output is made
    result = ExportResult()
    if lines:
        blocks = ((len(documents), document_bytes(documents)) for documents, _ in batches)
        result.games, result.bytes, path = write_blocks(out, blocks, lake)
        result.files += [path] if path else []
        return result
    fs, path = output_location(out, lake)
    staging = staged_directory(fs, path, str(out))
    try:
        taken: set[str] = set()
        for documents, ids in batches:
            data, ends = document_bytes(documents), text_ends(documents)
            for n, game_id in enumerate(ids.to_pylist()):
                name = file_name(game_id, taken)
                text = bytes(data[ends[n] - ends[0] : ends[n + 1] - ends[0] - 1])  # without its newline
                staging.write(name, text)
                result.games += 1
                result.bytes += len(text)
                result.files.append(f"{path}/{name}")
        staging.publish()
    except BaseException:
        staging.discard()
        raise
    return result


def document_bytes(documents: pa.Array) -> memoryview:
    """The documents of a `study_batches` array, one after the other, as they lie in its data buffer."""
    ends = text_ends(documents)
    return memoryview(documents.buffers()[2])[ends[0] : ends[-1]]
