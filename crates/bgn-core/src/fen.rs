//! The FEN of a chess position as a user gives it (to search positions, to the explorer), read by
//! python-chess's rules (`chess.Board(fen)`, its `set_fen`): the one rule set of such FENs, which
//! `fen_key` in sql/views/schema.sql follows too (tests/test_fen_keys.py compares all three).
//!
//! shakmaty reads more than python-chess: fields split at `_` but not at tabs, castling letters in any
//! order and number, two digits in a row (`44`), crazyhouse pockets, three-check counters. A FEN is
//! first checked against python-chess's grammar here, then handed to shakmaty with its fields joined by
//! single spaces, which it reads as python-chess does. Crazyhouse's promoted-piece mark `~`, which
//! python-chess reads on a chess board too, is refused: a chess position has none. FENs stored in a
//! lake (`start_fen`) are read as the load read them, not through this check.

/// Python's whitespace, at which `str.split()` splits: Unicode's and the separators U+001C-U+001F.
pub(crate) fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `fen`'s fields joined by single spaces, when they follow python-chess's grammar of a chess FEN: at
/// most 6 (board, side to move, castling, en passant, halfmove clock, fullmove number; the missing ones
/// default to `w`, `-`, `-`); else why not, in one line.
pub fn chess_fen_fields(fen: &str) -> Result<String, String> {
    let fields: Vec<&str> = fen
        .split(is_python_space)
        .filter(|f| !f.is_empty())
        .collect();
    if fields.is_empty() {
        return Err("no FEN, only whitespace".to_owned());
    }
    if fields.len() > 6 {
        return Err("more than 6 fields".to_owned());
    }
    board(fields[0])?;
    if !matches!(fields.get(1), None | Some(&"w" | &"b")) {
        return Err("the side to move is neither w nor b".to_owned());
    }
    if !fields.get(2).is_none_or(|c| castling(c)) {
        return Err(
            "the castling rights are not -, nor up to two of KQA-H then up to two of kqa-h"
                .to_owned(),
        );
    }
    if !fields
        .get(3)
        .is_none_or(|ep| *ep == "-" || matches!(ep.as_bytes(), [b'a'..=b'h', b'1'..=b'8']))
    {
        return Err("the en passant square is neither - nor a square".to_owned());
    }
    let number = |s: &&str| s.bytes().all(|b| b.is_ascii_digit());
    if !fields.get(4).is_none_or(number) {
        return Err("the halfmove clock is not a whole number".to_owned());
    }
    if !fields.get(5).is_none_or(number) {
        return Err("the fullmove number is not a whole number".to_owned());
    }
    Ok(fields.join(" "))
}

/// The board: 8 ranks from rank 8, between 7 slashes, of pieces and digits 1-8 (never two in a row),
/// 8 squares each.
fn board(board: &str) -> Result<(), String> {
    let ranks: Vec<&str> = board.split('/').collect();
    let letters =
        |r: &&str| !r.is_empty() && r.bytes().all(|b| b"12345678pnbrqkPNBRQK".contains(&b));
    if ranks.len() != 8 || !ranks.iter().all(letters) {
        return Err(
            "the board is not 8 ranks of pieces (pnbrqkPNBRQK) and digits 1-8 between 7 slashes"
                .to_owned(),
        );
    }
    if board
        .as_bytes()
        .windows(2)
        .any(|w| w.iter().all(u8::is_ascii_digit))
    {
        return Err("two digits in a row in a rank".to_owned());
    }
    let squares = |r: &&str| -> u32 {
        r.bytes()
            .map(|b| {
                if b.is_ascii_digit() {
                    u32::from(b - b'0')
                } else {
                    1
                }
            })
            .sum()
    };
    if !ranks.iter().all(|r| squares(r) == 8) {
        return Err("a rank of the board is not 8 squares".to_owned());
    }
    Ok(())
}

/// python-chess's castling field: `-`, or up to two of `KQA-H` then up to two of `kqa-h`.
fn castling(field: &str) -> bool {
    if field == "-" {
        return true;
    }
    let b = field.as_bytes();
    let white = b
        .iter()
        .take_while(|c| matches!(c, b'K' | b'Q' | b'A'..=b'H'))
        .count();
    let black = b[white..]
        .iter()
        .take_while(|c| matches!(c, b'k' | b'q' | b'a'..=b'h'))
        .count();
    white <= 2 && black <= 2 && white + black == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_chess_grammar() {
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        assert_eq!(chess_fen_fields(start).unwrap(), start);
        let spaced = "\u{3000} rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR\tw \u{1f}HAha  -\n0 1 ";
        assert_eq!(
            chess_fen_fields(spaced).unwrap(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1"
        );
        for bad in [
            "",
            " \t",
            "hello",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - 0 1",
            "rnbqkbnr/pppppppp/44/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR_w_KQkq_-_0_1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[Qq] w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 3+3 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w kqKQ - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQA - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQQ~BNR w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR W KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq E3 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - +0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 x",
        ] {
            assert!(chess_fen_fields(bad).is_err(), "{bad:?}");
        }
    }
}
