-- Question: how early do players castle?
-- Grain: one row per type and within_moves in (5, 10, 15).
-- Definitions: a game counts as castled within w moves when one of its first 2 x w mainline plies is a
--   castling move (either side; a game shorter than that counts the plies it has). white_castled and
--   black_castled count the games where that side castles in those plies; kingside_castled and
--   queenside_castled the games where a king- (K/k), resp. queen-side (Q/q) castle happens in them, either
--   side. A game where both sides castle, or castle on different wings, counts in each of those columns.
-- Output: type, within_moves, games, games_castled, white_castled, black_castled, kingside_castled,
--   queenside_castled; by type, within_moves.
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.queries.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

-- How: each game's first castling of each side is stored in games (white_castled, the 0-based ply, and
-- white_castle, its letter; black's alike): one scan of games, no plies read. A side castles once at most.
with windows as (
    select within_moves from (values (5), (10), (15)) as w(within_moves)
),

sides as (
    select
        type,
        within_moves,
        white_castled < 2 * within_moves as white,
        black_castled < 2 * within_moves as black,
        (white and white_castle = 'K') or (black and black_castle = 'k') as kingside,
        (white and white_castle = 'Q') or (black and black_castle = 'q') as queenside
    from games, windows
),

final as (
    select
        type,
        within_moves,
        count(*) as games,
        count(*) filter (white or black) as games_castled,
        count(*) filter (white) as white_castled,
        count(*) filter (black) as black_castled,
        count(*) filter (kingside) as kingside_castled,
        count(*) filter (queenside) as queenside_castled
    from sides
    group by all
)

select * from final order by type, within_moves;
