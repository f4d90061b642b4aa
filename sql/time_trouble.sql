-- Question: do players err more as their clock runs down?
-- Grain: one row per type and bucket of the mover's clock before the move, holding at least one move.
-- Definitions: moves of analysed games (has_eval: lichess writes NAGs only then; also read as the plies'
--   own copy, plies.analysed, so that both scans skip the other games' row groups) with a base+inc time
--   control whose clock before the move is known: the mover's clock after its previous move, tc_base on its
--   first move; on a later move, its own clock known too (timed_plies reads it back from the stored
--   think). Buckets of that clock: '<10s', '10-30s', '30-60s', '60-180s', '180s+'.
--   mistakes = moves with NAG 2, 4 or 6 (`?`, `??`, `?!`); mistake_pct = 100 x mistakes / moves
--   (2 decimals).
-- Output: type, clock_bucket, moves, mistakes, mistake_pct; by type, then clock from low to high.
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

with timed as (
    select
        type,
        case
            when clock_before < 10 then 1
            when clock_before < 30 then 2
            when clock_before < 60 then 3
            when clock_before < 180 then 4
            else 5
        end as bucket_order,
        nag in (2, 4, 6) as mistake
    from timed_plies
    where analysed and has_eval and tc_base is not null and clock_before is not null
),

final as (
    select
        type,
        ['<10s', '10-30s', '30-60s', '60-180s', '180s+'][bucket_order] as clock_bucket,
        count(*) as moves,
        count(*) filter (mistake) as mistakes,
        round(100.0 * count(*) filter (mistake) / count(*), 2) as mistake_pct,
        bucket_order
    from timed
    group by all
)

select type, clock_bucket, moves, mistakes, mistake_pct from final order by type, bucket_order;
