-- Question: how much is a material lead worth in each phase?
-- Grain: one row per phase and White's material lead.
-- Definitions: games from the standard start (no FEN) with a result (W, B or D). Material counts pawn 1,
--   knight 3, bishop 3, rook 5, queen 9; White's lead after a ply = White's material - Black's on the board
--   after it (plies.material). One position per ply, after it, in the phase of that ply's 0-based index:
--   'opening' 0-19, 'middlegame' 20-59, 'endgame' 60 on. white_lead is the lead clamped to -5..5 (-5 holds
--   every lead <= -5, 5 every lead >= 5). Plies without a stored material (variants other than standard
--   chess and Chess960) are not counted.
--   white_score = mean over those positions of White's points in their game (1, 0.5, 0), 3 decimals.
-- Output: phase, white_lead, positions, white_score; by phase (opening first), white_lead.
import database 'sql/views';

-- How: the material after each ply is stored (plies.material, packed; material_lead unpacks it): one scan
-- of the plies, grouped by game, ply phase and lead before the join with the games' results, so that the
-- join reads ~10 rows a game rather than 65.
with leads as (
    select
        game_key,
        phase(ply) as phase,
        greatest(-5, least(5, material_lead(material)))::int as white_lead,
        count(*) as positions
    from plies
    where material is not null
    group by all
),

final as (
    select phase, white_lead, sum(positions)::bigint as positions,
        sum(positions * white_points(result)) / sum(positions) as white_score
    from leads
    join games using (game_key)
    where start_fen is null and result in ('W', 'B', 'D')
    group by all
)

select phase, white_lead, positions, round(white_score, 3) as white_score
from final
order by phase_order(phase), white_lead;
