-- Question: how do games end, by speed?
-- Grain: one row per type and Termination tag.
-- Definitions: termination = the termination column ('?' when absent): the Termination tag in lichess's
--   words (Normal, Time forfeit, Abandoned, Rules infraction, Unterminated; chess.com's `X won by
--   checkmate` is Normal: docs/schema.md); pct = 100 x games / the type's games (2 decimals);
--   mated = games of the row whose mainline ends in checkmate; white_wins, draws, black_wins by result.
-- Output: type, termination, games, pct, mated, white_wins, draws, black_wins; by type, games descending,
--   termination.
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

with ended as (
    select type, coalesce(termination, '?') as termination, result, mate
    from games
),

counted as materialized (
    -- materialized: DuckDB turns the window below into a join of this with its sums, which would
    -- otherwise scan the games twice
    select
        type,
        termination,
        count(*) as games,
        count(*) filter (mate) as mated,
        count(*) filter (result = 'W') as white_wins,
        count(*) filter (result = 'D') as draws,
        count(*) filter (result = 'B') as black_wins
    from ended
    group by all
),

final as (
    select
        type,
        termination,
        games,
        round(100.0 * games / sum(games) over (partition by type), 2) as pct,
        mated,
        white_wins,
        draws,
        black_wins
    from counted
)

select * from final order by type, games desc, termination;
