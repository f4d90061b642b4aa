"""Getting games into the lake: PGN and JSON inputs, one load each, on one machine or on Spark."""
