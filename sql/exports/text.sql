-- How the exports write an eval and a clock, shared by the JSON and PGN exports (warehouse/export_sql.py):
--   eval_text(cp, mate): as lichess writes it in PGN, pawns from White's side with one or two decimals
--     (`0.17`, `-1.5`, `0.0`), or `#n` / `#-n` for a mate;
--   clock_text(t) of whole tenths of a second, clk_text(clk) of decimal(9, 1) seconds: `h:mm:ss`, with
--     the tenth when it is not zero (`0:00:09.5`).
create macro eval_text(cp, mate) as case
    when mate is not null then '#' || mate
    when cp is not null then
        if(cp < 0, '-', '') || (abs(cp) // 100) || '.'
        || if(abs(cp) % 10 = 0, ((abs(cp) % 100) // 10)::varchar, lpad((abs(cp) % 100)::varchar, 2, '0'))
end;

create macro clock_text(t) as
    (t // 36000) || ':' || lpad((t // 600 % 60)::varchar, 2, '0') || ':'
    || lpad((t // 10 % 60)::varchar, 2, '0') || if(t % 10 = 0, '', '.' || (t % 10));

-- clk: decimal(9, 1) seconds; clock_text takes whole tenths.
create macro clk_text(clk) as clock_text((clk * 10)::bigint);
