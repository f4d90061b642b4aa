-- IMPORT DATABASE runs schema.sql, then this file: the views' one table, PolyGlot's 781 Zobrist keys
-- (polyglot_keys, see schema.sql), which fen_key XORs to key a FEN as the lake keys positions.
COPY polyglot_keys FROM 'sql/views/polyglot_keys.csv' (FORMAT csv, HEADER true);
