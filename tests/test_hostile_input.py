"""Issue 16, the reader's side: inputs that used to lose games silently or hold unbounded memory.

Each test runs the real CLI (bounded in time and memory) or the Rust reader in-process, on inputs built
here whose expected contents are known from how they were built.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pytest
import zstandard
from support import load, make_games, one_line_error, read_games, read_records, read_rejects

from warehouse import _core

FULL = (
    '[Site "https://lichess.org/abcdefgh"]\n[Result "1-0"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n'
)
CUT_SHORT = "game cut short: the input ends before its result"


def is_cut(reason: str) -> bool:
    """A cut game's reason: no result marker, a comment or tag the end of the input left open, or (cut
    inside its first tag) too little left to be a game."""
    return reason.startswith(CUT_SHORT) or reason in (
        "unterminated comment",
        "unterminated tag",
        "no tags and no moves: not a game",
    )


def read_core(path: Path, **options: int) -> tuple[list[pa.RecordBatch], list[_core.Reject]]:
    """Every batch and reject of the Rust reader over `path`, in-process."""
    batches, rejected = [], []
    for _, batch, batch_rejects in _core.PgnReader(str(path), **options):
        batches.append(pa.record_batch(batch))
        rejected += batch_rejects
    return batches, rejected


# --- 1. a game cut at the end of the input is rejected, not stored as complete ---


def test_cut_game_then_the_whole_file(tmp_path: Path) -> None:
    """The issue's reproduction: the cut game is rejected; the complete file later stores the game whole."""
    full = tmp_path / "full.pgn"
    full.write_text(FULL)
    cut = tmp_path / "cut.pgn"
    cut.write_bytes(FULL.encode()[:72])
    lake = tmp_path / "lake"
    run = load([cut, full], lake)
    assert run.returncode == 0, run.stderr
    (reject,) = read_rejects(lake)
    assert reject["reason"].startswith(CUT_SHORT) and reject["kind"] == "truncated"
    assert (reject["source_offset"], reject["source_length"]) == (0, 72)
    (game,) = read_games(lake)
    assert game["n_plies"] == 7 and game["game_id"] == "abcdefgh"
    by_input = {Path(r["input"]).name: r for r in read_records(lake)}
    cut_load, full_load = by_input["cut.pgn"], by_input["full.pgn"]
    assert (cut_load["games_rejected"], cut_load["games_written"]) == (1, 0)
    assert (full_load["games_written"], full_load["games_duplicate"]) == (1, 0)


def test_every_cut_inside_the_last_game(tmp_path: Path) -> None:
    """Cut anywhere between the last game's first byte and its result marker: the games before it are kept,
    the cut one is rejected. Cut after its marker: every game is kept."""
    data = make_games(0, 3).encode()
    last = data.rindex(b"[Event")
    marker = re.search(rb"(1-0|0-1|1/2-1/2|\*)\s*$", data)
    assert marker is not None
    for cut in [*range(last + 1, marker.end(1), max(1, (marker.end(1) - last) // 40)), marker.end(1) - 1]:
        path = tmp_path / f"cut{cut}.pgn"
        path.write_bytes(data[:cut])
        batches, rejected = read_core(path)
        assert sum(b.num_rows for b in batches) == 2, cut
        ((offset, length, kind, reason, raw),) = rejected
        assert (offset, length) == (last, cut - last), cut
        assert raw == data[last:cut].decode(errors="replace")[: len(raw)] and raw, cut
        assert is_cut(reason), (cut, reason)
        assert kind in ("truncated", "unterminated_comment", "unterminated_tag", "not_a_game"), kind
    path = tmp_path / "whole.pgn"
    path.write_bytes(data[: marker.end(1)])
    batches, rejected = read_core(path)
    assert (sum(b.num_rows for b in batches), rejected) == (3, [])


def test_cut_at_a_frame_boundary_through_a_pipe(tmp_path: Path) -> None:
    """A multi-frame .zst download that stops at a frame boundary decompresses without error; the game the
    frame boundary cuts is rejected, also when the text arrives on standard input."""
    text = make_games(0, 20).encode()
    # Between two moves of a game: what is left reads as a legal, shorter game.
    middle = text.index(b"} ", text.index(b"1. ", text.index(b"[Event", len(text) // 2))) + 2
    first_frames = zstandard.ZstdCompressor().compress(text[:middle])
    lake = tmp_path / "lake"
    run = load(["-"], lake, stdin=zstandard.ZstdDecompressor().decompress(first_frames))
    assert run.returncode == 0, run.stderr
    (reject,) = read_rejects(lake)
    assert reject["reason"].startswith(CUT_SHORT), reject["reason"]
    assert len(read_games(lake)) == text[:middle].count(b"[Event") - 1


# --- 2. lichess ids only from game URLs ---

NOT_GAMES = [
    "https://lichess.org/training/61Lxt",
    "https://lichess.org/training/7Yz2B",
    "https://lichess.org/practice/checkmates/piece-checkmates-i/BJy6fEDf/fE4k21MW",
    "https://lichess.org/study/Tw3rqbgW/A1B2C3D4",
    "https://lichess.org/study/Tw3rqbgW/E5F6G7H8",
    "https://lichess.org/tutorial/nav",
    "https://lichess.org/broadcast/tata-steel-2024/round-1/AbCdEfGh",
    "https://lichess.org/broadcast/tata-steel-2024/round-2/AbCdEfGh",
    "https://lichess.org/analysis",
]
GAME_URLS = {
    "https://lichess.org/Qw3rTy7U": "Qw3rTy7U",
    "https://lichess.org/Zx9cVb2N/black": "Zx9cVb2N",
    "https://lichess.org/Lm4nOp6QaB1c": "Lm4nOp6Q",
    "https://lichess.org/Gh5jKl8M#42": "Gh5jKl8M",
}


def test_ids_only_from_game_urls(tmp_path: Path) -> None:
    sites = NOT_GAMES + list(GAME_URLS)
    moves = ["1. e4 e5 *", "1. d4 d5 *", "1. c4 c5 *", "1. Nf3 Nf6 *", "1. g3 g6 *", "1. b3 b6 *"]
    path = tmp_path / "sites.pgn"
    games = (f'[Site "{site}"]\n[Round "{i}"]\n\n{moves[i % len(moves)]}\n\n' for i, site in enumerate(sites))
    path.write_text("".join(games))
    lake = tmp_path / "lake"
    run = load([path], lake)
    assert run.returncode == 0, run.stderr
    (record,) = read_records(lake)
    assert (record["games_written"], record["games_duplicate"]) == (len(sites), 0)
    ids = {g["site"]: g["game_id"] for g in read_games(lake)}
    for site in NOT_GAMES:
        assert re.fullmatch(r"[0-9a-f]{16}", ids[site]), (site, ids[site])
    for site, game_id in GAME_URLS.items():
        assert ids[site] == game_id


# --- 3. text that is not PGN ---


@pytest.mark.parametrize("name", ["README.md", "Cargo.toml", "docs/schema.md", "docs/bgn.schema.json"])
def test_text_that_is_not_pgn(name: str, repo: Path, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    one_line_error(load([repo / name], lake), name, "not PGN")
    assert not list(lake.glob("_loads/*.json")) and not list(lake.glob("games/**/*.parquet"))


def test_noise_with_a_result_marker_is_not_a_game(tmp_path: Path) -> None:
    """A stretch of prose between games that happens to hold a `*` or `1-0` is rejected, not stored as an
    empty game."""
    noise = "\nThis file was made by hand. Score: 1-0 to me * and more.\n\n"
    path = tmp_path / "noisy.pgn"
    path.write_text(make_games(0, 2) + noise + make_games(2, 2))
    lake = tmp_path / "lake"
    assert load([path], lake).returncode == 0
    assert len(read_games(lake)) == 4
    assert [r["reason"] for r in read_rejects(lake)] == ["no tags and no moves: not a game"]


# --- 4. line endings: LF, CRLF and CR ---


def test_cr_line_endings(tmp_path: Path) -> None:
    text = make_games(0, 300)
    fields = ["game_id", "n_plies", "moves", "event", "result"]
    lakes = {}
    for name, ending in [("lf", "\n"), ("crlf", "\r\n"), ("cr", "\r")]:
        path = tmp_path / f"{name}.pgn"
        path.write_bytes(text.replace("\n", ending).encode())
        lakes[name] = lake = tmp_path / name
        run = load([path], lake)
        assert run.returncode == 0, run.stderr
        assert (read_records(lake)[0]["games_written"], read_rejects(lake)) == (300, [])
    by_id = {
        name: {g["game_id"]: {k: g[k] for k in fields} for g in read_games(lake)}
        for name, lake in lakes.items()
    }
    assert by_id["cr"] == by_id["lf"] == by_id["crlf"]


# --- 5. memory bounded by batch bytes, not by the games' text ---

COMMENT_MB = 48


def comment_games(path: Path, games: int, *, illegal: bool = False) -> Path:
    """`games` games of one `COMMENT_MB` MB comment each, zstd-compressed (a few hundred KB)."""
    comment = "c" * (COMMENT_MB << 20)
    move = "Ke2" if illegal else "Nf6"
    with path.open("wb") as f, zstandard.ZstdCompressor(level=1).stream_writer(f) as z:
        for i in range(games):
            z.write(f'[Event "{i}"]\n\n1. e4 {{{comment}}} e5 2. Nf3 {move} *\n\n'.encode())
    return path


def test_annotated_games_in_bounded_memory(tmp_path: Path) -> None:
    """24 games of 48 MB comments (1.2 GB of text; the old reader held them in one batch): stored whole,
    the load's peak RSS under 1 GB."""
    path = comment_games(tmp_path / "comments.pgn.zst", 24)
    lake = tmp_path / "lake"
    run = load([path], lake, timeout=240)
    assert run.returncode == 0, run.stderr
    assert run.max_rss_mb < 1000, f"peak RSS {run.max_rss_mb:.0f} MB"
    table = ds.dataset(lake / "games", partitioning="hive").to_table(columns=["event", "n_plies", "moves"])
    assert sorted(map(int, table["event"].to_pylist())) == list(range(24))
    assert set(table["n_plies"].to_pylist()) == {4}
    comments = {len(m[0]["comment"] or "") for m in table["moves"].to_pylist()}
    assert comments == {COMMENT_MB << 20}


def test_rejected_annotated_games_copy_a_capped_text(tmp_path: Path) -> None:
    """Rejected games of 48 MB each: each reject keeps its offset and length and at most 64 KiB of text."""
    path = comment_games(tmp_path / "bad.pgn.zst", 8, illegal=True)
    lake = tmp_path / "lake"
    run = load([path], lake, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.max_rss_mb < 1000, f"peak RSS {run.max_rss_mb:.0f} MB"
    found = read_rejects(lake)
    assert len(found) == 8 and all("illegal" in r["reason"] for r in found)
    assert all(r["source_length"] > COMMENT_MB << 20 for r in found)
    for a, b in itertools.pairwise(found):  # each game found at its offset, by its length
        assert b["source_offset"] == a["source_offset"] + a["source_length"] + 1
    assert all(r["raw_truncated"] and len(r["raw"].encode()) <= 64 << 10 for r in found)
    assert sum(p.stat().st_size for p in (lake / "rejects").glob("*.jsonl")) < 1 << 20


def test_batches_cut_by_bytes(sample: Path) -> None:
    """The reader hands over a partition's games once they hold `batch_bytes` of text, whatever their
    count."""
    by_games, _ = read_core(sample)
    by_bytes, _ = read_core(sample, batch_bytes=16 << 10)
    assert sum(b.num_rows for b in by_bytes) == sum(b.num_rows for b in by_games) == 438
    assert max(b.num_rows for b in by_bytes) < 30 < max(b.num_rows for b in by_games)


# --- 7. tags: many, and long ---


def test_many_tags_in_linear_time(tmp_path: Path) -> None:
    """A game of 400,000 tags (most of them repeated) loads in seconds, each repeat kept under its own key."""
    tags = "".join(f'[Annotator "a{i}"]\n' for i in range(200_000))
    tags += "".join(f'[X{i % 1000} "{i}"]\n' for i in range(200_000))
    path = tmp_path / "tags.pgn"
    path.write_text(f'[Event "many"]\n{tags}\n1. e4 e5 *\n\n')
    lake = tmp_path / "lake"
    run = load([path], lake, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.seconds < 30
    (game,) = read_games(lake)
    headers = dict(game["headers"])
    assert len(headers) == 400_000
    assert headers["Annotator"] == "a0" and headers["Annotator (200000)"] == "a199999"
    assert headers["X7 (200)"] == str(199 * 1000 + 7)


@pytest.mark.parametrize("size", [300, 17 << 10, 1 << 20])
def test_long_tag_values(size: int, tmp_path: Path) -> None:
    """Tag values of any length up to the largest game are read whole, also after many other tags."""
    event, note = "E" * size, "n" * size
    filler = "".join(f'[Round{i} "{"r" * 200}"]\n' for i in range(100))  # tags past pgn-reader's first fill
    path = tmp_path / "long.pgn"
    path.write_text(f'[Event "{event}"]\n{filler}[Annotator "{note}"]\n\n1. e4 e5 *\n\n')
    lake = tmp_path / "lake"
    run = load([path], lake)
    assert run.returncode == 0, run.stderr
    assert read_rejects(lake) == []
    (game,) = read_games(lake)
    assert game["event"] == event and dict(game["headers"])["Annotator"] == note


# --- issue 26, item 12: an input's name of any length makes file names the lake can hold ---


def test_inputs_with_long_names_load(tmp_path: Path) -> None:
    """Two inputs named with 230 characters, the same but the last: both load whole (the lake's file
    names, the input's name then the load's id, went over 255 bytes), into distinct bounded names."""
    sources = [tmp_path / ("n" * 229 + last + ".pgn") for last in "ab"]
    for n, source in enumerate(sources):
        source.write_text(make_games(n * 50, 50))
    lake = tmp_path / "lake"
    run = load(sources, lake)
    assert run.returncode == 0, run.stderr
    assert len(read_games(lake)) == 100
    records = read_records(lake)
    assert sorted(Path(r["input"]).name for r in records) == sorted(s.name for s in sources)
    paths = [f for r in records for f in [*r["files"], *r["ply_rows"], r["rejects_file"] or ""] if f]
    assert len(set(paths)) == len(paths) and all(len(Path(f).name.encode()) <= 255 for f in paths)
    stems = {Path(f).name.rsplit("-", 3)[0] for r in records for f in r["files"]}  # before the load id
    assert len(stems) == 2, "the two names' stems must stay apart"
