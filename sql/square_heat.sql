-- Question: where do captures, checks and blunders land on the board?
-- Grain: one row per kind of move and square, for squares where that kind landed at least once.
-- Definitions: every mainline move of every game, counted on its destination square `t` (where the moving
--   piece lands; en passant included; a castle on the king's square): kind 'capture' when it takes a piece,
--   'check' when it gives check (mates included), 'blunder' when its NAG is 4 (`??`). A move counts once
--   under each kind it has.
-- Output: kind, square, file (a-h), rank (1-8), n; by kind, square.
import database 'sql/views';

with marked as (
    select
        m.t as square,
        m.x is not null as capture,
        m.c is not null or (mate and ply = n_plies - 1) as check_,
        m.nag = 4 as blunder
    from plies
),

kinds as (
    select 'capture' as kind, square from marked where capture
    union all
    select 'check', square from marked where check_
    union all
    select 'blunder', square from marked where blunder
),

final as (
    select kind, square, square[1] as file, square[2]::int as rank, count(*) as n
    from kinds
    group by all
)

select * from final order by kind, square;
