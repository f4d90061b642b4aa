-- Question: how often and how early do players castle, by rating?
-- Grain: one row per 200-point band of the mean Elo.
-- Definitions: rated games (both Elos known and a result: rated_games), by rating_band(mean_elo). A side's
--   castling is its first castling move (games.white_castled, black_castled: its 0-based ply).
--   white_castled_pct, black_castled_pct = 100 x games where that side castles / games (2 decimals);
--   white_castle_move, black_castle_move = mean full-move number of that side's castling
--   (ply // 2 + 1), over the games where it castles, 3 decimals; kingside_pct = 100 x kingside castlings
--   (K/k) / castlings, both sides (2 decimals).
-- Output: band, games, white_castled_pct, black_castled_pct, white_castle_move, black_castle_move,
--   kingside_pct; by band.
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.queries.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

-- How: one scan of games (their castling columns); no ply is read.
select
    rating_band(mean_elo) as band,
    count(*) as games,
    round(100.0 * count(white_castled) / count(*), 2) as white_castled_pct,
    round(100.0 * count(black_castled) / count(*), 2) as black_castled_pct,
    round(avg(white_castled // 2 + 1), 3) as white_castle_move,
    round(avg(black_castled // 2 + 1), 3) as black_castle_move,
    round(
        100.0 * (count(*) filter (white_castle = 'K') + count(*) filter (black_castle = 'k'))
        / nullif(count(white_castled) + count(black_castled), 0),
        2
    ) as kingside_pct
from rated_games
group by band
order by band;
