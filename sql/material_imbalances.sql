-- Question: how do the classic material imbalances score in each phase?
-- Grain: one row per phase and imbalance met at least once.
-- Definitions: every position after a mainline ply of a game with a result (W, B or D) and a stored
--   material (plies.material: standard chess and Chess960), in its phase by lichess's Divider (plies.phase:
--   'opening', 'middlegame', 'endgame'). From each side's queens Q, rooks R, bishops B, knights N, pawns P
--   on the board (minors = B + N), the imbalance, and the side ahead in it:
--   'bishop pair v knight pair': one side has 2 bishops and no knight, the other 2 knights and no bishop,
--   the same rooks and queens (ahead: the bishops); 'the exchange': one side has one rook more and one minor
--   less, the same queens (ahead: the rook); 'queen v two rooks': one side has one queen more and two rooks
--   less, the same minors (ahead: the queen); 'pawn up': the same pieces, one pawn more (ahead: the pawn).
--   Other positions are not counted. ahead_score = mean over the positions of the ahead side's points in
--   its game (1, 0.5, 0), 3 decimals; white_ahead_pct = 100 x positions where White is ahead / positions.
-- Output: phase, imbalance, positions, white_ahead_pct, ahead_score; by phase (opening first), imbalance.
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.queries.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

-- How: one scan of plies, whose rows carry the material, the phase and their game's result: the positions
-- are counted by material and phase first, each result in its own count (a few thousand groups on a million
-- games), then classified; no join. A filter on the result or the imbalance in a `where` would be pushed by
-- DuckDB below the grouping, to every ply (~2x the CPU): those are tested on the groups.
with positions as (
    select
        material,
        phase,
        count(*) filter (result = 'W') as white_wins,
        count(*) filter (result = 'D') as draws,
        count(*) filter (result = 'B') as black_wins
    from plies
    where material is not null
    group by all
),

counts as (
    select
        phase_name(phase) as phase,
        white_wins + draws + black_wins as positions,
        white_wins + draws / 2 as white_points,
        material_count(material, 'Q') - material_count(material, 'q') as dq,
        material_count(material, 'R') - material_count(material, 'r') as dr,
        material_count(material, 'B') + material_count(material, 'N')
            - material_count(material, 'b') - material_count(material, 'n') as dminor,
        material_count(material, 'P') - material_count(material, 'p') as dp,
        material_count(material, 'B') as wb,
        material_count(material, 'N') as wn,
        material_count(material, 'b') as bb,
        material_count(material, 'n') as bn
    from positions
),

classified as (
    select
        phase,
        positions,
        white_points,
        case
            when dq = 0 and dr = 0 and ((wb = 2 and wn = 0 and bb = 0 and bn = 2)
                or (wb = 0 and wn = 2 and bb = 2 and bn = 0)) then 'bishop pair v knight pair'
            when dq = 0 and abs(dr) = 1 and dminor = -dr then 'the exchange'
            when abs(dq) = 1 and dr = -2 * dq and dminor = 0 then 'queen v two rooks'
            when dq = 0 and dr = 0 and wb = bb and wn = bn and abs(dp) = 1 then 'pawn up'
        end as imbalance,
        case imbalance
            when 'bishop pair v knight pair' then wb = 2
            when 'the exchange' then dr > 0
            when 'queen v two rooks' then dq > 0
            when 'pawn up' then dp > 0
        end as white_ahead
    from counts
),

final as (
    select
        phase,
        imbalance,
        sum(positions) filter (imbalance is not null)::bigint as positions,
        100.0 * sum(positions) filter (white_ahead) / sum(positions) as white_ahead_pct,
        sum(if(white_ahead, white_points, positions - white_points)) / sum(positions) as ahead_score
    from classified
    group by all
)

select
    phase,
    imbalance,
    positions,
    round(coalesce(white_ahead_pct, 0), 2) as white_ahead_pct,
    round(ahead_score, 3) as ahead_score
from final
where positions > 0
order by phase_order(phase), imbalance;
