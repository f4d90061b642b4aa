//! Game-level fields derived from PGN tags: lichess id, time control and its type, result, dates.

/// Whether `name` is a tag name: python-chess's grammar (`TAG_NAME_REGEX`,
/// `[A-Za-z0-9][A-Za-z0-9_+#=:-]*`), the one definition of the load (a tag line of another name is
/// dropped, as python-chess drops it: `repair`), the exports and the imports (`_core.is_tag_name`).
pub fn is_tag_name(name: &[u8]) -> bool {
    name.first().is_some_and(u8::is_ascii_alphanumeric) && name.iter().all(|&b| is_tag_name_byte(b))
}

/// A byte of a tag name, after its first.
pub fn is_tag_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_+#=:-".contains(&b)
}

/// The tags the lake reads. The first 18 have columns of their own; the others only feed derived
/// fields (`datetime`, partitions) and stay in `headers` too.
#[derive(Copy, Clone, Debug, Eq, PartialEq)]
pub enum Known {
    Event,
    Site,
    Round,
    Result,
    White,
    Black,
    WhiteElo,
    BlackElo,
    WhiteRatingDiff,
    BlackRatingDiff,
    WhiteTitle,
    BlackTitle,
    Eco,
    Opening,
    TimeControl,
    Termination,
    Variant,
    Fen,
    Date,
    Time,
    UtcDate,
    UtcTime,
}

impl Known {
    pub const COUNT: usize = 22;

    /// Every known tag, in declaration order.
    pub const ALL: [Known; Known::COUNT] = {
        use Known::*;
        [
            Event,
            Site,
            Round,
            Result,
            White,
            Black,
            WhiteElo,
            BlackElo,
            WhiteRatingDiff,
            BlackRatingDiff,
            WhiteTitle,
            BlackTitle,
            Eco,
            Opening,
            TimeControl,
            Termination,
            Variant,
            Fen,
            Date,
            Time,
            UtcDate,
            UtcTime,
        ]
    };

    /// The tag's name as PGN spells it.
    pub fn name(self) -> &'static str {
        use Known::*;
        match self {
            Event => "Event",
            Site => "Site",
            Round => "Round",
            Result => "Result",
            White => "White",
            Black => "Black",
            WhiteElo => "WhiteElo",
            BlackElo => "BlackElo",
            WhiteRatingDiff => "WhiteRatingDiff",
            BlackRatingDiff => "BlackRatingDiff",
            WhiteTitle => "WhiteTitle",
            BlackTitle => "BlackTitle",
            Eco => "ECO",
            Opening => "Opening",
            TimeControl => "TimeControl",
            Termination => "Termination",
            Variant => "Variant",
            Fen => "FEN",
            Date => "Date",
            Time => "Time",
            UtcDate => "UTCDate",
            UtcTime => "UTCTime",
        }
    }

    /// The known tag named `name` (a match on bytes: this runs for every tag read).
    pub fn of(name: &[u8]) -> Option<Known> {
        use Known::*;
        Some(match name {
            b"Event" => Event,
            b"Site" => Site,
            b"Round" => Round,
            b"Result" => Result,
            b"White" => White,
            b"Black" => Black,
            b"WhiteElo" => WhiteElo,
            b"BlackElo" => BlackElo,
            b"WhiteRatingDiff" => WhiteRatingDiff,
            b"BlackRatingDiff" => BlackRatingDiff,
            b"WhiteTitle" => WhiteTitle,
            b"BlackTitle" => BlackTitle,
            b"ECO" => Eco,
            b"Opening" => Opening,
            b"TimeControl" => TimeControl,
            b"Termination" => Termination,
            b"Variant" => Variant,
            b"FEN" => Fen,
            b"Date" => Date,
            b"Time" => Time,
            b"UTCDate" => UtcDate,
            b"UTCTime" => UtcTime,
            _ => return None,
        })
    }

    /// The names of the tags stored in columns of their own (the others go to `headers`).
    pub fn column_tags() -> impl Iterator<Item = &'static str> {
        Known::ALL
            .into_iter()
            .filter(|k| k.has_column())
            .map(Known::name)
    }

    /// Stored in a column of its own, hence not repeated in `headers`.
    pub fn has_column(self) -> bool {
        (self as usize) < Known::Date as usize
    }
}

/// The 8-character game id of a lichess game URL: `https://lichess.org/ENPo6ReH`, optionally followed
/// by a player's 4-character suffix (`ENPo6ReHx3Zq`), `/white` or `/black`, and a `#ply` anchor.
/// Any other lichess URL (`/training/…`, `/study/…`, `/analysis`) names no game: `None`, and the game
/// gets a content id.
pub fn lichess_id(site: &str) -> Option<&str> {
    let path = site
        .strip_prefix("https://lichess.org/")
        .or_else(|| site.strip_prefix("http://lichess.org/"))?;
    let path = match path.split_once('#') {
        Some((path, ply)) if ply.bytes().all(|b| b.is_ascii_digit()) => path,
        Some(_) => return None,
        None => path,
    };
    let path = path
        .strip_suffix("/white")
        .or_else(|| path.strip_suffix("/black"))
        .unwrap_or(path);
    let alphanumeric = path.bytes().all(|b| b.is_ascii_alphanumeric());
    let id = path.get(..8)?;
    (alphanumeric && matches!(path.len(), 8 | 12) && !LICHESS_PAGES.contains(&id)).then_some(id)
}

/// lichess pages whose URL is shaped like a game's (8 letters).
const LICHESS_PAGES: &[&str] = &[
    "analysis", "training", "practice", "tutorial", "streamer", "insights", "features", "download",
    "timeline", "settings", "register", "password", "calendar", "contacts",
];

/// A parsed `TimeControl` tag.
#[derive(Debug, Eq, PartialEq)]
pub struct TimeControl {
    pub base: Option<i32>,
    pub inc: Option<i32>,
    pub kind: &'static str,
}

/// lichess's speed rule: estimated duration = base + 40 × increment.
pub fn time_control(tag: Option<&str>) -> TimeControl {
    let unknown = TimeControl {
        base: None,
        inc: None,
        kind: "unknown",
    };
    let Some(tc) = tag.map(str::trim) else {
        return unknown;
    };
    if tc == "-" {
        return TimeControl {
            kind: "correspondence",
            ..unknown
        };
    }
    let (base, inc) = match tc.split_once('+') {
        Some((b, i)) => (b, i),
        None => (tc, "0"),
    };
    let (Some(base), Some(inc)) = (parse_uint(base), parse_uint(inc)) else {
        return unknown;
    };
    let estimate = i64::from(base) + 40 * i64::from(inc);
    let kind = match estimate {
        e if e < 30 => "ultrabullet",
        e if e < 180 => "bullet",
        e if e < 480 => "blitz",
        e if e < 1500 => "rapid",
        _ => "classical",
    };
    TimeControl {
        base: Some(base),
        inc: Some(inc),
        kind,
    }
}

fn parse_uint(s: &str) -> Option<i32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// An integer tag value such as an Elo or a rating difference (`+5`, `-12`); `?` or text give `None`.
pub fn parse_int(s: &str) -> Option<i32> {
    let s = s.trim();
    let digits = s.strip_prefix('+').unwrap_or(s);
    digits.parse().ok()
}

/// `W`, `B`, `D` or `*`.
pub fn result_code(result: &str) -> &'static str {
    match result.trim() {
        "1-0" => "W",
        "0-1" => "B",
        "1/2-1/2" | "½-½" => "D",
        _ => "*",
    }
}

/// The text before the first `:` of an opening name (`Sicilian Defense: Najdorf` → `Sicilian Defense`).
pub fn opening_family(name: &str) -> &str {
    name.split(':').next().unwrap_or(name).trim()
}

/// Year, month and day of a PGN date (`2025.05.01`); each part `None` when unknown (`??`) or invalid.
pub fn date_parts(date: &str) -> (Option<i32>, Option<u32>, Option<u32>) {
    let mut it = date.trim().split(['.', '-', '/']);
    let year = it
        .next()
        .and_then(|y| (y.len() == 4).then(|| y.parse().ok()).flatten());
    let month = it
        .next()
        .and_then(|m| m.parse().ok())
        .filter(|m| (1..=12).contains(m));
    let day = it.next().and_then(|d| d.parse().ok());
    (year, month, day)
}

/// Seconds since the epoch (UTC) of a date and an optional `hh:mm:ss` time; `None` unless the date
/// is complete and valid.
pub fn timestamp(date: &str, time: Option<&str>) -> Option<i64> {
    let (Some(y), Some(m), Some(d)) = date_parts(date) else {
        return None;
    };
    if d == 0 || d > days_in_month(y, m) {
        return None;
    }
    let secs = match time {
        Some(t) => {
            let mut it = t.trim().splitn(3, ':').map(|p| p.parse::<i64>().ok());
            let (h, mi, s) = (it.next()??, it.next()??, it.next()??);
            if !(0..24).contains(&h) || !(0..60).contains(&mi) || !(0..61).contains(&s) {
                return None;
            }
            h * 3600 + mi * 60 + s
        }
        None => 0,
    };
    Some(days_from_civil(y, m, d) * 86400 + secs)
}

fn days_in_month(y: i32, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 (Howard Hinnant's algorithm).
fn days_from_civil(y: i32, m: u32, d: u32) -> i64 {
    let y = i64::from(if m <= 2 { y - 1 } else { y });
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let (m, d) = (i64::from(m), i64::from(d));
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in Known::ALL {
            assert_eq!(Known::of(k.name().as_bytes()), Some(k));
        }
        assert_eq!(Known::column_tags().count(), 18);
    }

    #[test]
    fn lichess_ids() {
        assert_eq!(lichess_id("https://lichess.org/ENPo6ReH"), Some("ENPo6ReH"));
        assert_eq!(
            lichess_id("https://lichess.org/ENPo6ReH/black"),
            Some("ENPo6ReH")
        );
        assert_eq!(
            lichess_id("https://lichess.org/ENPo6ReH#34"),
            Some("ENPo6ReH")
        );
        assert_eq!(
            lichess_id("https://lichess.org/ENPo6ReHx3Zq"),
            Some("ENPo6ReH")
        );
        assert_eq!(lichess_id("https://lichess.org/study/abc"), None);
        assert_eq!(lichess_id("Wijk aan Zee"), None);
        // Pages that are not games, though their path starts with 8 letters.
        for site in [
            "https://lichess.org/training/12345",
            "https://lichess.org/practice/checkmates/piece-checkmates-i/BJy6fEDf/fE4k21MW",
            "https://lichess.org/study/ABCDEFGH/IJKLMNOP",
            "https://lichess.org/tutorial/nav",
            "https://lichess.org/broadcast/tata-steel/round-1/AbCdEfGh",
            "https://lichess.org/analysis",
            "https://lichess.org/ENPo6ReH/extra",
            "https://lichess.org/ENPo6ReH?x=1",
            "https://lichess.org/ENPo6Re",
        ] {
            assert_eq!(lichess_id(site), None, "{site}");
        }
    }

    #[test]
    fn speeds() {
        let kind = |s| time_control(Some(s)).kind;
        assert_eq!(kind("15+0"), "ultrabullet");
        assert_eq!(kind("60+0"), "bullet");
        assert_eq!(kind("120+1"), "bullet");
        assert_eq!(kind("180+0"), "blitz");
        assert_eq!(kind("300+3"), "blitz");
        assert_eq!(kind("600+0"), "rapid");
        assert_eq!(kind("900+10"), "rapid");
        assert_eq!(kind("1800+0"), "classical");
        assert_eq!(kind("-"), "correspondence");
        assert_eq!(kind("40/7200:3600"), "unknown");
        assert_eq!(time_control(None).kind, "unknown");
        assert_eq!(
            time_control(Some("300+3")),
            TimeControl {
                base: Some(300),
                inc: Some(3),
                kind: "blitz"
            }
        );
    }

    #[test]
    fn dates() {
        assert_eq!(timestamp("1970.01.02", None), Some(86400));
        assert_eq!(
            timestamp("2025.05.01", Some("00:00:06")),
            Some(1_746_057_606)
        );
        assert_eq!(timestamp("2024.02.30", None), None);
        assert_eq!(timestamp("2024.??.??", None), None);
        assert_eq!(date_parts("2024.??.??"), (Some(2024), None, None));
    }
}
