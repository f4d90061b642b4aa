"""Asking the lake: DuckDB with the SQL library's views, the shared filters, the bundled sample."""
