//! Study JSON documents (docs/exports.md, "Study JSON") as PGN text for the reader to replay.
//!
//! The load finds them among its JSON lines (a line or document with a `metadata` key:
//! [`crate::json_games`]) and hands them here a block at a time. A document is read with its keys in
//! document order ([`crate::json_value`]): `metadata.other_tags` becomes tags in that order. A field of
//! the wrong type, a missing required field, a move numbered other than its place, or text PGN cannot
//! carry refuses the game here with one line saying what and where, in the words the load has always
//! used (values quoted as Python's `repr` writes them); a clock's or an eval's range is left to the
//! reader, which checks it as it checks a PGN game's ([`crate::annotations`]): here only their shape.

use std::fmt;
use std::io::Write as _;

use crate::annotations::MAX_NAG;
use crate::export_json::python_json_string;
use crate::export_pgn::{start_ply, tag_name, write_tags};
use crate::export_study::{GAME_ID_TAG, TAGS_COMMAND};
use crate::json_fields::{
    array, comment_text, digits, integer, is_clock, lake_id, object, string, tag_text, tag_value,
    Refused,
};
use crate::json_games::{Place, Refusal, MAX_DEPTH};
use crate::json_value::{self, Arena, Json, KeyOrder, Object};
use crate::movetext::{Part, Tokens};
use crate::python_repr::{self, str_repr};
use crate::tags::is_tag_name;

const PGN_RESULTS: [&str; 4] = ["1-0", "0-1", "1/2-1/2", "*"];
/// The metadata keys and the tags they stand for, in the order of PGN's roster.
const METADATA: [(&str, &str); 8] = [
    ("event", "Event"),
    ("site", "Site"),
    ("date", "Date"),
    ("round", "Round"),
    ("white", "White"),
    ("black", "Black"),
    ("result", "Result"),
    ("time_control", "TimeControl"),
];
const REQUIRED_METADATA: [&str; 5] = ["event", "date", "white", "black", "result"];
const INT32: i64 = (1 << 31) - 1;

/// A study game: its PGN is `Studies::pgn[pgn_start..pgn_end]`; `id` its `game_id` when the lake can
/// keep it as the game's id.
#[derive(Debug, Clone, PartialEq)]
pub struct Study {
    pub place: Place,
    pub pgn_start: usize,
    pub pgn_end: usize,
    pub id: Option<String>,
}

/// Study documents made into PGN: the games in order and the refused documents.
#[derive(Debug, Default)]
pub struct Studies {
    pub pgn: Vec<u8>,
    pub games: Vec<Study>,
    pub refused: Vec<(Place, Refusal)>,
}

/// The study documents at `places` in `data` made into PGN.
pub fn study_games(data: &[u8], places: &[Place]) -> Studies {
    let mut studies = Studies::default();
    let mut arena = Arena::default();
    for place in places {
        let text = &data[place.offset..place.offset + place.length];
        let pgn_start = studies.pgn.len();
        let outcome = std::str::from_utf8(text)
            .map_err(|e| Refusal::NotUtf8(e.valid_up_to()))
            .and_then(|text| {
                json_value::parse(text, &arena, MAX_DEPTH).map_err(|_| Refusal::NotJson)
            })
            .and_then(|doc| study_game(&doc, &mut studies.pgn).map_err(Refusal::BadField));
        match outcome {
            Ok(id) => studies.games.push(Study {
                place: place.clone(),
                pgn_start,
                pgn_end: studies.pgn.len(),
                id,
            }),
            Err(refusal) => {
                studies.pgn.truncate(pgn_start);
                studies.refused.push((place.clone(), refusal));
            }
        }
        arena.reset();
    }
    studies
}

/// Where a line of moves is in the document (`moves[3].variations[0].line`), written out only when a
/// refusal names it.
#[derive(Clone, Copy)]
enum Line<'a> {
    Moves,
    /// The `n`th variation of move `index` of a line.
    Variation(&'a Line<'a>, usize, usize),
}

impl fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Line::Moves => f.write_str("moves"),
            Line::Variation(line, index, n) => write!(f, "{line}[{index}].variations[{n}].line"),
        }
    }
}

/// One document's PGN written to `out`; its id when the lake can keep it.
fn study_game(doc: &Json, out: &mut Vec<u8>) -> Refused<Option<String>> {
    let doc = object(doc, "the document")?;
    for key in ["game_id", "metadata", "moves"] {
        if !doc.contains_key(key) {
            return Err(format!("missing required field '{key}'"));
        }
    }
    let game_id = string(field(doc, "game_id"), "game_id")?;
    let metadata = object(field(doc, "metadata"), "metadata")?;
    for key in REQUIRED_METADATA {
        if !metadata.contains_key(key) {
            return Err(format!("missing required field 'metadata.{key}'"));
        }
    }
    let result = match field(metadata, "result") {
        Json::String(r) if PGN_RESULTS.contains(r) => r,
        other => {
            return Err(format!(
                "metadata.result {} is not one of 1-0, 0-1, 1/2-1/2, *",
                repr(other)
            ))
        }
    };
    let pairs = study_tags(metadata, game_id)?;
    let fen = pairs
        .iter()
        .find(|(name, _)| name == "FEN")
        .map(|(_, v)| v.as_str());
    let first_ply = start_ply(fen);
    let pairs: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    write_tags(out, &pairs);
    out.push(b'\n');
    let mut movetext = Movetext {
        tokens: Tokens::new(out),
    };
    if doc.contains_key("notes") {
        let notes = comment_text(field(doc, "notes"), "notes")?;
        movetext.tokens.braced(&[Part::Text(notes)]);
    }
    movetext.line(
        array(field(doc, "moves"), "moves")?,
        first_ply,
        Line::Moves,
        None,
    )?;
    movetext.tokens.token(result);
    movetext.tokens.out.extend_from_slice(b"\n\n");
    Ok(lake_id(game_id).then(|| game_id.to_owned()))
}

/// The tags: the metadata and the other tags, then `GameId` for an id the lake cannot keep as its own.
/// Earlier occurrences of a tag a column holds go first (readers keep the last); Date lives in the lake's
/// `headers`, where its first occurrence is the one the roster shows.
fn study_tags(metadata: &Object, game_id: &str) -> Refused<Vec<(String, String)>> {
    let others = match metadata.get("other_tags") {
        None => Vec::new(),
        Some(others) => object(others, "metadata.other_tags")?.entries(KeyOrder::Document),
    };
    let mut other_pairs = Vec::with_capacity(others.len());
    for (key, value) in &others {
        let value = tag_value(value, format_args!("metadata.other_tags.{key}"))?;
        other_pairs.push((repeated_tag(key), value.to_owned()));
    }
    for (name, _) in &other_pairs {
        if !is_tag_name(name.as_bytes()) {
            return Err(format!(
                "metadata.other_tags key {} is not a PGN tag name",
                str_repr(name)
            ));
        }
    }
    let mut own = Vec::with_capacity(METADATA.len());
    for (key, tag) in METADATA {
        if let Some(value) = metadata.get(key) {
            let value = tag_value(value, format_args!("metadata.{key}"))?;
            let value = match (key, study_date(value)) {
                ("date", Some(date)) => date,
                _ => value.to_owned(),
            };
            own.push((tag.to_owned(), value));
        }
    }
    let in_roster = |name: &str| name != "Date" && METADATA.iter().any(|(_, tag)| *tag == name);
    let (roster, rest): (Vec<_>, Vec<_>) = other_pairs.into_iter().partition(|(n, _)| in_roster(n));
    let mut pairs: Vec<(String, String)> = roster.into_iter().chain(own).chain(rest).collect();
    if !lake_id(game_id) {
        pairs.push((
            GAME_ID_TAG.to_owned(),
            tag_text(game_id, "game_id")?.to_owned(),
        ));
    }
    Ok(pairs)
}

/// An `other_tags` key's tag: a repeated tag is keyed `Date (2)`, `Date (3)`… (Python's
/// `re.sub(r" \([0-9]+\)$", "", key)`, whose `$` also matches before a last newline).
fn repeated_tag(key: &str) -> String {
    match key.strip_suffix('\n') {
        Some(body) => format!("{}\n", tag_name(body)),
        None => tag_name(key).to_owned(),
    }
}

/// A study date, `2024-01-05` or `2024-??-??`, as PGN writes it: `2024.01.05`.
fn study_date(value: &str) -> Option<String> {
    let b = value.as_bytes();
    let fits = b.len() == 10
        && b.iter().enumerate().all(|(i, &c)| match i {
            4 | 7 => c == b'-',
            _ => c.is_ascii_digit() || c == b'?',
        });
    fits.then(|| format!("{}.{}.{}", &value[0..4], &value[5..7], &value[8..10]))
}

/// A study game's movetext being written.
struct Movetext<'a> {
    tokens: Tokens<'a>,
}

impl Movetext<'_> {
    /// A line's moves (and the lines nested in them), its label first.
    fn line(
        &mut self,
        moves: &[Json],
        first_ply: u64,
        line: Line,
        label: Option<&Json>,
    ) -> Refused<()> {
        if let Some(label) = label.filter(|l| **l != Json::Null) {
            let label = comment_text(label, format_args!("{line} label"))?;
            self.tokens.braced(&[Part::Text(label)]);
        }
        for (index, mv) in moves.iter().enumerate() {
            let here = Here(line, index);
            let mv = object(mv, here)?;
            let ply = first_ply + index as u64;
            let san = match mv.get("san") {
                Some(Json::String(san)) if is_san(san) => *san,
                Some(other) => return Err(format!("{here}.san {} is not a SAN move", repr(other))),
                None => return Err(format!("missing required field '{here}.san'")),
            };
            let Some(number) = mv.get("move_number") else {
                return Err(format!("missing required field '{here}.move_number'"));
            };
            let number = integer(number, format_args!("{here}.move_number"), 1, INT32)?;
            let place = (ply / 2 + 1, if ply.is_multiple_of(2) { "w" } else { "b" });
            let color_fits = match mv.get("color") {
                None => true,
                Some(Json::String(color)) => *color == place.1,
                Some(_) => false,
            };
            if number.unsigned_abs() != place.0 || !color_fits {
                let color = mv.get("color").map_or_else(|| place.1.into(), str_of);
                return Err(format!(
                    "{here} '{san}' is numbered {number} {color} where the game is at {} {}",
                    place.0, place.1
                ));
            }
            self.tokens.start_token();
            let dots = if ply.is_multiple_of(2) { "." } else { "..." };
            let _ = write!(self.tokens.out, "{}{dots} {san}", place.0);
            self.annotate(mv, here)?;
            let variations = match mv.get("variations") {
                None => &[][..],
                Some(v) => array(v, format_args!("{here}.variations"))?,
            };
            for (n, variation) in variations.iter().enumerate() {
                let variation = object(variation, format_args!("{here}.variations[{n}]"))?;
                let Some(moves) = variation.get("line") else {
                    return Err(format!(
                        "missing required field '{here}.variations[{n}].line'"
                    ));
                };
                self.tokens.token("(");
                let at = Line::Variation(&line, index, n);
                self.line(array(moves, at)?, ply, at, variation.get("label"))?;
                self.tokens.token(")");
            }
        }
        Ok(())
    }

    /// A move's NAGs, then its comment: eval, clock, text and the free tags.
    fn annotate(&mut self, mv: &Object, here: Here) -> Refused<()> {
        let empty = Object::default();
        let annotations = match mv.get("annotations") {
            None => &empty,
            Some(a) => object(a, format_args!("{here}.annotations"))?,
        };
        let tags = match annotations.get("tags") {
            None => &[][..],
            Some(tags) => array(tags, format_args!("{here}.annotations.tags"))?,
        };
        let mut free = Vec::new();
        for (i, tag) in tags.iter().enumerate() {
            let tag = string(tag, format_args!("{here}.annotations.tags[{i}]"))?;
            if is_nag(tag) {
                self.tokens.token(tag);
            } else {
                free.push(tag);
            }
        }
        let mut parts: Vec<Part> = Vec::new();
        if let Some(eval) = annotations.get("eval") {
            let value = string(eval, format_args!("{here}.annotations.eval"))?;
            if !is_study_eval(value) {
                return Err(format!(
                    "{here}.annotations.eval {} is not pawns (+0.20, -1.50) or a mate (#3, #-3)",
                    str_repr(value)
                ));
            }
            parts.push(Part::Command("eval", value));
        }
        if let Some(clock) = annotations.get("clock") {
            let value = string(clock, format_args!("{here}.annotations.clock"))?;
            if !is_clock(value) {
                return Err(format!(
                    "{here}.annotations.clock {} is not h:mm:ss",
                    str_repr(value)
                ));
            }
            parts.push(Part::Command("clk", value));
        }
        if let Some(comment) = annotations.get("comment") {
            let comment = comment_text(comment, format_args!("{here}.annotations.comment"))?;
            parts.push(Part::Text(comment));
        }
        let free = (!free.is_empty()).then(|| tags_command(&free));
        if let Some(free) = &free {
            parts.push(Part::Text(free));
        }
        self.tokens.braced(&parts);
        Ok(())
    }
}

/// Move `index` of a line.
#[derive(Clone, Copy)]
struct Here<'a>(Line<'a>, usize);

impl fmt::Display for Here<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]", self.0, self.1)
    }
}

/// `[%tags ["opening","Benoni"]]`: `]` and `}` inside a tag escaped as JSON allows, so that neither ends
/// the command or the comment early.
fn tags_command(tags: &[&str]) -> String {
    let mut command = String::from(TAGS_COMMAND);
    for (n, tag) in tags.iter().enumerate() {
        if n > 0 {
            command.push(',');
        }
        let mut item = String::new();
        python_json_string(tag, &mut item);
        command.push_str(&item.replace(']', "\\u005d").replace('}', "\\u007d"));
    }
    command.push_str("]]");
    command
}

/// One SAN token and nothing else (`[A-Za-z0-9=+#@-]{2,12}`): no space, comment, variation or NAG can
/// ride along.
fn is_san(san: &str) -> bool {
    (2..=12).contains(&san.len())
        && san
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"=+#@-".contains(&b))
}

/// A NAG as a study tag: `$n`, at most 3 digits, 1 to `MAX_NAG`.
fn is_nag(tag: &str) -> bool {
    tag.strip_prefix('$').is_some_and(|number| {
        digits(number, 1, 3) && (1..=MAX_NAG).contains(&number.parse().unwrap_or(0))
    })
}

/// Pawns (`[+-][0-9]{1,10}\.[0-9]{2}`) or a mate (`#-?[0-9]+`).
fn is_study_eval(text: &str) -> bool {
    if let Some(mate) = text.strip_prefix('#') {
        return digits(mate.strip_prefix('-').unwrap_or(mate), 1, usize::MAX);
    }
    let Some(pawns) = text.strip_prefix(['+', '-']) else {
        return false;
    };
    pawns
        .split_once('.')
        .is_some_and(|(whole, cents)| digits(whole, 1, 10) && digits(cents, 2, 2))
}

/// A key's value: one the caller has found present.
fn field<'o, 'a>(object: &'o Object<'a>, key: &str) -> &'o Json<'a> {
    object.get(key).unwrap_or(&Json::Null)
}

/// A value as a refusal quotes it: Python's `repr` of what `json.loads` makes of it (objects in document
/// order).
fn repr(value: &Json) -> String {
    python_repr::repr(value, KeyOrder::Document)
}

/// Python's `str` of the value: a string as it is, anything else as `repr`.
fn str_of(value: &Json) -> String {
    match value {
        Json::String(text) => text.to_string(),
        other => repr(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(doc: &str) -> Result<(String, Option<String>), Refusal> {
        let place = Place {
            offset: 0,
            length: doc.len(),
            line: 1,
        };
        let studies = study_games(doc.as_bytes(), &[place]);
        if let Some((_, refusal)) = studies.refused.first() {
            return Err(refusal.clone());
        }
        let game = &studies.games[0];
        let pgn = String::from_utf8(studies.pgn[game.pgn_start..game.pgn_end].to_vec()).unwrap();
        Ok((pgn, game.id.clone()))
    }

    fn refused(doc: &str) -> String {
        match one(doc) {
            Err(Refusal::BadField(reason)) => reason,
            other => panic!("{doc}: {other:?}"),
        }
    }

    const HEAD: &str = r#""game_id":"x y","metadata":{"event":"E","date":"2024-01-0?","white":"a","black":"b","result":"1-0""#;

    #[test]
    fn a_document_becomes_pgn_with_its_tags_in_document_order() {
        let doc = format!(
            r#"{{{HEAD},"other_tags":{{"Zeta":"1","White (2)":"w","Alpha":"2","Zeta":"3"}}}},"notes":"n","moves":[{{"san":"e4","move_number":1,"color":"w","annotations":{{"tags":["$1","x]y"],"eval":"+0.20","clock":"0:01:00","comment":"c"}},"variations":[{{"label":"or","line":[{{"san":"d4","move_number":1}}]}}]}},{{"san":"e5","move_number":1,"color":"b"}}]}}"#
        );
        let (pgn, id) = one(&doc).unwrap();
        assert_eq!(
            pgn,
            "[White \"w\"]\n[Event \"E\"]\n[Date \"2024.01.0?\"]\n[White \"a\"]\n[Black \"b\"]\n\
             [Result \"1-0\"]\n[Zeta \"3\"]\n[Alpha \"2\"]\n[GameId \"x y\"]\n\n\
             { n } 1. e4 $1 { [%eval +0.20] [%clk 0:01:00] c [%tags [\"x\\u005dy\"]] } ( { or } 1. d4 ) \
             1... e5 1-0\n\n"
        );
        assert_eq!(id, None);
    }

    #[test]
    fn refusals_say_what_and_where_as_python_did() {
        let with = |moves: &str| format!(r#"{{{HEAD}}},"moves":{moves}}}"#);
        assert_eq!(refused("[1]"), "the document is an array, not an object");
        assert_eq!(
            refused(r#"{"game_id":"x","moves":[]}"#),
            "missing required field 'metadata'"
        );
        assert_eq!(
            refused(&with(
                r#"[{"san":"e4","move_number":1},{"san":"e5","move_number":2}]"#
            )),
            "moves[1] 'e5' is numbered 2 b where the game is at 1 b"
        );
        assert_eq!(
            refused(&with(
                r#"[{"san":"e4","move_number":1,"color":[{"b":1,"a":null}]}]"#
            )),
            "moves[0] 'e4' is numbered 1 [{'b': 1, 'a': None}] where the game is at 1 w"
        );
        assert_eq!(
            refused(&with(r#"[{"san":1.0,"move_number":1}]"#)),
            "moves[0].san 1.0 is not a SAN move"
        );
        assert_eq!(
            refused(&with(
                r#"[{"san":"e4","move_number":99999999999999999999}]"#
            )),
            "moves[0].move_number 99999999999999999999 is out of range (1 to 2147483647)"
        );
        assert_eq!(
            refused(&with(
                r#"[{"san":"e4","move_number":1,"variations":[{"line":[{"san":"d4","move_number":1,"annotations":{"clock":"1:2"}}]}]}]"#
            )),
            "moves[0].variations[0].line[0].annotations.clock '1:2' is not h:mm:ss"
        );
        assert_eq!(
            refused(&format!(
                r#"{{{HEAD},"other_tags":{{"Bad tag":"x"}}}},"moves":[]}}"#
            )),
            "metadata.other_tags key 'Bad tag' is not a PGN tag name"
        );
    }
}
