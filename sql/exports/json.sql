-- BGN JSON lines of a batch of games (warehouse/export_json.py), over text.sql's macros.
-- One move: `move_head` is the object up to its `a` list (`"f":null` for a drop, as BGN writes one); `move_ann` the annotation objects: the first holds
-- the first NAG, eval, clock and comment (`{}` when none), each further NAG gets an object of its own.
-- `move_json` always writes `"a":[...]`; `drop_empty_a` removes the empty ones from a game's joined moves
-- afterwards, which costs one pass instead of evaluating every annotation twice (SQL macros are inlined,
-- `nullif(x, '')` would compute x twice). The pattern cannot occur inside a JSON string, where `"` is `\"`.
create or replace macro move_head(m) as
    '{"p":"' || m.p || '","f":' || coalesce('"' || m.f || '"', 'null') || ',"t":"' || m.t || '"'
    || coalesce(',"x":"' || m.x || '"', '') || coalesce(',"c":' || m.c, '')
    || coalesce(',"castle":"' || m.castle || '"', '') || coalesce(',"promote":"' || m.promote || '"', '')
    || coalesce(',"blast":"' || m.blast || '"', '');

create or replace macro move_ann(m) as
    '{' || concat_ws(',',
        '"nag":' || m.nag,
        '"eval":["' || eval_text(m.eval_cp, m.eval_mate) || '"]',
        '"clk":["' || clk_text(m.clk) || '"]',
        '"comment":' || to_json(m.comment)
    ) || '}'
    || if(len(m.nags) > 1,
        ',' || array_to_string(list_transform(m.nags[2:], lambda n: '{"nag":' || n || '}'), ','), '');

create or replace macro move_json(m) as move_head(m) || ',"a":[' || move_ann(m) || ']}';

create or replace macro drop_empty_a(text) as replace(text, ',"a":[{}]}', '}');

create or replace macro moves_json(moves) as
    '[' || drop_empty_a(array_to_string(list_transform(moves, lambda m: move_json(m)), ',')) || ']';

create or replace macro move_parts(moves) as
    list_transform(moves, lambda m: {'head': move_head(m), 'ann': move_ann(m)});

-- json_heads(batch): a game's JSON text up to `"moves":` (head), with its moves and variations; `batch`
-- names the table of games.
create or replace macro json_heads(batch) as table
select
    '{' || concat_ws(',',
        '"id":' || to_json(game_id),
        '"site":' || to_json(site),
        '"event":' || to_json(event),
        '"round":' || to_json(round),
        '"type":' || to_json(type),
        '"result":' || to_json(result),
        '"datetime":"' || strftime(datetime, '%Y-%m-%dT%H:%M:%SZ') || '"',
        '"timeControl":' || to_json(time_control),
        '"termination":' || to_json(termination),
        '"variant":' || if(variant = 'Standard', null, to_json(variant)),
        '"fen":' || to_json(start_fen),
        '"opening":{' || nullif(concat_ws(',',
            '"ECO":' || to_json(opening.eco),
            '"verbose":' || to_json(opening.verbose),
            '"generic":' || to_json(opening.generic)
        ), '') || '}',
        '"players":[' || array_to_string(list_transform(players, lambda p: '{' || concat_ws(',',
            if(p.name is null, null, '"handle":{'
                || if(site like 'https://lichess.org/%', '"domain":"org.lichess",', '')
                || '"value":' || to_json(p.name) || '}'),
            '"ELO_' || type || '":' || p.elo,
            '"ratingDiff":' || p.rating_diff,
            '"title":' || to_json(p.title)
        ) || '}'), ',') || ']',
        '"comment":' || to_json(comment)
    ) || ',"moves":' as head,
    moves,
    variations
from query_table(batch);

-- json_lines(batch): every game's line (line), its moves without their variations.
create or replace macro json_lines(batch) as table
select head || moves_json(moves) || '}' as line from json_heads(batch);

-- json_parts(batch): over the games that have variations only, the parts that `assemble` nests: head,
-- mainline and variations, their moves as {head, ann} (their lambdas would cost the whole batch: DuckDB
-- evaluates both sides of an `if`).
create or replace macro json_parts(batch) as table
select head, move_parts(moves) as mainline, list_transform(variations, lambda v: {
    'id': v.id, 'parent': v.parent, 'ply': v.ply, 'comment': to_json(v.comment), 'moves': move_parts(v.moves)
}) as variations
from json_heads(batch);
