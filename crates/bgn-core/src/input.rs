//! Opening an input: a path or `-` for stdin, compressed or not.
//!
//! The format is sniffed from the first bytes, not the file name, so a mis-named file still loads and
//! a binary file is refused with one clear sentence instead of being parsed as garbage.

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use sha2::{Digest, Sha256};
use shakmaty::san::SanPlus;

/// How the input's bytes are encoded.
#[derive(Copy, Clone, Debug, Eq, PartialEq)]
pub enum Compression {
    Plain,
    Zstd,
    Bzip2,
    Gzip,
}

impl Compression {
    /// `pgn`, `zstd`, `bzip2` or `gzip`, as the load record writes it.
    pub fn name(self) -> &'static str {
        match self {
            Compression::Plain => "pgn",
            Compression::Zstd => "zstd",
            Compression::Bzip2 => "bzip2",
            Compression::Gzip => "gzip",
        }
    }

    fn sniff(head: &[u8]) -> Option<Compression> {
        if starts_zstd(head) {
            Some(Compression::Zstd)
        } else if head.starts_with(b"BZh") {
            Some(Compression::Bzip2)
        } else if head.starts_with(&[0x1f, 0x8b]) {
            Some(Compression::Gzip)
        } else if looks_like_text(head) {
            Some(Compression::Plain)
        } else {
            None
        }
    }
}

/// A zstd stream's first bytes: a frame's magic number (`28 B5 2F FD`), or a skippable frame's
/// (`5?-2A-4D-18`, RFC 8878 §3.1.2: pzstd writes one before its frames), which the decoder skips.
pub fn starts_zstd(head: &[u8]) -> bool {
    match head {
        [0x28, 0xb5, 0x2f, 0xfd, ..] => true,
        [skippable, 0x2a, 0x4d, 0x18, ..] => skippable & 0xf0 == 0x50,
        _ => false,
    }
}

/// A user-caused problem with an input: reported as one line, never as a trace.
#[derive(Debug)]
pub struct InputError(pub String);

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InputError {}

/// Text, not binary: PGN has no control bytes besides whitespace (a stray NUL or ESC is tolerated, a
/// run of them is not).
pub fn looks_like_text(head: &[u8]) -> bool {
    let control = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c))
        .count();
    control * 100 <= head.len()
}

/// Counts and hashes the raw (compressed) bytes as they are read: progress and the load record's
/// checksum come for free, without a second pass over the file.
struct Tap<R> {
    inner: R,
    /// None: an input whose checksum nobody reads (a JSON import's temporary PGN).
    hasher: Option<Sha256>,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Tap<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(hasher) = &mut self.hasher {
            hasher.update(&buf[..n]);
        }
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// The raw bytes sniffed up front, then the rest of the stream.
type Raw = io::Chain<io::Cursor<Vec<u8>>, Box<dyn Read + Send>>;

/// An opened input: decompressed bytes to read, plus what the load record needs about the raw file.
pub struct Input {
    /// What the first bytes say the input is.
    pub compression: Compression,
    /// Size of the raw input in bytes, when known (not for stdin or pipes).
    pub size: Option<u64>,
    /// Raw bytes consumed so far, shared with whoever shows progress.
    pub raw_read: Arc<AtomicU64>,
    reader: Box<dyn Read + Send>,
    hash: HashHandle,
}

/// Lets the SHA-256 be read once the decompressor (which owns the tap) is done.
#[derive(Clone)]
struct HashHandle(Arc<std::sync::Mutex<Option<Sha256>>>);

impl Input {
    /// Opens `path` (`-` is stdin) and sniffs its format.
    pub fn open(path: &str) -> Result<Input, InputError> {
        Self::open_hashed(path, true)
    }

    /// Opens `path` as [`Input::open`] does; `hashed`: false, its SHA-256 is not taken
    /// ([`Input::sha256`] stays `None`).
    pub fn open_hashed(path: &str, hashed: bool) -> Result<Input, InputError> {
        let (raw, size): (Box<dyn Read + Send>, Option<u64>) = if path == "-" {
            (Box::new(io::stdin()), None)
        } else {
            let meta = std::fs::metadata(path).map_err(|e| open_error(path, &e))?;
            if meta.is_dir() {
                return Err(InputError(format!(
                    "{path}: is a directory, not a PGN file"
                )));
            }
            let file = File::open(path).map_err(|e| open_error(path, &e))?;
            let size = meta.is_file().then_some(meta.len());
            (Box::new(file), size)
        };
        Self::of_stream(path, raw, size, true, hashed)
    }

    /// Opens the file `path` from its byte `offset` on: where one of its zstd frames starts, for a
    /// reader of some of a file's frames. `size` stays the whole file's; the checksum covers only the
    /// bytes read.
    pub fn open_at(path: &str, offset: u64) -> Result<Input, InputError> {
        let meta = std::fs::metadata(path).map_err(|e| open_error(path, &e))?;
        let mut file = File::open(path).map_err(|e| open_error(path, &e))?;
        file.seek(SeekFrom::Start(offset))
            .map_err(|e| open_error(path, &e))?;
        Self::of_stream(path, Box::new(file), Some(meta.len()), offset == 0, true)
    }

    /// Wraps any byte stream (used by tests).
    pub fn from_reader(
        name: &str,
        raw: Box<dyn Read + Send>,
        size: Option<u64>,
    ) -> Result<Input, InputError> {
        Self::of_stream(name, raw, size, true, true)
    }

    /// A part of a file read from the middle (`whole`: false) is not refused as "not PGN": its first
    /// megabytes may well be the end of a game and nothing else; the part at the file's start is checked.
    fn of_stream(
        name: &str,
        mut raw: Box<dyn Read + Send>,
        size: Option<u64>,
        whole: bool,
        hashed: bool,
    ) -> Result<Input, InputError> {
        let mut head = vec![0u8; 4096];
        let (n, error) = read_up_to(&mut raw, &mut head);
        if let Some(e) = error {
            return Err(open_error(name, &e));
        }
        head.truncate(n);
        let compression = Compression::sniff(&head).ok_or_else(|| {
            InputError(format!(
                "{name}: unknown format (not PGN text, nor zstd, bzip2 or gzip)"
            ))
        })?;
        let raw_read = Arc::new(AtomicU64::new(0));
        let hash = HashHandle(Arc::new(std::sync::Mutex::new(None)));
        let tap = Tap {
            inner: io::Cursor::new(head).chain(raw),
            hasher: hashed.then(Sha256::new),
            read: raw_read.clone(),
        };
        let tap = FinishingTap {
            tap: Some(tap),
            hash: hash.clone(),
        };
        let decoded: Box<dyn Read + Send> = match compression {
            Compression::Plain => Box::new(tap),
            Compression::Zstd => Box::new(
                zstd::stream::read::Decoder::new(tap)
                    .map_err(|e| InputError(format!("{name}: cannot start zstd: {e}")))?,
            ),
            Compression::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(BufReader::new(tap))),
            Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(tap))),
        };
        let reader = read_head(name, decoded, whole)?;
        Ok(Input {
            compression,
            size,
            raw_read,
            reader,
            hash,
        })
    }

    /// SHA-256 of the raw input, hex; `None` until the whole input was read.
    pub fn sha256(&self) -> Option<String> {
        let guard = self.hash.0.lock().unwrap_or_else(|p| p.into_inner());
        guard.as_ref().map(|h| hex(&h.clone().finalize()))
    }
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reader.read(buf)
    }
}

/// Publishes the hash when the raw stream reaches its end.
struct FinishingTap {
    tap: Option<Tap<Raw>>,
    hash: HashHandle,
}

impl Read for FinishingTap {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(tap) = self.tap.as_mut() else {
            return Ok(0);
        };
        let n = tap.read(buf)?;
        if n == 0 && !buf.is_empty() {
            let done = self.tap.take().expect("tap present");
            *self.hash.0.lock().unwrap_or_else(|p| p.into_inner()) = done.hasher;
        }
        Ok(n)
    }
}

/// Decompressed bytes looked at before any game is read.
pub const HEAD_BYTES: usize = 4 << 20;

/// Looks at the first `HEAD_BYTES` of the decompressed text, then hands back the whole stream:
/// - text with neither a tag pair nor a move there is not PGN (a README, a CSV, a log): refused
///   before anything is written, rather than read as a run of rejects or empty games;
/// - text whose lines end with a bare `\r` (classic Mac OS) is read with each `\r` as `\n`, byte
///   for byte, so offsets stay exact; files with `\n` or `\r\n` line ends are left alone.
fn read_head(
    name: &str,
    mut decoded: Box<dyn Read + Send>,
    refuse_non_pgn: bool,
) -> Result<Box<dyn Read + Send>, InputError> {
    let mut head = vec![0u8; HEAD_BYTES];
    // Damage found here is the framer's to report, after the games before it.
    let (n, damage) = read_up_to(&mut decoded, &mut head);
    head.truncate(n);
    let cr_lines = memchr::memchr(b'\n', &head).is_none() && memchr::memchr(b'\r', &head).is_some();
    if cr_lines {
        head.iter_mut()
            .filter(|b| **b == b'\r')
            .for_each(|b| *b = b'\n');
    }
    if refuse_non_pgn && looks_like_json(&head) {
        return Err(InputError(format!(
            "{name}: JSON, not PGN (JSON games load with json2parquet)"
        )));
    }
    if refuse_non_pgn && damage.is_none() && !head.trim_ascii().is_empty() && !looks_like_pgn(&head)
    {
        return Err(InputError(format!(
            "{name}: not PGN (no tag pair and no move in its first {} MB)",
            HEAD_BYTES >> 20
        )));
    }
    let rest: Box<dyn Read + Send> = match damage {
        Some(e) => Box::new(Failed(Some(e))),
        None if cr_lines => Box::new(CrLines(decoded)),
        None => decoded,
    };
    Ok(Box::new(io::Cursor::new(head).chain(rest)))
}

/// Whether text opens as JSON, which the JSON import reads and the PGN reader refuses: after a BOM and
/// whitespace, an object (`{` then `}` or a `"key":`) or an array (`[` then `]`, an object, an array,
/// or a string, number or literal followed by `,` or `]`). PGN's first `[` opens a tag
/// (`[Event "…"]`, `[1 "x"]`), its first `{` a comment of words: neither reads so.
pub fn looks_like_json(text: &[u8]) -> bool {
    let text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
    opens_json(text, skip_blank(text, 0), 0)
}

/// Whether the value at `i` of `s` opens as a JSON object or array (`depth` of arrays around it).
fn opens_json(s: &[u8], i: usize, depth: usize) -> bool {
    // A value that ends within `s`, then `,` or `]`: an array's first item.
    let item_ends = |end: Option<usize>| {
        end.is_some_and(|e| matches!(s.get(skip_blank(s, e)), Some(b',' | b']')))
    };
    match s.get(i) {
        Some(b'{') => {
            let j = skip_blank(s, i + 1);
            match s.get(j) {
                Some(b'}') => true,
                Some(b'"') => {
                    json_string_end(s, j).is_some_and(|e| s.get(skip_blank(s, e)) == Some(&b':'))
                }
                _ => false,
            }
        }
        Some(b'[') => {
            let j = skip_blank(s, i + 1);
            match s.get(j) {
                Some(b']') => true,
                Some(b'{' | b'[') => depth < 64 && opens_json(s, j, depth + 1),
                Some(b'"') => item_ends(json_string_end(s, j)),
                Some(b'-' | b'0'..=b'9' | b't' | b'f' | b'n') => {
                    let len = s[j..]
                        .iter()
                        .take_while(|b| b.is_ascii_alphanumeric() || b"+-.".contains(b))
                        .count();
                    let word = &s[j..j + len];
                    let literal = matches!(word, b"true" | b"false" | b"null");
                    let number = word
                        .first()
                        .is_some_and(|b| *b == b'-' || b.is_ascii_digit())
                        && word
                            .iter()
                            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(b));
                    (literal || number) && item_ends(Some(j + len))
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// The index after JSON whitespace from `i`.
fn skip_blank(s: &[u8], i: usize) -> usize {
    i + s[i.min(s.len())..]
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .count()
}

/// The index after the JSON string opening at `i` (its `"`), `None` when it does not end in `s`.
fn json_string_end(s: &[u8], i: usize) -> Option<usize> {
    let mut k = i + 1;
    while let Some(&b) = s.get(k) {
        match b {
            b'"' => return Some(k + 1),
            b'\\' => k += 2,
            b'\n' => return None,
            _ => k += 1,
        }
    }
    None
}

/// Whether text holds a PGN tag pair (`[Name "value"]` opening a line) or a line of movetext: a line
/// that, its `{comments}` and `; comments` set aside, holds a move and is mostly made of PGN's tokens
/// (`1.e4! e5 (1...c5) $2 1-0`). Prose that quotes a move (`after 9. Nxe5, Black…`) is not movetext.
pub fn looks_like_pgn(text: &[u8]) -> bool {
    let mut in_comment = false;
    text.split(|&b| b == b'\n').any(|line| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        is_tag_pair(line.trim_ascii_start()) || is_movetext(&uncommented(line, &mut in_comment))
    })
}

/// A line opening with a tag pair, `[Name "value"]`, whatever follows it (some files put a game's tags
/// and moves on one line).
fn is_tag_pair(line: &[u8]) -> bool {
    let Some(rest) = line.strip_prefix(b"[") else {
        return false;
    };
    let name = rest
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .count();
    let rest = &rest[name..];
    let Some(value) = rest.trim_ascii_start().strip_prefix(b"\"") else {
        return false;
    };
    let closed = memchr::memchr(b'"', value)
        .is_some_and(|end| value[end + 1..].trim_ascii_start().starts_with(b"]"));
    name > 0 && rest.first().is_some_and(u8::is_ascii_whitespace) && closed
}

/// `line` without its comments; `in_comment` carries a `{` comment over line breaks.
fn uncommented(line: &[u8], in_comment: &mut bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len());
    for &b in line {
        match (b, *in_comment) {
            (b'}', true) => {
                *in_comment = false;
                out.push(b' ');
            }
            (_, true) => {}
            (b'{', false) => *in_comment = true,
            (b';', false) => break,
            _ => out.push(b),
        }
    }
    out
}

/// At least one move, and three tokens in four are PGN's.
fn is_movetext(line: &[u8]) -> bool {
    let (mut tokens, mut pgn, mut moves) = (0, 0, 0);
    for token in line
        .split(u8::is_ascii_whitespace)
        .filter(|t| !t.is_empty())
    {
        tokens += 1;
        let start = token.iter().take_while(|&&b| b == b'(').count();
        let end = token.len()
            - token[start..]
                .iter()
                .rev()
                .take_while(|&&b| b == b')')
                .count();
        let token = &token[start..end];
        // A move number, perhaps glued to its move (`12.`, `12...`, `1.e4`).
        let digits = token.iter().take_while(|b| b.is_ascii_digit()).count();
        let dots = token[digits..].iter().take_while(|&&b| b == b'.').count();
        let numbered = digits > 0 && dots > 0;
        let rest = if numbered {
            &token[digits + dots..]
        } else {
            token
        };
        if is_move(rest) {
            moves += 1;
            pgn += 1;
        } else if (numbered && rest.is_empty()) || is_pgn_symbol(rest) {
            pgn += 1;
        }
    }
    moves > 0 && pgn * 4 >= tokens * 3
}

/// A SAN move, perhaps with a `!`/`?` annotation (`e4!`, `Nxf7?!`).
fn is_move(token: &[u8]) -> bool {
    let end = token.len()
        - token
            .iter()
            .rev()
            .take_while(|b| matches!(b, b'!' | b'?'))
            .count();
    end > 0 && SanPlus::from_ascii(&token[..end]).is_ok()
}

/// Results, NAGs and the other tokens of movetext that are not moves.
fn is_pgn_symbol(token: &[u8]) -> bool {
    matches!(token, b"" | b"1-0" | b"0-1" | b"1/2-1/2" | b"*" | b"--")
        || (token.len() > 1 && token[0] == b'$' && token[1..].iter().all(u8::is_ascii_digit))
        || token.iter().all(|b| b"!?+-=/".contains(b))
}

/// Replays the error met while reading the head.
struct Failed(Option<io::Error>);

impl Read for Failed {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        self.0.take().map_or(Ok(0), Err)
    }
}

/// A stream whose lines end with a bare `\r`, read with `\n` instead.
struct CrLines(Box<dyn Read + Send>);

impl Read for CrLines {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.0.read(buf)?;
        buf[..n]
            .iter_mut()
            .filter(|b| **b == b'\r')
            .for_each(|b| *b = b'\n');
        Ok(n)
    }
}

/// Fills `buf` as far as the stream goes; the bytes read, and the error that stopped it early.
fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> (usize, Option<io::Error>) {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return (n, Some(e)),
        }
    }
    (n, None)
}

fn open_error(path: &str, e: &io::Error) -> InputError {
    let why = match e.kind() {
        io::ErrorKind::NotFound => "no such file".to_string(),
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    };
    InputError(format!("{path}: {why}"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open_bytes(bytes: Vec<u8>) -> Result<Input, InputError> {
        Input::from_reader("t", Box::new(io::Cursor::new(bytes)), None)
    }

    #[test]
    fn sniffs_formats_and_hashes_raw_bytes() {
        let pgn = b"[Event \"x\"]\n\n1. e4 *\n".to_vec();
        let zst = zstd::encode_all(&pgn[..], 3).unwrap();
        let mut input = open_bytes(zst.clone()).unwrap();
        assert_eq!(input.compression, Compression::Zstd);
        let mut out = Vec::new();
        input.read_to_end(&mut out).unwrap();
        assert_eq!(out, pgn);
        assert_eq!(input.sha256().unwrap(), hex(&Sha256::digest(&zst)));
        assert_eq!(input.raw_read.load(Ordering::Relaxed), zst.len() as u64);
    }

    /// A skippable frame (RFC 8878 §3.1.2) of `magic` holding `data`.
    fn skippable(magic: u8, data: &[u8]) -> Vec<u8> {
        let mut frame = vec![magic, 0x2a, 0x4d, 0x18];
        frame.extend_from_slice(&(data.len() as u32).to_le_bytes());
        frame.extend_from_slice(data);
        frame
    }

    #[test]
    fn skippable_frames_before_and_between_frames_are_zstd() {
        let (a, b) = (
            b"[Event \"a\"]\n\n1. e4 *\n\n",
            b"[Event \"b\"]\n\n1. d4 *\n",
        );
        for magic in [0x50, 0x5a, 0x5f] {
            let stream = [
                skippable(magic, b"pzstd"),
                zstd::encode_all(&a[..], 3).unwrap(),
                skippable(0x50, &[]),
                zstd::encode_all(&b[..], 3).unwrap(),
            ]
            .concat();
            let mut input = open_bytes(stream).unwrap();
            assert_eq!(input.compression, Compression::Zstd);
            let mut out = Vec::new();
            input.read_to_end(&mut out).unwrap();
            assert_eq!(out, [&a[..], &b[..]].concat());
        }
        assert!(!starts_zstd(&[0x60, 0x2a, 0x4d, 0x18]));
    }

    #[test]
    fn json_opens_as_json_and_pgn_does_not() {
        let json = true;
        for (text, is_json) in [
            (&b"{\"id\":\"abcdEFGH\",\"moves\":[]}\n"[..], json),
            (b"\xef\xbb\xbf \n{\n  \"metadata\" : {}\n}", json),
            (b"{}", json),
            (b"[{\"a\": 1}]", json),
            (b"[ \"x\", 1]", json),
            (b"[-1.5e3]", json),
            (b"[true]", json),
            (b"[[]]", json),
            (b"[Event \"x\"]\n\n1. e4 *", !json),
            (b"[1 \"x\"]\n1. e4 *", !json),
            (b"{ \"Best game\" - an annotator } 1. e4 *", !json),
            (b"{Annotated: a, b} 1. e4 *", !json),
            (b"1. e4 e5 *", !json),
            (b"", !json),
        ] {
            let shown = String::from_utf8_lossy(text);
            assert_eq!(looks_like_json(text), is_json, "{shown}");
            let refused = open_bytes(text.to_vec()).err();
            let said = refused.is_some_and(|e| e.0.contains("JSON, not PGN"));
            assert_eq!(said, is_json, "{shown}");
        }
    }

    #[test]
    fn refuses_binary() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0".to_vec();
        let err = open_bytes(png).err().unwrap();
        assert!(err.0.contains("unknown format"), "{}", err.0);
    }
}
