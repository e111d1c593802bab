//! Input files for the importers: gzip detection, re-opening for the HPROF
//! passes, streams (pipes, FIFOs, standard input) that can be read only
//! once, and progress reports in bytes of the input as read.

use std::cell::{Cell, RefCell};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Cursor, Read, Write};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;

use super::Reopen;

/// The two bytes every gzip member starts with.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// How many bytes of a compressed stream [`InputFile::peek`] reads ahead at
/// most to find the decompressed bytes asked for.
const PEEK_RAW_LIMIT: usize = 1 << 20;

/// An input that the importers can read, and re-read, from the start.
///
/// A regular file is opened again for every read. Anything else (a pipe,
/// a FIFO, `/dev/stdin`, a process substitution, or standard input itself
/// with [`InputFile::stdin`]) is a *stream*: it is opened once, the bytes
/// looked at before the import (the gzip magic, [`InputFile::peek`]) are
/// kept and read again first, and it can be read from the start only once,
/// unless [`InputFile::spill_to`] keeps a copy for the later reads.
///
/// Gzip-compressed input (recognised by its magic bytes, whatever its
/// name) is decompressed on the fly; error offsets then count decompressed
/// bytes. With [`InputFile::spill_to`], the first complete read of a
/// compressed file or of a stream also writes the (decompressed) bytes to a
/// temporary file, which later reads use instead (the HPROF importer reads
/// its input three times); the file is deleted when the `InputFile` is
/// dropped. A progress callback, if set, is told how many bytes of the
/// input as stored (compressed, for a compressed file) the current read has
/// covered.
///
/// ```
/// use std::io::Read;
/// use stealmark_import::InputFile;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("dump.json");
/// std::fs::write(&path, b"{\"snapshot\":{}}")?;
/// let input = InputFile::open(&path)?;
/// assert!(!input.is_stream() && !input.is_gzip());
/// assert_eq!(input.peek(3)?, b"{\"s");
/// let mut all = String::new();
/// input.reader()?.read_to_string(&mut all)?;
/// assert_eq!(all, "{\"snapshot\":{}}");
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct InputFile {
    /// The path, or `None` for standard input.
    path: Option<PathBuf>,
    /// The size of a regular file; 0 for a stream.
    len: u64,
    gzip: bool,
    /// A stream: the bytes read ahead, and the rest, until the one read
    /// from the start takes them.
    stream: RefCell<Option<Stream>>,
    /// Whether the input is a stream.
    is_stream: bool,
    progress: Option<Box<dyn Fn(u64)>>,
    /// Where to spill the decompressed bytes.
    spill: Option<PathBuf>,
    /// The decompressed length, once a read has written all of it to
    /// `spill`.
    spilled: Cell<Option<u64>>,
    /// Whether the spill file was created (and must be deleted on drop).
    spill_created: Cell<bool>,
}

/// A stream not yet read from the start.
struct Stream {
    /// The bytes read ahead, in order.
    head: Vec<u8>,
    /// Whether the stream ended within `head`.
    ended: bool,
    rest: Box<dyn Read>,
}

impl Stream {
    /// Reads ahead until `head` holds at least `len` bytes or the stream
    /// ends.
    fn fill(&mut self, len: usize) -> io::Result<()> {
        let mut chunk = [0u8; 4096];
        while self.head.len() < len && !self.ended {
            let want = (len - self.head.len()).min(chunk.len());
            match self.rest.read(&mut chunk[..want]) {
                Ok(0) => self.ended = true,
                Ok(n) => self.head.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl std::fmt::Debug for InputFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InputFile")
            .field("path", &self.path)
            .field("len", &self.len)
            .field("gzip", &self.gzip)
            .field("is_stream", &self.is_stream)
            .field("spill", &self.spill)
            .finish_non_exhaustive()
    }
}

impl InputFile {
    /// Opens `path` to check that it is readable, and sniffs for gzip. A
    /// path that is not a regular file (a pipe, a FIFO, `/dev/stdin`) is
    /// opened as a stream, once.
    pub fn open(path: impl AsRef<Path>) -> io::Result<InputFile> {
        let path = path.as_ref().to_path_buf();
        let mut file = File::open(&path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return InputFile::from_stream(Some(path), Box::new(file));
        }
        let mut magic = [0u8; 2];
        let mut got = 0;
        while got < 2 {
            match file.read(&mut magic[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(InputFile {
            path: Some(path),
            len: meta.len(),
            gzip: got == 2 && magic == GZIP_MAGIC,
            stream: RefCell::new(None),
            is_stream: false,
            progress: None,
            spill: None,
            spilled: Cell::new(None),
            spill_created: Cell::new(false),
        })
    }

    /// Standard input, as a stream (whatever it is connected to).
    pub fn stdin() -> io::Result<InputFile> {
        InputFile::from_stream(None, Box::new(io::stdin()))
    }

    /// A stream read through `rest`, named `path` if it has a path.
    fn from_stream(path: Option<PathBuf>, rest: Box<dyn Read>) -> io::Result<InputFile> {
        let mut stream = Stream {
            head: Vec::new(),
            ended: false,
            rest,
        };
        stream.fill(GZIP_MAGIC.len())?;
        Ok(InputFile {
            path,
            len: 0,
            gzip: stream.head.starts_with(&GZIP_MAGIC),
            stream: RefCell::new(Some(stream)),
            is_stream: true,
            progress: None,
            spill: None,
            spilled: Cell::new(None),
            spill_created: Cell::new(false),
        })
    }

    /// Sets a callback told, as a read goes on, how many bytes of the input
    /// as stored it has covered so far.
    pub fn on_progress(mut self, f: impl Fn(u64) + 'static) -> InputFile {
        self.progress = Some(Box::new(f));
        self
    }

    /// For a compressed file or a stream: read it only once, keeping the
    /// (decompressed) bytes in the temporary file `path` (created new,
    /// never overwritten; deleted on drop) for the later reads. It needs as
    /// much disk space as the decompressed input; if the file cannot be
    /// created or written, reads of a compressed file decompress again
    /// instead, and a stream cannot be read again. Does nothing for an
    /// uncompressed regular file.
    pub fn spill_to(mut self, path: impl AsRef<Path>) -> InputFile {
        if self.gzip || self.is_stream {
            self.spill = Some(path.as_ref().to_path_buf());
        }
        self
    }

    /// The path opened, or `None` for standard input.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The file's size on disk; 0 for a stream, whose size is unknown.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file is empty (always `false` for a stream).
    pub fn is_empty(&self) -> bool {
        self.len == 0 && !self.is_stream
    }

    /// Whether the input is gzip-compressed.
    pub fn is_gzip(&self) -> bool {
        self.gzip
    }

    /// Whether the input is a stream (not a regular file): readable from
    /// the start only once, unless spilled.
    pub fn is_stream(&self) -> bool {
        self.is_stream
    }

    /// The first `len` (decompressed) bytes, or fewer if the input is
    /// shorter or they cannot be decompressed, without consuming them: a
    /// later [`InputFile::reader`] still reads from the start.
    pub fn peek(&self, len: usize) -> io::Result<Vec<u8>> {
        let mut slot = self.stream.borrow_mut();
        let Some(stream) = slot.as_mut() else {
            if self.is_stream {
                return Err(self.read_twice());
            }
            let path = self.path.as_deref().unwrap_or(Path::new("-"));
            let file = File::open(path)?;
            return if self.gzip {
                Ok(first_bytes(MultiGzDecoder::new(BufReader::new(file)), len))
            } else {
                Ok(first_bytes(file, len))
            };
        };
        if !self.gzip {
            stream.fill(len)?;
            return Ok(stream.head[..len.min(stream.head.len())].to_vec());
        }
        loop {
            let decoded = first_bytes(MultiGzDecoder::new(&stream.head[..]), len);
            if decoded.len() >= len || stream.ended || stream.head.len() >= PEEK_RAW_LIMIT {
                return Ok(decoded);
            }
            stream.fill(stream.head.len() + 4096)?;
        }
    }

    /// A reader of the (decompressed) contents from the start. A stream
    /// can be read so only once, unless a spill file holds it by then.
    pub fn reader(&self) -> io::Result<Box<dyn Read + '_>> {
        let report = self.progress.as_deref();
        if let (Some(spill), Some(total)) = (&self.spill, self.spilled.get()) {
            // Report progress in bytes of the input as stored, scaled.
            let scale = if self.is_stream {
                (1, 1)
            } else {
                (self.len, total.max(1))
            };
            let counted = Counted {
                inner: File::open(spill)?,
                read: 0,
                report,
                scale,
            };
            return Ok(Box::new(counted));
        }
        let raw: Box<dyn Read> = if self.is_stream {
            let stream = self.stream.borrow_mut().take();
            let stream = stream.ok_or_else(|| self.read_twice())?;
            Box::new(Cursor::new(stream.head).chain(stream.rest))
        } else {
            let path = self.path.as_deref().unwrap_or(Path::new("-"));
            Box::new(File::open(path)?)
        };
        let counted = Counted {
            inner: raw,
            read: 0,
            report,
            scale: (1, 1),
        };
        let contents: Box<dyn Read + '_> = if self.gzip {
            Box::new(MultiGzDecoder::new(BufReader::with_capacity(
                1 << 16,
                counted,
            )))
        } else {
            Box::new(counted)
        };
        match &self.spill {
            Some(spill) if !self.spill_created.get() => {
                // The spill is a shortcut: if it cannot be created, every
                // read of a compressed file decompresses.
                let created = OpenOptions::new().write(true).create_new(true).open(spill);
                let Ok(out) = created else {
                    return Ok(contents);
                };
                self.spill_created.set(true);
                Ok(Box::new(Tee {
                    inner: contents,
                    out: Some(BufWriter::with_capacity(1 << 20, out)),
                    written: 0,
                    done: &self.spilled,
                }))
            }
            _ => Ok(contents),
        }
    }

    /// The error of a second read of a stream.
    fn read_twice(&self) -> io::Error {
        let name = self
            .path
            .as_deref()
            .map_or_else(|| "standard input".to_owned(), |p| p.display().to_string());
        io::Error::other(format!(
            "{name} is a pipe or another stream, already read once: it cannot be read again \
             (and no complete copy of it was kept)"
        ))
    }
}

/// Up to `len` bytes from the start of `r`: fewer if it ends or fails
/// first.
fn first_bytes(r: impl Read, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    let mut r = r.take(len as u64);
    let mut chunk = [0u8; 256];
    loop {
        match r.read(&mut chunk) {
            Ok(0) => return out,
            Ok(n) => out.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return out,
        }
    }
}

impl Reopen for InputFile {
    fn reopen(&self) -> io::Result<Box<dyn Read + '_>> {
        self.reader()
    }
}

impl Drop for InputFile {
    fn drop(&mut self) {
        if let (Some(spill), true) = (&self.spill, self.spill_created.get()) {
            let _ = fs::remove_file(spill);
        }
    }
}

/// Counts the bytes read and reports them, scaled by `scale.0 / scale.1`
/// (to bytes of the compressed file, for a spill).
struct Counted<'a, R> {
    inner: R,
    read: u64,
    report: Option<&'a dyn Fn(u64)>,
    scale: (u64, u64),
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if let Some(report) = self.report {
            let (num, den) = self.scale;
            report((u128::from(self.read) * u128::from(num) / u128::from(den)) as u64);
        }
        Ok(n)
    }
}

/// Copies what it reads into the spill file; marks the spill complete when
/// the input ends. The spill is only a shortcut: if writing it fails (a full
/// disk), it is abandoned and later reads decompress again.
struct Tee<'a, R> {
    inner: R,
    /// `None` once the spill is complete or failed.
    out: Option<BufWriter<File>>,
    written: u64,
    done: &'a Cell<Option<u64>>,
}

impl<R: Read> Read for Tee<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(out) = &mut self.out {
            let ok = if n == 0 {
                out.flush().is_ok()
            } else {
                out.write_all(&buf[..n]).is_ok()
            };
            self.written += n as u64;
            if n == 0 || !ok {
                self.out = None;
                if ok {
                    // Complete: the later reads use it.
                    self.done.set(Some(self.written));
                }
            }
        }
        Ok(n)
    }
}
