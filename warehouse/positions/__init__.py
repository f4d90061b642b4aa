"""Positions of the lake's games: search by FEN (`search`), opening book, explorer and opening graph.

The lake stores each game's PolyGlot keys for its first plies (`plies.key`) and its final position
(`games.final_key`); deeper positions are found by a replay scan (`_core.find_position`), or by the
optional position index when it was built (`index`). docs/positions.md tells the choice and its costs.
"""

from warehouse.positions.search import search

__all__ = ["search"]
