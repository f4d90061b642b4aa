-- Question: how do lichess's variants play? Length, decisiveness, drops by piece and explosions, per variant.
-- Grain: one row per `variant` of the lake (every variant, whatever the variable `variant` selects: this
--   question compares them; it reads all_games and all_plies).
-- Definitions: avg_plies = mean mainline length; decisive_pct = 100 x games won (W or B) / games with a
--   known result (W, B or D), null when none; drops = mainline drops (a move with no from-square: `f`
--   null); pawn_drop_pct … queen_drop_pct = 100 x drops of that piece / drops, null without drops;
--   explosions = mainline atomic captures whose explosion removed a piece beside the capture (`blast`).
--   Percentages rounded to 2 decimals.
-- Output: variant, games, avg_plies, decisive_pct, drops, pawn_drop_pct, knight_drop_pct, bishop_drop_pct,
--   rook_drop_pct, queen_drop_pct, explosions; by games descending, variant.
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

with game_stats as (
    select
        variant,
        count(*) as games,
        round(avg(n_plies), 1) as avg_plies,
        round(
            100.0 * count(*) filter (where result in ('W', 'B'))
            / nullif(count(*) filter (where result in ('W', 'B', 'D')), 0),
            2
        ) as decisive_pct
    from all_games
    group by variant
),

drop_counts as (
    -- a scan of the drops alone (`f` null): the filter reaches the Parquet reader, which then decodes the
    -- pieces of those plies only (one scan of every ply's columns cost 6-7x the CPU on a 1M-game lake)
    select
        variant,
        count(*) as drops,
        count(*) filter (where piece = 'P') as pawn_drops,
        count(*) filter (where piece = 'N') as knight_drops,
        count(*) filter (where piece = 'B') as bishop_drops,
        count(*) filter (where piece = 'R') as rook_drops,
        count(*) filter (where piece = 'Q') as queen_drops
    from all_plies
    where f is null
    group by variant
),

explosion_counts as (
    select variant, count(*) as explosions
    from all_plies
    where blast is not null
    group by variant
),

final as (
    select
        game_stats.variant,
        games,
        avg_plies,
        decisive_pct,
        coalesce(drops, 0) as drops,
        round(100.0 * pawn_drops / nullif(drops, 0), 2) as pawn_drop_pct,
        round(100.0 * knight_drops / nullif(drops, 0), 2) as knight_drop_pct,
        round(100.0 * bishop_drops / nullif(drops, 0), 2) as bishop_drop_pct,
        round(100.0 * rook_drops / nullif(drops, 0), 2) as rook_drop_pct,
        round(100.0 * queen_drops / nullif(drops, 0), 2) as queen_drop_pct,
        coalesce(explosions, 0) as explosions
    from game_stats
    left join drop_counts using (variant)
    left join explosion_counts using (variant)
)

select * from final order by games desc, variant;
