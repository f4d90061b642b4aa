-- Question: where in the game, and with which piece, do players blunder?
-- Grain: one row per type, ply bucket and piece (P N B R Q K) where the type's analysed games have a move
--   in that bucket: every piece, with 0 blunders too.
-- Definitions: moves = the mainline moves of analysed games (has_eval: lichess writes NAGs in analysed
--   games only), by their 0-based ply index N; bucket of N: '<10' when N < 10, else 'a-b' for the first
--   bound b of 20, 30, ..., 200 that N is below (a = b - 10: '10-20' ... '190-200'), else 'other'
--   (N >= 200). moves = the type's moves in the bucket (every piece); blunders = those moves with the
--   piece (the moving piece's letter, upper-cased) whose (first) NAG is 4 (`??`); per_1000 = 1000 x
--   blunders / moves (2 decimals): a bucket's pieces add up to its rate. A rate of fewer than
--   min_sample() moves (sql/views/schema.sql: 100) is not drawn by the notebooks.
-- Output: type, bucket, piece, moves, blunders, per_1000; by type, bucket's ply, piece (P N B R Q K).
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

with counted as (
    -- the analysed plies (plies.analysed: the scan skips the other games' row groups) by ply and piece
    select
        type,
        case when ply < 10 then 0 when ply < 200 then ply // 10 * 10 else 200 end as low,
        piece,
        count(*) as moves,
        count(*) filter (nag = 4) as blunders
    from plies
    where analysed
    group by all
),

buckets as (
    select type, low, sum(moves)::bigint as moves
    from counted
    group by all
),

final as (
    select
        buckets.type,
        case when buckets.low = 0 then '<10' when buckets.low = 200 then 'other'
            else buckets.low || '-' || (buckets.low + 10) end as bucket,
        pieces.piece,
        buckets.moves,
        coalesce(counted.blunders, 0) as blunders,
        round(1000.0 * coalesce(counted.blunders, 0) / buckets.moves, 2) as per_1000,
        buckets.low,
        pieces.piece_order
    from buckets
    cross join (values ('P', 1), ('N', 2), ('B', 3), ('R', 4), ('Q', 5), ('K', 6)) as pieces (piece, piece_order)
    left join counted
        on counted.type = buckets.type and counted.low = buckets.low and counted.piece = pieces.piece
)

select type, bucket, piece, moves, blunders, per_1000 from final order by type, low, piece_order;
