"""Types of `warehouse._core`, the Rust core (crates/bgn-py): PGN in, Arrow batches of games out."""

import os
from collections.abc import Iterator
from typing import Any, Protocol

__version__: str

# Every kind a reject can have (`illegal_move`, `truncated`, `not_a_game`, …), in a stable order.
REJECT_KINDS: list[str]
# The longest game the reader keeps (`max_game_bytes` by default): longer ones are `too_large` rejects.
MAX_GAME_BYTES: int
# The largest NAG (`$255`): a NAG beyond is an `out_of_range` reject.
MAX_NAG: int
# The plies whose position key `plies.key` holds (`warehouse.lake.plies.KEYED_PLIES`).
KEYED_PLIES: int

def looks_like_json(head: bytes) -> bool:
    """Whether `head` (an input's first decompressed bytes) opens as JSON, as a PGN load refuses it: an object
    (`{` then `}` or a `"key":`), or an array (`[` then `]`, an object, an array, or a string, number or
    literal then `,` or `]`). PGN's first `[` opens a tag, its first `{` a comment of words."""

class PgnInputError(ValueError):
    """An input that cannot be read as PGN: missing, a directory, of an unknown format, or not PGN."""

class ArrowArray:
    """One Arrow array, exported once through the Arrow PyCapsule interface: `pyarrow.array(a)` takes it,
    and `pyarrow.record_batch(a)` a batch of games (a struct array)."""

    def __arrow_c_array__(self, requested_schema: Any = None) -> tuple[Any, Any]: ...

class GameBatches:
    """The games of one batch of a `PgnReader`: record batches of one schema, in order, exported once.
    `pyarrow.table(g)` takes them as a stream, without a copy (`__arrow_c_stream__`: several from a
    reader with `jobs` > 1, runs of its threads' batches); `pyarrow.record_batch(g)` as one record batch
    (a copy when there are several)."""

    def __arrow_c_array__(self, requested_schema: Any = None) -> tuple[Any, Any]: ...
    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any: ...

class ArrowArrayExportable(Protocol):
    """Anything of the Arrow PyCapsule interface: a pyarrow Array or RecordBatch, an `ArrowArray`…"""

    def __arrow_c_array__(self, requested_schema: Any = None) -> tuple[Any, Any]: ...

def game_keys(ids: ArrowArrayExportable) -> ArrowArray:
    """The int64 `game_key` of each game id of `ids` (a utf8 array), as the loader computes it: a lichess
    id's base-62 value (digits in ASCII order: keys sort like ids, 0 <= key < 62**8); a content id's 64 bits
    with the top bit set (always negative).

    :raises ValueError: for a null, or an id that is neither 8 characters of [0-9A-Za-z] nor 16 lowercase
        hex digits.
    :raises TypeError: when `ids` is not an Arrow array of strings."""

def fill_san(games: ArrowArrayExportable) -> ArrowArray:
    """`games` (a record batch of lake games holding `moves`, `start_fen`, `variant`, and `variations` and
    `game_id` when it has them) with every null `san`, in `moves` and in `variations[].moves`, set to the SAN
    the position gives (`+`/`#` included), replaying each game from its squares by the rules `variant` names
    (`Chess960`: Chess960 castling; `Crazyhouse`, `Atomic`…: lichess's variants, a drop's null `f` included;
    a variant's `#` is any winning move; a pawn drop is written `P@e4`). Same schema; the other columns are
    passed on without a copy (`pyarrow.record_batch(fill_san(batch))`).

    :raises ValueError: for a move no legal move matches (a damaged lake: the message names the game and the
        ply), an unreadable `start_fen`, an unknown `variant`, or a batch without the columns needed.
    :raises TypeError: when `games` is not a record batch."""

def pgn_texts(games: ArrowArrayExportable) -> ArrowArray:
    """The PGN of each game of `games` (a record batch of lake games with their SAN filled: `fill_san`), as
    `warehouse/exports/pgn.py` describes it, each ending in a blank line: a large_string array whose data
    buffer is the batch's PGN, game after game (`pyarrow.array(pgn_texts(batch))`).

    :raises ValueError: for a batch without the columns needed, or a null `san`.
    :raises TypeError: when `games` is not a record batch."""

def json_lines(games: ArrowArrayExportable) -> ArrowArray:
    """The BGN JSON line of each game of `games` (a record batch of lake games with their partition's
    `type`), as `warehouse/exports/bgn_json.py` describes it, each ending in a newline: a large_string array
    whose data buffer is the lines, one after the other.

    :raises ValueError: for a batch without the columns needed.
    :raises TypeError: when `games` is not a record batch."""

def study_documents(games: ArrowArrayExportable, fen: bool) -> tuple[ArrowArray, ArrowArray]:
    """`(documents, game_ids)`: the study JSON document of each game of `games` (a record batch of lake games
    with their SAN filled: `fill_san`), as `warehouse/exports/study.py` describes it, each ending in a
    newline, and the `game_id` each writes: two large_string arrays (the documents' data buffer is the
    batch's, one after the other). `fen`: each move with the position after it, as python-chess's
    `board.fen(en_passant="fen")` writes it.

    :raises ValueError: for a batch without the columns needed, or a null SAN.
    :raises TypeError: when `games` is not a record batch."""

def position_keys(games: ArrowArrayExportable, keyed_plies: int) -> tuple[ArrowArray, ArrowArray]:
    """`(plies, finals)` of `games` (a record batch holding `moves`, `start_fen`, `variant`; `game_id` for
    messages), rebuilt from the moves' squares by XOR updates: `plies` (int64, aligned with
    `games.column("moves").flatten()`) holds the PolyGlot Zobrist key of the position before each move for
    the first `keyed_plies` plies of each game, null after; `finals` (int64) the key of each game's final
    position. Keys are PolyGlot's unsigned 64 bits read as signed; games of variants other than `Standard`
    and `Chess960` get nulls.

    :raises ValueError: for a move its position does not allow (a damaged lake: the message names the game
        and the ply), an unreadable `start_fen`, or a batch without the columns needed.
    :raises TypeError: when `games` is not a record batch."""

def derive_plies(games: ArrowArrayExportable, openings: ArrowArrayExportable) -> ArrowArray:
    """Stored games (a record batch holding `moves`, `start_fen`, `variant`, `game_key`, `tc_base`,
    `tc_inc`, `mate`, `has_eval`; `game_id` for messages) as a `PgnReader` given `openings` emits them: the
    batch without its position columns and `plies` if it had them, then `final_key`, `opening_eco`,
    `opening_name`, `opening_code` (the deepest position of the game, final one included, that `openings`
    names), the material columns `white_castled`, `white_castle`, `black_castled`, `black_castle`,
    `middlegame_ply`, `endgame_ply`, `endgame_material`, `final_material` (`crates/bgn-core/src/material.rs`)
    and `plies` (a list per game of `ply`, `think`, `mates`, `analysed`, `variant`, `key`, `material`,
    `phase`: `warehouse.lake.plies`), derived by the one builder the reader feeds, from a replay of the
    stored squares. `openings`: a record batch of `key` (int64, sorted), `eco`, `name`, `code`.

    :raises ValueError: as `position_keys` does, or for a batch or `openings` without the columns needed.
    :raises TypeError: when `games` or `openings` is not a record batch."""

def find_position(games: ArrowArrayExportable, key: int, from_ply: int) -> ArrowArray:
    """For each game of `games` (as for `position_keys`), the first ply index >= `from_ply` whose position
    before the move has the PolyGlot key `key` (signed int64), `n_plies` for the final position; null when
    no position from `from_ply` on has it (an int32 array).

    :raises ValueError: as `position_keys` does."""

def fen_key(fen: str, chess960: bool = False) -> int:
    """The PolyGlot Zobrist key of `fen`'s position (signed int64, as the lake stores keys), by the same
    rules as `position_keys`; `chess960` reads its castling rights as Chess960's (Shredder or X-FEN letters).

    :raises ValueError: for a FEN that is not a legal position."""

class BgnReader:
    """The BGN games of one JSON input (`source_name`, their `source_file`), replayed from their lines'
    fields into batches of the lake's games, one partition a batch, as `PgnReader` cuts them (`batch_games`,
    `openings` as its): no PGN text (crates/bgn-core/src/json_games.rs)."""

    def __init__(
        self, source_name: str, batch_games: int | None = None, openings: ArrowArrayExportable | None = None
    ) -> None: ...
    def block(
        self, data: bytes, start: int, end: int, whole: bool, limit: int, raw_limit: int, offset: int
    ) -> tuple[int, list[tuple[int, int, int, str, str | None]], list[tuple[int, int, int]]]:
        """The lines of `data[start:end]` (or one document, `whole`), `data[start]` being at `offset` in the
        input: `(written, refused, studies)`. `written` the games replayed and written to their partitions'
        batches (their `source_offset` the line's in the input, their `game_id` the line's `id` when the
        lake can keep it); `refused` the lines refused (offset, length, line, reject kind, reason: None for
        a line that is not JSON, whose reason Python's JSON reader words), a field's type or range, the
        replay's rejects (an illegal move…) and the games whose moves replay to other fields than the line
        gives (`disagrees`); `studies` the lines holding a study document (offset, length, line), left to
        the caller. Offsets are from `data[start]`, lines counted from 1. A line longer than `limit` bytes
        is refused (`too_large`) unless its first `raw_limit` bytes are blank."""
    def full_batches(self) -> list[tuple[Partition, GameBatches]]:
        """The games of the partitions full now (by games or bytes), as `PgnReader` hands them."""
    def finish(self) -> list[tuple[Partition, GameBatches]]:
        """The games of every partition: at the input's end."""

def study_lines(
    data: bytes, start: int, places: list[tuple[int, int, int]]
) -> tuple[bytes, list[tuple[int, int, int, int, str | None]], list[tuple[int, int, int, str, str | None]]]:
    """The study documents at `places` in `data[start:]` (offset, length, line: `BgnReader.block`'s
    `studies`) as PGN for the reader: `(pgn, made, refused)`. `pgn` the games' PGN one after the other, tags
    in the document's order (crates/bgn-core/src/study_json.rs); `made` the games (offset, length, line,
    start of the game's PGN in `pgn`, `game_id` when the lake can keep it as the game's id); `refused` the
    documents refused (offset, length, line, reject kind, reason: None for a document that is not JSON).

    :raises ValueError: for a place past the end of `data`."""

def line_breaks(data: bytes, end: int) -> int:
    """`data.count(b"\\n", 0, end)`, faster."""

def is_tag_name(name: str) -> bool:
    """Whether `name` is a tag name the lake keeps: python-chess's grammar, `[A-Za-z0-9][A-Za-z0-9_+#=:-]*`
    (the load drops a tag line of another name, as python-chess does)."""

class BookCounter:
    """Counts an opening book of the moves of each standard game's first `max_ply` plies over a lake's
    files, replaying them from the plies' move columns: a row per (position key, move), and per position
    the games that ended in it. File after file, `start_file` with all its games (which count),
    `add_moves` with its plies' `f`, `t`, `promote` in row order (in as many batches as needed) and
    `end_file`; `book_rows` merges counters. A ply's game is the one whose plies' rows (`n_plies` each, in
    file order) hold it. Holds at most `memory` bytes of rows (at least 16 rows), spilling them sorted to
    `<spill_dir>/<name>-N.run` when full. Calls release the GIL.

    :raises ValueError: for batches without the columns needed, and moves that do not fit their games
        (more or fewer rows than the games' plies, a move its position does not allow)."""

    def __init__(self, max_ply: int, memory: int, spill_dir: str | os.PathLike[str], name: str) -> None: ...
    def start_file(self, games: ArrowArrayExportable) -> None:
        """A file's games, all of them in file order, a record batch: `n_plies` (int32), `game_key`,
        `counted` (bool: whether its moves count), and for those counted `result` (`W`, `D`, `B`, else
        unknown), `elo_sum` (int32: White's Elo + Black's, null unless both known), `date_ms` (int64),
        `start_fen`."""

    def add_moves(
        self, f: ArrowArrayExportable, t: ArrowArrayExportable, promote: ArrowArrayExportable
    ) -> None:
        """The next rows of the file's plies: their `f`, `t` and `promote` columns (dictionaries with int32
        keys, as pyarrow's `read_dictionary` gives them, read key by key; other layouts coded whole)."""

    def end_file(self) -> None:
        """Ends the file, checking that its plies were as many as its games' (`start_file` and `book_rows`
        end a file left open)."""

class BookRows:
    """The merged rows of a book, in record batches (`ArrowArray`s) of whole positions: `key`, `fen` (the
    position's, without move counters), `uci`, `san`, `white_wins`, `draws`, `black_wins`, `games`, `rated`,
    `mean_rating`, `first_date`, `last_date`, and the position's totals `position_white_wins`,
    `position_draws`, `position_black_wins`, `position_games` (the games that stood in it: played any move
    from it, or ended there). Sorted by key (signed), then UCI.

    :raises ValueError: for a run that cannot be read, or a move that its position's board does not allow."""

    def __iter__(self) -> Iterator[ArrowArray]: ...
    def __next__(self) -> ArrowArray: ...

def book_rows(
    counters: list[BookCounter], min_games: int, spill_dir: str | os.PathLike[str], batch_rows: int
) -> BookRows:
    """The rows of the book `counters` counted (each can count no more), their runs merged (runs merged
    into longer ones first are written to `spill_dir`): a row is kept when it and its position have at
    least `min_games` games."""

# `(type, year, month)` of a batch's games.
Partition = tuple[str, int, int]
# `(source_offset, source_length, kind, reason, raw_text)`; `raw_text` holds at most 64 KiB of the game.
Reject = tuple[int, int, str, str, str]

class PgnReader:
    """Reads a PGN input (a path, or `-` for standard input; plain, zstd, bzip2 or gzip).

    Iterating yields `(partition, batch, rejects)`: `partition` is None for a batch of rejects alone.
    `jobs` worker threads parse and replay, beside one that decompresses and frames (1: the
    single-threaded reader, on the thread that iterates, or with `own_thread` on a thread of its own, two
    batches ahead at most); the batches, rows and rejects are the same for any `jobs`.

    `frames=(raw_offset, base, end)` reads a part of a multi-frame zstd file, for one of several readers
    (a Spark task): from its byte `raw_offset` (where a frame starts), whose decompressed text starts at
    byte `base` of the whole; offsets are the whole's. A game belongs to the part where it starts: the
    reader skips the end of a game begun before the part (up to `first_game`, where its first game
    starts, when known; else up to the first game opening with a tag) and reads on past `end` to finish
    its last one; `first_game` and `stopped_at` then tell where it started and stopped.

    `openings` (the chess-openings table, as `derive_plies` takes it): each batch also holds its games'
    position columns and their plies, as `derive_plies` gives them, derived from the reader's replay.

    `checksum=False`: the input's SHA-256 is not taken (`sha256` stays None), for a text nobody records
    (a JSON import's temporary PGN). `source_san=False`: every move's `san` is null, the source's SAN
    neither compared with the position's nor kept (as the BGN import replays its lines: `BgnReader`)."""

    def __init__(
        self,
        path: str,
        source_name: str | None = None,
        batch_games: int | None = None,
        batch_bytes: int | None = None,
        max_game_bytes: int | None = None,
        jobs: int = 1,
        frames: tuple[int, int, int] | None = None,
        first_game: int | None = None,
        openings: ArrowArrayExportable | None = None,
        own_thread: bool = False,
        checksum: bool = True,
        source_san: bool = True,
    ) -> None: ...
    def __iter__(self) -> Iterator[tuple[Partition | None, GameBatches, list[Reject]]]: ...
    def __next__(self) -> tuple[Partition | None, GameBatches, list[Reject]]: ...
    @property
    def compression(self) -> str:
        """`pgn`, `zstd`, `bzip2` or `gzip`: what the input's first bytes say it is."""
    @property
    def input_size(self) -> int | None:
        """Size of the raw input in bytes (None for standard input and pipes)."""
    @property
    def raw_bytes_read(self) -> int:
        """Raw (compressed) bytes read so far: for progress."""
    @property
    def games_seen(self) -> int: ...
    @property
    def games_written(self) -> int: ...
    @property
    def games_rejected(self) -> int: ...
    @property
    def sha256(self) -> str | None:
        """SHA-256 of the raw input (hex), once it has been read to the end."""
    @property
    def damage(self) -> str | None:
        """Why the input ended early (damaged compressed data), once it has been read to the end."""
    @property
    def first_game(self) -> int | None:
        """A reader of frames: where its first game starts, once read to the end."""
    @property
    def stopped_at(self) -> int | None:
        """A reader of frames: where the game after its part starts (None: it read to the input's end)."""
