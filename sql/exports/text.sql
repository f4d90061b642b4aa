-- How the study export writes a clock (warehouse/export_sql.py; the PGN and BGN JSON exports write the
-- same in Rust, crates/bgn-core/src/export_pgn.rs):
--   clock_text(t) of whole tenths of a second, clk_text(clk) of decimal(9, 1) seconds: `h:mm:ss`, with
--     the tenth when it is not zero (`0:00:09.5`).
create macro clock_text(t) as
    (t // 36000) || ':' || lpad((t // 600 % 60)::varchar, 2, '0') || ':'
    || lpad((t // 10 % 60)::varchar, 2, '0') || if(t % 10 = 0, '', '.' || (t % 10));

-- clk: decimal(9, 1) seconds; clock_text takes whole tenths.
create macro clk_text(clk) as clock_text((clk * 10)::bigint);
