-- Question: which opening families do players of each level choose, and how do they score?
-- Grain: one row per rating band and opening family.
-- Definitions: family = opening.generic (the Opening tag before its first ':'); games with a family, both
--   Elos known and a result (W, B or D); band = 200-point band (its lower bound) of the mean of the two
--   Elos. share_pct = 100 x games / the band's games (2 decimals); white_score = (white wins + draws / 2)
--   / games (3 decimals).
-- Output: band, family, games, share_pct, white_score; by band, games descending, family.
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

with rated as (
    select rating_band(mean_elo) as band, opening.generic as family, result
    from rated_games
    where opening.generic is not null
),

families as materialized (
    -- materialized: DuckDB turns the window below into a join of this with its sums, which would
    -- otherwise scan the games twice
    select band, family, count(*) as games, avg(white_points(result)) as white_score
    from rated
    group by all
),

final as (
    select
        band,
        family,
        games,
        round(100.0 * games / sum(games) over (partition by band), 2) as share_pct,
        round(white_score, 3) as white_score
    from families
)

select * from final order by band, games desc, family;
