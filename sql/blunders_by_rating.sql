-- Question: how often do players of each level err?
-- Grain: one row per type and the mover's rating band.
-- Definitions: moves of analysed games only (has_eval: lichess writes NAGs only when a game was analysed),
--   whose mover's Elo is known; band = 200-point band (its lower bound) of the mover's Elo.
--   inaccuracies = moves with NAG 6 (`?!`), mistakes = NAG 2 (`?`), blunders = NAG 4 (`??`);
--   error_pct = 100 x (inaccuracies + mistakes + blunders) / moves, blunder_pct = 100 x blunders / moves,
--   2 decimals.
-- Output: type, band, moves, inaccuracies, mistakes, blunders, error_pct, blunder_pct; by type, band.
import database 'sql/views';

with analysed as (
    select type, rating_band(mover_elo) as band, m.nag as nag
    from plies
    where has_eval
),

final as (
    select
        type,
        band,
        count(*) as moves,
        count(*) filter (nag = 6) as inaccuracies,
        count(*) filter (nag = 2) as mistakes,
        count(*) filter (nag = 4) as blunders,
        round(100.0 * count(*) filter (nag in (2, 4, 6)) / count(*), 2) as error_pct,
        round(100.0 * count(*) filter (nag = 4) / count(*), 2) as blunder_pct
    from analysed
    where band is not null
    group by all
)

select * from final order by type, band;
