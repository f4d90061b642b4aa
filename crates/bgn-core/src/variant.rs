//! The variants the lake replays: standard chess (Chess960 too) on shakmaty's `Chess`, the hot path,
//! and lichess's variants on its `VariantPosition`. Here: the `Variant` tag's names, the `variant`
//! column's one name per variant, the position a game starts from, and what an atomic explosion
//! removed.

use crate::reject::{RejectKind, RejectReason};
use shakmaty::fen::Fen;
use shakmaty::variant::{Variant, VariantPosition};
use shakmaty::{
    attacks, Bitboard, CastlingMode, Chess, FromSetup, Move, Position, PositionError, Setup,
};

/// What a game is played as: the `variant` column.
#[derive(Copy, Clone, Debug, Default, Eq, PartialEq)]
pub enum GameVariant {
    #[default]
    Standard,
    Chess960,
    /// One of lichess's variants (never `Variant::Chess`).
    Lichess(Variant),
}

impl GameVariant {
    /// The `variant` column's value: lichess's name of the variant.
    pub fn name(self) -> &'static str {
        match self {
            GameVariant::Standard => "Standard",
            GameVariant::Chess960 => "Chess960",
            GameVariant::Lichess(v) => match v {
                Variant::Chess => "Standard",
                Variant::Atomic => "Atomic",
                Variant::Antichess => "Antichess",
                Variant::KingOfTheHill => "King of the Hill",
                Variant::ThreeCheck => "Three-check",
                Variant::Crazyhouse => "Crazyhouse",
                Variant::RacingKings => "Racing Kings",
                Variant::Horde => "Horde",
            },
        }
    }

    /// The variant the `variant` column names (`None` for any other text).
    pub fn of_name(name: &str) -> Option<GameVariant> {
        match name {
            "Standard" => Some(GameVariant::Standard),
            "Chess960" => Some(GameVariant::Chess960),
            _ => Variant::ALL
                .into_iter()
                .map(GameVariant::Lichess)
                .find(|v| v.name() == name && *v != GameVariant::Lichess(Variant::Chess)),
        }
    }

    /// The lichess variant, `None` for standard chess and Chess960.
    pub fn lichess(self) -> Option<Variant> {
        match self {
            GameVariant::Lichess(v) => Some(v),
            _ => None,
        }
    }
}

/// What a `Variant` tag names, read as python-chess reads it (its aliases, case aside).
pub enum Tagged {
    /// Standard chess, Chess960 when `chess960`.
    Chess {
        chess960: bool,
    },
    Lichess(Variant),
    /// A variant lichess does not play (Seirawan, Sittuyin, Suicide…).
    Unsupported,
}

/// The variant of a game whose `Variant` tag is `tag` (`None`: no tag).
pub fn tagged(tag: Option<&str>) -> Tagged {
    let Some(tag) = tag else {
        return Tagged::Chess { chess960: false };
    };
    let v = tag.to_ascii_lowercase();
    let is = |names: &[&str]| names.contains(&v.as_str());
    if is(&[
        "chess960",
        "chess 960",
        "fischerandom",
        "fischerrandom",
        "fischer random",
    ]) {
        return Tagged::Chess { chess960: true };
    }
    if v.starts_with("wild/")
        || is(&[
            "standard",
            "chess",
            "classical",
            "normal",
            "illegal",
            "from position",
        ])
    {
        return Tagged::Chess { chess960: false };
    }
    let variant = if is(&["crazyhouse", "crazy house", "house", "zh"]) {
        Variant::Crazyhouse
    } else if is(&["atomic", "atom", "atomic chess"]) {
        Variant::Atomic
    } else if is(&["antichess", "anti chess", "anti"]) {
        Variant::Antichess
    } else if is(&["horde", "horde chess"]) {
        Variant::Horde
    } else if is(&["king of the hill", "koth", "kingofthehill"]) {
        Variant::KingOfTheHill
    } else if is(&["racing kings", "racing", "race", "racingkings"]) {
        Variant::RacingKings
    } else if is(&[
        "three-check",
        "three check",
        "threecheck",
        "three check chess",
        "3-check",
        "3 check",
        "3check",
    ]) {
        Variant::ThreeCheck
    } else {
        return Tagged::Unsupported;
    };
    Tagged::Lichess(variant)
}

/// A position of any variant: standard chess on `Chess` (no dispatch per call), the others on
/// `VariantPosition`.
#[derive(Clone, Debug)]
pub enum Board {
    Chess(Chess),
    Variant(VariantPosition),
}

impl Board {
    /// The start position of `variant` (Horde and Racing Kings have their own).
    pub fn start(variant: GameVariant) -> Board {
        match variant.lichess() {
            None => Board::Chess(Chess::default()),
            Some(v) => Board::Variant(VariantPosition::new(v)),
        }
    }

    /// The position of a FEN as a game of `variant` starts from it (`Err`: why it cannot be read),
    /// and whether its castling is Chess960's (always so for `GameVariant::Chess960`, else as the
    /// FEN implies). Castling rights, an en passant square, material or checks that could not have
    /// come about are forgiven (python-chess reads such FENs too).
    pub fn from_fen(fen: &str, variant: GameVariant) -> Result<(Board, bool), String> {
        let fen = Fen::from_ascii(fen.as_bytes()).map_err(|e| e.to_string())?;
        let setup: Setup = fen.into_setup();
        let mode = if variant == GameVariant::Chess960 {
            CastlingMode::Chess960
        } else {
            CastlingMode::detect(&setup)
        };
        let board = match variant.lichess() {
            None => Board::Chess(forgiving(Chess::from_setup(setup, mode))?),
            Some(v) => Board::Variant(forgiving(VariantPosition::from_setup(v, setup, mode))?),
        };
        Ok((board, mode == CastlingMode::Chess960))
    }

    /// Whether the side to move is checkmated.
    pub fn is_checkmate(&self) -> bool {
        match self {
            Board::Chess(p) => p.is_checkmate(),
            Board::Variant(p) => p.is_checkmate(),
        }
    }
}

fn forgiving<P>(result: Result<P, PositionError<P>>) -> Result<P, String> {
    result
        .or_else(PositionError::ignore_invalid_castling_rights)
        .or_else(PositionError::ignore_invalid_ep_square)
        .or_else(PositionError::ignore_too_much_material)
        .or_else(PositionError::ignore_impossible_check)
        .map_err(|e| e.to_string())
}

/// A standard chess (`chess960` false) or Chess960 position from a FEN, as `from_fen` reads it.
pub fn chess_from_fen(fen: &str, chess960: bool) -> Result<Chess, String> {
    let variant = if chess960 {
        GameVariant::Chess960
    } else {
        GameVariant::Standard
    };
    match Board::from_fen(fen, variant)? {
        (Board::Chess(pos), _) => Ok(pos),
        (Board::Variant(_), _) => unreachable!("standard chess and Chess960 play on Chess"),
    }
}

/// The squares an atomic capture `m` emptied around its target besides the capture itself, given the
/// board before (`before`) and after (`after`) it: the pieces next to the target that blew up
/// (pawns survive). The capturing piece and the captured one (`x`) are gone too; they are not listed.
pub fn blast(m: Move, before: Bitboard, after: Bitboard) -> Bitboard {
    let mut spared = Bitboard::EMPTY;
    if let Some(from) = m.from() {
        spared.add(from); // the capturing piece left it: it moved, it did not blow up
    }
    if let Move::EnPassant { from, to } = m {
        // The pawn taken en passant stood beside the target: it is `x`.
        spared.add(shakmaty::Square::from_coords(to.file(), from.rank()));
    }
    attacks::king_attacks(m.to()) & before & !after & !spared
}

/// The reject of a game whose `Variant` tag (read from its raw text: `[Variant "…"]` opening a line
/// among the tags) names a variant the lake does not replay, `None` otherwise. For a game another
/// check refused before its tags were parsed: its moves (`S@e4` in Seirawan) are no moves of ours
/// because of its variant, which the reason must name.
pub fn unsupported_in(text: &[u8]) -> Option<RejectReason> {
    let mut value = None;
    for line in text.split(|&b| b == b'\n') {
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        if !line.starts_with(b"[") {
            break; // the movetext: the tags are over
        }
        if let Some(rest) = line.strip_prefix(b"[Variant \"") {
            let end = rest.iter().rposition(|&b| b == b'"')?;
            value = Some(String::from_utf8_lossy(&rest[..end]).into_owned());
        }
    }
    let value = value?;
    matches!(tagged(Some(&value)), Tagged::Unsupported).then(|| unsupported(&value))
}

/// The reject of a game of variant `name`, which the lake does not replay.
pub fn unsupported(name: &str) -> RejectReason {
    RejectReason::new(
        RejectKind::UnsupportedVariant,
        format!("unsupported variant '{name}'"),
    )
}
