-- Question: where do captures, checks and blunders land on the board?
-- Grain: one row per kind of move and square, for squares where that kind landed at least once.
-- Definitions: every mainline move of every game, counted on its destination square `t` (where the moving
--   piece lands; en passant included; a castle on the king's square): kind 'capture' when it takes a piece,
--   'check' when it gives check (mates included), 'blunder' when its NAG is 4 (`??`). A move counts once
--   under each kind it has.
-- Output: kind, square, file (a-h), rank (1-8), n; by kind, square.
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

with kinds as (
    -- one scan per kind, each filter read from its own column before the square is (cheaper than one
    -- scan of every ply's four columns)
    select 'capture' as kind, t as square, count(*) as n from plies where x is not null group by all
    union all
    select 'check' as kind, t as square, count(*) as n from plies where c is not null group by all
    union all
    -- mating moves, which have no c (docs/schema.md): plies.mates, the last ply of each game ending in mate
    select 'check' as kind, t as square, count(*) as n from plies where mates group by all
    union all
    select 'blunder' as kind, t as square, count(*) as n from plies where nag = 4 group by all
),

final as (
    select kind, square, square[1] as file, square[2]::int as rank, sum(n)::bigint as n
    from kinds
    group by all
)

select * from final order by kind, square;
