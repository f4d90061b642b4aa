"""The lake back out: BGN JSON-lines, PGN and study JSON, to local files or S3."""
