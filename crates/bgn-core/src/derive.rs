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
    /// The id its source gives (a BGN line's), else the lichess id when `Site` is a lichess game URL, else
    /// the content id (`content_id`).
    pub game_id: Cow<'g, str>,
    /// `game_id` as an integer (`game_key`): what the `plies` table joins on.
    pub game_key: i64,
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

/// Where a game goes in the lake: `type=<kind>/year=<year>/month=<month>` (0 when unknown), and in
/// row groups of analysed games (those with an engine evaluation) or of the others. Readers hand the
/// two over in batches of their own, so that the lake writes them in row groups of their own without
/// a copy: a question on analysed games (~8% of lichess's) then skips the others' row groups.
#[derive(Copy, Clone, Debug, Eq, PartialEq, Hash)]
pub struct Partition {
    pub kind: &'static str,
    pub year: i16,
    pub month: i16,
    pub analysed: bool,
}

/// Derives the fields of the game in `g`; its id is `given_id` when its source gives one the lake keeps
/// (a BGN line's, as `json_fields::lake_id` accepts it), else as its tags give it.
pub fn derive<'g>(g: &'g GameScratch, given_id: Option<&'g str>) -> GameRow<'g> {
    let tag = |t: Known| g.tag(t);
    let game_id = match given_id.or_else(|| tag(Known::Site).and_then(tags::lichess_id)) {
        Some(id) => Cow::Borrowed(id),
        None => Cow::Owned(content_id(g)),
    };
    let (date, time) = match tag(Known::UtcDate) {
        Some(d) => (Some(d), tag(Known::UtcTime)),
        None => (tag(Known::Date), tag(Known::Time)),
    };
    let (year, month, _) = date.map_or((None, None, None), tags::date_parts);
    let time_control = tags::game_time_control(
        tag(Known::TimeControl),
        tag(Known::WhiteTimeControl),
        tag(Known::BlackTimeControl),
    );
    let partition = Partition {
        kind: time_control.kind,
        year: year.and_then(|y| i16::try_from(y).ok()).unwrap_or(0),
        month: month.map_or(0, |m| m as i16),
        analysed: g.mainline().iter().any(|m| m.eval.is_some()),
    };
    let game_key = game_key(&game_id).expect("a game id is a lichess id or a content id");
    GameRow {
        game_id,
        game_key,
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
            k.has_column() && g.tag_index(k) == Some(i) && column_holds(k, value, g.variant.name())
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
/// `variant` column's text, a Termination the column holds in lichess's words (`tags::termination`).
fn column_holds(k: Known, value: &str, variant: &str) -> bool {
    match k {
        Known::Result => matches!(value, "1-0" | "0-1" | "1/2-1/2" | "*"),
        Known::WhiteElo | Known::BlackElo | Known::WhiteRatingDiff | Known::BlackRatingDiff => {
            tags::parse_int(value)
                .is_some_and(|n| value == n.to_string() || value == format!("{n:+}"))
        }
        Known::Variant => value == variant,
        Known::Termination => tags::termination(value) == value,
        _ => true,
    }
}

/// The integer key of a game id, `None` for text that is neither shape:
/// - a lichess id (8 characters of `[0-9A-Za-z]`) is its base-62 value, digits in ASCII order
///   (`0`-`9`, `A`-`Z`, `a`-`z`): `0 ≤ key < 62⁸ < 2⁴⁸`, and keys sort like ids;
/// - a content id (16 lowercase hex digits, a 64-bit XXH3) is that value with its top bit set, as
///   `i64`: always negative, so never a lichess key.
pub fn game_key(id: &str) -> Option<i64> {
    let bytes = id.as_bytes();
    match bytes.len() {
        8 => bytes.iter().try_fold(0i64, |key, &b| {
            let digit = match b {
                b'0'..=b'9' => b - b'0',
                b'A'..=b'Z' => b - b'A' + 10,
                b'a'..=b'z' => b - b'a' + 36,
                _ => return None,
            };
            Some(key * 62 + i64::from(digit))
        }),
        16 => bytes
            .iter()
            .try_fold(0u64, |hash, &b| {
                let digit = match b {
                    b'0'..=b'9' => b - b'0',
                    b'a'..=b'f' => b - b'a' + 10,
                    _ => return None,
                };
                Some(hash << 4 | u64::from(digit))
            })
            .map(|hash| (hash | 1 << 63) as i64),
        _ => None,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Digits of a lichess id in ASCII order.
    const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

    /// The id a key stands for, to check the mapping both ways.
    fn lichess_id_of(mut key: i64) -> String {
        let mut id = [b'0'; 8];
        for digit in id.iter_mut().rev() {
            *digit = BASE62[(key % 62) as usize];
            key /= 62;
        }
        String::from_utf8(id.to_vec()).unwrap()
    }

    #[test]
    fn lichess_keys_are_base62_in_ascii_order() {
        assert_eq!(game_key("00000000"), Some(0));
        assert_eq!(game_key("00000009"), Some(9));
        assert_eq!(game_key("0000000A"), Some(10));
        assert_eq!(game_key("0000000Z"), Some(35));
        assert_eq!(game_key("0000000a"), Some(36));
        assert_eq!(game_key("0000000z"), Some(61));
        assert_eq!(game_key("00000010"), Some(62));
        assert_eq!(game_key("zzzzzzzz"), Some(62i64.pow(8) - 1));
        assert!(62i64.pow(8) < 1 << 48);
        for id in ["ENPo6ReH", "abcdefgh", "0aZ9zA00"] {
            assert_eq!(lichess_id_of(game_key(id).unwrap()), id);
        }
        // Keys sort like ids (byte order).
        let mut ids = [
            "ENPo6ReH", "abcdefgh", "ABCDEFGH", "zz000000", "00000001", "Zzzzzzzz", "a0000000",
        ];
        let keys: Vec<_> = ids.iter().map(|id| game_key(id).unwrap()).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        ids.sort();
        assert_eq!(
            sorted,
            ids.iter()
                .map(|id| game_key(id).unwrap())
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn content_keys_set_the_top_bit() {
        assert_eq!(game_key("0000000000000000"), Some(i64::MIN));
        assert_eq!(game_key("ffffffffffffffff"), Some(-1));
        assert_eq!(
            game_key("0123456789abcdef"),
            Some((0x0123_4567_89ab_cdef_u64 | 1 << 63) as i64)
        );
        assert_eq!(game_key("8123456789abcdef"), game_key("0123456789abcdef"));
    }

    #[test]
    fn other_text_has_no_key() {
        for id in [
            "",
            "ENPo6Re",
            "ENPo6ReH1",
            "ENPo6Re-",
            "0123456789ABCDEF",
            "0123456789abcdeg",
            "é1234567",
        ] {
            assert_eq!(game_key(id), None, "{id}");
        }
    }
}
