"""The game key rule of docs/schema.md, written here independently of the Rust core that applies it."""

from __future__ import annotations

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def expected_key(game_id: str) -> int:
    """docs/schema.md's rule: a lichess id's base-62 value (digits, then A-Z, then a-z); a content id's 64
    bits with the top one set, as a signed 64-bit integer."""
    if len(game_id) == 8:
        value = 0
        for char in game_id:
            value = value * 62 + BASE62.index(char)
        return value
    return int(game_id, 16) - (1 << 64) if int(game_id, 16) >= 1 << 63 else int(game_id, 16) - (1 << 63)
