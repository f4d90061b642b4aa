"""The commit records of `_loads/`: one typed record per operation, read back checked, and what the
committed records say about the lake.

Every operation writes one record (`_loads/<op>.json`, see `warehouse.lake.commit`): a `LoadRecord` for a
load, a `CompactRecord` for a compaction, an `UpgradeRecord` for a layout upgrade; each is a `Record` (the
files the operation adds and retires). `file_rows` lists the `games/` files an operation adds, `ply_rows`
their `plies/` twins (none in the records of layout 1). A record is JSON; `kind` says which class it is
(`load` when absent, as in the first lakes), and the
operation's id is keyed `load_id` for every kind, as it has been since the first lakes. Times are ISO 8601
in UTC with microseconds (`2025-05-01T12:00:00.000000+00:00`); records of older versions, with whole
seconds, read the same.

Reading checks that a record holds what the code reads from it (every field of its class with the right
type, the required ones present, file paths inside the lake, `load_id` equal to the file's name), so that
a damaged record is refused by name (`DamagedRecord`) instead of crashing a run. Keys the class does not
know are ignored (records of newer versions).
"""

from __future__ import annotations

import dataclasses
import json
import posixpath
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cached_property
from typing import Any, ClassVar

from warehouse.errors import DamagedRecord
from warehouse.lake.layout import LOADS, inside_lake, record_path
from warehouse.lake.location import Lake

# What a loader reads its input as: a load of one is never "already loaded" for the other.
PGN, JSON = "pgn", "json"
# The kinds of reject a JSON import adds to the reader's (ingest/json_files.py): not JSON, a bad field,
# moves that disagree with their replay.
JSON_REJECT_KINDS = ("not_json", "bad_field", "disagrees")

# Sorts records without a time (none are written today) first.
NO_TIME = datetime.min.replace(tzinfo=timezone.utc)


def now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(kw_only=True)
class Record:
    """What every operation commits: the files it adds (with their rows) and the files it retires."""

    KIND: ClassVar[str]

    load_id: str  # the operation's id, also the record's file name
    files: list[str] = field(default_factory=list)  # the `games/` files added
    file_rows: dict[str, int] = field(default_factory=dict)  # `games/` file → games
    ply_rows: dict[str, int] = field(default_factory=dict)  # its `plies/` twin → plies
    removes: list[str] = field(default_factory=list)  # files of both tables (and rejects) retired
    started: datetime | None = None
    finished: datetime | None = None
    seconds: float = 0.0

    def written(self) -> None:
        """Records what is known once the operation's files are staged: its `games/` files and its end."""
        self.files = list(self.file_rows)
        self.finished = now()
        self.seconds = round((self.finished - (self.started or self.finished)).total_seconds(), 3)

    def added_files(self) -> list[str]:
        """The files the operation adds to the lake."""
        return [*self.files, *self.ply_rows]

    def paths(self) -> list[str]:
        """Every path the record names, all of which must stay inside the lake."""
        return [*self.file_rows, *self.ply_rows, *self.files, *self.removes]

    def to_json(self) -> str:
        fields = {f.name: _encode(getattr(self, f.name)) for f in dataclasses.fields(self)}
        return json.dumps({"kind": self.KIND, **fields}, indent=2, ensure_ascii=False) + "\n"

    @staticmethod
    def from_json(text: str, name: str) -> Record:
        """The record in `text`, read from the file `<name>.json`.

        :raises ValueError: saying what is wrong with it (`DamagedRecord` adds where).
        """
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as e:  # not JSON, or nested beyond the parser
            raise ValueError(f"not JSON ({str(e).splitlines()[0] if str(e) else type(e).__name__})") from None
        if not isinstance(data, dict):
            raise ValueError(f"a JSON {type(data).__name__}, not an object")
        kind = data.get("kind", LoadRecord.KIND)
        cls = KINDS.get(kind) if isinstance(kind, str) else None
        if cls is None:
            raise ValueError(f"unknown kind {kind!r}")
        record = _from_dict(cls, data)
        if record.load_id != name:
            raise ValueError(f"load_id {record.load_id!r} differs from the file's name")
        if bad := next((p for p in record.paths() if not inside_lake(p)), None):
            raise ValueError(f"{bad!r} is not a path inside the lake")
        return record


@dataclass(kw_only=True)
class LoadedInput:
    """One input file of a load of several (`LoadRecord.inputs`): how it is known again (fingerprint,
    SHA-256) and what was read from it."""

    input: str
    fingerprint: str | None = None
    sha256: str | None = None
    compression: str = ""
    size: int | None = None
    games_seen: int = 0
    games_written: int = 0
    games_rejected: int = 0
    games_duplicate: int = 0
    damage: str | None = None


@dataclass(kw_only=True)
class LoadRecord(Record):
    """One load: what was read, written, rejected and skipped. A load of one input describes it in the
    fields `input` to `damage`; a load of several (a folder, a glob, several arguments: one commit) lists
    them in `inputs`, and those fields hold its totals (`input` says what was given, no checksum)."""

    KIND: ClassVar[str] = "load"

    games_seen: int
    games_written: int
    games_rejected: int
    games_duplicate: int = 0
    input: str = ""
    format: str = ""  # PGN or JSON; "" in the records of older versions (`input_format`)
    compression: str = ""
    size: int | None = None
    sha256: str | None = None
    fingerprint: str | None = None
    dedup: bool = True
    rejects_file: str | None = None
    rejects_by_kind: dict[str, int] = field(default_factory=dict)  # `_core.REJECT_KINDS` → count
    replaces: list[str] = field(default_factory=list)  # load ids this `--force` load retires
    damage: str | None = None
    dedup_seconds: float = 0.0
    loader_version: str = ""
    inputs: list[LoadedInput] = field(default_factory=list)

    def input_files(self) -> list[LoadedInput]:
        """The input files the load read, each with its fingerprint, checksum and counts."""
        if self.inputs:
            return self.inputs
        names = [f.name for f in dataclasses.fields(LoadedInput)]
        return [LoadedInput(**{name: getattr(self, name) for name in names})]

    def added_files(self) -> list[str]:
        return [*super().added_files(), *([self.rejects_file] if self.rejects_file else [])]

    def paths(self) -> list[str]:
        return [*super().paths(), *([self.rejects_file] if self.rejects_file else [])]

    def reconciles(self) -> bool:
        return self.games_seen == self.games_written + self.games_rejected + self.games_duplicate

    def input_format(self) -> str:
        """What the load read its input as. A record of an older version does not say: a JSON import
        (possibly of a PGN file, each game a `not_json` reject) tells itself by its plain input's
        compression `json` or by a kind of reject only JSON imports write; any other load was PGN's."""
        if self.format:
            return self.format
        json_kinds = set(JSON_REJECT_KINDS) & set(self.rejects_by_kind)
        return JSON if self.compression == JSON or json_kinds else PGN


@dataclass(kw_only=True)
class CompactRecord(Record):
    """Small files of partitions merged: `files` replace `removes`, same rows and content."""

    KIND: ClassVar[str] = "compact"

    content: dict[str, str] = field(default_factory=dict)  # new file → "<rows>:<content hash>"


@dataclass(kw_only=True)
class UpgradeRecord(Record):
    """A lake brought to layout `layout` (`loaders.upgrade`): `files` (with their `plies/` twins) replace
    `removes`, the same games in the same order; `layout_file` is the lake's new `_layout.json`,
    published with them."""

    KIND: ClassVar[str] = "upgrade"

    layout: int
    layout_file: str

    def added_files(self) -> list[str]:
        return [*super().added_files(), self.layout_file]

    def paths(self) -> list[str]:
        return [*super().paths(), self.layout_file]


@dataclass(kw_only=True)
class IndexRecord(Record):
    """The optional position index built (`warehouse.positions.index`): `index_files` (key-sorted) hold every
    position of the games of `covers` (`games/` file → games, in the order of the index's `file` column),
    `covers_file` the same list as a table for SQL (None in an index built before it), published last; it
    retires (`removes`) the index built before. `explorer_files`: the explorer's pre-aggregate of the
    positions many games reach (`warehouse.positions.aggregate`; none in an index built before it)."""

    KIND: ClassVar[str] = "index"

    index_files: list[str] = field(default_factory=list)
    covers: dict[str, int] = field(default_factory=dict)
    covers_file: str | None = None
    positions: int = 0
    explorer_files: list[str] = field(default_factory=list)

    def files_of_index(self) -> list[str]:
        """Every file of the index: its key files, its pre-aggregate, then its table of covered files."""
        return [*self.index_files, *self.explorer_files, *([self.covers_file] if self.covers_file else [])]

    def added_files(self) -> list[str]:
        return [*super().added_files(), *self.files_of_index()]

    def paths(self) -> list[str]:
        return [*super().paths(), *self.files_of_index()]


KINDS: dict[str, type[Record]] = {
    cls.KIND: cls for cls in (LoadRecord, CompactRecord, UpgradeRecord, IndexRecord)
}


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """The field types of a record class, resolved once: resolving them costs ~2 ms, and a load of many
    inputs reads every record once per input."""
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _from_dict(cls: type[Any], data: dict[str, Any]) -> Any:
    """An instance of the dataclass `cls` from its JSON object, each field checked (see `_decode`)."""
    hints = _hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        if f.name in data:
            values[f.name] = _decode(f.name, data[f.name], hints[f.name])
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ValueError(f"no {f.name!r}")
    return cls(**values)


def _encode(value: object) -> object:
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value.isoformat(timespec="microseconds") if isinstance(value, datetime) else value


def _decode(name: str, value: object, hint: Any) -> Any:
    """`value` as the type `hint` (the types records use), or a ValueError naming the field."""
    if _conforms(value, hint):
        return value
    element = typing.get_args(hint)[0] if typing.get_origin(hint) is list else None
    if isinstance(element, type) and dataclasses.is_dataclass(element) and isinstance(value, list):
        if not all(isinstance(v, dict) for v in value):
            raise ValueError(f"{name!r} is not a list of objects")
        return [_from_dict(element, v) for v in value]
    if _accepts(hint, datetime) and isinstance(value, str):
        try:
            time = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:  # every record is written in UTC; a time without an offset is taken as UTC too
            return time if time.tzinfo else time.replace(tzinfo=timezone.utc)
    raise ValueError(f"{name!r} is not {_shown(hint)}")


def _conforms(value: object, hint: Any) -> bool:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, arg) for arg in args)
    if origin is list:
        return isinstance(value, list) and all(_conforms(v, args[0]) for v in value)
    if origin is dict:
        return isinstance(value, dict) and all(
            _conforms(k, args[0]) and _conforms(v, args[1]) for k, v in value.items()
        )
    if hint is type(None):
        return value is None
    if hint is float:  # JSON writes 1.0 as 1
        return type(value) in (int, float)
    return type(value) is hint  # not isinstance: a bool is no count


def _accepts(hint: Any, wanted: type) -> bool:
    return hint is wanted or wanted in typing.get_args(hint)


def _shown(hint: Any) -> str:
    return hint.__name__ if isinstance(hint, type) else str(hint).replace("datetime.", "")


def read_record(lake: Lake, rel: str) -> Record:
    """The record at `rel`, checked (see the module's doc).

    :raises DamagedRecord: naming the file and what is wrong with it.
    """
    try:
        return Record.from_json(lake.read_text(rel), posixpath.basename(rel).removesuffix(".json"))
    except ValueError as e:  # UnicodeDecodeError too: not UTF-8
        problem = str(e) if not isinstance(e, UnicodeDecodeError) else f"not JSON ({e})"
        raise DamagedRecord(
            f"{lake.location}/{rel}: damaged record: {problem}; restore it, or move it out of "
            f"{LOADS}/ (its files then count as in no record)"
        ) from None


def write_record(lake: Lake, record: Record) -> None:
    """Writes `record` at once (see `Lake.write_text`): this is an operation's commit."""
    lake.write_text(record_path(record.load_id), record.to_json())


@dataclass(frozen=True)
class Records:
    """Every committed record of a lake, oldest first, and what follows from them."""

    all: list[Record]

    @classmethod
    def scan(cls, lake: Lake) -> tuple[Records, list[DamagedRecord]]:
        """The valid records, and an error for each damaged one."""
        records, damaged = [], []
        for info in lake.files(LOADS):
            if info.path.endswith(".json"):
                try:
                    records.append(read_record(lake, lake.relative(info.path)))
                except DamagedRecord as e:
                    damaged.append(e)
        records.sort(key=lambda r: r.finished or NO_TIME)
        return cls(records), damaged

    @classmethod
    def read(cls, lake: Lake) -> Records:
        """Every record; refuses a lake with a damaged one, as nothing can be written safely over it.

        :raises DamagedRecord: for the first damaged record.
        """
        records, damaged = cls.scan(lake)
        if damaged:
            raise damaged[0]
        return records

    @property
    def loads(self) -> list[LoadRecord]:
        """Loads whose games are in the lake: not replaced by a later `--force` load of the same input."""
        loads = [r for r in self.all if isinstance(r, LoadRecord)]
        replaced = {op for r in loads for op in r.replaces}
        return [r for r in loads if r.load_id not in replaced]

    def live_files(self) -> dict[str, int]:
        """Every data file the records say is in the lake, with its row count. A file name is never
        reused, so the order of the records does not matter."""
        return self._live(lambda r: r.file_rows)

    def live_plies(self) -> dict[str, int]:
        """Every `plies/` file the records say is in the lake, with its row count."""
        return self._live(lambda r: r.ply_rows)

    def _live(self, rows_of: Callable[[Record], dict[str, int]]) -> dict[str, int]:
        removed = {f for r in self.all for f in r.removes}
        return {f: rows for r in self.all for f, rows in rows_of(r).items() if f not in removed}

    def same_input(self, sha256: str | None, fp: str | None, input_format: str) -> list[LoadRecord]:
        """Live loads of this input read as `input_format` (PGN, JSON): by full checksum when known, else
        by fingerprint (to confirm)."""
        key = (input_format, "sha256", sha256) if sha256 else (input_format, "fingerprint", fp)
        return self._by_input.get(key, []) if key[2] else []

    @cached_property
    def _by_input(self) -> dict[tuple[str, str, str | None], list[LoadRecord]]:
        """The live loads by each of their inputs' checksum and fingerprint (a load of 10,000 files looks
        up each of them)."""
        index: dict[tuple[str, str, str | None], list[LoadRecord]] = {}
        for r in self.loads:
            for i in r.input_files():
                for key in (
                    (r.input_format(), "sha256", i.sha256),
                    (r.input_format(), "fingerprint", i.fingerprint),
                ):
                    loads = index.setdefault(key, [])
                    if not loads or loads[-1] is not r:
                        loads.append(r)
        return index
