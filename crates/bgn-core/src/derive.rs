//! What the lake keeps of a replayed game beyond its tags and moves, decided once per game: its id,
//! time, result, time control, partition, and which tags `headers` keeps. The Arrow builders
//! (`columns`) only append what is decided here.

use std::borrow::Cow;
use std::collections::HashMap;

use pgn_reader::{KnownOutcome, Outcome};
use shakmaty::Color;

use crate::replay::GameScratch;
use crate::tags::{self, Known, TimeControl};

/// A game's derived fields.
pub struct GameRow<'g> {
    /// The lichess id when `Site` is a lichess game URL, else the content id (`content_id`).
    pub game_id: Cow<'g, str>,
    /// Seconds since the epoch (UTC) of `UTCDate`/`UTCTime`, else `Date`/`Time`.
    pub datetime: Option<i64>,
    /// `W`, `B`, `D` or `*`: the `Result` tag, else the movetext's result marker.
    pub result: &'static str,
    pub time_control: TimeControl,
    pub partition: Partition,
    /// The tags `headers` keeps, in file order: those no column gives back exactly; a repeated tag
    /// under `Name (2)`, `Name (3)`… (map keys must be unique: DuckDB refuses a map with a repeat).
    pub headers: Vec<(Cow<'g, str>, &'g str)>,
}

/// Where a game goes in the lake: `type=<kind>/year=<year>/month=<month>` (0 when unknown).
#[derive(Copy, Clone, Debug, Eq, PartialEq, Hash)]
pub struct Partition {
    pub kind: &'static str,
    pub year: i16,
    pub month: i16,
}

/// Derives the fields of the game in `g`.
pub fn derive(g: &GameScratch) -> GameRow<'_> {
    let tag = |t: Known| g.tag(t);
    let game_id = match tag(Known::Site).and_then(tags::lichess_id) {
        Some(id) => Cow::Borrowed(id),
        None => Cow::Owned(content_id(g)),
    };
    let (date, time) = match tag(Known::UtcDate) {
        Some(d) => (Some(d), tag(Known::UtcTime)),
        None => (tag(Known::Date), tag(Known::Time)),
    };
    let (year, month, _) = date.map_or((None, None, None), tags::date_parts);
    let time_control = tags::time_control(tag(Known::TimeControl));
    let partition = Partition {
        kind: time_control.kind,
        year: year.and_then(|y| i16::try_from(y).ok()).unwrap_or(0),
        month: month.map_or(0, |m| m as i16),
    };
    GameRow {
        game_id,
        datetime: date.and_then(|d| tags::timestamp(d, time)),
        result: result(g),
        time_control,
        partition,
        headers: kept_headers(g),
    }
}

fn result(g: &GameScratch) -> &'static str {
    match g.tag(Known::Result).map(tags::result_code) {
        Some(code) if code != "*" => code,
        _ => match g.outcome {
            Some(Outcome::Known(KnownOutcome::Decisive {
                winner: Color::White,
            })) => "W",
            Some(Outcome::Known(KnownOutcome::Decisive {
                winner: Color::Black,
            })) => "B",
            Some(Outcome::Known(KnownOutcome::Draw)) => "D",
            _ => "*",
        },
    }
}

fn kept_headers(g: &GameScratch) -> Vec<(Cow<'_, str>, &str)> {
    let mut kept = Vec::new();
    let mut keys = KeyCounts::default();
    for (i, (name, value, known)) in g.tags.iter().enumerate() {
        let (name, value) = (g.str(name), g.str(value));
        let held = known.is_some_and(|k| {
            k.has_column() && g.tag_index(k) == Some(i) && column_holds(k, value, g.chess960)
        });
        if held {
            continue;
        }
        let key = match keys.add(name) {
            0 => Cow::Borrowed(name),
            repeats => Cow::Owned(format!("{name} ({})", repeats + 1)),
        };
        kept.push((key, value));
    }
    kept
}

/// How often each `headers` key was seen so far in one game. Games have a dozen tags, searched in a
/// list; past `LINEAR` keys (a hostile game may have 400,000), a hash map keeps the count linear.
#[derive(Default)]
struct KeyCounts<'a> {
    few: Vec<&'a str>,
    many: HashMap<&'a str, usize>,
}

impl<'a> KeyCounts<'a> {
    const LINEAR: usize = 32;

    /// Counts `key`; returns how many times it was seen before.
    fn add(&mut self, key: &'a str) -> usize {
        if self.few.len() < Self::LINEAR {
            let before = self.few.iter().filter(|&&k| k == key).count();
            self.few.push(key);
            return before;
        }
        if self.many.is_empty() {
            for k in &self.few {
                *self.many.entry(k).or_default() += 1;
            }
        }
        let count = self.many.entry(key).or_default();
        *count += 1;
        *count - 1
    }
}

/// Whether the column of tag `k` gives back `value` exactly, so that `headers` need not keep it: not
/// so for a non-numeric Elo (`?`), a Result other than the four PGN ones, a Variant tag other than the
/// `variant` column's text.
fn column_holds(k: Known, value: &str, chess960: bool) -> bool {
    match k {
        Known::Result => matches!(value, "1-0" | "0-1" | "1/2-1/2" | "*"),
        Known::WhiteElo | Known::BlackElo | Known::WhiteRatingDiff | Known::BlackRatingDiff => {
            tags::parse_int(value)
                .is_some_and(|n| value == n.to_string() || value == format!("{n:+}"))
        }
        Known::Variant => value == if chess960 { "Chess960" } else { "Standard" },
        _ => true,
    }
}

/// A stable id for a game without a lichess URL: its tags in order and its mainline moves.
fn content_id(g: &GameScratch) -> String {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for (name, value, _) in &g.tags {
        h.update(g.str(name).as_bytes());
        h.update(&[0]);
        h.update(g.str(value).as_bytes());
        h.update(&[0]);
    }
    for m in g.mainline() {
        h.update(&[m.from, m.to, m.promote]);
    }
    format!("{:016x}", h.digest())
}
