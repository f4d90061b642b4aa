-- Question: what is in the lake? Games by speed, with how they end.
-- Grain: one row per `type` (ultrabullet … classical, correspondence, unknown).
-- Definitions: white_score = (wins + draws / 2) / decided-or-drawn games, from White's side;
--   mated = share of games whose mainline ends in checkmate; avg_plies = mean mainline length.
--   with_clock, with_eval = share of games with some [%clk], [%eval]. Ratios rounded to 3 decimals.
-- Output: type, games, avg_plies, white_score, mated, with_clock, with_eval; by games descending, type.
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

with final as (
    select
        type,
        count(*) as games,
        round(avg(n_plies), 1) as avg_plies,
        round(avg(white_points(result)), 3) as white_score,
        round(avg(mate::int), 3) as mated,
        round(avg(has_clock::int), 3) as with_clock,
        round(avg(has_eval::int), 3) as with_eval
    from games
    group by type
)

select * from final order by games desc, type;
