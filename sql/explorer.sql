-- Question: from a position, which moves were played, how did they score, and how were they played?
-- Grain: one row per move played from the position (its UCI), over the games the filters keep.
-- Definitions: the position is the FEN in variable explorer_fen (unset: the starting position), found by its
--   PolyGlot key in the stored keys (plies.key: the first 10 plies of each game; a position reached twice
--   there counts twice): fen_key(explorer_fen), which refuses a FEN that is none in one line, or the
--   variable explorer_key when set (warehouse.positions.explore runs this file from Python and sets it, the
--   Rust core's key of its FEN). white_wins/draws/black_wins count results W/D/B; games counts all
--   (unknown results too); mean_elo = mean of the games' mean Elo (both Elos known); mean_eval_cp = mean
--   [%eval] in centipawns after the move, White's view (mate scores left out; null where no game has
--   evals); mean_think = mean seconds the mover spent (plies.think: its clock after its previous move, or
--   tc_base on its first, minus its clock after this move, plus tc_inc; null where clocks are missing);
--   first_played = the earliest game's date and time (UTC, YYYY-MM-DD HH:MM:SS). Means to 3 decimals.
-- Parameters (DuckDB variables; null or unset = no filter): explorer_fen (or explorer_key), explorer_speed
--   (type, exact: blitz, rapid…), explorer_min_rating / explorer_max_rating (mean Elo bounds, included),
--   explorer_since / explorer_until (dates, included), explorer_player (either side's name).
--   From the CLI: duckdb -cmd "set variable explorer_fen = '<fen>'" < sql/explorer.sql
-- Output: uci, games, white_wins, draws, black_wins, mean_elo, mean_eval_cp, mean_think, first_played;
--   by games descending, then uci.
import database 'sql/views';

with position as materialized (
    select coalesce(
        getvariable('explorer_key'),
        fen_key(
            coalesce(getvariable('explorer_fen'), 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1')
        )
    ) as key
),

played as (
    select
        plies.game_key,
        plies.f || plies.t || coalesce(lower(plies.promote), '') as uci,
        plies.eval_cp,
        plies.think
    from plies
    where plies.key = (select key from position)
),

kept as (
    select game_key, result, mean_elo, datetime
    from games
    where game_key in (select game_key from played)
        and (getvariable('explorer_speed') is null or type = getvariable('explorer_speed'))
        and (getvariable('explorer_min_rating') is null or mean_elo >= getvariable('explorer_min_rating'))
        and (getvariable('explorer_max_rating') is null or mean_elo <= getvariable('explorer_max_rating'))
        and (getvariable('explorer_since') is null or datetime >= getvariable('explorer_since')::date)
        and (
            getvariable('explorer_until') is null
            or datetime < getvariable('explorer_until')::date + interval 1 day
        )
        and (
            getvariable('explorer_player') is null
            or getvariable('explorer_player') in (white_name, black_name)
        )
),

moves as (
    select
        played.uci,
        played.eval_cp,
        kept.result,
        kept.mean_elo,
        kept.datetime,
        played.think
    from played
    join kept on kept.game_key = played.game_key
),

final as (
    select
        uci,
        count(*) as games,
        count(*) filter (where result = 'W') as white_wins,
        count(*) filter (where result = 'D') as draws,
        count(*) filter (where result = 'B') as black_wins,
        round(avg(mean_elo), 3) as mean_elo,
        round(avg(eval_cp), 3) as mean_eval_cp,
        round(avg(think), 3) as mean_think,
        strftime(min(datetime), '%Y-%m-%d %H:%M:%S') as first_played
    from moves
    group by uci
)

select * from final
order by games desc, uci;
