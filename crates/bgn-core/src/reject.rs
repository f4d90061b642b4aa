//! Why a game is kept out of the lake: a kind to count rejects by, and a one-line message for people.

use std::fmt;

/// What went wrong with a rejected game. Each kind has a stable snake_case name (`RejectKind::name`),
/// written to the rejects file beside the message.
#[derive(Copy, Clone, Debug, Eq, PartialEq, Hash, Ord, PartialOrd)]
pub enum RejectKind {
    /// A move that is not legal in its position.
    IllegalMove,
    /// A SAN move that fits more than one legal move.
    AmbiguousMove,
    /// A null move (`--`, `Z0`, `0000`, `@@@@`): the lake records moves, not passes.
    NullMove,
    /// A token that starts like a move but is none (`Sf3`, `Nf3Nc6`).
    UnreadableMove,
    /// A `{` comment that never closes.
    UnterminatedComment,
    /// A tag pair that never closes.
    UnterminatedTag,
    /// A `FEN` tag that is no position.
    BadFen,
    /// A variant the lake does not replay.
    UnsupportedVariant,
    /// The compressed input is damaged inside this game.
    DamagedInput,
    /// The input ends inside this game, before its result.
    Truncated,
    /// The game is longer than the reader keeps in memory.
    TooLarge,
    /// A clock, an eval or a NAG beyond its column's range (`crate::annotations`).
    OutOfRange,
    /// Text with no tag and no move: noise between games.
    NotAGame,
    /// Text pgn-reader cannot read as one game.
    Unparsable,
    /// A bug met on this game (a panic caught): the game is rejected, the load goes on.
    InternalError,
}

impl RejectKind {
    /// Every kind, in a stable order (`_core.REJECT_KINDS`).
    pub const ALL: [RejectKind; 15] = [
        RejectKind::IllegalMove,
        RejectKind::AmbiguousMove,
        RejectKind::NullMove,
        RejectKind::UnreadableMove,
        RejectKind::UnterminatedComment,
        RejectKind::UnterminatedTag,
        RejectKind::BadFen,
        RejectKind::UnsupportedVariant,
        RejectKind::DamagedInput,
        RejectKind::Truncated,
        RejectKind::TooLarge,
        RejectKind::OutOfRange,
        RejectKind::NotAGame,
        RejectKind::Unparsable,
        RejectKind::InternalError,
    ];

    /// The kind's snake_case name, as the rejects file and the load record write it.
    pub fn name(self) -> &'static str {
        match self {
            RejectKind::IllegalMove => "illegal_move",
            RejectKind::AmbiguousMove => "ambiguous_move",
            RejectKind::NullMove => "null_move",
            RejectKind::UnreadableMove => "unreadable_move",
            RejectKind::UnterminatedComment => "unterminated_comment",
            RejectKind::UnterminatedTag => "unterminated_tag",
            RejectKind::BadFen => "bad_fen",
            RejectKind::UnsupportedVariant => "unsupported_variant",
            RejectKind::DamagedInput => "damaged_input",
            RejectKind::Truncated => "truncated",
            RejectKind::TooLarge => "too_large",
            RejectKind::OutOfRange => "out_of_range",
            RejectKind::NotAGame => "not_a_game",
            RejectKind::Unparsable => "unparsable",
            RejectKind::InternalError => "internal_error",
        }
    }
}

/// Why one game was rejected.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct RejectReason {
    /// What went wrong, to count by.
    pub kind: RejectKind,
    /// One line, naming what was found (`illegal move 'Ke3' at ply 3`).
    pub message: String,
}

impl RejectReason {
    /// A reason of `kind`, told by `message` (one line).
    pub fn new(kind: RejectKind, message: impl Into<String>) -> RejectReason {
        RejectReason {
            kind,
            message: message.into(),
        }
    }

    /// pgn-reader's own errors, by their message (it reports them as `io::Error`s).
    pub fn from_pgn_reader(error: &std::io::Error) -> RejectReason {
        let message = error.to_string();
        let kind = match message.as_str() {
            "unterminated tag" => RejectKind::UnterminatedTag,
            "unterminated comment" => RejectKind::UnterminatedComment,
            _ => RejectKind::Unparsable,
        };
        RejectReason { kind, message }
    }
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_have_distinct_names() {
        let mut names: Vec<_> = RejectKind::ALL.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), RejectKind::ALL.len());
    }
}
