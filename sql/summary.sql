-- Question: what is in the lake? Games by speed, with how they end.
-- Grain: one row per `type` (ultrabullet … classical, correspondence, unknown).
-- Definitions: white_score = (wins + draws / 2) / decided-or-drawn games, from White's side;
--   mated = share of games whose mainline ends in checkmate; avg_plies = mean mainline length.
-- Output: type, games, avg_plies, white_score, mated, with_clock, with_eval.
-- Reads the lake at $CHESS_LAKE, else ./lake.
with games as (
    select *
    from read_parquet(
        coalesce(nullif(getenv('CHESS_LAKE'), ''), 'lake') || '/games/**/*.parquet',
        hive_partitioning = true
    )
),

final as (
    select
        type,
        count(*) as games,
        round(avg(n_plies), 1) as avg_plies,
        round(avg(case result when 'W' then 1.0 when 'D' then 0.5 when 'B' then 0.0 end), 3)
            as white_score,
        round(avg(mate::int), 3) as mated,
        round(avg(has_clock::int), 3) as with_clock,
        round(avg(has_eval::int), 3) as with_eval
    from games
    group by type
)

select * from final order by games desc;
