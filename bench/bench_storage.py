"""Storage benchmark: bytes per game of `games/`, `plies/` and the whole lake, beside the source `.pgn.zst`
at zstd -19, on real lichess games only (never the bench dump, whose repeated games compress unrealistically).

    python bench/bench_storage.py [INPUT ...]

Default inputs: tests/data/lichess_2025-05_sample.pgn.zst and ../shared/corpora/lichess/*.pgn (today the
same 438 games: the loader keeps one copy, the source counts one). The inputs are loaded as a user would: one
loader command per input into one fresh lake, then `python -m warehouse.compact`; then:
  - the lake as written: every Parquet file, per table and in all;
  - each per-file cost, measured on the lake's files: the footer (of which the Arrow schema pyarrow stores
    in every file, `store_schema`, and the metadata of each row group), the dictionary pages, and, on the
    rows rewritten as one file, what the page checksums and the statistics take;
  - the same rows rewritten as one file per table (one row group), per column family, and its bytes a game
    without its footer: what a game costs whatever the file;
  - a month-sized partition, extrapolated: that cost a game plus the footers of files of `FILE_GAMES` games
    in row groups of `ROW_GROUP_GAMES` (of each kind, analysed and not: one more row group a file);
  - layout 1's `games` for comparison: the same games with every `san` filled back (`_core.fill_san`) and no
    `game_key`, as one file.
The source is the games' decompressed text recompressed with zstd -19. Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import zstandard

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's warehouse, when run as a script

from bench_load import run_measured  # noqa: E402  (bench/ is on the path of a script run from it)

from warehouse import _core  # noqa: E402
from warehouse.lake.location import Lake  # noqa: E402
from warehouse.lake.parquet import FILE_GAMES, ROW_GROUP_GAMES, open_parquet_writer  # noqa: E402

# The same 438 games today, twice: the loader and the source's size count them once.
DEFAULT_INPUTS = [
    ROOT / "tests" / "data" / "lichess_2025-05_sample.pgn.zst",
    *sorted((ROOT.parent / "shared" / "corpora" / "lichess").glob("*.pgn")),
]


def source_bytes(inputs: list[Path]) -> int:
    """The inputs' text (decompressed) recompressed with zstd -19, as lichess's dumps would hold it; an
    input whose text repeats an earlier one's counts once (the lake keeps its games once)."""
    texts: dict[bytes, None] = {}
    for path in inputs:
        data = path.read_bytes()
        compressed = path.suffix == ".zst"
        texts[zstandard.ZstdDecompressor().decompressobj().decompress(data) if compressed else data] = None
    return len(zstandard.ZstdCompressor(level=19).compress(b"".join(texts)))


def written(table: pa.Table, **settings) -> Path:
    """`table` written as one file, one row group, with the lake's settings (`settings` override them)."""
    tmp = Path(tempfile.mkdtemp())
    lake = Lake.open(str(tmp))
    writer = open_parquet_writer(lake, "t.parquet", table.schema, **settings)
    writer.write_table(table, row_group_size=max(table.num_rows, 1))
    writer.close()
    return tmp / "t.parquet"


class FileCosts(NamedTuple):
    """Bytes of the per-file constants of some Parquet files, in all."""

    files: int
    row_groups: int
    footer: int
    arrow_schema: int
    dictionary_pages: int

    @classmethod
    def of(cls, paths: list[Path]) -> FileCosts:
        files, groups, footer, schema, dictionary = len(paths), 0, 0, 0, 0
        for path in paths:
            meta = pq.read_metadata(path)
            groups += meta.num_row_groups
            footer += footer_bytes(path)
            schema += len((meta.metadata or {}).get(b"ARROW:schema", b""))
            for group in range(meta.num_row_groups):
                for column in range(meta.num_columns):
                    chunk = meta.row_group(group).column(column)
                    if chunk.has_dictionary_page:
                        dictionary += chunk.data_page_offset - chunk.dictionary_page_offset
        return cls(files, groups, footer, schema, dictionary)

    def per_row_group(self) -> float:
        """Footer bytes of a row group's metadata: the footer less the schema, spread over the groups."""
        return (self.footer - self.arrow_schema) / max(self.row_groups, 1)


def footer_bytes(path: Path) -> int:
    """The Parquet footer's length (the 4 bytes before the trailing `PAR1`)."""
    with open(path, "rb") as f:
        f.seek(-8, 2)
        return int.from_bytes(f.read(4), "little")


def one_file(table: pa.Table) -> tuple[int, Counter[str], int]:
    """Bytes of `table` written as one file with the lake's settings, per top-level column, and of its
    footer."""
    path = written(table)
    meta = pq.read_metadata(path)
    size = path.stat().st_size
    families: Counter[str] = Counter()
    for group in range(meta.num_row_groups):
        for column in range(meta.num_columns):
            chunk = meta.row_group(group).column(column)
            column_path = chunk.path_in_schema.replace(".list.element", "").replace(".key_value", "")
            parts = column_path.split(".")
            family = ".".join(parts[:2]) if parts[0] == "moves" else parts[0]
            families[family] += chunk.total_compressed_size
    footer = footer_bytes(path)
    shutil.rmtree(path.parent)
    return size, families, footer


def saved_without(table: pa.Table, **settings) -> int:
    """Bytes `table` as one file takes less with `settings` than with the lake's own."""
    with_them, without = written(table), written(table, **settings)
    saved = with_them.stat().st_size - without.stat().st_size
    shutil.rmtree(with_them.parent)
    shutil.rmtree(without.parent)
    return saved


def table_of(lake: Path, name: str) -> pa.Table:
    return (
        ds.dataset(lake / name, format="parquet", partitioning="hive")
        .to_table()
        .drop_columns(["type", "year", "month"])
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="*", type=Path, default=DEFAULT_INPUTS)
    inputs = [p for p in parser.parse_args().inputs if p.exists()]
    with tempfile.TemporaryDirectory() as tmp:
        lake = Path(tmp) / "lake"
        for path in inputs:  # one load per input, as a user adds files
            load = [sys.executable, "-m", "loaders.pgn2parquet", str(path), "--lake", str(lake)]
            run_measured([*load, "--progress", "never"])
        run_measured([sys.executable, "-m", "warehouse.compact", "--lake", str(lake)])
        games, plies = table_of(lake, "games"), table_of(lake, "plies")
        n = games.num_rows
        paths = {name: sorted((lake / name).rglob("*.parquet")) for name in ("games", "plies")}
        written = {name: sum(f.stat().st_size for f in found) for name, found in paths.items()}
        costs = {name: FileCosts.of(found) for name, found in paths.items()}
    source = source_bytes(inputs)
    games_one, games_families, games_footer = one_file(games)
    plies_one, plies_families, plies_footer = one_file(plies)
    layout1 = pa.Table.from_batches([pa.record_batch(_core.fill_san(b)) for b in games.to_batches()])
    layout1_one, _, _ = one_file(layout1.drop_columns(["game_key"]))

    print(f"{n} games from {', '.join(p.name for p in inputs)}; source at zstd -19: {source / n:.0f} B/game")
    print(f"{'':40} {'B/game':>8} {'x source':>9}")

    def line(label: str, size: float) -> None:
        print(f"{label:40} {size / n:8.0f} {size / source:9.2f}")

    line(f"games/ as written ({len(paths['games'])} files)", written["games"])
    line(f"plies/ as written ({len(paths['plies'])} files)", written["plies"])
    line("lake as written (loads, then compaction)", written["games"] + written["plies"])
    line("games, one file", games_one)
    line("plies, one file", plies_one)
    line("lake, one file per table", games_one + plies_one)
    per_game = games_one + plies_one - games_footer - plies_footer
    line("  a game, without the footers", per_game)
    # A month-sized partition: files of FILE_GAMES games, row groups of ROW_GROUP_GAMES, one more a file
    # for the other kind (analysed or not); each file pays its schema and each row group its metadata.
    groups = FILE_GAMES // ROW_GROUP_GAMES + 1
    month_file = sum(cost.arrow_schema + groups * cost.per_row_group() for cost in costs.values())
    line(
        f"  a month-sized partition ({FILE_GAMES // 1000:,}k-game files)",
        per_game + month_file * n / FILE_GAMES,
    )
    line("layout 1 games (all SAN), one file", layout1_one)

    print("\nper-file costs, the lake as written (bytes in all, and a file's or a row group's):")
    for name, cost in costs.items():
        print(
            f"  {name}: {cost.files} files, {cost.row_groups} row groups; footers {cost.footer:,} "
            f"(Arrow schema {cost.arrow_schema // max(cost.files, 1):,} a file, "
            f"{cost.per_row_group():,.0f} a row group); dictionary pages {cost.dictionary_pages:,} "
            f"({cost.dictionary_pages / max(cost.row_groups, 1):,.0f} a row group)"
        )
    print("what a setting takes, one file a table (bytes):")
    for label, settings in (
        ("Arrow schema in the footer (store_schema)", {"store_schema": False}),
        ("statistics (STATISTICS_COLUMNS)", {"write_statistics": False}),
        ("page checksums", {"write_page_checksum": False}),
    ):
        saved = [saved_without(table, **settings) for table in (games, plies)]
        print(f"  {label:44} games {saved[0]:7,}  plies {saved[1]:7,}")

    print("\nper column family, one file per table (B/game):")
    for table, families in (("games", games_families), ("plies", plies_families)):
        for family, size in families.most_common():
            if size / n >= 0.5:
                print(f"  {table}.{family:28} {size / n:8.1f}")


if __name__ == "__main__":
    main()
