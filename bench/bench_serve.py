"""The explorer page's latency per click on a lake of a million games, beside the explorer called directly.

    python bench/bench_serve.py [--lake bench/out/lake-1000000] [--plies 10]

Starts `python -m loaders.serve` on the lake (127.0.0.1, a free port), loads the start page (the first
request: the connection's making, reported apart), then clicks down a line, the most played move at each
ply, to ply --plies: the wall seconds of each page (HTTP GET to the last byte: the moves table, the games
through the position, the board). The baseline, in this process on a warm connection, at the same positions:
`explore` alone, and `explore` + `search` (the two lake reads a page makes). Not a test: it prints figures.
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
        base = server.stdout.readline().split()[-4].rstrip("/")
        first, _ = fetch(f"{base}/?moves=")
        print(f"lake {args.lake}; first page (a new connection): {first:.2f} s")
        clicks: list[tuple[int, tuple[str, ...], float]] = []
        moves: tuple[str, ...] = ()
        for ply in range(args.plies + 1):
            seconds, text = fetch(f"{base}/?moves={'+'.join(moves)}")
            clicks.append((ply, moves, seconds))
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
    print("ply  games at   page s  explore s  explore+search s  page / explore+search")
    for ply, line, page in clicks:
        board = chess.Board()
        for uci in line:
            board.push_uci(uci)
        fen = board.fen()
        alone = timed(lambda fen=fen: explore(fen, args.lake, con=con))
        games = search(fen, args.lake, con=con)
        both = alone + timed(lambda fen=fen: search(fen, args.lake, con=con))
        print(f"{ply:>3}  {len(games):>8,}  {page:>7.2f}  {alone:>9.2f}  {both:>16.2f}  {page / both:>21.2f}")
    worst = max(page for ply, _, page in clicks)
    print(f"slowest click: {worst:.2f} s (goal < 0.5 s at plies <= {args.plies})")


if __name__ == "__main__":
    main()
