//! PGN movetext written token by token, as the study import makes it for the reader: tokens one space
//! apart, comments braced from their parts; a comment's text as the BGN import gives it to the replay.

/// A piece of a PGN comment: text, or a command (`[%clk 0:03:00]`).
pub enum Part<'v> {
    Text(&'v str),
    Command(&'static str, &'v str),
}

impl Part<'_> {
    fn is_empty(&self) -> bool {
        matches!(self, Part::Text(""))
    }
}

/// A game's movetext being written: its tokens space-separated in `out`.
pub struct Tokens<'a> {
    pub out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> Tokens<'a> {
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        Tokens { out, first: true }
    }

    pub fn token(&mut self, token: &str) {
        self.start_token();
        self.out.extend_from_slice(token.as_bytes());
    }

    /// The space before a token, but for the first.
    pub fn start_token(&mut self) {
        if !self.first {
            self.out.push(b' ');
        }
        self.first = false;
    }

    /// `{ a b }` of the parts that are not empty, if any.
    pub fn braced(&mut self, parts: &[Part]) {
        if parts.iter().all(Part::is_empty) {
            return;
        }
        self.start_token();
        self.out.push(b'{');
        let out = &mut *self.out;
        body(parts, |piece| out.extend_from_slice(piece.as_bytes()));
        self.out.push(b'}');
    }
}

/// The text between the braces of a comment of `parts` (` a b `), the parts that are not empty, added to
/// `out`: what pgn-reader gives for `{ a b }`. `false` (nothing added) when every part is empty.
pub fn comment_body(parts: &[Part], out: &mut String) -> bool {
    if parts.iter().all(Part::is_empty) {
        return false;
    }
    body(parts, |piece| out.push_str(piece));
    true
}

fn body<'p>(parts: &'p [Part<'p>], mut put: impl FnMut(&'p str)) {
    for part in parts.iter().filter(|p| !p.is_empty()) {
        put(" ");
        match part {
            Part::Text(text) => put(text),
            Part::Command(name, value) => {
                for piece in ["[%", name, " ", value, "]"] {
                    put(piece);
                }
            }
        }
    }
    put(" ");
}
