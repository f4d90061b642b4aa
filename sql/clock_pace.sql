-- Question: how long do players think over a move?
-- Grain: one row per type and think-time bucket holding at least one ply.
-- Definitions: think time of a ply = the mover's clock before it (its clock after its previous move, its
--   tc_base on its first move) - its clock after this move (`clk`) + tc_inc, in seconds: plies.think, null
--   unless the game has a base+inc time control (tc_base known; a bare base has tc_inc 0) and both clocks
--   are present. Counted: plies whose think time is known and not negative (berserk, clocks given back).
--   Buckets: '<1s' (think < 1), '1-10s' (< 10), '10-120s' (< 120), '120s+'.
--   pct = 100 x moves / the type's counted plies, rounded to 2 decimals.
-- Output: type, bucket, moves, pct; by type, then bucket from fastest to slowest.
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

with thinks as (
    -- every ply by its stored think time: grouping by a plain column, then bucketing and filtering its few
    -- hundred values, is cheaper than testing and bucketing every ply. One scan per speed (`type` is a
    -- partition: each reads its own files; docs/schema.md lists the seven), grouped by think alone: a
    -- one-column key costs DuckDB's hash aggregate ~20% less CPU than grouping by type and think
    select 'ultrabullet' as type, think, count(*) as moves
    from plies where type = 'ultrabullet' group by think
    union all
    select 'bullet' as type, think, count(*) as moves
    from plies where type = 'bullet' group by think
    union all
    select 'blitz' as type, think, count(*) as moves
    from plies where type = 'blitz' group by think
    union all
    select 'rapid' as type, think, count(*) as moves
    from plies where type = 'rapid' group by think
    union all
    select 'classical' as type, think, count(*) as moves
    from plies where type = 'classical' group by think
    union all
    select 'correspondence' as type, think, count(*) as moves
    from plies where type = 'correspondence' group by think
    union all
    select 'unknown' as type, think, count(*) as moves
    from plies where type = 'unknown' group by think
),

buckets as materialized (
    -- materialized: DuckDB would otherwise turn final's window into a second scan of the plies
    select
        type,
        case when think < 1 then 1 when think < 10 then 2 when think < 120 then 3 else 4 end as bucket_order,
        sum(moves)::bigint as moves
    from thinks
    where think >= 0
    group by all
),

final as (
    select
        type,
        ['<1s', '1-10s', '10-120s', '120s+'][bucket_order] as bucket,
        moves,
        round(100.0 * moves / sum(moves) over (partition by type), 2) as pct,
        bucket_order
    from buckets
)

select type, bucket, moves, pct from final order by type, bucket_order;
