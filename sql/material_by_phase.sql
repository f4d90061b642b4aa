-- Question: how much is a material lead worth in each phase?
-- Grain: one row per phase and White's material lead.
-- Definitions: games of standard chess from the standard start (no FEN) with a result (W, B or D). Material
--   counts pawn 1, knight 3, bishop 3, rook 5, queen 9; White's lead after a ply = White's material on the
--   board - Black's (plies.material; from the standard start, the sum of every capture's and promotion's
--   swing). One position per ply, after it, in the phase of that ply's 0-based index: 'opening' 0-19,
--   'middlegame' 20-59, 'endgame' 60 on. white_lead is the lead clamped to -5..5 (-5 holds every lead
--   <= -5, 5 every lead >= 5).
--   white_score = mean over those positions of White's points in their game (1, 0.5, 0), 3 decimals.
-- Output: phase, white_lead, positions, white_score; by phase (opening first), white_lead.
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.queries.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

-- How: one scan of plies, whose rows carry the material after the move and their game's result (no window,
-- no join with every game; the few games set up from a FEN are left out by an anti-join with them alone).
-- The plies are counted by phase and material first, each result in its own count (a few thousand groups
-- on a million games): grouping by the stored value costs less than reading the lead off each ply, and a
-- `where` on the result would be pushed by DuckDB below the grouping, to every ply.
with positions as (
    select
        (ply >= 20)::int + (ply >= 60)::int as phase_at,
        material,
        count(*) filter (result = 'W') as white_wins,
        count(*) filter (result = 'D') as draws,
        count(*) filter (result = 'B') as black_wins
    from plies
    where material is not null and game_key not in (select game_key from games where start_fen is not null)
    group by all
),

by_lead as (
    select
        ['opening', 'middlegame', 'endgame'][phase_at + 1] as phase,
        greatest(-5, least(5, material_lead(material)))::int as white_lead,
        sum(white_wins + draws + black_wins)::bigint as positions,
        sum(white_wins + draws / 2) as white_points
    from positions
    group by all
)

select phase, white_lead, positions, round(white_points / positions, 3) as white_score
from by_lead
where positions > 0
order by phase_order(phase), white_lead;
