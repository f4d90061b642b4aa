-- Question: from a position, which moves were played, how did they score, and how were they played?
-- Grain: one row per move played from the position (its UCI), over the games the filters keep.
-- Definitions: the position is the FEN in variable explorer_fen (unset: the starting position), found by its
--   PolyGlot key (fen_key) with key_positions (sql/views/schema.sql): the position index at any ply when it
--   covers the lake, else the stored keys (plies.key: the first 10 plies), which fail in one line naming the
--   index's build and the Python explorer when they hold no game at the position. A game counts once: the
--   move it played the first time it stood at the position (a game that ends there plays none).
--   warehouse.positions.explore runs this file from Python, with the games the replay scan found too (the
--   variable explorer_positions names its table of game_key, ply). san = the move in SAN from the position
--   (move_san), as python-chess writes it. white_wins/draws/black_wins count results W/D/B; games counts all
--   (unknown results too); mean_elo = mean of the games' mean Elo (both Elos known); mean_eval_cp = mean
--   [%eval] in centipawns after the move, White's view (mate scores left out; null where no game has evals);
--   mean_think = mean seconds the mover spent (plies.think: its clock after its previous move, or tc_base on
--   its first, minus its clock after this move, plus tc_inc; null where clocks are missing); first_played =
--   the earliest game's date and time (UTC, YYYY-MM-DD HH:MM:SS). Means to 3 decimals.
-- Parameters (DuckDB variables; null or unset = no filter): explorer_fen, explorer_speed
--   (type: blitz, rapid…), explorer_min_rating / explorer_max_rating (mean Elo bounds, included),
--   explorer_since / explorer_until (dates, included), explorer_player (either side's name).
--   From the CLI: duckdb -cmd "set variable explorer_fen = '<fen>'" < sql/explorer.sql
-- Output: uci, san, games, white_wins, draws, black_wins, mean_elo, mean_eval_cp, mean_think, first_played;
--   by games descending, then uci.
import database 'sql/views';

with position as materialized (
    select
        coalesce(
            getvariable('explorer_fen'), 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'
        ) as fen,
        fen_key(fen) as key
),

found as materialized (
    select game_key, min(ply) as ply
    from (
        select game_key, ply
        from key_positions((select key from position), 'explorer')
        where getvariable('explorer_positions') is null
        union all
        select game_key, ply
        from query(coalesce(
            'select game_key, ply from ' || getvariable('explorer_positions'),
            'select null::bigint as game_key, null::integer as ply where false'
        ))
    )
    group by game_key
),

played as (
    select
        plies.game_key,
        plies.f || plies.t || coalesce(lower(plies.promote), '') as uci,
        plies.p,
        plies.f,
        plies.t,
        plies.x,
        plies.castle,
        plies.promote,
        plies.c,
        plies.mates,
        plies.eval_cp,
        plies.think
    from plies
    join found on found.game_key = plies.game_key and found.ply = plies.ply
),

kept as (
    select game_key, result, mean_elo, datetime
    from games
    where game_key in (select game_key from found)
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
        played.*,
        kept.result,
        kept.mean_elo,
        kept.datetime,
        position.fen
    from played
    join kept on kept.game_key = played.game_key
    cross join position
),

final as (
    select
        uci,
        move_san(
            fen_board(any_value(fen)), any_value(p), any_value(f), any_value(t), any_value(x),
            any_value(castle), any_value(promote), any_value(c), any_value(mates)
        ) as san,
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
