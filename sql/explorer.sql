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
    select fen_key(fen) as key, fen_board(fen) as board
    from (
        select coalesce(
            getvariable('explorer_fen'), 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'
        ) as fen
    )
),

-- Each game once: the first ply it stands at the position.
found as materialized (
    select filename, row, min(ply) as ply
    from key_positions((select key from position), 'explorer')
    where getvariable('explorer_positions') is null
    group by filename, row
),

-- The move each game found played there (none for a game that ends there); or the moves Python gives
-- (warehouse.positions.explorer reads them by row number, faster than this join on game_key and ply).
played as (
    select found.filename, found.row, found.ply, plies.p, plies.f, plies.t, plies.x, plies.c, plies.castle,
        plies.promote, plies.mates, plies.eval_cp, plies.think
    from found
    join all_games as games on games.filename = found.filename and games.file_row_number = found.row
    join plies on plies.game_key = games.game_key and plies.ply = found.ply
    union all
    from query(coalesce(
        'select filename, row, ply, p, f, t, x, c, castle, promote, mates, eval_cp, think from '
        || getvariable('explorer_positions'),
        'select null::varchar as filename, null::bigint as row, null::integer as ply, p, f, t, x, c, castle, '
        || 'promote, mates, eval_cp, think from plies where false'
    ))
),

moves as (
    select played.*, played.f || played.t || coalesce(lower(played.promote), '') as uci
    from played
),

kept as (
    select moves.uci, moves.eval_cp, moves.think, games.result, games.mean_elo, games.datetime
    from moves
    join games on games.filename = moves.filename and games.file_row_number = moves.row
    where (getvariable('explorer_speed') is null or games.type = getvariable('explorer_speed'))
        and (getvariable('explorer_min_rating') is null or games.mean_elo >= getvariable('explorer_min_rating'))
        and (getvariable('explorer_max_rating') is null or games.mean_elo <= getvariable('explorer_max_rating'))
        and (getvariable('explorer_since') is null or games.datetime >= getvariable('explorer_since')::date)
        and (
            getvariable('explorer_until') is null
            or games.datetime < getvariable('explorer_until')::date + interval 1 day
        )
        and (
            getvariable('explorer_player') is null
            or getvariable('explorer_player') in (games.white_name, games.black_name)
        )
),

-- Each move's SAN, from the fields of any game that played it (the same in all: Python gives them on one).
named as (
    select
        moves.uci,
        move_san(
            any_value(position.board), any_value(p), any_value(f), any_value(t), any_value(x),
            any_value(castle), any_value(promote), any_value(c), any_value(mates)
        ) as san
    from moves
    cross join position
    group by moves.uci
),

final as (
    select
        uci,
        named.san,
        count(*) as games,
        count(*) filter (where result = 'W') as white_wins,
        count(*) filter (where result = 'D') as draws,
        count(*) filter (where result = 'B') as black_wins,
        round(avg(mean_elo), 3) as mean_elo,
        round(avg(eval_cp), 3) as mean_eval_cp,
        round(avg(think), 3) as mean_think,
        strftime(min(datetime), '%Y-%m-%d %H:%M:%S') as first_played
    from kept
    join named using (uci)
    group by uci, named.san
)

select * from final
order by games desc, uci;
