//! PGN movetext written token by token, as the JSON imports make it for the reader: tokens one space
//! apart, comments braced from their parts.

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
        let mut parts = parts.iter().filter(|p| !p.is_empty()).peekable();
        if parts.peek().is_none() {
            return;
        }
        self.start_token();
        self.out.push(b'{');
        for part in parts {
            self.out.push(b' ');
            match part {
                Part::Text(text) => self.out.extend_from_slice(text.as_bytes()),
                Part::Command(name, value) => {
                    for piece in ["[%", name, " ", value, "]"] {
                        self.out.extend_from_slice(piece.as_bytes());
                    }
                }
            }
        }
        self.out.extend_from_slice(b" }");
    }
}
