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
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

-- How: the lead only changes on a capture or a promotion (a quarter of the plies). Those plies and each
-- game's first, in the lake's order (each game's plies in a row, by ply), get a running sum of the swings
-- over the whole stream (a streaming window: no sort; a window partitioned by game sorts 65 plies a game
-- and is ~4x slower); a game's lead is that sum minus its value at the game's first ply. Each such ply
-- starts a stretch of positions with one lead, up to the next one of its game or the game's end, counted
-- by phase. The stretches must add up to exactly the plies of the games counted (out of order, some
-- would overlap: more), else the query fails rather than answer. The stream is materialized: both its
-- readers (the games' starts, the stretches) take it from one scan and one window, half the CPU of two.
with stream as materialized (
    select
        game_key,
        ply,
        sum(swing) over (rows between unbounded preceding and current row) as running,
        lead(ply) over () as next_ply,
        lead(game_key) over () as next_key
    from (
        select game_key, ply, material_swing(x, promote) as swing
        from stored_plies
        where ply = 0 or x is not null or promote is not null
    )
),

counted_games as (
    -- the games counted, each with its stream's running sum at its first ply (where it starts from 0)
    select games.game_key, n_plies, (2 * white_points(result))::int as half_points, stream.running as start
    from games
    join stream on stream.game_key = games.game_key and stream.ply = 0
    where start_fen is null and result in ('W', 'B', 'D')
),

stretches as (
    -- plies first .. last - 1, White's lead `lead` after each
    select
        half_points,
        running - start as lead,
        ply as first,
        if(next_key = stream.game_key, next_ply, n_plies) as last
    from stream
    join counted_games on counted_games.game_key = stream.game_key
),

by_lead as (
    -- positions and White's half points (2 a win, 1 a draw) summed over them, by phase and clamped lead
    select
        greatest(-5, least(5, lead))::int as white_lead,
        sum(greatest(0, least(last, 20) - first)) as opening,
        sum(greatest(0, least(last, 20) - first) * half_points) as opening_points,
        sum(greatest(0, least(last, 60) - greatest(first, 20))) as middlegame,
        sum(greatest(0, least(last, 60) - greatest(first, 20)) * half_points) as middlegame_points,
        sum(greatest(0, last - greatest(first, 60))) as endgame,
        sum(greatest(0, last - greatest(first, 60)) * half_points) as endgame_points
    from stretches
    group by all
),

checked as (
    select *
    from by_lead
    where if(
        (select sum(opening + middlegame + endgame) from by_lead) = (select sum(n_plies) from counted_games),
        true,
        error('material_by_phase: the plies were not read in their stored order')
    )
),

final as (
    select
        'opening' as phase,
        white_lead,
        opening::bigint as positions,
        opening_points / opening / 2 as white_score
    from checked
    where opening > 0
    union all
    select 'middlegame', white_lead, middlegame::bigint, middlegame_points / middlegame / 2
    from checked
    where middlegame > 0
    union all
    select 'endgame', white_lead, endgame::bigint, endgame_points / endgame / 2
    from checked
    where endgame > 0
)

select phase, white_lead, positions, round(white_score, 3) as white_score
from final
order by phase_order(phase), white_lead;
