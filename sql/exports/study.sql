-- Study JSON move parts of a batch of games (warehouse/exports/study.py), over text.sql's macros.
-- study_eval(cp, mate): the study schema's eval, signed pawns with two decimals (`+0.20`, `-1.50`,
-- `+0.00`), or `#n` / `#-n` for a mate.
create or replace macro study_eval(cp, mate) as case
    when mate is not null then '#' || mate
    when cp is not null then
        if(cp < 0, '-', '+') || (abs(cp) // 100) || '.' || lpad((abs(cp) % 100)::varchar, 2, '0')
end;

-- f, t, promote, castle: for the positions `--fen` writes (replayed in Python).
create or replace macro study_move(m) as {
    'san': m.san, 'nags': m.nags, 'eval': study_eval(m.eval_cp, m.eval_mate), 'clock': clk_text(m.clk),
    'comment': m.comment, 'f': m.f::varchar, 't': m.t::varchar, 'promote': m.promote::varchar,
    'castle': m.castle::varchar
};

-- study_moves(batch): the moves' parts (moves; variations as {id, parent, ply, comment, moves}); the other
-- columns go straight from Arrow to Python. `batch` names the table of games.
create or replace macro study_moves(batch) as table
select
    list_transform(moves, lambda m: study_move(m)) as moves,
    list_transform(variations, lambda v: {
        'id': v.id, 'parent': v.parent, 'ply': v.ply, 'comment': v.comment,
        'moves': list_transform(v.moves, lambda m: study_move(m))
    }) as variations
from query_table(batch);
