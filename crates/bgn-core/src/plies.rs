//! The `plies` table's own columns and the games' position columns (docs/schema.md), derived game by
//! game by one builder, [`PlyColumns`]. Its two callers feed it the same facts: the reader, from the
//! game it has just replayed (`crate::columns`), and [`derive_stored`], from games read back from the
//! lake (the layout upgrade, `check --full`); so the two cannot disagree.
//!
//! A batch carries its games' plies in one more column, [`PLIES`] (a list per game, its moves' plies),
//! until the writer takes them apart (warehouse/lake/plies.py): the moves' own fields (`p`, `f`, `t`…)
//! are not built twice, the writer takes them from `games.moves`, nor the game's key, which it repeats
//! from `games.game_key` (a source may rewrite a game's key after the read: the JSON import). Filtering, slicing and joining a
//! batch's games carry their plies along.
//!
//! A `plies` column is one builder here: its field in [`ply_fields`], its value in
//! [`PlyColumns::append`] (which sees the game, each ply's move record and the positions of the key
//! replay), its array in [`PlyColumns::finish`]. The material and phase of each ply, and the games'
//! castling, phase and material columns, are read off the same replay's boards ([`Positions`], by
//! `crate::material`) and built by [`MaterialColumns`].

use std::sync::Arc;

use arrow_array::builder::{Int64Builder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Int32Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Decimal128Array, Int32Array, ListArray, RecordBatch,
    StringArray, StructArray,
};
use arrow_buffer::{BooleanBufferBuilder, Buffer, NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema};

use crate::material::{GameMaterial, MaterialColumns};
use crate::zobrist::{replay_keys, Board, Games, KeyError, MoveCodes, ReplayError};

/// The plies whose position `key` is stored (null after): the openings, where books, the explorer and
/// most searches look (docs/positions.md: keys barely compress after the opening).
pub const KEYED_PLIES: usize = 10;
/// The batch column that carries each game's plies to the writer.
pub const PLIES: &str = "plies";
/// The games' position columns, last in a batch (before [`PLIES`]), then the material ones
/// ([`crate::material::GAME_COLUMNS`]).
pub const GAME_COLUMNS: [&str; 4] = ["final_key", "opening_eco", "opening_name", "opening_code"];
const THINK_PRECISION: u8 = 9;
const THINK_SCALE: i8 = 1;

/// The fields of [`GAME_COLUMNS`].
pub fn game_fields() -> Vec<Field> {
    let mut fields = vec![Field::new(GAME_COLUMNS[0], DataType::Int64, true)];
    fields.extend(
        GAME_COLUMNS[1..]
            .iter()
            .map(|n| Field::new(*n, DataType::Utf8, true)),
    );
    fields.extend(crate::material::game_fields());
    fields
}

/// Whether `name` is a column [`PlyColumns`] derives for games: [`GAME_COLUMNS`], the material ones.
fn derived_game_column(name: &str) -> bool {
    GAME_COLUMNS.contains(&name) || crate::material::GAME_COLUMNS.contains(&name)
}

/// The fields of a ply that `plies` holds beside the move's own (warehouse/lake/plies.py orders them).
pub fn ply_fields() -> Fields {
    Fields::from(vec![
        Field::new("ply", DataType::Int32, false),
        Field::new(
            "think",
            DataType::Decimal128(THINK_PRECISION, THINK_SCALE),
            true,
        ),
        Field::new("mates", DataType::Boolean, false),
        Field::new("analysed", DataType::Boolean, false),
        Field::new("variant", DataType::Utf8, false),
        Field::new("key", DataType::Int64, true),
        // After the move (`crate::material`): null for variants without a replay.
        Field::new("material", DataType::Int64, true),
        Field::new("phase", DataType::Int8, true),
    ])
}

fn plies_field() -> Field {
    let item = Field::new("item", DataType::Struct(ply_fields()), true);
    Field::new(PLIES, DataType::List(Arc::new(item)), false)
}

/// The chess-openings table (warehouse/lake/openings.py): its positions' keys, sorted, and their names.
pub struct Openings {
    keys: Vec<i64>,
    /// A bit per value of a key's low 16 bits (8 KB, in L1): most positions are not named, and this
    /// turns most of them away before the binary search.
    maybe: Vec<u64>,
    eco: StringArray,
    name: StringArray,
    code: StringArray,
}

impl Openings {
    /// The table in `batch`: `key` (int64, sorted, no nulls), `eco`, `name`, `code` (strings).
    pub fn of(batch: &RecordBatch) -> Result<Openings, KeyError> {
        let column = |name: &str| {
            batch
                .column_by_name(name)
                .ok_or_else(|| KeyError(format!("the openings have no `{name}`")))
        };
        let keys = column("key")?
            .as_primitive_opt::<Int64Type>()
            .filter(|k| k.null_count() == 0 && k.values().is_sorted())
            .ok_or_else(|| KeyError("the openings' `key` must be sorted int64s".to_owned()))?;
        let text = |name: &str| -> Result<StringArray, KeyError> {
            column(name)?
                .as_string_opt::<i32>()
                .cloned()
                .ok_or_else(|| KeyError(format!("the openings' `{name}` must be strings")))
        };
        let mut maybe = vec![0u64; 1 << 10];
        for &key in keys.values() {
            let low = key as u16 as usize;
            maybe[low >> 6] |= 1 << (low & 63);
        }
        Ok(Openings {
            keys: keys.values().to_vec(),
            maybe,
            eco: text("eco")?,
            name: text("name")?,
            code: text("code")?,
        })
    }

    fn find(&self, key: u64) -> Option<usize> {
        let low = key as u16 as usize;
        if self.maybe[low >> 6] & (1 << (low & 63)) == 0 {
            return None;
        }
        self.keys.binary_search(&(key as i64)).ok()
    }
}

/// The positions of a game's mainline, from the key replay (`crate::zobrist`): the key before each
/// ply, then the final one, and the material and phase after each ply (`crate::material`); none for a
/// variant without keys. Kept between games.
#[derive(Default)]
pub struct Positions {
    keyed: bool,
    keys: Vec<u64>,
    material: GameMaterial,
    /// The moves of a game read from PGN, kept between games.
    moves: Vec<MoveCodes>,
}

/// What the replay of either feed reads off each position: `board` before ply `ply` (after the last
/// move for `ply` = the game's plies).
fn visit(keys: &mut Vec<u64>, material: &mut GameMaterial, ply: usize, board: &Board) -> bool {
    keys.push(board.key);
    match ply.checked_sub(1) {
        None => material.start(board.squares()),
        Some(played) => material.after(played, board.squares(), board.sides(), board.took),
    }
    true
}

impl Positions {
    /// Replays a game read from PGN, `moves` its mainline (letters as the lake writes them).
    pub(crate) fn replay(
        &mut self,
        start_fen: Option<&str>,
        variant: &str,
        moves: impl Iterator<Item = MoveCodes>,
    ) -> Result<(), ReplayError> {
        let Positions {
            keys,
            material,
            moves: codes,
            ..
        } = self;
        codes.clear();
        codes.extend(moves);
        keys.clear();
        material.begin(codes.iter().map(|m| m.castle));
        self.keyed = replay_keys(
            start_fen,
            Some(variant),
            codes.iter().copied(),
            |ply, board| visit(keys, material, ply, board),
        )?;
        Ok(())
    }

    /// Replays game `game` of stored games `g`.
    fn replay_stored(&mut self, g: &Games, game: usize) -> Result<(), KeyError> {
        let Positions { keys, material, .. } = self;
        keys.clear();
        material.begin(g.castles(game).iter().copied());
        self.keyed = g.replay(game, |ply, board| visit(keys, material, ply, board))?;
        Ok(())
    }
}

/// What a game's plies repeat or derive from, beside its moves.
pub struct GameFacts<'a> {
    pub variant: &'a str,
    /// Seconds (`tc_base`, `tc_inc`).
    pub tc_base: Option<i32>,
    pub tc_inc: Option<i32>,
    /// The last move mates (`games.mate`).
    pub mate: bool,
    /// An engine evaluation on some move (`games.has_eval`).
    pub analysed: bool,
}

/// Builds, game by game, the [`PLIES`] column and the [`GAME_COLUMNS`].
pub struct PlyColumns {
    openings: Arc<Openings>,
    offsets: Vec<i32>,
    ply: Vec<i32>,
    think: Vec<i128>,
    think_known: BooleanBufferBuilder,
    mates: BooleanBufferBuilder,
    analysed: BooleanBufferBuilder,
    /// `variant`'s text and offsets: a game's name repeated on each of its plies, copied in bulk.
    variant: Vec<u8>,
    variant_offsets: Vec<i32>,
    key: Int64Builder,
    final_key: Int64Builder,
    eco: StringBuilder,
    name: StringBuilder,
    code: StringBuilder,
    material: MaterialColumns,
}

impl PlyColumns {
    /// Builders sized for `games` games of `plies` plies in all; openings named from `openings`.
    pub fn with_capacity(openings: Arc<Openings>, games: usize, plies: usize) -> PlyColumns {
        let mut offsets = Vec::with_capacity(games + 1);
        offsets.push(0);
        PlyColumns {
            openings,
            offsets,
            ply: Vec::with_capacity(plies),
            think: Vec::with_capacity(plies),
            think_known: BooleanBufferBuilder::new(plies),
            mates: BooleanBufferBuilder::new(plies),
            analysed: BooleanBufferBuilder::new(plies),
            variant: Vec::with_capacity(plies * 8),
            variant_offsets: {
                let mut offsets = Vec::with_capacity(plies + 1);
                offsets.push(0);
                offsets
            },
            key: Int64Builder::with_capacity(plies),
            final_key: Int64Builder::with_capacity(games),
            eco: StringBuilder::with_capacity(games, games * 3),
            name: StringBuilder::with_capacity(games, games * 24),
            code: StringBuilder::with_capacity(games, games * 6),
            material: MaterialColumns::with_capacity(plies, games),
        }
    }

    /// Appends a game: `clocks` holds each ply's clock after it (the mover's, in tenths of a second),
    /// `positions` its key replay.
    pub fn append(
        &mut self,
        game: &GameFacts,
        positions: &Positions,
        clocks: impl ExactSizeIterator<Item = Option<i64>>,
    ) {
        let n = clocks.len();
        // The columns a game repeats, in bulk: a game has some 80 plies.
        self.ply.extend(0..n as i32);
        self.mates.append_n(n.saturating_sub(1), false);
        if n > 0 {
            self.mates.append(game.mate);
        }
        self.analysed.append_n(n, game.analysed);
        let variant = game.variant.as_bytes();
        self.variant.reserve(n * variant.len());
        self.variant_offsets.reserve(n);
        for _ in 0..n {
            self.variant.extend_from_slice(variant);
            self.variant_offsets.push(self.variant.len() as i32);
        }
        let keyed = if positions.keyed {
            n.min(KEYED_PLIES)
        } else {
            0
        };
        for &key in &positions.keys[..keyed] {
            self.key.append_value(key as i64);
        }
        self.key.append_nulls(n - keyed);
        self.material
            .append(&positions.material, positions.keyed, n);
        let tenths = |seconds: Option<i32>| seconds.map(|s| i64::from(s) * 10);
        let Some(inc) = tenths(game.tc_inc) else {
            // No time control: no think time.
            self.think.extend(std::iter::repeat_n(0, n));
            self.think_known.append_n(n, false);
            self.offsets.push(self.ply.len() as i32);
            return self.finish_game(positions, n);
        };
        // Each side's clock before its next move: `tc_base` before its first.
        let mut before = [tenths(game.tc_base); 2];
        for (ply, clk) in clocks.enumerate() {
            // The seconds the mover spent on the move: exact, in integer tenths.
            let think = match (before[ply % 2], clk) {
                (Some(b), Some(c)) => Some(b - c + inc),
                _ => None,
            };
            before[ply % 2] = clk;
            self.think.push(i128::from(think.unwrap_or(0)));
            self.think_known.append(think.is_some());
        }
        self.offsets.push(self.ply.len() as i32);
        self.finish_game(positions, n);
    }

    /// The game's position columns, once its plies are in.
    fn finish_game(&mut self, positions: &Positions, n: usize) {
        if !positions.keyed {
            self.final_key.append_null();
            self.named(None);
            return;
        }
        self.final_key.append_value(positions.keys[n] as i64);
        // The deepest position of the game (final one included) that the table names.
        let named = positions
            .keys
            .iter()
            .rev()
            .find_map(|&k| self.openings.find(k));
        self.named(named);
    }

    fn named(&mut self, row: Option<usize>) {
        let o = &self.openings;
        for (builder, names) in [
            (&mut self.eco, &o.eco),
            (&mut self.name, &o.name),
            (&mut self.code, &o.code),
        ] {
            builder.append_option(row.filter(|&r| names.is_valid(r)).map(|r| names.value(r)));
        }
    }

    fn finish_variant(&mut self) -> StringArray {
        let offsets = std::mem::replace(&mut self.variant_offsets, vec![0]);
        let values = std::mem::take(&mut self.variant);
        // SAFETY: `values` is `&str`s joined, cut at their ends: every slice is UTF-8.
        unsafe {
            StringArray::new_unchecked(
                OffsetBuffer::new(offsets.into()),
                Buffer::from_vec(values),
                None,
            )
        }
    }

    /// The [`GAME_COLUMNS`] and the [`PLIES`] column of the games so far; the builders start empty.
    pub fn finish(&mut self) -> (Vec<ArrayRef>, ArrayRef) {
        let (material, material_games) = self.material.finish();
        let mut games: Vec<ArrayRef> = vec![
            Arc::new(self.final_key.finish()),
            Arc::new(self.eco.finish()),
            Arc::new(self.name.finish()),
            Arc::new(self.code.finish()),
        ];
        games.extend(material_games);
        let think = Decimal128Array::new(
            std::mem::take(&mut self.think).into(),
            Some(NullBuffer::new(self.think_known.finish())),
        )
        .with_precision_and_scale(THINK_PRECISION, THINK_SCALE)
        .expect("a valid decimal type");
        let bits = |b: &mut BooleanBufferBuilder| -> ArrayRef {
            Arc::new(BooleanArray::new(b.finish(), None))
        };
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from(std::mem::take(&mut self.ply))),
            Arc::new(think),
            bits(&mut self.mates),
            bits(&mut self.analysed),
            Arc::new(self.finish_variant()),
            Arc::new(self.key.finish()),
        ];
        columns.extend(material);
        let plies = StructArray::new(ply_fields(), columns, None);
        let offsets = std::mem::replace(&mut self.offsets, vec![0]);
        let item = Arc::new(Field::new("item", DataType::Struct(ply_fields()), true));
        let list = ListArray::new(
            item,
            OffsetBuffer::new(offsets.into()),
            Arc::new(plies),
            None,
        );
        (games, Arc::new(list))
    }
}

/// `games` with the columns `finish` made of them appended: the [`GAME_COLUMNS`], then [`PLIES`].
pub fn with_plies(
    games: RecordBatch,
    (columns, plies): (Vec<ArrayRef>, ArrayRef),
) -> Result<RecordBatch, KeyError> {
    let (schema, mut arrays, _) = games.into_parts();
    let mut fields: Vec<FieldRef> = schema.fields().iter().cloned().collect();
    fields.extend(game_fields().into_iter().map(Arc::new));
    fields.push(Arc::new(plies_field()));
    arrays.extend(columns);
    arrays.push(plies);
    let schema = Schema::new_with_metadata(fields, schema.metadata().clone());
    RecordBatch::try_new(Arc::new(schema), arrays).map_err(|e| KeyError(e.to_string()))
}

/// Stored games (`moves`, `start_fen`, `variant`, `tc_base`, `tc_inc`, `mate`,
/// `has_eval`; `game_id` for messages) with their position columns and plies, as the reader derives
/// them: the [`GAME_COLUMNS`] and [`PLIES`] they held are derived again. `Err` for a batch without
/// those columns, or a move its position does not allow (a damaged lake).
pub fn derive_stored(
    games: &RecordBatch,
    openings: Arc<Openings>,
) -> Result<RecordBatch, KeyError> {
    let derived: Vec<usize> = (0..games.num_columns())
        .filter(|&i| {
            let name = games.schema_ref().field(i).name();
            !derived_game_column(name) && name != PLIES
        })
        .collect();
    let games = games
        .project(&derived)
        .map_err(|e| KeyError(e.to_string()))?;
    let g = Games::of(&games)?;
    let column = |name: &str| {
        games
            .column_by_name(name)
            .ok_or_else(|| KeyError(format!("the batch has no `{name}` column")))
    };
    let wrong = |name: &str| KeyError(format!("the batch's `{name}` has another type"));
    let int32 = |name| {
        column(name)?
            .as_primitive_opt::<Int32Type>()
            .ok_or_else(|| wrong(name))
    };
    let flag = |name| column(name)?.as_boolean_opt().ok_or_else(|| wrong(name));
    let (tc_base, tc_inc) = (int32("tc_base")?, int32("tc_inc")?);
    let (mate, has_eval) = (flag("mate")?, flag("has_eval")?);
    let variants =
        crate::san::Texts::of(column("variant")?, "variant").map_err(|e| KeyError(e.0))?;
    let moves = column("moves")?.as_list::<i32>();
    let clk = moves
        .values()
        .as_struct_opt()
        .and_then(|m| m.column_by_name("clk"))
        .and_then(|c| c.as_primitive_opt::<Decimal128Type>())
        .ok_or_else(|| wrong("moves.clk"))?;
    let n = games.num_rows();
    let mut columns = PlyColumns::with_capacity(openings, n, clk.len());
    let mut positions = Positions::default();
    for game in 0..n {
        positions.replay_stored(&g, game)?;
        let first = moves.value_offsets()[game] as usize;
        let clocks =
            (first..first + g.plies(game)).map(|i| clk.is_valid(i).then(|| clk.value(i) as i64));
        let facts = GameFacts {
            variant: variants.get(game).unwrap_or("Standard"),
            tc_base: tc_base.is_valid(game).then(|| tc_base.value(game)),
            tc_inc: tc_inc.is_valid(game).then(|| tc_inc.value(game)),
            mate: mate.is_valid(game) && mate.value(game),
            analysed: has_eval.is_valid(game) && has_eval.value(game),
        };
        columns.append(&facts, &positions, clocks);
    }
    with_plies(games, columns.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Input;
    use crate::reader::{BatchReader, Options};
    use crate::zobrist::position_keys;
    use arrow_array::Int64Array;

    fn read(pgn: &str, openings: Option<Arc<Openings>>) -> RecordBatch {
        let text = pgn.to_owned();
        let input = Input::from_reader("t", Box::new(std::io::Cursor::new(text)), None).unwrap();
        let options = Options {
            openings,
            ..Options::default()
        };
        let mut reader = BatchReader::new(input, "t", options);
        reader.next_batch().expect("a batch").games.remove(0)
    }

    #[test]
    fn each_game_is_named_by_its_deepest_named_position_and_both_feeds_agree() {
        let pgn = "[Result \"1-0\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 1-0\n\n\
                   [Result \"1-0\"]\n\n1. d4 d5 1-0\n\n\
                   [Result \"1-0\"]\n\n1. c4 1-0\n\n";
        let plain = read(pgn, None);
        let keys = position_keys(&plain, usize::MAX).unwrap();
        let ply = |i: usize| keys.plies.value(i);
        // Game 1's positions before its plies 2 and 4 (of 6), game 2's final position, and a stranger.
        let mut named = vec![ply(2), ply(4), keys.finals.value(1), 12345];
        named.sort_unstable();
        let names: Vec<String> = named.iter().map(|k| format!("name {k}")).collect();
        let text = |s: &[String]| -> ArrayRef { Arc::new(StringArray::from(s.to_vec())) };
        let table = RecordBatch::try_from_iter([
            ("key", Arc::new(Int64Array::from(named.clone())) as ArrayRef),
            ("eco", text(&names)),
            ("name", text(&names)),
            ("code", text(&names)),
        ])
        .unwrap();
        let openings = Arc::new(Openings::of(&table).unwrap());
        let stored = derive_stored(&plain, openings.clone()).unwrap();
        let opening = stored
            .column_by_name("opening_name")
            .unwrap()
            .as_string::<i32>();
        assert_eq!(
            opening.value(0),
            format!("name {}", ply(4)),
            "the deeper of two"
        );
        assert_eq!(
            opening.value(1),
            format!("name {}", keys.finals.value(1)),
            "the final position counts"
        );
        assert!(opening.is_null(2), "none named");
        let finals = stored
            .column_by_name("final_key")
            .unwrap()
            .as_primitive::<Int64Type>();
        assert_eq!(finals, &keys.finals);
        let plies = stored.column_by_name(PLIES).unwrap().as_list::<i32>();
        let fields = plies.values().as_struct();
        let stored_keys = fields
            .column_by_name("key")
            .unwrap()
            .as_primitive::<Int64Type>();
        assert_eq!(stored_keys.len(), keys.plies.len());
        let want: Vec<_> = keys.plies.iter().collect();
        let mates = fields.column_by_name("mates").unwrap().as_boolean();
        assert_eq!(
            stored_keys.iter().collect::<Vec<_>>(),
            want,
            "every ply keyed (fewer than 10)"
        );
        assert_eq!(mates.true_count(), 0);
        // The reader's feed gives the same batch.
        assert_eq!(read(pgn, Some(openings)), stored);
    }

    #[test]
    fn both_feeds_give_the_same_material_phase_and_castling() {
        // Castling both ways, captures, en passant.
        let pgn = "[Result \"*\"]\n\n1. e4 d5 2. exd5 Qxd5 3. Nf3 Bg4 4. Be2 Nc6 5. O-O O-O-O \
                   6. d4 e5 7. dxe5 f5 8. exf6 Nxf6 *\n\n";
        let openings = Openings::of(
            &RecordBatch::try_from_iter([
                (
                    "key",
                    Arc::new(Int64Array::from(Vec::<i64>::new())) as ArrayRef,
                ),
                ("eco", Arc::new(StringArray::from(Vec::<&str>::new()))),
                ("name", Arc::new(StringArray::from(Vec::<&str>::new()))),
                ("code", Arc::new(StringArray::from(Vec::<&str>::new()))),
            ])
            .unwrap(),
        )
        .map(Arc::new)
        .unwrap();
        let read_batch = read(pgn, Some(openings.clone()));
        let plain = read(pgn, None);
        assert_eq!(read_batch.num_rows(), 1, "the game read");
        assert_eq!(derive_stored(&plain, openings).unwrap(), read_batch);
        let int32 = |name: &str| {
            read_batch
                .column_by_name(name)
                .unwrap()
                .as_primitive::<Int32Type>()
                .clone()
        };
        assert_eq!(int32("white_castled").value(0), 8, "White's O-O, ply 8");
        assert_eq!(int32("black_castled").value(0), 9);
        let plies = read_batch.column_by_name(PLIES).unwrap().as_list::<i32>();
        let fields = plies.values().as_struct();
        let material = fields
            .column_by_name("material")
            .unwrap()
            .as_primitive::<Int64Type>();
        let changes = (1..16)
            .filter(|&i| material.value(i) != material.value(i - 1))
            .count();
        // exd5, Qxd5, dxe5, exf6 e.p., Nxf6.
        assert_eq!(changes, 5, "each capture counts again (from ply 1 on)");
        assert_eq!(material.len(), 16);
    }
}
