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
/// fields (`datetime`, partitions; TCEC's per-side time controls the time control) and stay in
/// `headers` too.
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
    WhiteTimeControl,
    BlackTimeControl,
}

impl Known {
    pub const COUNT: usize = 24;

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
            WhiteTimeControl,
            BlackTimeControl,
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
            WhiteTimeControl => "WhiteTimeControl",
            BlackTimeControl => "BlackTimeControl",
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
            b"WhiteTimeControl" => WhiteTimeControl,
            b"BlackTimeControl" => BlackTimeControl,
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

/// A day in seconds: a period giving each move at least this long is correspondence (chess.com's
/// daily games are written `1/86400` … `1/1209600`: one move in so many seconds).
const DAY: i64 = 86_400;

/// The game's time control: its `TimeControl` tag, else the per-side `WhiteTimeControl` and
/// `BlackTimeControl` (TCEC's) when they agree.
pub fn game_time_control(
    tag: Option<&str>,
    white: Option<&str>,
    black: Option<&str>,
) -> TimeControl {
    match (tag, white, black) {
        (Some(_), _, _) => time_control(tag),
        (None, Some(w), Some(b)) if w.trim() == b.trim() => time_control(white),
        _ => time_control(None),
    }
}

/// lichess's speed rule: estimated duration = base + 40 × increment (`base+inc`, a bare `base`; TCEC
/// writes fractional increments, `180+0.5`); a period of moves in seconds (`40/900`) estimates 40
/// moves' share of it. `-`, or a day or more per move, is correspondence. `base` and `inc` are given
/// for a `base+inc` of whole seconds only (the `tc_base`, `tc_inc` columns; think times need them).
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
    if let Some((moves, seconds)) = tc.split_once('/') {
        let (Some(moves), Some(seconds)) = (parse_uint(moves), parse_uint(seconds)) else {
            return unknown;
        };
        let (moves, seconds) = (i64::from(moves), i64::from(seconds));
        let kind = match moves {
            0 => "unknown",
            _ if seconds >= DAY * moves => "correspondence",
            _ => speed(40 * seconds * MILLIS / moves),
        };
        return TimeControl { kind, ..unknown };
    }
    let (base, inc) = tc.split_once('+').unwrap_or((tc, "0"));
    let (Some(base_ms), Some(inc_ms)) = (parse_millis(base), parse_millis(inc)) else {
        return unknown;
    };
    TimeControl {
        base: parse_uint(base).filter(|_| parse_uint(inc).is_some()),
        inc: parse_uint(inc).filter(|_| parse_uint(base).is_some()),
        kind: speed(base_ms + 40 * inc_ms),
    }
}

const MILLIS: i64 = 1000;

/// lichess's speed of an estimated duration in milliseconds.
fn speed(estimate_ms: i64) -> &'static str {
    match estimate_ms / MILLIS {
        e if e < 30 => "ultrabullet",
        e if e < 180 => "bullet",
        e if e < 480 => "blitz",
        e if e < 1500 => "rapid",
        _ => "classical",
    }
}

/// Whole seconds: 1 to 9 digits (an `i32`).
fn parse_uint(s: &str) -> Option<i32> {
    if s.is_empty() || s.len() > 9 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Seconds with up to 3 decimals (`0.5`), in milliseconds.
fn parse_millis(s: &str) -> Option<i64> {
    let (whole, fraction) = match s.split_once('.') {
        Some((_, "")) => return None,
        Some(parts) => parts,
        None => (s, ""),
    };
    if fraction.len() > 3 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let thousandths = fraction
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(3)
        .fold(0, |n, b| n * 10 + i64::from(b - b'0'));
    Some(i64::from(parse_uint(whole)?) * MILLIS + thousandths)
}

/// lichess's words for how a game ended (the PGN standard's: `Normal`, `Time forfeit`, `Abandoned`,
/// `Rules infraction`, `Unterminated`, `Adjudication`, `Death`, `Emergency`) for the standard's words in
/// any case (TCEC writes `adjudication`) and for chess.com's sentences (`cancer0707 won by checkmate`,
/// `Game drawn by repetition`, `… won on time`, `… won - game abandoned`); any other text as it is.
pub fn termination(value: &str) -> &str {
    let trimmed = value.trim();
    if let Some(word) = STANDARD_TERMINATIONS
        .iter()
        .find(|word| word.eq_ignore_ascii_case(trimmed))
    {
        return word;
    }
    // chess.com: `Game drawn <how>` or `<winner> won <how>`
    let how = trimmed
        .strip_prefix("Game drawn ")
        .or_else(|| trimmed.split_once(" won ").map(|(_, how)| how));
    match how {
        Some(
            "by checkmate"
            | "by resignation"
            | "by agreement"
            | "by repetition"
            | "by stalemate"
            | "by insufficient material"
            | "by 50-move rule",
        ) => "Normal",
        Some("on time" | "by timeout vs insufficient material") => "Time forfeit",
        Some("- game abandoned") => "Abandoned",
        _ => value,
    }
}

/// The PGN standard's `Termination` values as lichess spells them.
const STANDARD_TERMINATIONS: [&str; 8] = [
    "Normal",
    "Time forfeit",
    "Abandoned",
    "Rules infraction",
    "Unterminated",
    "Adjudication",
    "Death",
    "Emergency",
];

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
        // chess.com's daily games: one move in a day or more.
        assert_eq!(kind("1/86400"), "correspondence");
        assert_eq!(kind("1/259200"), "correspondence");
        assert_eq!(kind("1/86399"), "classical");
        assert_eq!(kind("40/900"), "rapid");
        assert_eq!(kind("0/900"), "unknown");
        assert_eq!(time_control(Some("1/86400")).base, None);
        // TCEC's fractional increments: a speed, no whole-second columns.
        assert_eq!(kind("180+0.5"), "blitz");
        assert_eq!(kind("60+0.1"), "bullet");
        assert_eq!(kind("0+0.5"), "ultrabullet");
        assert_eq!(kind("0+0.75"), "bullet");
        assert_eq!(kind("60+."), "unknown");
        assert_eq!(kind("60+0.1234"), "unknown");
        assert_eq!(
            time_control(Some("180+0.5")),
            TimeControl {
                base: None,
                inc: None,
                kind: "blitz"
            }
        );
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
    fn per_side_time_controls() {
        let kind = |tc, w, b| game_time_control(tc, w, b).kind;
        assert_eq!(kind(None, Some("600+1"), Some("600+1")), "rapid");
        assert_eq!(kind(None, Some("600+1"), Some("60+1")), "unknown");
        assert_eq!(kind(None, Some("600+1"), None), "unknown");
        assert_eq!(kind(Some("60+0"), Some("600+1"), Some("600+1")), "bullet");
        assert_eq!(
            game_time_control(None, Some("40/900"), Some("40/900")).base,
            None
        );
    }

    #[test]
    fn terminations() {
        for (raw, word) in [
            ("Normal", "Normal"),
            ("Time forfeit", "Time forfeit"),
            ("adjudication", "Adjudication"),
            ("abandoned", "Abandoned"),
            ("cancer0707 won by checkmate", "Normal"),
            ("Hikaru won by resignation", "Normal"),
            ("Game drawn by repetition", "Normal"),
            ("Game drawn by agreement", "Normal"),
            ("Game drawn by stalemate", "Normal"),
            ("Game drawn by insufficient material", "Normal"),
            ("Game drawn by 50-move rule", "Normal"),
            ("MagnusCarlsen won on time", "Time forfeit"),
            (
                "Game drawn by timeout vs insufficient material",
                "Time forfeit",
            ),
            ("someone won - game abandoned", "Abandoned"),
            ("someone won by fair play", "someone won by fair play"),
            ("White mates", "White mates"),
        ] {
            assert_eq!(termination(raw), word, "{raw}");
        }
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
