-- Question: how much is a material lead worth in each phase?
-- Grain: one row per phase and White's material lead.
-- Definitions: games from the standard start (no FEN) with a result (W, B or D). Material counts pawn 1,
--   knight 3, bishop 3, rook 5, queen 9; White's lead after a ply = White's material - Black's, replayed
--   from the start (0) through every capture (+ the value taken from Black, - the value taken from White)
--   and promotion (+/- the new piece's value - 1). One position per ply, after it, in the phase of that
--   ply's 0-based index: 'opening' 0-19, 'middlegame' 20-59, 'endgame' 60 on. white_lead is the lead
--   clamped to -5..5 (-5 holds every lead <= -5, 5 every lead >= 5).
--   white_score = mean over those positions of White's points in their game (1, 0.5, 0), 3 decimals.
-- Output: phase, white_lead, positions, white_score; by phase (opening first), white_lead.
import database 'sql/views';

with swings as (
    select
        filename,
        file_row_number,
        ply,
        white_points(result) as points,
        if(m.x is null, 0, if(m.x = upper(m.x), -1, 1) * piece_value(m.x))
        + if(m.promote is null, 0, if(m.promote = upper(m.promote), 1, -1) * (piece_value(m.promote) - 1))
            as swing
    from plies
    where start_fen is null and result in ('W', 'B', 'D')
),

leads as (
    select
        ply,
        points,
        sum(swing) over (partition by filename, file_row_number order by ply) as lead
    from swings
),

final as (
    select
        phase(ply) as phase,
        greatest(-5, least(5, lead))::int as white_lead,
        count(*) as positions,
        round(avg(points), 3) as white_score
    from leads
    group by all
)

select * from final order by phase_order(phase), white_lead;
