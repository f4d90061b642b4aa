"""PGN chess games to a BGN Parquet lake, and DuckDB on top of it."""

from __future__ import annotations

from typing import Any

__all__ = ["connect", "lake_or_sample", "query", "sample_lake"]


def __getattr__(name: str) -> Any:
    # Imported on first use: duckdb and polars take ~0.2 s to import, which every loader run would pay.
    if name in ("connect", "query"):
        from warehouse import sql

        return getattr(sql, name)
    if name in ("sample_lake", "lake_or_sample"):
        from warehouse import sample

        return getattr(sample, name)
    raise AttributeError(f"module 'warehouse' has no attribute {name!r}")
