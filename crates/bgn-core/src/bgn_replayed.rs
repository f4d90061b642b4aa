//! What a BGN JSON load takes back from the batches the reader made of its games' PGN
//! (crates/bgn-core/src/json_games.rs): each BGN game's moves as the replay gave them, written as the
//! line's signature is and compared with it by hash, and the batch with the BGN games' `san` null (their
//! lines hold no SAN).

use std::fmt::Write as _;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int16Type, Int8Type};
use arrow_array::{Array, ArrayRef, ListArray, RecordBatch, StructArray, UInt64Array};
use arrow_buffer::{BooleanBufferBuilder, NullBuffer};

use crate::json_games::{signature_hash, SIGNATURE_FIELDS};
use crate::san::{FillError, Texts};

/// `(disagreeing, games)`: the BGN games (those `expected` holds a signature hash for; a null: not BGN)
/// whose replayed signature (`p.f.t.x.c.castle.promote` a move, space-separated, the mainline then each
/// of `variations` `|`-separated) hashes otherwise, each as its row and that signature; and `games` with
/// `san` null in the BGN games' moves.
pub fn bgn_replayed(
    games: &RecordBatch,
    expected: &UInt64Array,
) -> Result<(Vec<(usize, String)>, RecordBatch), FillError> {
    let column = |name: &str| {
        games
            .column_by_name(name)
            .ok_or_else(|| FillError(format!("bgn_replayed: the batch has no `{name}` column")))
    };
    let mainline = MoveFields::of(column("moves")?, "moves")?;
    let lines = match games.column_by_name("variations") {
        None => None,
        Some(c) => {
            let shape = || FillError("bgn_replayed: `variations` is not a list of lines".into());
            let list = c.as_list_opt::<i32>().ok_or_else(shape)?;
            let structs = list.values().as_struct_opt().ok_or_else(shape)?;
            let moves = structs.column_by_name("moves").ok_or_else(shape)?;
            Some((list, structs, MoveFields::of(moves, "variations.moves")?))
        }
    };
    let mut disagreeing = Vec::new();
    let mut text = String::new();
    let mut main_drop = Drops::new(mainline.moves.len());
    let mut line_drop = lines.as_ref().map(|(_, _, m)| Drops::new(m.moves.len()));
    for game in (0..games.num_rows()).filter(|&g| expected.is_valid(g)) {
        text.clear();
        let rows = rows_of(mainline.list, game);
        mainline.signature(rows.clone(), &mut text);
        main_drop.mark(rows);
        if let (Some((list, _, moves)), Some(drop)) = (&lines, &mut line_drop) {
            for line in rows_of(list, game) {
                text.push('|');
                let rows = rows_of(moves.list, line);
                moves.signature(rows.clone(), &mut text);
                drop.mark(rows);
            }
        }
        if signature_hash(&text) != expected.value(game) {
            disagreeing.push((game, text.clone()));
        }
    }
    let mut columns = games.columns().to_vec();
    let at = games.schema().index_of("moves").expect("found above");
    columns[at] = mainline.without_san(main_drop)?;
    if let (Some((list, structs, moves)), Some(drop)) = (lines, line_drop) {
        let at = games.schema().index_of("variations").expect("found above");
        let (fields, mut values, nulls) = structs.clone().into_parts();
        let moves_at = fields.find("moves").expect("found above").0;
        values[moves_at] = moves.without_san(drop)?;
        let structs = StructArray::new(fields, values, nulls);
        let (field, offsets, _, nulls) = list.clone().into_parts();
        columns[at] = Arc::new(ListArray::new(field, offsets, Arc::new(structs), nulls));
    }
    let games =
        RecordBatch::try_new(games.schema(), columns).map_err(|e| FillError(e.to_string()))?;
    Ok((disagreeing, games))
}

/// The rows of list `i`'s values (none when the list is null).
fn rows_of(list: &ListArray, i: usize) -> Range<usize> {
    if list.is_null(i) {
        return 0..0;
    }
    let offsets = list.value_offsets();
    offsets[i] as usize..offsets[i + 1] as usize
}

/// The moves whose `san` is dropped, by row.
struct Drops(BooleanBufferBuilder);

impl Drops {
    fn new(rows: usize) -> Drops {
        let mut marks = BooleanBufferBuilder::new(rows);
        marks.append_n(rows, false);
        Drops(marks)
    }

    fn mark(&mut self, rows: Range<usize>) {
        for row in rows {
            self.0.set_bit(row, true);
        }
    }
}

/// A `list<move>` column and the fields of its moves a signature names.
struct MoveFields<'a> {
    list: &'a ListArray,
    moves: &'a StructArray,
    letters: Vec<Letters<'a>>,
    checks: &'a arrow_array::PrimitiveArray<Int16Type>,
}

impl<'a> MoveFields<'a> {
    fn of(column: &'a ArrayRef, name: &str) -> Result<MoveFields<'a>, FillError> {
        let shape = || FillError(format!("bgn_replayed: `{name}` is not a list of moves"));
        let list = column.as_list_opt::<i32>().ok_or_else(shape)?;
        let moves = list.values().as_struct_opt().ok_or_else(shape)?;
        let field = |field: &str| moves.column_by_name(field).ok_or_else(shape);
        let letters = SIGNATURE_FIELDS
            .iter()
            .filter(|&&f| f != "c")
            .map(|f| Letters::of(field(f)?))
            .collect::<Result<_, _>>()?;
        let checks = field("c")?.as_primitive_opt().ok_or_else(shape)?;
        Ok(MoveFields {
            list,
            moves,
            letters,
            checks,
        })
    }

    /// The moves at `rows` as json_games writes a line's signature.
    fn signature(&self, rows: Range<usize>, out: &mut String) {
        for row in rows.clone() {
            if row > rows.start {
                out.push(' ');
            }
            for (n, letters) in self.letters.iter().enumerate() {
                if n == 4 {
                    // `c` comes between `x` and `castle`
                    out.push('.');
                    if self.checks.is_valid(row) {
                        let _ = write!(out, "{}", self.checks.value(row));
                    }
                }
                if n > 0 {
                    out.push('.');
                }
                out.push_str(letters.get(row));
            }
        }
    }

    /// The column with `san` null in the rows `drops` marks.
    fn without_san(&self, drops: Drops) -> Result<ArrayRef, FillError> {
        let (fields, mut values, nulls) = self.moves.clone().into_parts();
        let at = fields
            .find("san")
            .ok_or_else(|| FillError("bgn_replayed: the moves have no `san`".into()))?
            .0;
        let mut drops = drops;
        let kept = NullBuffer::new(!&drops.0.finish());
        let san = values[at].to_data();
        let nulls_kept = NullBuffer::union(san.nulls(), Some(&kept));
        let san = san
            .into_builder()
            .nulls(nulls_kept)
            .build()
            .map_err(|e| FillError(e.to_string()))?;
        values[at] = arrow_array::make_array(san);
        let moves = StructArray::new(fields, values, nulls);
        let (field, offsets, _, nulls) = self.list.clone().into_parts();
        Ok(Arc::new(ListArray::new(
            field,
            offsets,
            Arc::new(moves),
            nulls,
        )))
    }
}

/// A letter or square field: dictionary-encoded as the reader writes it (`Int8` keys, read in place: a
/// copy of them as `usize`, as `normalized_keys` makes, cost each batch fresh memory), or plain strings.
enum Letters<'a> {
    Dictionary(&'a [i8], Texts<'a>, &'a ArrayRef),
    Plain(Texts<'a>),
}

impl<'a> Letters<'a> {
    fn of(array: &'a ArrayRef) -> Result<Letters<'a>, FillError> {
        if array.as_any_dictionary_opt().is_none() {
            return Ok(Letters::Plain(Texts::of(array, "a move field")?));
        }
        let dict = array.as_dictionary_opt::<Int8Type>().ok_or_else(|| {
            FillError("bgn_replayed: a move field's dictionary keys are not Int8".into())
        })?;
        Ok(Letters::Dictionary(
            dict.keys().values(),
            Texts::of(dict.values(), "a move field's dictionary")?,
            array,
        ))
    }

    /// The field of move `row`, `""` for a null.
    fn get(&self, row: usize) -> &'a str {
        match self {
            Letters::Dictionary(keys, values, array) => {
                if array.is_null(row) {
                    ""
                } else {
                    usize::try_from(keys[row]).map_or("", |key| values.get(key).unwrap_or(""))
                }
            }
            Letters::Plain(texts) => texts.get(row).unwrap_or(""),
        }
    }
}
