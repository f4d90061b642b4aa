-- Question: how often do players of each level err?
-- Grain: one row per type and the mover's rating band.
-- Definitions: moves of analysed games only (has_eval: lichess writes NAGs only when a game was analysed),
--   whose mover's Elo is known; band = 200-point band (its lower bound) of the mover's Elo.
--   inaccuracies = moves with NAG 6 (`?!`), mistakes = NAG 2 (`?`), blunders = NAG 4 (`??`);
--   error_pct = 100 x (inaccuracies + mistakes + blunders) / moves, blunder_pct = 100 x blunders / moves,
--   2 decimals. A rate of fewer than min_sample() moves (sql/views/schema.sql: 100) is not drawn by the
--   notebooks.
-- Output: type, band, moves, inaccuracies, mistakes, blunders, error_pct, blunder_pct; by type, band.
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

with analysed as (
    -- the analysed games; black_first: the start position (a FEN's second field) has Black to move
    select
        game_key,
        type,
        white_elo,
        black_elo,
        n_plies,
        coalesce(regexp_extract(start_fen, '^\s*\S+\s+(\S)', 1) = 'b', false) as black_first
    from games
    where has_eval
),

sides as (
    -- every move, counted per game and side: the sides alternate from the side to move at the start, which
    -- makes (n_plies + 1) // 2 moves, the other n_plies // 2 (no need to read the plies for these counts)
    select type, rating_band(white_elo) as band, if(black_first, n_plies // 2, (n_plies + 1) // 2) as moves
    from analysed
    union all
    select type, rating_band(black_elo) as band, if(black_first, (n_plies + 1) // 2, n_plies // 2) as moves
    from analysed
),

moves as (
    select type, band, sum(moves)::bigint as moves
    from sides
    where band is not null
    group by all
    having sum(moves) > 0
),

errors as (
    -- the moves with NAG 2, 4 or 6 of those games, by their mover's band
    select
        plies.type,
        rating_band(if(plies.mover = 'white', analysed.white_elo, analysed.black_elo)) as band,
        count(*) filter (nag = 6) as inaccuracies,
        count(*) filter (nag = 2) as mistakes,
        count(*) filter (nag = 4) as blunders
    from plies
    join analysed on analysed.game_key = plies.game_key
    where nag between 2 and 6 and nag in (2, 4, 6)
    group by all
),

final as (
    select
        type,
        band,
        moves,
        coalesce(inaccuracies, 0) as inaccuracies,
        coalesce(mistakes, 0) as mistakes,
        coalesce(blunders, 0) as blunders,
        round(100.0 * (coalesce(inaccuracies, 0) + coalesce(mistakes, 0) + coalesce(blunders, 0)) / moves, 2)
            as error_pct,
        round(100.0 * coalesce(blunders, 0) / moves, 2) as blunder_pct
    from moves
    left join errors using (type, band)
)

select * from final order by type, band;
