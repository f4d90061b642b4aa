-- Question: do players err more as their clock runs down?
-- Grain: one row per type, scale and bucket of the mover's clock before the move: every bucket of a scale
--   on which the type has a move, with 0 moves too.
-- Definitions: moves of analysed games (has_eval: lichess writes NAGs only then; also read as the plies'
--   own copy, plies.analysed, so that both scans skip the other games' row groups) with a base+inc time
--   control whose clock before the move is known: the mover's clock after its previous move, tc_base on its
--   first move; on a later move, its own clock known too (timed_plies reads it back from the stored
--   think). Two scales of that clock: 'seconds', buckets '<10s', '10-30s', '30-60s', '60-180s', '180s+';
--   'base', the clock as a share of tc_base (games with tc_base > 0), buckets '<5%', '5-10%', '10-25%',
--   '25-50%', '50%+'. share_pct = 100 x moves / the type's moves on the scale (how often players are
--   that short of time); mistakes = moves with NAG 2, 4 or 6 (`?`, `??`, `?!`); mistake_pct = 100 x
--   mistakes / moves, null without moves. Percentages to 2 decimals. A rate of fewer than min_sample()
--   moves (sql/views/schema.sql: 100) is not drawn by the notebooks.
-- Output: type, scale, clock_bucket, moves, share_pct, mistakes, mistake_pct; by type, scale (seconds,
--   base), then clock from low to high.
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

with timed as materialized (
    -- materialized: both scales read it, which would otherwise scan the plies twice
    select type, clock_before, tc_base, nag in (2, 4, 6) as mistake
    from timed_plies
    where analysed and has_eval and tc_base is not null and clock_before is not null
),

bucketed as (
    select
        type,
        1 as scale_order,
        case
            when clock_before < 10 then 1
            when clock_before < 30 then 2
            when clock_before < 60 then 3
            when clock_before < 180 then 4
            else 5
        end as bucket_order,
        mistake
    from timed
    union all
    select
        type,
        2 as scale_order,
        -- exact: the clock x 100 against a share of the base, no division
        case
            when 100 * clock_before < 5 * tc_base then 1
            when 100 * clock_before < 10 * tc_base then 2
            when 100 * clock_before < 25 * tc_base then 3
            when 100 * clock_before < 50 * tc_base then 4
            else 5
        end as bucket_order,
        mistake
    from timed
    where tc_base > 0
),

counted as (
    select type, scale_order, bucket_order, count(*) as moves, count(*) filter (mistake) as mistakes
    from bucketed
    group by all
),

every_bucket as (
    -- each scale's five buckets, for every type and scale with a move: an empty bucket stays, with 0
    select distinct counted.type, counted.scale_order, buckets.bucket_order
    from counted
    cross join range(1, 6) as buckets (bucket_order)
),

final as (
    select
        every_bucket.type,
        ['seconds', 'base'][every_bucket.scale_order] as scale,
        [
            ['<10s', '10-30s', '30-60s', '60-180s', '180s+'], ['<5%', '5-10%', '10-25%', '25-50%', '50%+']
        ][every_bucket.scale_order][every_bucket.bucket_order] as clock_bucket,
        coalesce(counted.moves, 0) as moves,
        round(
            100.0 * coalesce(counted.moves, 0)
            / sum(coalesce(counted.moves, 0)) over (partition by every_bucket.type, every_bucket.scale_order),
            2
        ) as share_pct,
        coalesce(counted.mistakes, 0) as mistakes,
        round(100.0 * counted.mistakes / counted.moves, 2) as mistake_pct,
        every_bucket.scale_order,
        every_bucket.bucket_order
    from every_bucket
    left join counted using (type, scale_order, bucket_order)
)

select type, scale, clock_bucket, moves, share_pct, mistakes, mistake_pct
from final
order by type, scale_order, bucket_order;
