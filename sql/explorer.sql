-- Question: from a position, which moves were played, how did they score, and how were they played?
-- Grain: one row per move played from the position (its UCI), over the games the filters keep.
-- Definitions: the position is the FEN in variable explorer_fen (unset: the starting position), found by its
--   PolyGlot key (fen_key): in the position index at any ply when it covers the lake (index_positions,
--   index_gap in sql/views/schema.sql), else in the stored keys (plies.key: the first 10 plies), failing in
--   one line naming the index's build and the Python explorer when they hold no game at the position; when
--   the index covers the lake, holds the position in its pre-aggregate (explorer_aggregate) and the filters
--   are bounds of its cells (explorer_aligned: the same rule as warehouse.positions.aggregate.at), the answer
--   is summed from the pre-aggregate's cells the filters keep (the same rows, without reading games). A game
--   counts once: the move it played the first time it stood at the position (a game that ends there plays
--   none). warehouse.positions.explore runs this file from Python with the moves of the games it found (the
--   index, the replay scan: any ply), the table the variable explorer_positions names. san = the move in SAN
--   from the position (move_san), as python-chess writes it. white_wins/draws/black_wins count results
--   W/D/B; games counts all (unknown results too); mean_elo = mean of the games' mean Elo (both Elos known);
--   mean_eval_cp = mean [%eval] in centipawns after the move, White's view (mate scores left out; null where
--   no game has evals); mean_think = mean seconds the mover spent (plies.think: its clock after its previous
--   move, or tc_base on its first, minus its clock after this move, plus tc_inc; null where clocks are
--   missing); first_played = the earliest game's date and time (UTC, YYYY-MM-DD HH:MM:SS). Means to 3
--   decimals.
-- Parameters (DuckDB variables; null or unset = no filter): explorer_fen, explorer_speed
--   (type: blitz, rapid…), explorer_min_rating / explorer_max_rating (mean Elo bounds, included),
--   explorer_since / explorer_until (dates, included), explorer_player (either side's name).
--   From the CLI: duckdb -cmd "set variable explorer_fen = '<fen>'" < sql/explorer.sql
-- Output: uci, san, games, white_wins, draws, black_wins, mean_elo, mean_eval_cp, mean_think, first_played;
--   by games descending, then uci.
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.queries.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

with target as (
    select coalesce(
        getvariable('explorer_fen'), 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'
    ) as fen
),

-- The position's key, and whether the index covers the lake; not needed when Python gives the moves (the
-- variable explorer_positions set: then the plans drop the index's and the stored keys' reads).
position as materialized (
    select fen_key(fen) as key, index_gap() as gap
    from target
    where getvariable('explorer_positions') is null
),

-- The pre-aggregate's rows at the position (every cell), when it answers: the index covers the lake, the
-- filters are bounds of its cells; none else, or when it does not hold the position.
aggregated as materialized (
    select *
    from explorer_aggregate
    where key = (select key from position)
        and (select gap is null from position)
        and explorer_aligned(
            getvariable('explorer_player'), getvariable('explorer_min_rating'),
            getvariable('explorer_max_rating'), getvariable('explorer_since'), getvariable('explorer_until')
        )
),

-- By the position index, when it covers the lake and the pre-aggregate does not answer: each game once, at
-- the first ply it stands there.
indexed as (
    select filename, row, min(ply) as ply
    from index_positions((select key from position))
    where getvariable('explorer_positions') is null and (select gap is null from position)
        and not exists (select 1 from aggregated)
    group by filename, row
),

-- Else by the stored keys: the plies rows at the position, which hold the moves.
keyed as (
    select game_key, ply, p, f, t, x, c, castle, promote, mates, eval_cp, think
    from all_plies
    where getvariable('explorer_positions') is null
        and key = (select key from position)
        and (select gap is not null from position)
),

-- Each game's first: a position comes back with the same side to move 4 plies later at the soonest (each
-- side's moves undone), so rows before ply 4 are first, and a later one is when no earlier row of its game
-- is (a test of the few rows from ply 4 on, where a window over every row costs a third of the question).
stored as (
    from keyed
    where ply < 4
    union all
    from keyed as later
    where ply >= 4
        and not exists (
            select 1 from keyed as earlier where earlier.game_key = later.game_key and earlier.ply < later.ply
        )
),

-- The moves of the games the index found, by their file and row; or those Python gives, read by row number
-- (warehouse.positions.explorer: faster than this join on game_key and ply).
addressed as (
    select games.game_key, plies.p, plies.f, plies.t, plies.x, plies.c, plies.castle, plies.promote,
        plies.mates, plies.eval_cp, plies.think
    from indexed
    join all_games as games on games.filename = indexed.filename and games.file_row_number = indexed.row
    join plies on plies.game_key = games.game_key and plies.ply = indexed.ply
    union all
    from query(coalesce(
        'select game_key, p, f, t, x, c, castle, promote, mates, eval_cp, think from '
        || getvariable('explorer_positions'),
        'select game_key, p, f, t, x, c, castle, promote, mates, eval_cp, think from plies where false'
    ))
),

-- The games' columns the question reads, and whether the filters keep the game: read once, joined once
-- (a second join would materialize them for every game of the lake).
candidates as (
    select
        game_key,
        result,
        mean_elo,
        datetime,
        (getvariable('explorer_speed') is null or type = getvariable('explorer_speed'))
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
        ) as kept
    from games
),

-- The move each game found played there (none for a game that ends there), with its game's columns.
moves as (
    select found.* exclude (game_key), candidates.result, candidates.mean_elo, candidates.datetime,
        candidates.kept
    from (select stored.* exclude (ply) from stored union all from addressed) as found
    join candidates on candidates.game_key = found.game_key
),

-- The SAN from the fields of any game that played the move (the same in all; Python gives them on one,
-- which the filters may leave out): so from every game, the counts from those kept.
final as (
    select
        f || t || coalesce(lower(promote), '') as uci,
        move_san(
            fen_board(any_value(target.fen)), any_value(p), any_value(f), any_value(t), any_value(x),
            any_value(castle), any_value(promote), any_value(c), any_value(mates)
        ) as san,
        count(*) filter (where kept) as games,
        count(*) filter (where kept and result = 'W') as white_wins,
        count(*) filter (where kept and result = 'D') as draws,
        count(*) filter (where kept and result = 'B') as black_wins,
        round(avg(mean_elo) filter (where kept), 3) as mean_elo,
        round(avg(eval_cp) filter (where kept), 3) as mean_eval_cp,
        round(avg(think) filter (where kept), 3) as mean_think,
        strftime(min(datetime) filter (where kept), '%Y-%m-%d %H:%M:%S') as first_played
    from moves
    cross join target
    group by uci
),

-- From the pre-aggregate: each move's sums over the cells the filters keep (of the variants counted), its
-- SAN from any cell's fields (the same in all).
summed as (
    select
        uci,
        move_san(
            fen_board(any_value(target.fen)), any_value(p), any_value(f), any_value(t), any_value(x),
            any_value(castle), any_value(promote), any_value(c), any_value(mates)
        ) as san,
        coalesce(sum(games) filter (where kept), 0)::bigint as games,
        coalesce(sum(white_wins) filter (where kept), 0)::bigint as white_wins,
        coalesce(sum(draws) filter (where kept), 0)::bigint as draws,
        coalesce(sum(black_wins) filter (where kept), 0)::bigint as black_wins,
        round(sum(elo2_sum) filter (where kept) / 2 / sum(elo_games) filter (where kept), 3) as mean_elo,
        round(sum(eval_sum) filter (where kept) / sum(eval_games) filter (where kept), 3) as mean_eval_cp,
        round(sum(think_sum) filter (where kept) / sum(think_games) filter (where kept), 3) as mean_think,
        strftime(min(first_played) filter (where kept), '%Y-%m-%d %H:%M:%S') as first_played
    from (
        select
            *,
            variant_selected(variant) and explorer_cell_kept(
                type, band, month, getvariable('explorer_speed'), getvariable('explorer_min_rating'),
                getvariable('explorer_max_rating'), getvariable('explorer_since'),
                getvariable('explorer_until')
            ) as kept
        from aggregated
        where uci is not null
    )
    cross join target
    group by uci
)

-- An error when neither the index nor the stored keys found a game; the moves of the games kept.
select * from final where games > 0
union all
select * from summed where games > 0
union all
select error(unanswered('explorer', gap)), null, null, null, null, null, null, null, null, null
from position
where gap is not null and not exists (select 1 from final)
order by games desc, uci;
