-- Question: how early do players castle?
-- Grain: one row per type and within_moves in (5, 10, 15).
-- Definitions: a game counts as castled within w moves when one of its first 2 x w mainline plies is a
--   castling move (either side; a game shorter than that counts the plies it has). white_castled and
--   black_castled count the games where that side castles in those plies; kingside_castled and
--   queenside_castled the games where a king- (K/k), resp. queen-side (Q/q) castle happens in them, either
--   side. A game where both sides castle, or castle on different wings, counts in each of those columns.
-- Output: type, within_moves, games, games_castled, white_castled, black_castled, kingside_castled,
--   queenside_castled; by type, within_moves.
import database 'sql/views';

with castles as (
    -- each castling move of the game with its 0-based ply: a game has at most two
    select
        type,
        list_filter(
            list_transform(moves, lambda m, i: {ply: i - 1, side: m.castle}), lambda c: c.side is not null
        ) as castles
    from games
),

windows as (
    select
        type,
        within_moves,
        list_transform(list_filter(castles, lambda c: c.ply < 2 * within_moves), lambda c: c.side) as early
    from castles, (values (5), (10), (15)) as w(within_moves)
),

final as (
    select
        type,
        within_moves,
        count(*) as games,
        count(*) filter (len(early) > 0) as games_castled,
        count(*) filter (list_has_any(early, ['K', 'Q'])) as white_castled,
        count(*) filter (list_has_any(early, ['k', 'q'])) as black_castled,
        count(*) filter (list_has_any(early, ['K', 'k'])) as kingside_castled,
        count(*) filter (list_has_any(early, ['Q', 'q'])) as queenside_castled
    from windows
    group by all
)

select * from final order by type, within_moves;
