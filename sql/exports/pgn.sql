-- PGN move texts of a batch of games (warehouse/export_pgn.py), over text.sql's macros.
-- move_pgn(m): SAN, `$n` NAGs, `{ [%eval 0.17] [%clk 0:03:00] comment }`. `{  }` (an empty comment) is
-- dropped afterwards rather than testing the comment twice; it cannot occur inside a comment, which ends at
-- the first `}`.
create or replace macro move_pgn(m) as replace(
    m.san
    || coalesce(' ' || array_to_string(list_transform(m.nags, lambda n: '$' || n), ' '), '')
    || ' { ' || concat_ws(' ',
        '[%eval ' || eval_text(m.eval_cp, m.eval_mate) || ']',
        '[%clk ' || clk_text(m.clk) || ']',
        m.comment
    ) || ' }',
    ' {  }', '');

-- pgn_moves(batch): the move texts only (moves; variations as {id, parent, ply, comment, moves}); the other
-- columns go straight from Arrow to Python (DuckDB refuses a `headers` map holding a tag twice, which PGN
-- files do). `batch` names the table of games.
create or replace macro pgn_moves(batch) as table
select
    list_transform(moves, lambda m: move_pgn(m)) as moves,
    list_transform(variations, lambda v: {
        'id': v.id, 'parent': v.parent, 'ply': v.ply, 'comment': v.comment,
        'moves': list_transform(v.moves, lambda m: move_pgn(m))
    }) as variations
from query_table(batch);
