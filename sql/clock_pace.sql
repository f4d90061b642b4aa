-- Question: how long do players think over a move?
-- Grain: one row per type, scale and think-time bucket: every bucket of a scale on which the type has a
--   counted ply, with 0 moves too.
-- Definitions: think time of a ply = the mover's clock before it (its clock after its previous move, its
--   tc_base on its first move) - its clock after this move (`clk`) + tc_inc, in seconds: plies.think, null
--   unless the game has a base+inc time control (tc_base known; a bare base has tc_inc 0) and both clocks
--   are present. Counted: plies whose think time is known and not negative (berserk, clocks given back).
--   Two scales: 'seconds', buckets '<1s' (think < 1), '1-10s' (< 10), '10-120s' (< 120), '120s+';
--   'base', the think time as a share of the game's tc_base (games with tc_base > 0), buckets '<0.5%',
--   '0.5-2%', '2-5%', '5%+'. pct = 100 x moves / the type's counted plies on the scale, rounded to 2
--   decimals. A share of fewer than min_sample() moves (sql/views/schema.sql: 100) is not drawn by the
--   notebooks.
-- Output: type, scale, bucket, moves, pct; by type, scale (seconds, base), then bucket from fastest to
--   slowest.
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

with thinks as (
    -- every counted ply by its stored think time and its game's base: grouping by these plain columns (a
    -- few thousand values), then bucketing them, is cheaper than bucketing every ply
    select plies.type, plies.think, games.tc_base, count(*) as moves
    from plies
    join games on games.game_key = plies.game_key
    where plies.think >= 0
    group by all
),

buckets as materialized (
    -- materialized: DuckDB would otherwise turn final's window into a second scan of the plies
    select
        type,
        1 as scale_order,
        case when think < 1 then 1 when think < 10 then 2 when think < 120 then 3 else 4 end as bucket_order,
        sum(moves)::bigint as moves
    from thinks
    group by all
    union all
    -- the think time as a share of the game's base time, exact (no division)
    select
        type,
        2 as scale_order,
        case
            when 200 * think < tc_base then 1
            when 50 * think < tc_base then 2
            when 20 * think < tc_base then 3
            else 4
        end as bucket_order,
        sum(moves)::bigint as moves
    from thinks
    where tc_base > 0
    group by all
),

every_bucket as (
    -- each scale's four buckets, for every type and scale with a counted ply: an empty bucket stays, with 0
    select distinct buckets.type, buckets.scale_order, four.bucket_order
    from buckets
    cross join range(1, 5) as four (bucket_order)
),

final as (
    select
        type,
        ['seconds', 'base'][scale_order] as scale,
        [['<1s', '1-10s', '10-120s', '120s+'], ['<0.5%', '0.5-2%', '2-5%', '5%+']][scale_order][bucket_order]
            as bucket,
        coalesce(moves, 0) as moves,
        round(100.0 * coalesce(moves, 0) / sum(coalesce(moves, 0)) over (partition by type, scale_order), 2)
            as pct,
        scale_order,
        bucket_order
    from every_bucket
    left join buckets using (type, scale_order, bucket_order)
)

select type, scale, bucket, moves, pct from final order by type, scale_order, bucket_order;
