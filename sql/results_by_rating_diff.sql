-- Question: how much is a rating edge worth, and does the Elo formula predict it?
-- Grain: one row per type and band of rating difference.
-- Definitions: d = White's Elo - Black's Elo, for games with both Elos known and a result (W, B or D);
--   diff_band = lower bound of d's 100-point band, clamped to -400..300 (band -400 holds every d < -300,
--   band 300 every d >= 300). white_score = (white wins + draws / 2) / games; expected_score = mean over the
--   games of the Elo expectation 1 / (1 + 10^(-d / 400)).
-- Output: type, diff_band, games, white_score, expected_score (3 decimals); by type, diff_band.
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

with rated as (
    select type, elo_diff as d, result
    from rated_games
),

final as (
    select
        type,
        greatest(-400, least(300, floor(d / 100)::int * 100)) as diff_band,
        count(*) as games,
        round(avg(white_points(result)), 3) as white_score,
        round(avg(1 / (1 + pow(10, -d / 400))), 3) as expected_score
    from rated
    group by all
)

select * from final order by type, diff_band;
