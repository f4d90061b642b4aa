//! The move a SAN names on a standard-chess board (Chess and Chess960), and whether a check mates,
//! found without a move list.
//!
//! shakmaty's `San::to_move` generates the legal moves to the SAN's square into a 256-move
//! `MoveList` and returns it by value: on a lichess game that list and its copies were ~12% of the
//! reader's CPU. Nearly every SAN a game holds names one piece that can go there; this finds it from
//! the attack tables and tests its legality directly (the mover's king not attacked afterwards).
//! Anything else (castling, en passant, a drop, a SAN that is illegal, ambiguous or names no single
//! legal move) is left to shakmaty (`None`), so errors and lenient readings stay exactly its.

use shakmaty::san::San;
use shakmaty::{attacks, Bitboard, Move, Position, Rank, Role, Square};

/// The one legal move `san` names on `pos`, played by the rules of standard chess; `None` when that is
/// not plainly so (see the module's note): then shakmaty decides.
pub fn standard_move<P: Position>(pos: &P, san: San) -> Option<Move> {
    let San::Normal {
        role,
        file,
        rank,
        capture,
        to,
        promotion,
    } = san
    else {
        return None;
    };
    let board = pos.board();
    let turn = pos.turn();
    if pos.us().contains(to) || pos.them().contains(to) != capture {
        return None;
    }
    let last_rank = to.rank() == Rank::Eighth || to.rank() == Rank::First;
    let promotes = role == Role::Pawn && last_rank;
    match promotion {
        None if promotes => return None,
        Some(_) if !promotes => return None,
        Some(Role::Pawn | Role::King) => return None,
        _ => {}
    }
    let occupied = board.occupied();
    let sources = match role {
        Role::Pawn => pawn_sources(pos, file, capture, to)?,
        Role::King => attacks::king_attacks(to),
        Role::Knight => attacks::knight_attacks(to),
        Role::Bishop => attacks::bishop_attacks(to, occupied),
        Role::Rook => attacks::rook_attacks(to, occupied),
        Role::Queen => attacks::queen_attacks(to, occupied),
    };
    let files = file.map_or(Bitboard::FULL, Bitboard::from_file);
    let ranks = rank.map_or(Bitboard::FULL, Bitboard::from_rank);
    let king = board.king_of(turn)?;
    let mut legal = (sources & pos.our(role) & files & ranks)
        .into_iter()
        .filter(|&from| {
            let after = occupied.without(from).with(to);
            let king_at = if role == Role::King { to } else { king };
            board
                .attacks_to(king_at, !turn, after)
                .without(to)
                .is_empty()
        });
    let from = legal.next()?;
    if legal.next().is_some() {
        return None;
    }
    Some(Move::Normal {
        role,
        from,
        capture: board.role_at(to),
        to,
        promotion,
    })
}

/// Whether the side to move, in check on a standard-chess board, is checkmated. A king with a square
/// to go to is not, which settles most checks without shakmaty's move list.
pub fn standard_checkmate<P: Position>(pos: &P) -> bool {
    let board = pos.board();
    let turn = pos.turn();
    if let Some(king) = board.king_of(turn) {
        let without_king = board.occupied().without(king);
        let escapes = attacks::king_attacks(king) & !pos.us();
        if escapes
            .into_iter()
            .any(|to| board.attacks_to(to, !turn, without_king).is_empty())
        {
            return false;
        }
    }
    pos.is_checkmate()
}

/// The square a pawn of the side to move could come from to reach `to`: the one of the named file behind
/// it diagonally for a capture, the one or two behind it for a push (a SAN naming a rank too, as the BGN
/// import's `Pe2e4` does, is checked by the caller's masks). `None` for what is left to shakmaty: a capture
/// naming no file.
fn pawn_sources<P: Position>(
    pos: &P,
    file: Option<shakmaty::File>,
    capture: bool,
    to: Square,
) -> Option<Bitboard> {
    let turn = pos.turn();
    let behind = |sq: Square| sq.offset(turn.fold_wb(-8, 8));
    if capture {
        let from = Square::from_coords(file?, behind(to)?.rank());
        // A pawn captures diagonally: the named file is beside the target's.
        return Some(if attacks::pawn_attacks(turn, from).contains(to) {
            Bitboard::from_square(from)
        } else {
            Bitboard::EMPTY
        });
    }
    let one = behind(to)?;
    if pos.board().occupied().contains(one) {
        return Some(Bitboard::from_square(one));
    }
    let double_to = turn.fold_wb(Rank::Fourth, Rank::Fifth);
    Some(
        match (to.rank() == double_to).then(|| behind(one)).flatten() {
            Some(two) => Bitboard::from_square(two),
            None => Bitboard::EMPTY,
        },
    )
}

#[cfg(test)]
mod tests {
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, Chess, Position};

    use super::*;

    /// Every legal move of `fen`, by its SAN, by its from-square in full (as the BGN import writes it,
    /// `Ng1f3`, `Pe2e4`), and by each other reading of the same squares: the fast path names the move
    /// shakmaty names, or leaves it to shakmaty.
    fn agrees_with_shakmaty(fen: &str) {
        let pos: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Chess960)
            .unwrap();
        legal_moves_agree(&pos, fen);
        // Every piece's SAN to every square, legal or not: never a move shakmaty would refuse.
        let files = std::iter::once(None).chain(shakmaty::File::ALL.map(Some));
        for (role, to, capture, file, promotion) in readings(files.collect()) {
            for rank in std::iter::once(None).chain(Rank::ALL.map(Some)) {
                let san = San::Normal {
                    role,
                    file,
                    rank,
                    capture,
                    to,
                    promotion,
                };
                if let Some(m) = standard_move(&pos, san) {
                    assert_eq!(san.to_move(&pos), Ok(m), "{fen}: {san}");
                }
            }
        }
    }

    /// Each legal move of `pos`, by its SAN and by its from-square in full: the fast path finds it, but
    /// for castling and en passant, which it may leave to shakmaty.
    fn legal_moves_agree(pos: &Chess, label: &str) {
        for m in pos.legal_moves() {
            let short = San::from_move(pos, m);
            let long = match short {
                San::Normal {
                    role,
                    capture,
                    to,
                    promotion,
                    ..
                } => San::Normal {
                    role,
                    file: m.from().map(Square::file),
                    rank: m.from().map(Square::rank),
                    capture,
                    to,
                    promotion,
                },
                other => other,
            };
            for san in [short, long] {
                let fast = standard_move(pos, san);
                assert!(
                    fast.is_none() || fast == Some(m),
                    "{label}: {san} gave {fast:?}"
                );
                if !m.is_en_passant() && !m.is_castle() {
                    assert_eq!(fast, Some(m), "{label}: {san} left to shakmaty");
                }
            }
        }
    }

    /// Random games (a fixed xorshift seed; the standard start and three of Chess960): at every position each legal
    /// move is found as shakmaty finds it, and every check's mate is told as shakmaty tells it.
    #[test]
    fn random_games_agree_with_shakmaty() {
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let (mut positions, mut checks, mut mates) = (0, 0, 0);
        for game in 0..300u32 {
            let mut pos: Chess = match game % 4 {
                0 => Chess::default(),
                start => [
                    "nrbqkbrn/pppppppp/8/8/8/8/PPPPPPPP/NRBQKBRN w GBgb - 0 1",
                    "rkrnqnbb/pppppppp/8/8/8/8/PPPPPPPP/RKRNQNBB w CAca - 0 1",
                    "bbqrknrn/pppppppp/8/8/8/8/PPPPPPPP/BBQRKNRN w GDgd - 0 1",
                ][start as usize - 1]
                    .parse::<Fen>()
                    .unwrap()
                    .into_position(CastlingMode::Chess960)
                    .unwrap(),
            };
            for _ in 0..200 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                legal_moves_agree(&pos, &format!("game {game}, ply {positions}"));
                positions += 1;
                let m = moves[(next() % moves.len() as u64) as usize];
                pos.play_unchecked(m);
                if pos.is_check() {
                    checks += 1;
                    mates += usize::from(pos.is_checkmate());
                    assert_eq!(standard_checkmate(&pos), pos.is_checkmate(), "game {game}");
                }
            }
        }
        assert!(
            positions > 30_000 && checks > 1_000 && mates > 10,
            "{positions} {checks} {mates}"
        );
    }

    type Reading = (Role, Square, bool, Option<shakmaty::File>, Option<Role>);

    /// Every piece to every square, capturing or not, from any file or none, promoting or not (and the
    /// caller: from any rank or none).
    fn readings(files: Vec<Option<shakmaty::File>>) -> Vec<Reading> {
        let mut all = Vec::new();
        for role in Role::ALL {
            for to in Square::ALL {
                for capture in [false, true] {
                    for &file in &files {
                        for promotion in [None, Some(Role::Queen), Some(Role::King)] {
                            all.push((role, to, capture, file, promotion));
                        }
                    }
                }
            }
        }
        all
    }

    #[test]
    fn names_the_move_shakmaty_names() {
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            // Pins on file, rank and diagonal.
            "4r1k1/8/8/b7/8/8/3NR3/r1R1K3 w - - 0 1",
            // In check: only blocks, captures of the checker and king moves.
            "4k3/8/8/8/1b6/8/8/RN2K2R w KQ - 0 1",
            // Two knights and two rooks that need disambiguation; promotions with and without capture.
            "1n2k3/P7/8/8/8/2N3N1/8/R3K2R w KQ - 0 1",
            // En passant possible (left to shakmaty), and a pinned pawn.
            "8/8/8/KPp4r/8/8/8/4k3 w - c6 0 2",
            // Black to move, double pushes, a discovered check.
            "r3k2r/pppq1ppp/2n5/3Bp3/4P3/8/PPP2PPP/R2QK2R b KQkq - 0 1",
        ] {
            agrees_with_shakmaty(fen);
        }
    }

    /// Every legal move of every position of a short game through checks and mates: after it, the
    /// fast test of mate says what shakmaty's says.
    #[test]
    fn checkmate_as_shakmaty_says() {
        let mut mates = 0;
        for fen in [
            "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2",
            "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1",
            "r5k1/8/8/8/8/8/5PPP/6K1 b - - 0 1",
            "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
            "7k/5Q2/6K1/8/8/8/8/8 w - - 0 1",
        ] {
            let pos: Chess = fen
                .parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Chess960)
                .unwrap();
            for m in pos.legal_moves() {
                let after = pos.clone().play(m).unwrap();
                if after.is_check() {
                    assert_eq!(
                        standard_checkmate(&after),
                        after.is_checkmate(),
                        "{fen} {m}"
                    );
                    mates += usize::from(after.is_checkmate());
                }
            }
        }
        assert!(mates >= 3, "the positions hold mates to test: {mates}");
    }
}
