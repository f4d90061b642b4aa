-- Question: where in the game, and with which piece, do players blunder?
-- Grain: one row per type, piece and ply bucket holding at least one blunder.
-- Definitions:
--   blunder = a mainline move whose (first) NAG is 4 (`??`; lichess writes NAGs in analysed games only);
--   piece = the moving piece's letter, upper-cased (P N B R Q K);
--   bucket of the move's 0-based ply index N: '<10' when N < 10, else 'a-b' for the first bound b of
--   20, 30, ..., 200 that N is below (a = b - 10: '10-20' ... '190-200'), else 'other' (N >= 200).
-- Output: type, piece, bucket, nblunders; by nblunders descending, then type, piece, bucket's ply.
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

with blunders as (
    select type, piece, ply
    from plies
    where nag = 4
),

final as (
    select
        type,
        piece,
        case
            when ply < 10 then '<10'
            when ply < 200 then (ply // 10 * 10) || '-' || (ply // 10 * 10 + 10)
            else 'other'
        end as bucket,
        count(*) as nblunders,
        min(ply) as first_ply
    from blunders
    group by all
)

select type, piece, bucket, nblunders from final order by nblunders desc, type, piece, first_ply;
