"""The explorer page's latency per click on a lake of a million games, beside the explorer called directly.

    python bench/bench_serve.py [--lake bench/out/lake-1000000] [--plies 10]

Starts `python -m loaders.serve` on the lake (127.0.0.1, a free port), loads the start page (the first
request: the connection's making, reported apart), then clicks down a line, the most played move at each
ply, to ply --plies: the wall seconds of each page (HTTP GET to the last byte: the moves table, the games
through the position, the board), and how the page found the games (the stored keys, the index, a replay).
The baseline, in this process on a warm connection, at the same positions by the same path (`deep=False`
where the page read the stored keys): `explore` alone, and `explore` + `search` each reading the lake (the
page reads the positions once for both). Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import chess

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's warehouse, when run as a script

from warehouse.positions.explorer import explore  # noqa: E402
from warehouse.positions.search import search  # noqa: E402
from warehouse.sql import connect  # noqa: E402

MOST_PLAYED = re.compile(r'<tr class="move" data-uci="([a-h1-8qrbn]+)"')
FOUND = re.compile(r'id="found" data-how="([a-z]+)"')


def fetch(url: str) -> tuple[float, str]:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as reply:
        text = reply.read().decode()
    return time.perf_counter() - start, text


def timed(run: object) -> float:
    start = time.perf_counter()
    run()  # type: ignore[operator]
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lake", type=Path, default=ROOT / "bench" / "out" / "lake-1000000")
    parser.add_argument("--plies", type=int, default=10)
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-m", "loaders.serve", "--lake", str(args.lake), "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        address = re.search(r"http://127\.0\.0\.1:[0-9]+", server.stdout.readline())
        assert address is not None, "the server did not start"
        base = address.group()
        first, _ = fetch(f"{base}/?moves=")
        print(f"lake {args.lake}; first page (a new connection): {first:.2f} s")
        clicks: list[tuple[int, tuple[str, ...], float, str]] = []
        moves: tuple[str, ...] = ()
        for ply in range(args.plies + 1):
            seconds, text = fetch(f"{base}/?moves={'+'.join(moves)}")
            how = FOUND.search(text)
            clicks.append((ply, moves, seconds, how.group(1) if how else "?"))
            found = MOST_PLAYED.search(text)
            if found is None:
                break
            moves += (found.group(1),)
    finally:
        server.terminate()
        server.wait()
    con = connect(args.lake)
    board = chess.Board()
    explore(board.fen(), args.lake, con=con)  # warm, as the server's connection is
    print("ply  found by  games at   page s  explore s  explore+search s  page / explore")
    for ply, line, page, how in clicks:
        board = chess.Board()
        for uci in line:
            board.push_uci(uci)
        fen = board.fen()
        deep = how != "stored"  # the page's own path: the stored keys, else the index or the replay
        alone = timed(lambda fen=fen, deep=deep: explore(fen, args.lake, con=con, deep=deep))
        games = search(fen, args.lake, con=con, deep=deep)
        both = alone + timed(lambda fen=fen, deep=deep: search(fen, args.lake, con=con, deep=deep))
        print(
            f"{ply:>3}  {how:>8}  {len(games):>8,}  {page:>7.2f}  {alone:>9.2f}  {both:>16.2f}  "
            f"{page / alone:>14.2f}"
        )
    worst = max(page for _, _, page, _ in clicks)
    print(f"slowest click: {worst:.2f} s (goal < 0.5 s at plies <= {args.plies})")


if __name__ == "__main__":
    main()
