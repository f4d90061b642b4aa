-- Question: which pieces move in each phase of the game?
-- Grain: one row per phase and piece.
-- Definitions: every mainline move of every game; piece = the moving piece's letter upper-cased;
--   phase by the move's 0-based ply index: 'opening' plies 0-19, 'middlegame' 20-59, 'endgame' 60 on.
--   pct = 100 x moves / the phase's moves (2 decimals).
-- Output: phase, piece, moves, pct; by phase (opening first), piece (P N B R Q K).
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

with letters as (
    -- by ply and letter first: grouping 65 plies a game by two plain columns is twice as fast as by the
    -- phase and piece computed on each
    select ply, p, count(*) as moves
    from plies
    group by ply, p
),

counted as materialized (
    -- materialized: DuckDB turns the window below into a join of this with its sums, which would
    -- otherwise scan the plies twice
    select phase(ply) as phase, upper(p) as piece, sum(moves)::bigint as moves
    from letters
    group by all
),

final as (
    select phase, piece, moves, round(100.0 * moves / sum(moves) over (partition by phase), 2) as pct
    from counted
)

select * from final order by phase_order(phase), piece_order(piece);
