-- The views and macros every file of sql/ uses, in one place.
-- Each question file starts with `import database 'sql/views';`, plain SQL that runs this file (then the
-- empty load.sql), so `duckdb < sql/<file>.sql` works from the project root; warehouse.connect() imports
-- the same folder by its absolute path.
--
-- Lake: the variable chess_lake when set (warehouse.connect sets it), else $CHESS_LAKE, else ./lake; a
-- directory or s3://bucket/prefix. It holds two tables, both in hive partitions type/year/month
-- (docs/schema.md): games/ (one row per game) and plies/ (one row per mainline move: the fields of
-- games.moves but san, nags and comment, beside the game's game_key and the move's ply). A question about
-- moves reads plies, which DuckDB scans column by column, and joins games only for the game's own columns:
-- in games.moves it would decode every field of every move (DuckDB does not prune fields in a list).
set variable chess_lake = coalesce(getvariable('chess_lake'), nullif(getenv('CHESS_LAKE'), ''), 'lake');

-- Times are UTC, as the lake stores them (a game's UTCDate and UTCTime): a date bound (the explorer's and
-- the commands' since/until), a month cut from a time and every time shown read in UTC whatever this
-- machine's time zone, so that the same question over the same lake gives the same answer anywhere.
set TimeZone = 'UTC';

-- An s3:// lake is read by DuckDB's httpfs extension (loaded on first use; a local lake never loads it). It
-- takes the credentials and region from the environment as the AWS tools do (AWS_ACCESS_KEY_ID,
-- AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, AWS_DEFAULT_REGION). An S3-compatible server
-- ($AWS_ENDPOINT_URL_S3, else $AWS_ENDPOINT_URL, e.g. http://127.0.0.1:9000) is named in the URL's query
-- (s3_endpoint, path-style, SSL as its scheme says) rather than by CREATE SECRET: a secret of type s3
-- needs httpfs even for a local lake, and plain SQL cannot create one only for an S3 lake.
-- warehouse.connect() reads S3 through the project's own filesystem (pyarrow's, the loader's settings) and
-- sets chess_lake_query to '' first.
-- The duckdb CLI needs httpfs for an S3 lake (warehouse.connect, which sets chess_lake_query, does not): without
-- it, one line saying how to install it, before DuckDB's autoloading error and a view's missing table.
set variable chess_httpfs = if(
    lower(getvariable('chess_lake')) like 's3://%' and getvariable('chess_lake_query') is null
    and not exists (from duckdb_extensions() where extension_name = 'httpfs' and (installed or loaded)),
    error(getvariable('chess_lake') || ': an S3 lake needs the duckdb CLI''s httpfs extension: run '
        || '`python -m warehouse.queries.extensions` (or duckdb -c "install httpfs")'),
    true
);
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

-- A path of the lake as read: the lake's own name is not a pattern, its `[`, `]`, `?` and `*` are escaped
-- as `[[]`, `[]]`, `[?]`, `[*]` (a lake named `lake?` is read alone, not with its sibling `lakeX`); `rel`
-- (a pattern) follows, then the S3 endpoint's query.
create or replace temp macro lake_path(rel) as
    regexp_replace(getvariable('chess_lake'), '([][?*])', '[\1]', 'g') || '/' || rel
    || getvariable('chess_lake_query');

-- The layout guard. A lake of layout 1 (written before plies/ existed: games/ and no _layout.json), 2
-- (before plies.think and plies.mates), 3 (before plies.analysed) or 4 (before plies.material and
-- plies.phase), of a newer layout than these views read (5), a damaged _layout.json, or no lake at all makes every view fail, when a query uses it, with one
-- line naming the fix: `python -m loaders.upgrade --lake <lake>` upgrades an older lake in place.
-- The error is raised by the query, not here: a failed import would add a second error line, the
-- question's own. Cost: one small read, _layout.json's number; games/ is listed only when that file is
-- missing (glob('') lists nothing). The file is named by a pattern ([_]layout.json) so that DuckDB lists
-- rather than opens it: a missing file is then no row, where S3 would answer an HTTP error.
set variable chess_lake_failure = null::varchar;
-- _layout.json's number: null without that file, 0 for a file that does not hold {"layout": N}, N a whole
-- number from 1 (damaged: as Python's Lake.layout reads it). Read as bytes: a damaged file need not be text.
set variable chess_lake_layout = (
    select max(
        case
            when not coalesce(json_valid(text), false) then 0
            when json_type(text, '$.layout') = 'UBIGINT'
                then least(json_extract_string(text, '$.layout')::hugeint, 2147483647)::integer
            else 0
        end
    )
    from (select try(decode(content)) as text from read_blob(lake_path('[_]layout.json')))
);
set variable chess_lake_error = (
    with games as (
        select count(*) as files
        from (
            select 1
            from glob(if(getvariable('chess_lake_layout') is null, lake_path('games/**/*.parquet'), ''))
            limit 1
        )
    )
    select
        case
            when getvariable('chess_lake_layout') = 0 then
                getvariable('chess_lake') || '/_layout.json: damaged: expected {"layout": 5}'
            when getvariable('chess_lake_layout') > 5 then
                getvariable('chess_lake') || ': a lake of layout ' || getvariable('chess_lake_layout')
                || ', written by a newer bgn-warehouse; these views read layout 5: upgrade bgn-warehouse'
            when getvariable('chess_lake_layout') in (2, 3, 4) then
                getvariable('chess_lake') || ': a lake of layout ' || getvariable('chess_lake_layout') || ' ('
                || ['before plies.think and plies.mates', 'before plies.analysed',
                    'before plies.material and plies.phase'][
                    getvariable('chess_lake_layout') - 1
                ]
                || '); upgrade it in place with `python -m loaders.upgrade --lake ' || getvariable('chess_lake')
                || '`'
            when getvariable('chess_lake_layout') is null and files > 0 then
                getvariable('chess_lake') || ': a lake of layout 1 (before the plies/ table); upgrade it in '
                || 'place with `python -m loaders.upgrade --lake ' || getvariable('chess_lake') || '`'
            when getvariable('chess_lake_layout') is null then
                getvariable('chess_lake') || ': no lake here (no _layout.json, no games/)'
        end
    from games
);

-- Which rules the views count: the variable `variant` unset, standard chess (the `variant`s 'Standard' and
-- 'Chess960'); set to one of the `variant` column's names ('Standard', 'Chess960', 'Crazyhouse', 'Atomic',
-- 'Antichess', 'Horde', 'King of the Hill', 'Racing Kings', 'Three-check'), that variant's games only; set
-- to 'all', every game. So a question never mixes chess with its variants unless asked to:
--   set variable variant = 'Atomic';
-- selected_variants() is the list of the variants counted, null for 'all'; any other value fails the
-- query with one line naming the choices.
create or replace temp macro selected_variants() as
    case coalesce(getvariable('variant'), '')
        when '' then ['Standard', 'Chess960']
        when 'all' then null::varchar[]
        else if(
            getvariable('variant') in ('Standard', 'Chess960', 'Crazyhouse', 'Atomic', 'Antichess', 'Horde',
                'King of the Hill', 'Racing Kings', 'Three-check'),
            [getvariable('variant')],
            error('variable variant: unknown variant ''' || getvariable('variant') || ''' (choose '
                || 'Standard, Chess960, Crazyhouse, Atomic, Antichess, Horde, King of the Hill, Racing Kings, '
                || 'Three-check, or all; unset: Standard and Chess960)')
        )
    end;

-- Whether a game or ply of variant `v` is counted.
create or replace temp macro variant_selected(v) as coalesce(list_contains(selected_variants(), v), true);

-- A string as an SQL literal.
create or replace temp macro sql_literal(text) as '''' || replace(text, '''', '''''') || '''';

-- A lake whose loads wrote no game (every one rejected) has no table to read: the guard says so.
set variable chess_lake_games = getvariable('chess_lake_error') is null
    and exists (select 1 from glob(lake_path('games/**/*.parquet')));
set variable chess_lake_error = coalesce(
    getvariable('chess_lake_error'),
    if(
        getvariable('chess_lake_games'),
        null,
        getvariable('chess_lake') || ': the lake holds no games yet (its loads'' rejects: rejects/)'
    )
);

-- The plies/ file holding the plies of the games of the games/ file `games_file` (the file of the same name
-- under plies/), as DuckDB's file lists name it.
create or replace temp macro plies_twin(games_file) as
    getvariable('chess_lake') || '/plies/'
    || substr(games_file, length(getvariable('chess_lake') || '/games/') + 1);

-- The plies/ files whose games/ file was missing when the views opened (a games file deleted by hand, which
-- `python -m warehouse.maintenance.check` reports), as an SQL list, null when there is none (a lake as the loader left
-- it): the plies views leave them out, so that they count the plies of the games they count. Taken when
-- the views open, not at each query: a filter on `filename` by a list keeps the stored order
-- (stored_plies), where a join with the games files listed at query time loses it; files written since
-- (a load from another process) are read, as they come with their games.
set variable chess_lake_orphans = (
    select '(' || string_agg(sql_literal(file), ', ') || ')'
    from (
        select file
        from glob(if(getvariable('chess_lake_games'), lake_path('plies/**/*.parquet'), ''))
        except
        select plies_twin(file)
        from glob(if(getvariable('chess_lake_games'), lake_path('games/**/*.parquet'), ''))
    )
);

-- What the views saw of the lake's games when they opened, from one read of the games files' footers (no
-- row is read):
--   variants: the variants of the lake's games, from the min/max statistics of their `variant` column; null
--     unless every row group holds one variant (not so for a row group mixing variants, a file written
--     without these statistics, a lake without games);
--   games, plies: those games files and their plies/ twins, as SQL lists ('…', '…').
-- When the variants counted include them all, as for a lake of lichess's standard games, the games and
-- plies views read these files without testing each row's variant (the test costs 12-35% of a per-move
-- question, the plies scan decoding `variant` for every row it keeps), and test every row of any file
-- written since the views opened (a load into the lake from another process, a compaction), so a
-- connection kept open never counts another variant's games. DuckDB prunes files by `filename` before
-- reading them: the split costs nothing. One read, so that the files and their variants agree.
set variable chess_lake_snapshot = (
    select {
        'variants': if(bool_and(stats_min_value = stats_max_value), list(distinct stats_min_value), null),
        'games': '(' || string_agg(distinct sql_literal(file_name), ', ') || ')',
        'plies': '(' || string_agg(distinct sql_literal(plies_twin(file_name)), ', ') || ')'
    }
    from query(if(
        getvariable('chess_lake_games'),
        'select file_name, stats_min_value, stats_max_value from parquet_metadata('
        || sql_literal(lake_path('games/**/*.parquet')) || ') where path_in_schema = ''variant''',
        'select null::varchar as file_name, null::varchar as stats_min_value, '
        || 'null::varchar as stats_max_value where false'
    ))
);

-- The SQL text reading each table, run by query() in lake_table. For a lake the guard refuses, a typed
-- empty stand-in with the columns the views name, so that the views can still be created.
set variable chess_games_source = if(
    getvariable('chess_lake_error') is null,
    'from read_parquet(' || sql_literal(lake_path('games/**/*.parquet'))
    || ', hive_partitioning = true, filename = true, file_row_number = true)',
    'select null::bigint as game_key, null::varchar as type, null::bigint as year, null::bigint as month, '
    || 'null::struct(name varchar, elo integer, rating_diff integer, title varchar)[] as players, '
    || 'null::varchar as result, null::integer as tc_base, null::integer as tc_inc, null::varchar as variant, '
    || 'null::integer as moves, null::integer as variations, null::integer as headers, '
    || 'null::bigint as final_key, null::integer as n_plies, null::integer as white_castled, '
    || 'null::varchar as white_castle, null::integer as black_castled, null::varchar as black_castle, '
    || 'null::integer as middlegame_ply, null::integer as endgame_ply, null::bigint as endgame_material, '
    || 'null::bigint as final_material, '
    || 'null::varchar as filename, '
    || 'null::bigint as file_row_number where false'
);
set variable chess_plies_source = if(
    getvariable('chess_lake_error') is null,
    'from read_parquet(' || sql_literal(lake_path('plies/**/*.parquet'))
    || ', hive_partitioning = true, filename = true)'
    || coalesce(' where filename not in ' || getvariable('chess_lake_orphans'), ''),
    'select null::bigint as game_key, null::integer as ply, null::varchar as p, null::decimal(9, 1) as clk, '
    || 'null::decimal(9, 1) as think, null::boolean as analysed, null::varchar as variant, '
    || 'null::varchar as result, null::bigint as key, null::bigint as material, null::tinyint as phase, null::varchar as filename '
    || 'where false'
);

-- The SQL that reads table `name` ('games' or 'plies'), or the guard's error once the views exist.
create or replace temp macro lake_table(name) as
    if(
        getvariable('chess_lake_failure') is null,
        getvariable('chess_' || name || '_source'),
        error(getvariable('chess_lake_failure'))
    );

-- The SQL that reads the rows of table `name` of the variants counted: every row when the lake held no
-- other variant when the views opened (chess_lake_snapshot; files written since are tested row by row),
-- else those variant_selected keeps. While the views are created
-- (chess_views_created unset) the variable `variant` is not read: a wrong one fails the query, not them.
set variable chess_views_created = null::boolean;
create or replace temp macro selected_table(name) as
    case
        when getvariable('chess_views_created') is null or selected_variants() is null then lake_table(name)
        when coalesce(list_has_all(selected_variants(), getvariable('chess_lake_snapshot').variants), false)
            and getvariable('chess_lake_snapshot')[name] is not null
            then 'select * from (' || lake_table(name) || ') where filename in '
                || getvariable('chess_lake_snapshot')[name] || ' union all select * from (' || lake_table(name)
                || ') where filename not in ' || getvariable('chess_lake_snapshot')[name]
                || ' and variant_selected(variant)'
        else 'select * from (' || lake_table(name) || ') where variant_selected(variant)'
    end;

-- all_games: every game of the lake, of every variant (docs/schema.md); what variants.sql compares.
create or replace temp view all_games as
select * from query(lake_table('games'));

-- game_fields(source): the rows of the SQL `source` (rows of games/ files) with the players' fields under
-- their own names: white_name, white_elo, white_title, white_rating_diff (black_* alike); mean_elo = the
-- mean of the two Elos, elo_diff = White's Elo - Black's (null unless both known). The games view's fields,
-- and the filters' (an export filters its batches with them: warehouse/exports/lake_scan.py).
create or replace temp macro game_fields(source) as table
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
from query(source);

-- games: one row per game of the variants the variable `variant` selects (unset: standard chess, Chess960
-- included; see variant_selected) (docs/schema.md; `game_key` is the int64 key the plies join on, unique per game),
-- with the hive partition columns type, year, month, and the players' fields (game_fields). `filename` and
-- `file_row_number` identify a row of a file.
create or replace temp view games as
from game_fields(selected_table('games'));

-- rated_games: the games the rating questions count: both Elos known and a result (W, B or D).
create or replace temp view rated_games as
select *
from games
where white_elo is not null and black_elo is not null and result in ('W', 'B', 'D');

-- Side that plays a move, from its piece letter's case: 'white' (upper) or 'black' (lower); right for
-- games set up with Black to move too.
create or replace temp macro mover(letter) as if(letter = upper(letter), 'white', 'black');

-- The rows of the plies/ table that the SQL `source` reads, with `mover` and `piece` (see plies).
create or replace temp macro plies_read(source) as table
select * exclude (filename), mover(p) as mover, upper(p) as piece
from query(source);

-- all_plies: every ply of the lake, of every variant: the plies/ table, with `mover` and `piece` (below).
create or replace temp view all_plies as
from plies_read(lake_table('plies'));

-- plies: one row per mainline move of the games the variable `variant` selects (as games does): `game_key`
-- (its game's, see games), `ply` (the move's 0-based index in the game), the move's fields as in
-- games.moves (docs/schema.md): p f t x c castle promote blast nag eval_cp eval_mate clk (`f` null for a
-- drop); `think`, the seconds the mover spent on it, and `mates`, whether it checkmates (docs/schema.md);
-- `variant` and `result` (its game's); `key`, `material` and `phase` (docs/schema.md); the hive partitions type, year, month (its game's); and `mover` 'white' or
-- 'black', `piece` the moving piece's letter upper-cased (P N B R Q K).
-- Rows come in no set order (two scans, see selected_table): a question that reads neighbouring plies of a
-- game in the table's order reads stored_plies. No join: a question that needs a game's columns reads
-- game_plies, which pays for one.
create or replace temp view plies as
from plies_read(selected_table('plies'));

-- stored_plies: plies (the same rows and columns) in the table's stored order: the games' files in turn, each
-- game's plies in a row, by ply, for streaming windows (`lag(…) over ()`: material_by_phase).
-- One scan, every row's variant tested (DuckDB interleaves the two scans of plies under load).
create or replace temp view stored_plies as
from plies_read('select * from (' || lake_table('plies') || ') where variant_selected(variant)');

-- game_plies: plies (the same columns) beside the columns of their game, but its nested moves, variations
-- and headers (games' derived white_elo, mean_elo … included), and `mover_elo`, the mover's Elo. A hash
-- join on game_key, the games the build side: a filter on a game's column reaches the games scan, and
-- DuckDB passes the keys it keeps to the plies scan (a Bloom filter), so that a selective filter
-- (has_eval, mate) reads the plies of those games only.
create or replace temp view game_plies as
select
    plies.*,
    games.* exclude (game_key, type, year, month, variant, result, moves, variations, headers),
    if(plies.mover = 'white', games.white_elo, games.black_elo) as mover_elo
from plies
join games on games.game_key = plies.game_key;

-- timed_plies: game_plies (the same columns) with the mover's clock before the move, in seconds (decimal):
--   clock_before = the mover's clock after its previous move (two plies earlier), tc_base on its first move.
-- Read back from the stored think (= clock_before - clk + tc_inc): no window, so the view scans in parallel
-- and a filter on a game's column reaches the games scan. Null where the game has no base+inc time control,
-- and on a later move where its own clock or the previous one is missing (think unknown).
create or replace temp view timed_plies as
select
    *,
    case
        when think is not null then think + clk - tc_inc
        when ply < 2 then tc_base::decimal(9, 1)
    end as clock_before
from game_plies;

-- Points White scored: 1 for a win (W), 0.5 for a draw (D), 0 for a loss (B); null when unknown (*).
create or replace temp macro white_points(result) as
    case result when 'W' then 1.0 when 'D' then 0.5 when 'B' then 0.0 end;

-- The smallest sample a rate is drawn from: a point (a ply or clock bucket, a rating band) of fewer moves
-- than this is left out of the notebooks' plots; the answers keep every row, with its count of moves.
-- At a rate of 2 in 100 (blunders), 100 moves know it to within ~±3 in 100 (95%); fewer, not at all.
create or replace temp macro min_sample() as 100;

-- 200-point rating band: its lower bound (1500 for 1500..1699).
create or replace temp macro rating_band(elo) as floor(elo / 200)::int * 200;

-- Phase of a position by the 0-based ply index: plies 0-19 (moves 1-10) 'opening', 20-59 (moves 11-30)
-- 'middlegame', from 60 (move 31) on 'endgame'. phase_plies(): the first plies of the middlegame and the
-- endgame, a constant, for a question that counts each phase's plies by a filter on `ply` (piece_phase).
create or replace temp macro phase_plies() as [20, 60];
create or replace temp macro phase(ply) as
    case when ply < phase_plies()[1] then 'opening' when ply < phase_plies()[2] then 'middlegame' else 'endgame'
    end;

-- Sort key of a phase, in the order games go through them.
create or replace temp macro phase_order(phase) as
    case phase when 'opening' then 1 when 'middlegame' then 2 when 'endgame' then 3 end;

-- Material value of a piece letter, either case: pawn 1, knight 3, bishop 3, rook 5, queen 9, king 0 (0 for
-- null). A list lookup by the letter's place in 'PNBRQKpnbrqk': ~5x faster than a CASE on upper(letter).
create or replace temp macro piece_value(letter) as
    coalesce([1, 3, 3, 5, 9, 0, 1, 3, 3, 5, 9, 0][instr('PNBRQKpnbrqk', letter)], 0);

-- White's material lead gained by a move (its x and promote): + the value taken from Black, - the value
-- taken from White, +/- (the new piece's value - 1) for a White/Black promotion; 0 for most moves.
create or replace temp macro material_swing(x, promote) as
    coalesce([-1, -3, -3, -5, -9, 0, 1, 3, 3, 5, 9, 0][instr('PNBRQKpnbrqk', x)], 0)
    + coalesce([0, 2, 2, 4, 8, 0, 0, -2, -2, -4, -8, 0][instr('PNBRQKpnbrqk', promote)], 0);

-- The material columns (plies.material after each move, games.final_material after the last; null for
-- variants other than standard chess and Chess960; docs/schema.md): each side's count of pawns, knights,
-- bishops, rooks and queens packed four bits each, White's P N B R Q from bit 0, Black's from bit 20.
-- material_count(material, letter): the count of the piece `letter` (P N B R Q for White's, p n b r q
-- for Black's).
create or replace temp macro material_count(material, letter) as
    (material >> (4 * (instr('PNBRQpnbrq', letter) - 1))) & 15;

-- material_points(material, white): the side's material, pawn 1, knight 3, bishop 3, rook 5, queen 9.
create or replace temp macro material_points(material, white) as (
    (material >> if(white, 0, 20)) & 15) + 3 * ((material >> if(white, 4, 24)) & 15)
    + 3 * ((material >> if(white, 8, 28)) & 15) + 5 * ((material >> if(white, 12, 32)) & 15)
    + 9 * ((material >> if(white, 16, 36)) & 15);

-- material_lead(material): White's material - Black's, in points.
create or replace temp macro material_lead(material) as
    material_points(material, true) - material_points(material, false);

-- material_signature(material): the pieces on the board as letters, White's then Black's, each side's
-- king first then queens, rooks, bishops, knights, pawns: 'KQRRBBNNPPPPPPPPkqrrbbnnpppppppp' at the start.
create or replace temp macro material_signature(material) as
    'K' || repeat('Q', material_count(material, 'Q')) || repeat('R', material_count(material, 'R'))
    || repeat('B', material_count(material, 'B')) || repeat('N', material_count(material, 'N'))
    || repeat('P', material_count(material, 'P'))
    || 'k' || repeat('q', material_count(material, 'q')) || repeat('r', material_count(material, 'r'))
    || repeat('b', material_count(material, 'b')) || repeat('n', material_count(material, 'n'))
    || repeat('p', material_count(material, 'p'));

-- The phase name of plies.phase (lichess's Divider after the move: 0 opening, 1 middlegame, 2 endgame).
create or replace temp macro phase_name(phase) as ['opening', 'middlegame', 'endgame'][phase + 1];

-- Sort key of a piece letter, either case: P N B R Q K.
create or replace temp macro piece_order(letter) as instr('PNBRQK', upper(letter));

-- PolyGlot's 781 Zobrist keys (load.sql reads them from polyglot_keys.csv): `idx` in PolyGlot's order
-- (64 x piece kind + square for the pieces, 768-771 castling K Q k q, 772-779 the en-passant file, 780
-- White to move), `key` its unsigned 64 bits read as a signed bigint. tests/test_positions.py compares
-- them with python-chess's POLYGLOT_RANDOM_ARRAY.
create or replace temp table polyglot_keys(idx smallint primary key, key bigint not null);

-- The FEN of a chess position, read as python-chess's Board(fen, chess960=True) reads it and as the Python
-- path's `_core.fen_key` does (one rule set, tests/test_fen_keys.py): fields split at runs of whitespace
-- (Python's: Unicode's and U+001C-U+001F), at most 6 (board, side to move, castling, en passant, halfmove,
-- fullmove; the missing ones default to w, -, -); a board of 8 ranks of 8 squares from rank 8, pieces
-- pnbrqkPNBRQK, digits 1-8 never two in a row (no crazyhouse `~`); castling `-` or up to two of KQA-H then
-- up to two of kqa-h (K and Q the outermost rook, a file letter that file's: X-FEN and Shredder-FEN);
-- whole-number counters; one king a side, no pawn on the first or last rank, the side not to move not in
-- check. Castling rights the position cannot have and an en-passant square no double step left are
-- dropped, as python-chess's clean_castling_rights and shakmaty do. Castling rights are read as Chess960's
-- where only Chess960 allows them (a king off the e-file, a rook off the corner), as python-chess reads a
-- PGN's FEN tag and the load does.

-- fen_fields(fen): the FEN's fields, split at runs of Python's whitespace.
create or replace temp macro fen_fields(fen) as list_filter(
    regexp_split_to_array(
        fen,
        '[\t\n\x0b\x0c\r\x1c-\x1f \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]+'
    ),
    lambda p: p <> ''
);

-- fen_board_ranks(board): the board's ranks from rank 8, each digit spelt as that many dots (empty squares).
create or replace temp macro fen_board_ranks(board) as string_split(
    replace(replace(replace(replace(replace(replace(replace(replace(
        board, '8', '........'), '7', '.......'), '6', '......'), '5', '.....'), '4', '....'), '3', '...'),
        '2', '..'), '1', '.'),
    '/'
);

-- fen_piece(squares, file, rank): the letter on a square of `squares` (64 letters or dots, a1 b1 … h8),
-- files and ranks from 0; '' off the board.
create or replace temp macro fen_piece(squares, file, rank) as
    if(file between 0 and 7 and rank between 0 and 7, substr(squares, 8 * rank + file + 1, 1), '');

-- fen_attacked(squares, sq, white): whether White's (`white`) or Black's pieces attack square `sq` (0-63).
create or replace temp macro fen_attacked(squares, sq, white) as
    -- pawns, from the rank behind the square as they move
    list_contains(
        [
            fen_piece(squares, sq % 8 - 1, sq // 8 + if(white, -1, 1)),
            fen_piece(squares, sq % 8 + 1, sq // 8 + if(white, -1, 1))
        ],
        if(white, 'P', 'p')
    )
    or list_contains(
        list_transform(
            [[1, 2], [2, 1], [2, -1], [1, -2], [-1, -2], [-2, -1], [-2, 1], [-1, 2]],
            lambda d: fen_piece(squares, sq % 8 + d[1], sq // 8 + d[2])
        ),
        if(white, 'N', 'n')
    )
    or list_contains(
        list_transform(
            [[1, 0], [1, 1], [0, 1], [-1, 1], [-1, 0], [-1, -1], [0, -1], [1, -1]],
            lambda d: fen_piece(squares, sq % 8 + d[1], sq // 8 + d[2])
        ),
        if(white, 'K', 'k')
    )
    -- sliders: the first piece along each line, a rook or queen straight, a bishop or queen diagonally
    or len(list_filter(
        [[1, 0], [0, 1], [-1, 0], [0, -1], [1, 1], [-1, 1], [-1, -1], [1, -1]],
        lambda d: contains(
            if(d[1] = 0 or d[2] = 0, if(white, 'RQ', 'rq'), if(white, 'BQ', 'bq')),
            -- '' past the edge: then no piece stands on the line
            coalesce(
                nullif(
                    list_filter(
                        list_transform(
                            range(1, 8), lambda n: fen_piece(squares, sq % 8 + d[1] * n, sq // 8 + d[2] * n)
                        ),
                        lambda c: c <> '.'
                    )[1],
                    ''
                ),
                '.'
            )
        )
    )) > 0;

-- fen_castling(squares, castling, white): the PolyGlot indexes (768 K, 769 Q, 770 k, 771 q) of the castling
-- rights of White (`white`) or Black that the position can have: each letter names a rook square of the
-- back rank (K/Q: the outermost rook or king that side, if a rook, else the h/a file; a file letter: that
-- file); a right stands when its king is on the back rank and a rook on the square, the king-side one the
-- rightmost of them right of the king, the queen-side one the leftmost left of it.
create or replace temp macro fen_castling(squares, castling, white) as (
    with back as (
        select
            substr(squares, if(white, 1, 57), 8) as rank,
            if(white, 'R', 'r') as rook,
            instr(substr(squares, if(white, 1, 57), 8), if(white, 'K', 'k')) - 1 as king,
            list_filter(string_split(castling, ''), lambda c: c <> '-' and (c = upper(c)) = white) as letters
    ),

    ends as (
        select
            *,
            list_filter(range(8), lambda f: substr(rank, f + 1, 1) in (rook, if(white, 'K', 'k'))) as pieces
        from back
    ),

    rooks as (
        select
            king,
            list_filter(
                list_transform(
                    letters,
                    lambda c: case lower(c)
                        when 'k' then if(substr(rank, list_max(pieces) + 1, 1) = rook, list_max(pieces), 7)
                        when 'q' then if(substr(rank, list_min(pieces) + 1, 1) = rook, list_min(pieces), 0)
                        else ascii(lower(c)) - ascii('a')
                    end
                ),
                lambda f: substr(rank, f + 1, 1) = rook
            ) as files
        from ends
    )

    select
        if(king >= 0 and list_max(files) > king, [if(white, 768, 770)], [])
        || if(king >= 0 and list_min(files) < king, [if(white, 769, 771)], [])
    from rooks
);

-- fen_problem(fields): why fen_fields' `fields` are no FEN of a chess position as above; null when they are.
create or replace temp macro fen_problem(fields) as (
    with parts as (
        select
            fields[1] as board,
            coalesce(fields[2], 'w') as turn,
            coalesce(fields[3], '-') as castling,
            coalesce(fields[4], '-') as ep,
            array_to_string(list_reverse(fen_board_ranks(fields[1])), '') as squares
    )

    select
        case
            when len(fields) = 0 then 'no FEN, only whitespace'
            when len(fields) > 6 then 'more than 6 fields'
            when not regexp_full_match(board, '[1-8pnbrqkPNBRQK]+(/[1-8pnbrqkPNBRQK]+){7}') then
                'the board is not 8 ranks of pieces (pnbrqkPNBRQK) and digits 1-8 between 7 slashes'
            when regexp_matches(board, '[1-8][1-8]') then 'two digits in a row in a rank'
            when list_max(list_transform(fen_board_ranks(board), lambda r: length(r))) <> 8
                or list_min(list_transform(fen_board_ranks(board), lambda r: length(r))) <> 8 then
                'a rank of the board is not 8 squares'
            when turn not in ('w', 'b') then 'the side to move is neither w nor b'
            when not regexp_full_match(castling, '-|[KQA-H]{0,2}[kqa-h]{0,2}') then
                'the castling rights are not -, nor up to two of KQA-H then up to two of kqa-h'
            when not regexp_full_match(ep, '-|[a-h][1-8]') then
                'the en passant square is neither - nor a square'
            when not regexp_full_match(coalesce(fields[5], '0'), '[0-9]+') then
                'the halfmove clock is not a whole number'
            when not regexp_full_match(coalesce(fields[6], '1'), '[0-9]+') then
                'the fullmove number is not a whole number'
            when length(squares) - length(replace(squares, 'K', '')) <> 1 then 'not one white king'
            when length(squares) - length(replace(squares, 'k', '')) <> 1 then 'not one black king'
            when regexp_matches(substr(squares, 1, 8) || substr(squares, 57, 8), '[pP]') then
                'a pawn on the first or last rank'
            when fen_attacked(squares, instr(squares, if(turn = 'w', 'k', 'K')) - 1, turn = 'w') then
                'the side not to move is in check'
        end
    from parts
);

-- fen_key(fen): the PolyGlot key of a FEN's position (a bigint, as plies.key and games.final_key hold
-- keys), as `_core.fen_key` computes it for the Python path; an error, one line, for a FEN that is none
-- (fen_problem); null for null. The XOR of polyglot_keys (load.sql) of its pieces, its castling rights
-- (fen_castling), its en-passant file when the square is one a double step just passed (the stepped pawn
-- of the side not to move in front of it, that square and the one behind empty) and a pawn of the side to
-- move stands beside the pawn that stepped, legal capture or not (PolyGlot's rule, the lake's), and White
-- to move.
create or replace temp macro fen_key(fen) as (
    with parts as (
        select
            fen_problem(fen_fields(fen)) as problem,
            array_to_string(list_reverse(fen_board_ranks(fen_fields(fen)[1])), '') as squares,
            coalesce(fen_fields(fen)[2], 'w') = 'w' as white,
            coalesce(fen_fields(fen)[3], '-') as castling,
            coalesce(fen_fields(fen)[4], '-') as ep
    ),

    en_passant as (
        select
            *,
            -- the en-passant file, and the rank of the pawn that stepped (0-based)
            ascii(ep) - ascii('a') as ep_file,
            if(white, 4, 3) as stepped
        from parts
    ),

    indexes as (
        select
            -- pieces: 64 x kind (black pawn 0, white pawn 1, black knight 2 … white king 11) + square
            list_transform(
                list_filter(range(64), lambda i: substr(squares, i + 1, 1) <> '.'),
                lambda i: 64 * (
                    2 * (instr('pnbrqk', lower(substr(squares, i + 1, 1))) - 1)
                    + (substr(squares, i + 1, 1) = upper(substr(squares, i + 1, 1)))::int
                ) + i
            )
            || fen_castling(squares, castling, true)
            || fen_castling(squares, castling, false)
            || if(
                ep <> '-'
                and substr(ep, 2, 1) = if(white, '6', '3')
                and fen_piece(squares, ep_file, stepped) = if(white, 'p', 'P')
                and fen_piece(squares, ep_file, stepped + if(white, 1, -1)) = '.'
                and fen_piece(squares, ep_file, stepped + if(white, 2, -2)) = '.'
                and if(white, 'P', 'p') in (
                    fen_piece(squares, ep_file - 1, stepped), fen_piece(squares, ep_file + 1, stepped)
                ),
                [772 + ep_file],
                []
            )
            || if(white, [780], []) as idx,
            problem
        from en_passant
    )

    select
        case
            when fen is null then null
            when problem is not null then error(
                'invalid FEN "' || regexp_replace(fen, '[\x00-\x1f\x7f\x{85}\x{2028}\x{2029}]', '?', 'g')
                || '": ' || problem
            )
            else list_reduce(
                list_select(
                    (select list(key order by idx) from polyglot_keys), list_transform(idx, lambda i: i + 1)
                ),
                lambda a, b: xor(a, b)
            )
        end
    from indexes
);

-- The optional position index (docs/positions.md; `python -m loaders.position_index` builds it): every
-- position of every game (before each ply, and the final one) as (key, file, row, ply), sorted by key, in
-- _index/positions/<op>/<bucket>.parquet (4 hex digits), beside covers.parquet: the games files it covers
-- (`file` numbers them, `path` names them in the lake, `games`), published after the key files; a rebuild
-- retires the index before it. chess_index_files: whether the views found covers files and key files when
-- they opened (one listing); the views below list them again at each query (a connection kept open across a
-- rebuild reads the new index), and read nothing when none was there.
set variable chess_index_files = (
    select {
        'covers': count(*) filter (where file like '%/covers.parquet') > 0,
        'keys': count(*) filter (where file not like '%/covers.parquet') > 0,
        'explorer': count(*) filter (where file like '%/explorer.parquet') > 0
    }
    from glob(lake_path('_index/positions/*/*.parquet'))
);

-- index_covers: the games files the position index covers: `file` (its number in the index), `filename`
-- (as the games view's `filename` names it), `games`, `op` (the index's folder): of the last index built
-- whose covers.parquet is there. position_index: that index's rows, `key`, `file`, `row` (the game's row in
-- its file: the games view's `file_row_number`), `ply` (n_plies for the final position); a filter on `key`
-- reads the row groups whose min/max statistics can hold it.
create or replace temp view index_covers as
from query(if(
    getvariable('chess_index_files').covers,
    'select file, ' || sql_literal(getvariable('chess_lake') || '/') || ' || path as filename, games, '
    || 'regexp_extract(filename, ''/_index/positions/([^/]+)/covers[.]parquet'', 1) as op '
    || 'from read_parquet(' || sql_literal(lake_path('_index/positions/*/covers.parquet'))
    || ', filename = true) qualify op = max(op) over ()',
    'select null::integer as file, null::varchar as filename, null::bigint as games, null::varchar as op '
    || 'where false'
));
create or replace temp view position_index as
from query(if(
    getvariable('chess_index_files').keys,
    'select key, file, row, ply from read_parquet(' || sql_literal(lake_path(
        '_index/positions/*/[0-9a-f][0-9a-f][0-9a-f][0-9a-f].parquet'
    )) || ', filename = true) where regexp_extract(filename, ''/_index/positions/([^/]+)/'', 1) = '
    || '(select max(op) from index_covers)',
    'select null::bigint as key, null::integer as file, null::integer as row, null::integer as ply where false'
));

-- The explorer's pre-aggregate (warehouse.positions.aggregate, docs/positions.md), written beside the
-- index's key files by its build when positions are common enough: explorer_aggregate, its sums per
-- position `key`, cell (`variant`, `type`, `band`, `month`) and move (`uci`, null for the games that end
-- there) with the SAN's fields of one game, of the index in force (nothing when it has none). The cells are
-- defined here once, for the build, the Python explorer and sql/explorer.sql alike:
--   explorer_band(elo2): a game's band, of the sum of both Elos: a mean of a whole hundred is a band of its
--     own, the means strictly between two hundreds another (its lowest sum + 1), so that a bound of whole
--     hundreds is a bound of bands on both sides (min 1500: mean >= 1500; max 2000: mean <= 2000);
--   explorer_aligned(player, min_rating, max_rating, since, until): whether the explorer's filters are
--     bounds of cells (no player, ratings of whole hundreds, whole months), the pre-aggregate's sums then
--     being the kept games' exactly;
--   explorer_cell_kept(type, band, month, speed, min_rating, max_rating, since, until): whether the
--     filters (aligned) keep a cell's games.
create or replace temp macro explorer_band(elo2) as if(elo2 % 200 = 0, elo2, elo2 - elo2 % 200 + 1);
create or replace temp macro explorer_aligned(player, min_rating, max_rating, since, until) as
    player is null
    and coalesce(min_rating::double % 100 = 0, true)
    and coalesce(max_rating::double % 100 = 0, true)
    and coalesce(day(since::date) = 1, true)
    and coalesce(day(until::date + interval 1 day) = 1, true);
create or replace temp macro explorer_cell_kept(
    type, band, month, speed, min_rating, max_rating, since, until
) as
    (speed is null or type = speed)
    and (min_rating is null or band >= 2 * min_rating::double)
    and (max_rating is null or band <= 2 * max_rating::double)
    and (since is null or month >= since::date)
    and (until is null or month <= date_trunc('month', until::date)::date);
create or replace temp view explorer_aggregate as
from query(if(
    getvariable('chess_index_files').explorer,
    'select * exclude (filename) from read_parquet(' || sql_literal(lake_path(
        '_index/positions/*/explorer.parquet'
    )) || ', filename = true) where regexp_extract(filename, ''/_index/positions/([^/]+)/'', 1) = '
    || '(select max(op) from index_covers)',
    'select null::bigint as key, null::varchar as variant, null::varchar as type, null::integer as band, '
    || 'null::date as month, null::varchar as uci, null::varchar as p, null::varchar as f, '
    || 'null::varchar as t, null::varchar as x, null::varchar as castle, null::varchar as promote, '
    || 'null::smallint as c, null::boolean as mates, null::bigint as games, null::bigint as white_wins, '
    || 'null::bigint as draws, null::bigint as black_wins, null::bigint as elo2_sum, '
    || 'null::bigint as elo_games, null::bigint as eval_sum, null::bigint as eval_games, '
    || 'null::decimal(38, 1) as think_sum, null::bigint as think_games, null::timestamptz as first_played '
    || 'where false'
));

-- index_gap(): null when the position index covers every games file of the lake (listed now: a load or a
-- compaction since it was built adds files it does not cover), else why not, in a few words.
create or replace temp macro index_gap() as (
    with uncovered as (
        select count(*) as files
        from glob(lake_path('games/**/*.parquet'))
        where file not in (select filename from index_covers)
    )
    select
        case
            when not exists (select 1 from index_covers) and getvariable('chess_index_files').keys then
                'its position index was built by an earlier version, which SQL does not read'
            when not exists (select 1 from index_covers) then 'the lake has no position index'
            when files > 0 then
                'the position index does not cover ' || files || ' games files loaded or compacted since it '
                || 'was built'
        end
    from uncovered
);

-- index_positions(k): the positions whose PolyGlot key is k in the position index (every ply; what
-- index_gap() says of its coverage is the caller's to check): the game's `filename` and `row` there
-- (file_row_number), the `ply` it stands before (n_plies for the final position), a row per ply.
create or replace temp macro index_positions(k) as table
    select covers.filename, found.row::bigint as row, found.ply
    from position_index as found
    join index_covers as covers on covers.file = found.file
    where found.key = k;

-- unanswered(what, gap): the one line `what` (the question asking) fails with when no game's stored keys
-- hold the position and the position index cannot answer (`gap`: index_gap()).
create or replace temp macro unanswered(what, gap) as
    getvariable('chess_lake') || ': ' || what || ': no game reaches this position in its first 10 plies (the '
    || 'stored keys) and ' || gap || ': (re)build it to answer at any ply, `python -m loaders.position_index '
    || '--lake ' || getvariable('chess_lake') || '`, or ask Python (the replay scan): `python -m '
    || 'loaders.explore FEN`, `python -m loaders.positions FEN`';

-- key_positions(k, what): the positions whose PolyGlot key is k, of every game (all_games), as
-- index_positions gives them: from the position index when it covers the lake (index_gap() null); else
-- from the stored keys, the first 10 plies (plies.key) and the final positions (games.final_key), failing
-- with unanswered(what, …) when these hold none.
create or replace temp macro key_positions(k, what) as table
    with target as materialized (
        select k as key, index_gap() as gap
    ),

    stored as materialized (
        select games.filename, games.file_row_number as row, keyed.ply::integer as ply
        from all_plies as keyed
        join all_games as games on games.game_key = keyed.game_key
        where keyed.key = (select key from target) and (select gap is not null from target)
        union all
        select filename, file_row_number, n_plies
        from all_games
        where final_key = (select key from target) and (select gap is not null from target)
    )

    select * from index_positions((select key from target)) where (select gap is null from target)
    union all
    select * from stored
    union all
    select error(unanswered(what, gap))::varchar, null::bigint, null::integer
    from target
    where gap is not null and not exists (select 1 from stored);

-- games_at(fen): the games (of the games view) that reach the position of `fen` (key_positions: the
-- position index when it covers the lake, any ply; else the stored keys, the first 10 plies and the final
-- positions, an error when they hold none).
create or replace temp macro games_at(fen) as table
    select games.*
    from games
    semi join key_positions(fen_key(fen), 'games_at') as found
        on found.filename = games.filename and found.row = games.file_row_number;

-- The SAN of a move (its plies fields: p f t x castle promote, `c` for a check, `mates`) from the position
-- of a FEN, as python-chess writes it: the board is fen_board(fen), 64 letters from a8 to h1 ('.' empty),
-- a square's index 0 (a8) to 63 (h1). A rook, knight, bishop or queen move names its from-square's file,
-- rank or both when another piece of its kind can move legally to the same square (python-chess's rule):
-- one that reaches it with nothing between, and is not pinned to its king off the line it would leave.
create or replace temp macro fen_board(fen) as array_to_string(fen_board_ranks(fen_fields(fen)[1]), '');
create or replace temp macro board_square(square) as (8 - (ascii(square[2]) - ascii('0'))) * 8
    + ascii(square[1]) - ascii('a');
create or replace temp macro board_at(b, i) as substr(b, i + 1, 1);
-- Whether the squares strictly between squares i and j (on one rank, file or diagonal) are empty.
create or replace temp macro board_clear(b, i, j) as coalesce(
    list_bool_and(list_transform(
        range(1, greatest(abs(j % 8 - i % 8), abs(j // 8 - i // 8))),
        lambda n: board_at(b, i + n * (sign(j // 8 - i // 8) * 8 + sign(j % 8 - i % 8))) = '.'
    )),
    true
);
-- Whether a piece of kind `kind` (N B R Q) on square i reaches square j.
create or replace temp macro board_reaches(b, kind, i, j) as
    case
        when i = j then false
        when kind = 'N' then abs(j % 8 - i % 8) * abs(j // 8 - i // 8) = 2
        when kind in ('B', 'Q') and abs(j % 8 - i % 8) = abs(j // 8 - i // 8) then board_clear(b, i, j)
        when kind in ('R', 'Q') and (j % 8 = i % 8 or j // 8 = i // 8) then board_clear(b, i, j)
        else false
    end;
-- Whether squares k and s are on one rank, file or diagonal.
create or replace temp macro board_aligned(k, s) as
    k <> s and (k % 8 = s % 8 or k // 8 = s // 8 or abs(k % 8 - s % 8) = abs(k // 8 - s // 8));
-- The first piece's square past s on the line from square k through s, null when none is.
create or replace temp macro board_beyond(b, k, s) as list_filter(
    list_transform(
        list_filter(
            range(1, 8),
            lambda n: s % 8 + n * sign(s % 8 - k % 8) between 0 and 7
                and s // 8 + n * sign(s // 8 - k // 8) between 0 and 7
        ),
        lambda n: s + n * (sign(s // 8 - k // 8) * 8 + sign(s % 8 - k % 8))
    ),
    lambda i: board_at(b, i) <> '.'
)[1];
-- The square of the enemy rook, bishop or queen that pins the piece on square s to its king on square k
-- (the three on one line, nothing else between), null when none does.
create or replace temp macro board_pinner(b, k, s) as
    if(
        board_aligned(k, s) and board_clear(b, k, s),
        list_transform(
            [board_beyond(b, k, s)],
            lambda p: if(
                p is not null
                and (board_at(b, p) = upper(board_at(b, p))) <> (board_at(b, k) = upper(board_at(b, k)))
                and upper(board_at(b, p)) in (if(k % 8 = s % 8 or k // 8 = s // 8, 'R', 'B'), 'Q'),
                p,
                null
            )
        )[1],
        null
    );
-- Whether moving the piece on square s to square t keeps its king (on square k) out of a pinner's line:
-- not pinned, or t on the line between the king and its pinner, the pinner's square included.
create or replace temp macro board_keeps_king(b, k, s, t) as list_transform(
    [board_pinner(b, k, s)],
    lambda p: p is null or list_contains(
        list_transform(
            range(1, greatest(abs(p % 8 - k % 8), abs(p // 8 - k // 8)) + 1),
            lambda n: k + n * (sign(p // 8 - k // 8) * 8 + sign(p % 8 - k % 8))
        ),
        t
    )
)[1];
-- The squares of the other pieces of letter p (N B R Q, the mover's case) that can move to square j
-- legally, the piece on square i moving there. Filters in turn, each testing what the one before kept (a
-- lambda's AND evaluates both sides).
create or replace temp macro san_rivals(b, p, i, j) as list_filter(
    list_filter(
        list_filter(range(0, 64), lambda r: r <> i and board_at(b, r) = p),
        lambda r: board_reaches(b, upper(p), r, j)
    ),
    lambda r: board_keeps_king(b, strpos(b, if(p = upper(p), 'K', 'k')) - 1, r, j)
);
-- The SAN of the move (plies fields p f t x castle promote c mates) from the position whose board is b.
create or replace temp macro move_san(b, p, f, t, x, castle, promote, c, mates) as
    case
        when castle is not null then if(upper(castle) = 'K', 'O-O', 'O-O-O')
        when upper(p) = 'P' then if(x is null, '', f[1] || 'x') || t || coalesce('=' || upper(promote), '')
        when upper(p) = 'K' then 'K' || if(x is null, '', 'x') || t
        else upper(p) || list_transform(
            [san_rivals(b, p, board_square(f), board_square(t))],
            lambda r: if(
                len(list_filter(r, lambda i: i // 8 = board_square(f) // 8)) > 0
                or (len(r) > 0 and len(list_filter(r, lambda i: i % 8 = board_square(f) % 8)) = 0),
                f[1],
                ''
            ) || if(len(list_filter(r, lambda i: i % 8 = board_square(f) % 8)) > 0, f[2], '')
        )[1] || if(x is null, '', 'x') || t
    end || case when mates then '#' when c is not null then '+' else '' end;

-- Last: from here on, a lake the guard refuses makes every view fail with its one line, and the views
-- read the variable `variant`.
set variable chess_lake_failure = getvariable('chess_lake_error');
set variable chess_views_created = true;
