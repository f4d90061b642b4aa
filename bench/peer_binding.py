"""The peer binding's read speed, for bench_load.py: rust-pgn-reader-python-binding parsing and replaying
the games of a `.pgn.zst` on one thread (it writes nothing).

    python bench/peer_binding.py DUMP GAMES

Runs in the throwaway venv bench_load.py makes (the peer is not a dependency of the project). The binding
takes games already split, as an Arrow array of strings: the split is done first and not timed, so the
figure is the binding's parse + replay alone. Prints one number: games per CPU-second.
"""

from __future__ import annotations

import sys
import time

import pyarrow as pa
import rust_pgn_reader_python_binding as peer
import zstandard


def games_of(dump: str, limit: int) -> list[str]:
    with open(dump, "rb") as raw:
        text = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True).read().decode()
    # make-bench-dump writes lichess's layout: every game starts with an `[Event` line after a blank line.
    games = text.split("\n\n[Event ")
    return [games[0]] + ["[Event " + g for g in games[1:limit]]


def main() -> None:
    dump, limit = sys.argv[1], int(sys.argv[2])
    games = pa.chunked_array([pa.array(games_of(dump, limit), pa.string())])
    start = time.process_time()
    parsed = peer.parse_games(games, num_threads=1)
    cpu = time.process_time() - start
    print(f"{parsed.num_games / cpu:.0f}")


if __name__ == "__main__":
    main()
