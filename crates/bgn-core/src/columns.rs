//! Arrow builders for the lake's schema (docs/schema.md): games in, one `RecordBatch` out.

use std::sync::Arc;

use crate::annotations::Eval;
use crate::derive::GameRow;
use crate::plies::{with_plies, GameFacts, Openings, PlyColumns, Positions};
use crate::replay::{GameScratch, MoveRec, NO_SQUARE};
use crate::tags::{self, Known};
use arrow_array::builder::ArrayBuilder;
use arrow_array::builder::{
    BooleanBuilder, Int32Builder, Int64Builder, MapBuilder, MapFieldNames, StringBuilder,
    TimestampSecondBuilder,
};
use arrow_array::types::{Int16Type, Int32Type, Int8Type};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, Decimal128Array, DictionaryArray, Int16Array, Int8Array,
    ListArray, PrimitiveArray, RecordBatch, StringArray, StructArray,
};
use arrow_buffer::{ArrowNativeType, BooleanBufferBuilder, Buffer, NullBuffer, OffsetBuffer};
use arrow_schema::{ArrowError, DataType, Field, FieldRef, Fields, Schema, SchemaRef, TimeUnit};

const CLK_PRECISION: u8 = 9;
const CLK_SCALE: i8 = 1;
/// Typical number of tags not held by a column (lichess games have 4: Date, UTCDate, UTCTime,
/// Variant…), for sizing builders.
const HEADERS: usize = 4;

fn nullable_utf8(name: &str) -> Field {
    Field::new(name, DataType::Utf8, true)
}

/// A one-letter or square field: dictionary-encoded over a fixed dictionary, so building it is a byte
/// store and Parquet writes it without hashing; readers see plain strings.
fn letters(name: &str) -> Field {
    let dict = DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8));
    Field::new(name, dict, true)
}

fn list_of(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new("item", item, true)))
}

fn move_fields() -> Fields {
    Fields::from(vec![
        letters("p"),
        letters("f"),
        letters("t"),
        letters("x"),
        Field::new("c", DataType::Int16, true),
        letters("castle"),
        letters("promote"),
        nullable_utf8("blast"),
        nullable_utf8("san"),
        Field::new("nag", DataType::Int16, true),
        Field::new("nags", list_of(DataType::Int16), true),
        Field::new("eval_cp", DataType::Int32, true),
        Field::new("eval_mate", DataType::Int16, true),
        Field::new("clk", DataType::Decimal128(CLK_PRECISION, CLK_SCALE), true),
        nullable_utf8("comment"),
    ])
}

fn player_fields() -> Fields {
    Fields::from(vec![
        nullable_utf8("name"),
        Field::new("elo", DataType::Int32, true),
        Field::new("rating_diff", DataType::Int32, true),
        nullable_utf8("title"),
    ])
}

fn opening_fields() -> Fields {
    Fields::from(vec![
        nullable_utf8("eco"),
        nullable_utf8("verbose"),
        nullable_utf8("generic"),
    ])
}

fn line_fields() -> Fields {
    Fields::from(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("parent", DataType::Int32, false),
        Field::new("ply", DataType::Int32, false),
        nullable_utf8("comment"),
        Field::new("moves", list_of(DataType::Struct(move_fields())), false),
    ])
}

fn headers_type() -> DataType {
    let entries = Fields::from(vec![
        Field::new("key", DataType::Utf8, false),
        Field::new("value", DataType::Utf8, true),
    ]);
    DataType::Map(
        Arc::new(Field::new("entries", DataType::Struct(entries), false)),
        false,
    )
}

/// The batch schema: the lake's columns (docs/schema.md). A batch's partition (`type`, `year`, `month`)
/// travels beside it, not in it: the writer puts it in the path.
pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("game_id", DataType::Utf8, false),
        Field::new("game_key", DataType::Int64, false),
        nullable_utf8("site"),
        nullable_utf8("event"),
        nullable_utf8("round"),
        Field::new(
            "datetime",
            DataType::Timestamp(TimeUnit::Second, Some("UTC".into())),
            true,
        ),
        Field::new("result", DataType::Utf8, false),
        nullable_utf8("termination"),
        nullable_utf8("time_control"),
        Field::new("tc_base", DataType::Int32, true),
        Field::new("tc_inc", DataType::Int32, true),
        Field::new("opening", DataType::Struct(opening_fields()), false),
        Field::new("players", list_of(DataType::Struct(player_fields())), false),
        Field::new("variant", DataType::Utf8, false),
        nullable_utf8("start_fen"),
        Field::new("mate", DataType::Boolean, false),
        Field::new("has_eval", DataType::Boolean, false),
        Field::new("has_clock", DataType::Boolean, false),
        Field::new("n_plies", DataType::Int32, false),
        nullable_utf8("comment"),
        Field::new("headers", headers_type(), false),
        Field::new("moves", list_of(DataType::Struct(move_fields())), false),
        Field::new(
            "variations",
            list_of(DataType::Struct(line_fields())),
            false,
        ),
        Field::new("source_file", DataType::Utf8, false),
        Field::new("source_offset", DataType::Int64, false),
    ]))
}

/// Dictionary of the piece-letter fields (`p`, `x`, `castle`, `promote`); keys are indices in it.
const PIECES: &str = "KQRBNPkqrbnp";

static SQUARES: [&str; 64] = [
    "a1", "b1", "c1", "d1", "e1", "f1", "g1", "h1", "a2", "b2", "c2", "d2", "e2", "f2", "g2", "h2",
    "a3", "b3", "c3", "d3", "e3", "f3", "g3", "h3", "a4", "b4", "c4", "d4", "e4", "f4", "g4", "h4",
    "a5", "b5", "c5", "d5", "e5", "f5", "g5", "h5", "a6", "b6", "c6", "d6", "e6", "f6", "g6", "h6",
    "a7", "b7", "c7", "d7", "e7", "f7", "g7", "h7", "a8", "b8", "c8", "d8", "e8", "f8", "g8", "h8",
];

/// A square's name (`e4`), from its index (a1 = 0, b1 = 1 … h8 = 63).
pub(crate) fn square_name(square: u8) -> &'static str {
    SQUARES[usize::from(square)]
}

/// The dictionary key of an ASCII piece letter (`0` means null).
fn piece_key(b: u8) -> Option<i8> {
    if b == 0 {
        return None;
    }
    PIECES.bytes().position(|p| p == b).map(|i| i as i8)
}

/// The piece and square dictionaries, one pair for the whole process: batches that share them are
/// concatenated without merging dictionaries (the parallel reader's re-sequencing relies on it).
fn dictionaries() -> &'static (ArrayRef, ArrayRef) {
    static DICTIONARIES: std::sync::OnceLock<(ArrayRef, ArrayRef)> = std::sync::OnceLock::new();
    DICTIONARIES.get_or_init(|| {
        let pieces = PIECES.chars().map(|c| c.to_string());
        let pieces: ArrayRef = Arc::new(StringArray::from_iter_values(pieces));
        let squares: ArrayRef = Arc::new(StringArray::from_iter_values(SQUARES));
        (pieces, squares)
    })
}

fn dictionary(keys: Int8Array, values: &ArrayRef) -> ArrayRef {
    Arc::new(DictionaryArray::<Int8Type>::try_new(keys, values.clone()).expect("keys in range"))
}

/// A nullable move field that most moves lack (captures, checks, NAGs, evals…): only the values
/// present are kept while building, so a move without one costs nothing.
struct Sparse<T> {
    rows: Vec<u32>,
    values: Vec<T>,
}

impl<T: ArrowNativeType> Sparse<T> {
    fn new() -> Self {
        Self::with_capacity(0)
    }

    /// Room for `n` values: for a field most moves may have (clocks), which grown from empty would map
    /// fresh pages a doubling at a time for every batch, none of them the blocks the last batch freed.
    fn with_capacity(n: usize) -> Self {
        Sparse {
            rows: Vec::with_capacity(n),
            values: Vec::with_capacity(n),
        }
    }

    fn push(&mut self, row: usize, value: Option<T>) {
        if let Some(value) = value {
            self.rows.push(row as u32);
            self.values.push(value);
        }
    }

    /// The dense array of `len` rows, nulls where no value was pushed; the column starts empty again.
    fn finish<A: ArrowPrimitiveType<Native = T>>(&mut self, len: usize) -> PrimitiveArray<A> {
        let mut valid = BooleanBufferBuilder::new(len);
        if self.rows.len() == len {
            // Every row has its value (a lichess game's clocks): pushed a row at a time, in order, they
            // are the dense array already, without a zeroed copy to scatter them into.
            debug_assert!(self
                .rows
                .iter()
                .enumerate()
                .all(|(i, &row)| row as usize == i));
            self.rows.clear();
            valid.append_n(len, true);
            let values = std::mem::take(&mut self.values);
            return PrimitiveArray::new(values.into(), Some(NullBuffer::new(valid.finish())));
        }
        let mut values = vec![T::default(); len];
        valid.append_n(len, false);
        for (&row, &value) in self.rows.iter().zip(&self.values) {
            values[row as usize] = value;
            valid.set_bit(row as usize, true);
        }
        self.rows.clear();
        self.values.clear();
        PrimitiveArray::new(values.into(), Some(NullBuffer::new(valid.finish())))
    }
}

/// A sparse text field (move comments): the rows that have one and their text.
struct SparseText {
    rows: Vec<u32>,
    ends: Vec<i32>,
    bytes: String,
}

impl SparseText {
    fn new() -> Self {
        SparseText {
            rows: Vec::new(),
            ends: Vec::new(),
            bytes: String::new(),
        }
    }

    fn push(&mut self, row: usize, text: Option<&str>) {
        if let Some(text) = text {
            self.rows.push(row as u32);
            self.bytes.push_str(text);
            self.ends.push(self.bytes.len() as i32);
        }
    }

    /// The array of `len` rows, nulls where no text was pushed; the column starts empty again.
    fn finish(&mut self, len: usize) -> StringArray {
        if self.rows.is_empty() {
            return StringArray::new_null(len); // most batches' SAN: no builder walk at all
        }
        let mut offsets = Vec::with_capacity(len + 1);
        offsets.push(0i32);
        let mut valid = BooleanBufferBuilder::new(len);
        valid.append_n(len, false);
        let (mut end, mut next) = (0, 0);
        for row in 0..len {
            if self.rows.get(next) == Some(&(row as u32)) {
                end = self.ends[next];
                valid.set_bit(row, true);
                next += 1;
            }
            offsets.push(end);
        }
        let bytes = Buffer::from(std::mem::take(&mut self.bytes).into_bytes());
        self.rows.clear();
        self.ends.clear();
        // SAFETY: offsets rise from 0 to the end of `bytes`, each on the boundary of a `&str` pushed.
        unsafe {
            StringArray::new_unchecked(
                OffsetBuffer::new_unchecked(offsets.into()),
                bytes,
                Some(NullBuffer::new(valid.finish())),
            )
        }
    }
}

/// Builders for a `list<move>` column (the mainline, or the moves of variation lines). The fields
/// every move has are dense; the others sparse.
struct MoveColumns {
    pieces: ArrayRef,
    squares: ArrayRef,
    offsets: Vec<i32>,
    p: Vec<i8>,
    f: Vec<i8>,
    /// Rows whose `f` is null: drops (Crazyhouse).
    drops: Vec<u32>,
    t: Vec<i8>,
    /// Null where the SAN is the position's (most moves).
    san: SparseText,
    x: Sparse<i8>,
    c: Sparse<i16>,
    castle: Sparse<i8>,
    promote: Sparse<i8>,
    blast: SparseText,
    /// Every NAG of every move, in order (the first of a move is also its `nag`).
    nags: Sparse<i16>,
    eval_cp: Sparse<i32>,
    eval_mate: Sparse<i16>,
    clk: Sparse<i128>,
    comment: SparseText,
}

impl MoveColumns {
    /// Columns sized for `lists` lists of `plies` moves in all: growing them move by move would copy
    /// every buffer a dozen times.
    fn with_capacity(lists: usize, plies: usize) -> Self {
        let (pieces, squares) = dictionaries();
        let mut offsets = Vec::with_capacity(lists + 1);
        offsets.push(0);
        MoveColumns {
            pieces: pieces.clone(),
            squares: squares.clone(),
            offsets,
            p: Vec::with_capacity(plies),
            f: Vec::with_capacity(plies),
            drops: Vec::new(),
            t: Vec::with_capacity(plies),
            san: SparseText::new(),
            x: Sparse::new(),
            c: Sparse::new(),
            castle: Sparse::new(),
            promote: Sparse::new(),
            blast: SparseText::new(),
            nags: Sparse::new(),
            eval_cp: Sparse::new(),
            eval_mate: Sparse::new(),
            // lichess games have a clock on every move.
            clk: Sparse::with_capacity(plies),
            comment: SparseText::new(),
        }
    }

    /// Appends one list (a line's moves).
    fn append(&mut self, g: &GameScratch, moves: &[MoveRec]) {
        for m in moves {
            let row = self.p.len();
            self.p.push(piece_key(m.piece).expect("a move has a piece"));
            if m.from == NO_SQUARE {
                self.drops.push(row as u32);
                self.f.push(0);
            } else {
                self.f.push(m.from as i8);
            }
            self.t.push(m.to as i8);
            self.san.push(row, m.san.as_ref().map(|r| g.str(r)));
            self.x.push(row, piece_key(m.capture));
            self.c.push(row, (m.checks > 0).then_some(m.checks as i16));
            self.castle.push(row, piece_key(m.castle));
            self.promote.push(row, piece_key(m.promote));
            self.blast.push(row, m.blast.as_ref().map(|r| g.str(r)));
            for &n in &g.nags[m.nags.clone()] {
                self.nags.push(row, Some(i16::from(n)));
            }
            match m.eval {
                Some(Eval::Centipawns(cp)) => self.eval_cp.push(row, Some(cp)),
                Some(Eval::Mate(n)) => self.eval_mate.push(row, Some(n)),
                None => {}
            }
            self.clk.push(row, m.clock.map(i128::from));
            self.comment.push(row, m.comment.as_ref().map(|r| g.str(r)));
        }
        self.offsets.push(self.p.len() as i32);
    }

    /// `nag` (each move's first NAG) and `nags` (all of them) from the sparse NAG list.
    fn finish_nags(&mut self, len: usize) -> (Int16Array, ListArray) {
        let mut first = Sparse::new();
        let mut offsets = Vec::with_capacity(len + 1);
        offsets.push(0i32);
        let mut valid = BooleanBufferBuilder::new(len);
        let mut i = 0;
        for row in 0..len as u32 {
            let start = i;
            while self.nags.rows.get(i) == Some(&row) {
                i += 1;
            }
            if i > start {
                first.push(row as usize, Some(self.nags.values[start]));
            }
            valid.append(i > start);
            offsets.push(i as i32);
        }
        let values = Int16Array::from(std::mem::take(&mut self.nags.values));
        self.nags.rows.clear();
        let nags = ListArray::new(
            Arc::new(Field::new("item", DataType::Int16, true)),
            OffsetBuffer::new(offsets.into()),
            Arc::new(values),
            Some(NullBuffer::new(valid.finish())),
        );
        (first.finish(len), nags)
    }

    /// `f`: null at drops, without a validity buffer when there are none (standard chess).
    fn finish_from(&mut self, len: usize) -> Int8Array {
        let values = std::mem::take(&mut self.f);
        if self.drops.is_empty() {
            return values.into();
        }
        let mut valid = BooleanBufferBuilder::new(len);
        valid.append_n(len, true);
        for row in self.drops.drain(..) {
            valid.set_bit(row as usize, false);
        }
        Int8Array::new(values.into(), Some(NullBuffer::new(valid.finish())))
    }

    fn finish(&mut self) -> ListArray {
        let len = self.p.len();
        let (nag, nags) = self.finish_nags(len);
        let clk: Decimal128Array = self.clk.finish(len);
        let columns: Vec<ArrayRef> = vec![
            dictionary(std::mem::take(&mut self.p).into(), &self.pieces),
            dictionary(self.finish_from(len), &self.squares),
            dictionary(std::mem::take(&mut self.t).into(), &self.squares),
            dictionary(self.x.finish(len), &self.pieces),
            Arc::new(self.c.finish::<Int16Type>(len)),
            dictionary(self.castle.finish(len), &self.pieces),
            dictionary(self.promote.finish(len), &self.pieces),
            Arc::new(self.blast.finish(len)),
            Arc::new(self.san.finish(len)),
            Arc::new(nag),
            Arc::new(nags),
            Arc::new(self.eval_cp.finish::<Int32Type>(len)),
            Arc::new(self.eval_mate.finish::<Int16Type>(len)),
            Arc::new(
                clk.with_precision_and_scale(CLK_PRECISION, CLK_SCALE)
                    .expect("valid decimal type"),
            ),
            Arc::new(self.comment.finish(len)),
        ];
        let values = StructArray::new(move_fields(), columns, None);
        list_array(std::mem::replace(&mut self.offsets, vec![0]), values)
    }
}

fn list_array(offsets: Vec<i32>, values: StructArray) -> ListArray {
    let item: FieldRef = Arc::new(Field::new("item", values.data_type().clone(), true));
    ListArray::new(
        item,
        OffsetBuffer::new(offsets.into()),
        Arc::new(values),
        None,
    )
}

/// Builds a batch of accepted games.
pub struct GameColumns {
    source_file: String,
    len: usize,
    game_id: StringBuilder,
    game_key: Int64Builder,
    site: StringBuilder,
    event: StringBuilder,
    round: StringBuilder,
    datetime: TimestampSecondBuilder,
    result: StringBuilder,
    termination: StringBuilder,
    time_control: StringBuilder,
    tc_base: Int32Builder,
    tc_inc: Int32Builder,
    eco: StringBuilder,
    opening: StringBuilder,
    family: StringBuilder,
    player_name: StringBuilder,
    player_elo: Int32Builder,
    player_diff: Int32Builder,
    player_title: StringBuilder,
    variant: StringBuilder,
    start_fen: StringBuilder,
    mate: BooleanBuilder,
    has_eval: BooleanBuilder,
    has_clock: BooleanBuilder,
    n_plies: Int32Builder,
    comment: StringBuilder,
    headers: MapBuilder<StringBuilder, StringBuilder>,
    moves: MoveColumns,
    line_offsets: Vec<i32>,
    line_id: Int32Builder,
    line_parent: Int32Builder,
    line_ply: Int32Builder,
    line_comment: StringBuilder,
    line_moves: MoveColumns,
    source_offset: Int64Builder,
    /// With the openings table: the games' position columns and plies (`crate::plies`).
    plies: Option<PlyColumns>,
}

impl GameColumns {
    /// Builders sized for `games` games of `plies` mainline moves in all; with `openings`, for their
    /// position columns and plies too.
    pub fn with_capacity(
        source_file: &str,
        games: usize,
        plies: usize,
        openings: Option<&Arc<Openings>>,
    ) -> Self {
        let names = MapFieldNames {
            entry: "entries".into(),
            key: "key".into(),
            value: "value".into(),
        };
        let text = |bytes_each: usize| StringBuilder::with_capacity(games, games * bytes_each);
        let headers = MapBuilder::with_capacity(
            Some(names),
            StringBuilder::with_capacity(games * HEADERS, games * HEADERS * 8),
            StringBuilder::with_capacity(games * HEADERS, games * HEADERS * 10),
            games,
        );
        let mut line_offsets = Vec::with_capacity(games + 1);
        line_offsets.push(0);
        GameColumns {
            source_file: source_file.to_owned(),
            len: 0,
            game_id: text(16),
            game_key: Int64Builder::with_capacity(games),
            site: text(28),
            event: text(24),
            round: text(2),
            datetime: TimestampSecondBuilder::with_capacity(games).with_timezone("UTC"),
            result: text(1),
            termination: text(8),
            time_control: text(5),
            tc_base: Int32Builder::with_capacity(games),
            tc_inc: Int32Builder::with_capacity(games),
            eco: text(3),
            opening: text(32),
            family: text(20),
            player_name: StringBuilder::with_capacity(2 * games, 2 * games * 12),
            player_elo: Int32Builder::with_capacity(2 * games),
            player_diff: Int32Builder::with_capacity(2 * games),
            player_title: StringBuilder::with_capacity(2 * games, 0),
            variant: text(8),
            start_fen: StringBuilder::with_capacity(games, 0),
            mate: BooleanBuilder::with_capacity(games),
            has_eval: BooleanBuilder::with_capacity(games),
            has_clock: BooleanBuilder::with_capacity(games),
            n_plies: Int32Builder::with_capacity(games),
            comment: StringBuilder::with_capacity(games, 0),
            headers,
            moves: MoveColumns::with_capacity(games, plies),
            line_offsets,
            line_id: Int32Builder::new(),
            line_parent: Int32Builder::new(),
            line_ply: Int32Builder::new(),
            line_comment: StringBuilder::new(),
            line_moves: MoveColumns::with_capacity(0, 0),
            source_offset: Int64Builder::with_capacity(games),
            plies: openings.map(|o| PlyColumns::with_capacity(o.clone(), games, plies)),
        }
    }

    /// Games appended since the last batch.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No game appended since the last batch.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends a game that replayed without error, with what was derived from it (`positions`: its
    /// key replay, read when the columns hold plies).
    pub fn append(&mut self, g: &GameScratch, row: &GameRow, offset: u64, positions: &Positions) {
        let tag = |t: Known| g.tag(t);
        self.game_id.append_value(&row.game_id);
        self.game_key.append_value(row.game_key);
        self.site.append_option(tag(Known::Site));
        self.event.append_option(tag(Known::Event));
        self.round.append_option(tag(Known::Round));
        self.datetime.append_option(row.datetime);
        self.result.append_value(row.result);
        self.termination
            .append_option(tag(Known::Termination).map(tags::termination));
        self.time_control.append_option(tag(Known::TimeControl));
        self.tc_base.append_option(row.time_control.base);
        self.tc_inc.append_option(row.time_control.inc);

        self.eco.append_option(tag(Known::Eco));
        let opening = tag(Known::Opening);
        self.opening.append_option(opening);
        self.family.append_option(opening.map(tags::opening_family));

        let sides = [
            [
                Known::White,
                Known::WhiteElo,
                Known::WhiteRatingDiff,
                Known::WhiteTitle,
            ],
            [
                Known::Black,
                Known::BlackElo,
                Known::BlackRatingDiff,
                Known::BlackTitle,
            ],
        ];
        for [name, elo, diff, title] in sides {
            self.player_name.append_option(tag(name));
            self.player_elo
                .append_option(tag(elo).and_then(tags::parse_int));
            self.player_diff
                .append_option(tag(diff).and_then(tags::parse_int));
            self.player_title.append_option(tag(title));
        }

        self.variant.append_value(g.variant.name());
        self.start_fen
            .append_option(g.start_fen.as_ref().map(|r| g.str(r).trim()));
        let main = g.mainline();
        self.mate.append_value(g.final_is_mate);
        self.has_eval.append_value(row.partition.analysed);
        self.has_clock
            .append_value(main.iter().any(|m| m.clock.is_some()));
        self.n_plies.append_value(main.len() as i32);
        self.comment
            .append_option(g.comment.as_ref().map(|r| g.str(r)));

        for (key, value) in &row.headers {
            self.headers.keys().append_value(key);
            self.headers.values().append_value(value);
        }
        self.headers.append(true).expect("keys and values in step");

        self.moves.append(g, main);
        for line in &g.lines()[1..] {
            self.line_id.append_value(line.id);
            self.line_parent.append_value(line.parent);
            self.line_ply.append_value(line.ply);
            self.line_comment
                .append_option(line.comment.as_ref().map(|r| g.str(r)));
            self.line_moves.append(g, &line.moves);
        }
        self.line_offsets.push(self.line_id.len() as i32);

        self.source_offset.append_value(offset as i64);
        self.len += 1;
        if let Some(plies) = &mut self.plies {
            let game = GameFacts {
                variant: g.variant.name(),
                tc_base: row.time_control.base,
                tc_inc: row.time_control.inc,
                mate: g.final_is_mate,
                analysed: row.partition.analysed,
            };
            plies.append(&game, positions, main.iter().map(|m| m.clock));
        }
    }

    /// The batch so far; the builders start empty again.
    pub fn finish(&mut self) -> Result<RecordBatch, ArrowError> {
        let n = std::mem::take(&mut self.len);
        let opening = StructArray::new(
            opening_fields(),
            vec![
                Arc::new(self.eco.finish()),
                Arc::new(self.opening.finish()),
                Arc::new(self.family.finish()),
            ],
            None,
        );
        let players = StructArray::new(
            player_fields(),
            vec![
                Arc::new(self.player_name.finish()),
                Arc::new(self.player_elo.finish()),
                Arc::new(self.player_diff.finish()),
                Arc::new(self.player_title.finish()),
            ],
            None,
        );
        let player_offsets: Vec<i32> = (0..=n as i32).map(|i| 2 * i).collect();
        let lines = StructArray::new(
            line_fields(),
            vec![
                Arc::new(self.line_id.finish()),
                Arc::new(self.line_parent.finish()),
                Arc::new(self.line_ply.finish()),
                Arc::new(self.line_comment.finish()),
                Arc::new(self.line_moves.finish()),
            ],
            None,
        );
        let mut source_file = StringBuilder::new();
        for _ in 0..n {
            source_file.append_value(&self.source_file);
        }
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.game_id.finish()),
            Arc::new(self.game_key.finish()),
            Arc::new(self.site.finish()),
            Arc::new(self.event.finish()),
            Arc::new(self.round.finish()),
            Arc::new(self.datetime.finish()),
            Arc::new(self.result.finish()),
            Arc::new(self.termination.finish()),
            Arc::new(self.time_control.finish()),
            Arc::new(self.tc_base.finish()),
            Arc::new(self.tc_inc.finish()),
            Arc::new(opening),
            Arc::new(list_array(player_offsets, players)),
            Arc::new(self.variant.finish()),
            Arc::new(self.start_fen.finish()),
            Arc::new(self.mate.finish()),
            Arc::new(self.has_eval.finish()),
            Arc::new(self.has_clock.finish()),
            Arc::new(self.n_plies.finish()),
            Arc::new(self.comment.finish()),
            Arc::new(self.headers.finish()),
            Arc::new(self.moves.finish()),
            Arc::new(list_array(
                std::mem::replace(&mut self.line_offsets, vec![0]),
                lines,
            )),
            Arc::new(source_file.finish()),
            Arc::new(self.source_offset.finish()),
        ];
        let games = RecordBatch::try_new(schema(), columns)?;
        match &mut self.plies {
            Some(plies) => {
                with_plies(games, plies.finish()).map_err(|e| ArrowError::InvalidArgumentError(e.0))
            }
            None => Ok(games),
        }
    }
}
