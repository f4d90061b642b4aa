"""Storage benchmark: bytes per game of `games/`, `plies/` and the whole lake, beside the source `.pgn.zst`
at zstd -19, on real lichess games only (never the bench dump, whose repeated games compress unrealistically).

    python bench/bench_storage.py [INPUT ...]

Default inputs: tests/data/lichess_2025-05_sample.pgn.zst and ../shared/corpora/lichess/*.pgn (today the
same 438 games: the loader keeps one copy, the source counts one). Each input is loaded into a fresh lake
by the real loader; then:
  - the lake as written: every Parquet file, per table and in all (small inputs pay each file's footer, ~15
    KB, once per partition: a month of lichess is 1M-game files, where footers vanish);
  - the same rows rewritten as one file per table (the steady state of big files), per column family, and
    without its per-file constants (footer, dictionary pages), which a month's files spread over 20,000
    games a row group;
  - layout 1's `games` for comparison: the same games with every `san` filled back (`_core.fill_san`) and no
    `game_key`, as one file.
The source is the games' decompressed text recompressed with zstd -19. Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import zstandard

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's warehouse, when run as a script

from bench_load import run_measured  # noqa: E402  (bench/ is on the path of a script run from it)

from warehouse import _core  # noqa: E402
from warehouse.lake.location import Lake  # noqa: E402
from warehouse.lake.parquet import open_parquet_writer  # noqa: E402

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


def one_file(table: pa.Table) -> tuple[int, Counter[str], int]:
    """Bytes of `table` written as one file with the lake's settings, per top-level column, and of its
    per-file constants: the footer and the dictionary pages (a row group's, whatever its games)."""
    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake.open(tmp)
        writer = open_parquet_writer(lake, "t.parquet", table.schema)
        writer.write_table(table, row_group_size=max(table.num_rows, 1))
        writer.close()
        meta = pq.read_metadata(Path(tmp) / "t.parquet")
        size = (Path(tmp) / "t.parquet").stat().st_size
    families: Counter[str] = Counter()
    constants = meta.serialized_size
    for group in range(meta.num_row_groups):
        for column in range(meta.num_columns):
            chunk = meta.row_group(group).column(column)
            if chunk.has_dictionary_page:
                constants += chunk.data_page_offset - chunk.dictionary_page_offset
            path = chunk.path_in_schema.replace(".list.element", "").replace(".key_value", "")
            parts = path.split(".")
            family = ".".join(parts[:2]) if parts[0] == "moves" else parts[0]
            families[family] += chunk.total_compressed_size
    return size, families, constants


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
        command = [sys.executable, "-m", "loaders.pgn2parquet", *map(str, inputs), "--lake", str(lake)]
        run_measured([*command, "--progress", "never"])
        games, plies = table_of(lake, "games"), table_of(lake, "plies")
        n = games.num_rows
        written = {
            name: sum(f.stat().st_size for f in (lake / name).rglob("*.parquet"))
            for name in ("games", "plies")
        }
        files = {name: len(list((lake / name).rglob("*.parquet"))) for name in ("games", "plies")}
    source = source_bytes(inputs)
    games_one, games_families, games_constants = one_file(games)
    plies_one, plies_families, plies_constants = one_file(plies)
    layout1 = pa.Table.from_batches([pa.record_batch(_core.fill_san(b)) for b in games.to_batches()])
    layout1_one, _, _ = one_file(layout1.drop_columns(["game_key"]))

    print(f"{n} games from {', '.join(p.name for p in inputs)}; source at zstd -19: {source / n:.0f} B/game")
    print(f"{'':34} {'B/game':>8} {'x source':>9}")

    def line(label: str, size: int) -> None:
        print(f"{label:34} {size / n:8.0f} {size / source:9.2f}")

    line(f"games/ as written ({files['games']} files)", written["games"])
    line(f"plies/ as written ({files['plies']} files)", written["plies"])
    line("lake as written", written["games"] + written["plies"])
    line("games, one file", games_one)
    line("plies, one file", plies_one)
    line("lake, one file per table", games_one + plies_one)
    # What a month's files tend to: on the 1M-game bench lake (48 row groups a table) footers took
    # 0.43 B/game and dictionary pages 0.44; here a row group holds 438 games.
    line("  without footers, dictionary pages", games_one + plies_one - games_constants - plies_constants)
    line("layout 1 games (all SAN), one file", layout1_one)
    print("\nper column family, one file per table (B/game):")
    for table, families in (("games", games_families), ("plies", plies_families)):
        for family, size in families.most_common():
            if size / n >= 0.5:
                print(f"  {table}.{family:28} {size / n:8.1f}")


if __name__ == "__main__":
    main()
