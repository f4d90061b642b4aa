-- The views and macros every file of sql/ uses, in one place.
-- Each question file starts with `import database 'sql/views';`, plain SQL that runs this file (then the
-- empty load.sql), so `duckdb < sql/<file>.sql` works from the project root; warehouse.connect() imports
-- the same folder by its absolute path.
--
-- Lake: the variable chess_lake when set (warehouse.connect sets it), else $CHESS_LAKE, else ./lake; a
-- directory or s3://bucket/prefix.
set variable chess_lake = coalesce(getvariable('chess_lake'), nullif(getenv('CHESS_LAKE'), ''), 'lake');

-- An s3:// lake is read by DuckDB's httpfs extension (loaded on first use; a local lake never loads it). It
-- takes the credentials and region from the environment as the AWS tools do (AWS_ACCESS_KEY_ID,
-- AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, AWS_DEFAULT_REGION). An S3-compatible server
-- ($AWS_ENDPOINT_URL_S3, else $AWS_ENDPOINT_URL, e.g. http://127.0.0.1:9000) is named in the URL's query
-- (s3_endpoint, path-style, SSL as its scheme says) rather than by CREATE SECRET: a secret of type s3
-- needs httpfs even for a local lake, and plain SQL cannot create one only for an S3 lake.
-- warehouse.connect() reads S3 through the project's own filesystem (pyarrow's, the loader's settings) and
-- sets chess_lake_query to '' first.
set variable chess_lake_query = coalesce(getvariable('chess_lake_query'), (
    with config as (
        select nullif(coalesce(nullif(getenv('AWS_ENDPOINT_URL_S3'), ''), getenv('AWS_ENDPOINT_URL')), '') as endpoint
    )
    select
        if(
            lower(getvariable('chess_lake')) like 's3://%' and endpoint is not null,
            '?s3_endpoint=' || regexp_replace(endpoint, '^[a-zA-Z]+://|/+$', '', 'g')
            || '&s3_url_style=path&s3_use_ssl=' || (lower(endpoint) like 'https://%'),
            ''
        )
    from config
));

-- games: one row per game (docs/schema.md), with the hive partition columns type, year, month, and the
-- players' fields under their own names: white_name, white_elo, white_title, white_rating_diff (black_*
-- alike); mean_elo = the mean of the two Elos, elo_diff = White's Elo - Black's (null unless both known).
-- `filename` and `file_row_number` identify a row: queries that number plies per game partition by them.
-- The lake's own name is not a pattern: its `[`, `]`, `?` and `*` are escaped as `[[]`, `[]]`, `[?]`,
-- `[*]`, so that a lake named `lake?` is read alone, not with its sibling `lakeX`.
create or replace temp view games as
select
    *,
    players[1].name as white_name,
    players[2].name as black_name,
    players[1].elo as white_elo,
    players[2].elo as black_elo,
    players[1].title as white_title,
    players[2].title as black_title,
    players[1].rating_diff as white_rating_diff,
    players[2].rating_diff as black_rating_diff,
    (players[1].elo + players[2].elo) / 2 as mean_elo,
    players[1].elo - players[2].elo as elo_diff
from read_parquet(
    regexp_replace(getvariable('chess_lake'), '([][?*])', '[\1]', 'g') || '/games/**/*.parquet'
    || getvariable('chess_lake_query'),
    hive_partitioning = true,
    filename = true,
    file_row_number = true
);

-- rated_games: the games the rating questions count: both Elos known and a result (W, B or D).
create or replace temp view rated_games as
select *
from games
where white_elo is not null and black_elo is not null and result in ('W', 'B', 'D');

-- Side that plays a move, from its piece letter's case: 'white' (upper) or 'black' (lower); right for
-- games set up with Black to move too.
create or replace temp macro mover(letter) as if(letter = upper(letter), 'white', 'black');

-- plies: one row per mainline move, with its game's columns (but the nested moves, variations, headers):
-- `ply` is the move's 0-based index in the game, `m` the move struct, `mover` 'white' or 'black',
-- `mover_elo` the mover's Elo, `piece` the moving piece's letter upper-cased (P N B R Q K).
-- Unnesting range(len(moves)) beside moves numbers the plies ~10x faster than `with ordinality`.
create or replace temp view plies as
select *, mover(m.p) as mover, if(mover = 'white', white_elo, black_elo) as mover_elo, upper(m.p) as piece
from (
    select
        * exclude (moves, variations, headers),
        unnest(range(len(moves))) as ply,
        unnest(moves) as m
    from games
);

-- timed_plies: plies (the same columns) with the mover's clock before the move and the time it spent, in
-- seconds (decimal):
--   clock_before = the mover's clock after its previous move (two plies earlier), tc_base on its first move;
--   think = clock_before - clk + tc_inc.
-- Both are null where a clock is missing or the game has no base+inc time control. A view of its own, as
-- the extra list it unnests costs ~50% more than plies.
create or replace temp view timed_plies as
select
    *,
    clock_before - m.clk + tc_inc as think,
    mover(m.p) as mover,
    if(mover = 'white', white_elo, black_elo) as mover_elo,
    upper(m.p) as piece
from (
    select
        * exclude (moves, variations, headers),
        unnest(range(len(moves))) as ply,
        unnest(moves) as m,
        unnest(list_transform(moves, lambda m, i: if(i > 2, moves[i - 2].clk, tc_base))) as clock_before
    from games
);

-- Points White scored: 1 for a win (W), 0.5 for a draw (D), 0 for a loss (B); null when unknown (*).
create or replace temp macro white_points(result) as
    case result when 'W' then 1.0 when 'D' then 0.5 when 'B' then 0.0 end;

-- 200-point rating band: its lower bound (1500 for 1500..1699).
create or replace temp macro rating_band(elo) as floor(elo / 200)::int * 200;

-- Phase of a position by the 0-based ply index: plies 0-19 (moves 1-10) 'opening', 20-59 (moves 11-30)
-- 'middlegame', from 60 (move 31) on 'endgame'.
create or replace temp macro phase(ply) as
    case when ply < 20 then 'opening' when ply < 60 then 'middlegame' else 'endgame' end;

-- Sort key of a phase, in the order games go through them.
create or replace temp macro phase_order(phase) as
    case phase when 'opening' then 1 when 'middlegame' then 2 when 'endgame' then 3 end;

-- Material value of a piece letter, either case: pawn 1, knight 3, bishop 3, rook 5, queen 9, king 0.
create or replace temp macro piece_value(letter) as
    case upper(letter) when 'P' then 1 when 'N' then 3 when 'B' then 3 when 'R' then 5 when 'Q' then 9 else 0 end;

-- Sort key of a piece letter, either case: P N B R Q K.
create or replace temp macro piece_order(letter) as instr('PNBRQK', upper(letter));
