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

with windows as (
    select within_moves from (values (5), (10), (15)) as w(within_moves)
),

typed as (
    select type, count(*) as games
    from games
    group by type
),

castles as (
    -- the castling moves in the first 30 plies (2 x the largest window); a side castles once at most.
    -- Classified here once, as booleans: later steps read 2-3 copies of each castle (8% less CPU)
    select type, game_key, ply, castle in ('K', 'Q') as white, castle in ('K', 'k') as kingside
    from plies
    where castle is not null and ply < 30
),

moves as (
    -- castles in each window: one per side and game, so these count games
    select
        type,
        within_moves,
        count(*) filter (white) as white,
        count(*) filter (not white) as black,
        count(*) filter (kingside) as kingside,
        count(*) filter (not kingside) as queenside
    from castles, windows
    where ply < 2 * within_moves
    group by all
),

pairs as (
    -- games where both sides castle in the window, counted twice above: in all, both kingside, both
    -- queenside
    select
        white.type,
        within_moves,
        count(*) as both_sides,
        count(*) filter (white.kingside and black.kingside) as both_kingside,
        count(*) filter (not white.kingside and not black.kingside) as both_queenside
    from castles as white
    join castles as black on black.game_key = white.game_key and not black.white, windows
    where white.white and greatest(white.ply, black.ply) < 2 * within_moves
    group by all
),

final as (
    select
        type,
        within_moves,
        games,
        coalesce(white + black - coalesce(both_sides, 0), 0) as games_castled,
        coalesce(white, 0) as white_castled,
        coalesce(black, 0) as black_castled,
        coalesce(kingside - coalesce(both_kingside, 0), 0) as kingside_castled,
        coalesce(queenside - coalesce(both_queenside, 0), 0) as queenside_castled
    from typed
    cross join windows
    left join moves using (type, within_moves)
    left join pairs using (type, within_moves)
)

select * from final order by type, within_moves;
