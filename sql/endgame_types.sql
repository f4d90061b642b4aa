-- Question: which endgames do games reach, and how do they end?
-- Grain: one row per endgame type reached by at least one game.
-- Definitions: games of standard chess and Chess960 that reach the endgame by lichess's Divider
--   (games.endgame_ply: the first ply after which at most 6 queens, rooks, bishops and knights stand on the
--   board, the middlegame reached). Its type, from the pieces on the board after that ply besides kings and
--   pawns (games.endgame_material): 'pawn' none; 'minor piece' bishops and knights only; 'rook' rooks only;
--   'rook and minor' rooks and minor pieces only; 'queen' queens only; 'queen and other' queens and other
--   pieces.
--   white_wins, draws, black_wins count their games by result; mated those ending in mate;
--   avg_plies = mean of n_plies - endgame_ply - 1 (the plies played after that one), 1 decimal.
-- Output: endgame, games, white_wins, draws, black_wins, mated, avg_plies; by games (most
--   first), endgame.
.bail on
set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m warehouse.queries.sql --path)/.."), or ask `bgn query NAME`'));
import database 'sql/views';

-- How: one scan of games: each game that reaches an endgame stores its first ply and the material after it.
with pieces as (
    select
        endgame_ply,
        n_plies,
        result,
        mate,
        material_count(endgame_material, 'Q') + material_count(endgame_material, 'q') as queens,
        material_count(endgame_material, 'R') + material_count(endgame_material, 'r') as rooks,
        material_count(endgame_material, 'B') + material_count(endgame_material, 'b')
            + material_count(endgame_material, 'N') + material_count(endgame_material, 'n') as minors
    from games
    where endgame_ply is not null
),

typed as (
    select
        *,
        case
            when queens > 0 and rooks + minors > 0 then 'queen and other'
            when queens > 0 then 'queen'
            when rooks > 0 and minors > 0 then 'rook and minor'
            when rooks > 0 then 'rook'
            when minors > 0 then 'minor piece'
            else 'pawn'
        end as endgame
    from pieces
)

select
    endgame,
    count(*) as games,
    count(*) filter (result = 'W') as white_wins,
    count(*) filter (result = 'D') as draws,
    count(*) filter (result = 'B') as black_wins,
    count(*) filter (mate) as mated,
    round(avg(n_plies - endgame_ply - 1), 1) as avg_plies
from typed
group by endgame
order by games desc, endgame;
