-- Question: which pieces move in each phase of the game?
-- Grain: one row per phase and piece.
-- Definitions: every mainline move of every game; piece = the moving piece's letter upper-cased;
--   phase by the move's 0-based ply index: 'opening' plies 0-19, 'middlegame' 20-59, 'endgame' 60 on.
--   pct = 100 x moves / the phase's moves (2 decimals).
-- Output: phase, piece, moves, pct; by phase (opening first), piece (P N B R Q K).
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.queries.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

with letters as materialized (
    -- by the letter alone, each phase a count of its plies: one plain grouping column (12 groups) costs ~20%
    -- less CPU than grouping by ply and letter. Materialized: DuckDB turns final's window into a join of
    -- the counts with their sums, which would otherwise scan the plies twice
    select
        p,
        count(*) as moves,
        count(*) filter (ply < phase_plies()[1]) as opening,
        count(*) filter (ply >= phase_plies()[2]) as endgame
    from plies
    group by p
),

counted as (
    -- each phase named by phase() at its first ply
    select
        phase(list_concat([0], phase_plies())[i]) as phase,
        upper(p) as piece,
        sum([opening, moves - opening - endgame, endgame][i])::bigint as moves
    from letters
    cross join range(1, 4) as phases (i)
    group by all
),

final as (
    select phase, piece, moves, round(100.0 * moves / sum(moves) over (partition by phase), 2) as pct
    from counted
)

select * from final order by phase_order(phase), piece_order(piece);
