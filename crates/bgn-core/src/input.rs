//! Opening an input: a path or `-` for stdin, compressed or not.
//!
//! The format is sniffed from the first bytes, not the file name, so a mis-named file still loads and
//! a binary file is refused with one clear sentence instead of being parsed as garbage.

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use sha2::{Digest, Sha256};

/// How the input's bytes are encoded.
#[derive(Copy, Clone, Debug, Eq, PartialEq)]
pub enum Compression {
    Plain,
    Zstd,
    Bzip2,
    Gzip,
}

impl Compression {
    pub fn name(self) -> &'static str {
        match self {
            Compression::Plain => "pgn",
            Compression::Zstd => "zstd",
            Compression::Bzip2 => "bzip2",
            Compression::Gzip => "gzip",
        }
    }

    fn sniff(head: &[u8]) -> Option<Compression> {
        if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
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
    hasher: Sha256,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Tap<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// The raw bytes sniffed up front, then the rest of the stream.
type Raw = io::Chain<io::Cursor<Vec<u8>>, Box<dyn Read + Send>>;

/// An opened input: decompressed bytes to read, plus what the load record needs about the raw file.
pub struct Input {
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
        Self::from_reader(path, raw, size)
    }

    /// Wraps any byte stream (used by `open` and by tests).
    pub fn from_reader(
        name: &str,
        mut raw: Box<dyn Read + Send>,
        size: Option<u64>,
    ) -> Result<Input, InputError> {
        let mut head = vec![0u8; 4096];
        let n = read_up_to(&mut raw, &mut head).map_err(|e| open_error(name, &e))?;
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
            hasher: Sha256::new(),
            read: raw_read.clone(),
        };
        let tap = FinishingTap {
            tap: Some(tap),
            hash: hash.clone(),
        };
        let reader: Box<dyn Read + Send> = match compression {
            Compression::Plain => Box::new(tap),
            Compression::Zstd => Box::new(
                zstd::stream::read::Decoder::new(tap)
                    .map_err(|e| InputError(format!("{name}: cannot start zstd: {e}")))?,
            ),
            Compression::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(BufReader::new(tap))),
            Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(tap))),
        };
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
            *self.hash.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(done.hasher);
        }
        Ok(n)
    }
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(n)
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

    #[test]
    fn refuses_binary() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0".to_vec();
        let err = open_bytes(png).err().unwrap();
        assert!(err.0.contains("unknown format"), "{}", err.0);
    }
}
