-- Question: how do results change with the players' level?
-- Grain: one row per type and rating band of the game.
-- Definitions: band = 200-point band (its lower bound) of the mean of the two players' Elo; games with both
--   Elos known and a result (W, B or D) only. white_score = (white wins + draws / 2) / games.
-- Output: type, band, games, white_wins, draws, black_wins, white_score (3 decimals); by type, band.
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

with rated as (
    select type, rating_band(mean_elo) as band, result
    from rated_games
),

final as (
    select
        type,
        band,
        count(*) as games,
        count(*) filter (result = 'W') as white_wins,
        count(*) filter (result = 'D') as draws,
        count(*) filter (result = 'B') as black_wins,
        round(avg(white_points(result)), 3) as white_score
    from rated
    group by all
)

select * from final order by type, band;
