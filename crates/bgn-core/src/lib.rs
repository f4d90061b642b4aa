//! bgn-core: PGN in, BGN Arrow record batches out.
//!
//! The pipeline, one module a step: [`input`] opens and decompresses, [`framer`] cuts the stream into
//! games (offsets and raw text for rejects), [`repair`] rewrites what pgn-reader would misread (unescaped
//! quotes in tag values, sloppy move tokens) or rejects it, [`parse`] runs one game through it and pgn-reader,
//! [`replay`] replays it with shakmaty (lichess's variants on [`variant`]'s positions), [`annotations`] reads `[%eval]`/`[%clk]` out of comments, [`tags`] derives the game
//! fields from tags, [`columns`] builds the Arrow batch, and [`reader`] drives it all, on its own thread
//! if asked; [`parallel`] drives it on several threads and yields the same batches. [`san`] works the other way, on a batch read back from the lake: it fills in the SAN the
//! lake leaves out; [`fen`] reads a FEN a user gives by python-chess's rules. [`json_games`] replays BGN JSON
//! lines from their fields on the same replay and columns, no PGN text between. No Python here: the PyO3 glue lives in the `bgn-py` crate.

pub mod annotations;
pub mod book;
pub mod book_rows;
pub mod columns;
pub mod derive;
pub mod export_json;
pub mod export_pgn;
pub mod export_study;
pub mod fen;
pub mod framer;
pub mod input;
pub mod json_fields;
pub mod json_games;
pub mod json_value;
pub mod material;
pub mod movetext;
pub mod parallel;
pub mod parse;
pub mod plies;
pub mod python_repr;
pub mod reader;
pub mod reject;
pub mod repair;
pub mod replay;
pub mod san;
pub mod san_move;
pub mod study_json;
pub mod tags;
pub mod variant;
pub mod zobrist;
