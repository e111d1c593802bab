//! Input files for the importers: gzip detection, re-opening for the HPROF
//! passes, and progress reports in bytes of the file on disk.

use std::cell::Cell;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;

use super::Reopen;

/// The two bytes every gzip member starts with.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// An input file that the importers can read, and re-read, from the start.
///
/// Gzip-compressed files (recognised by their magic bytes, whatever their
/// name) are decompressed on the fly; error offsets then count decompressed
/// bytes. With [`InputFile::spill_to`], the first complete read of a
/// compressed file also writes the decompressed bytes to a temporary file,
/// which later reads use instead of decompressing again (the HPROF importer
/// reads its input three times); the file is deleted when the `InputFile`
/// is dropped. A progress callback, if set, is told how many bytes of the
/// file on disk the current read has covered.
pub struct InputFile {
    path: PathBuf,
    len: u64,
    gzip: bool,
    progress: Option<Box<dyn Fn(u64)>>,
    /// Where to spill the decompressed bytes.
    spill: Option<PathBuf>,
    /// The decompressed length, once a read has written all of it to
    /// `spill`.
    spilled: Cell<Option<u64>>,
    /// Whether the spill file was created (and must be deleted on drop).
    spill_created: Cell<bool>,
}

impl std::fmt::Debug for InputFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InputFile")
            .field("path", &self.path)
            .field("len", &self.len)
            .field("gzip", &self.gzip)
            .field("spill", &self.spill)
            .finish_non_exhaustive()
    }
}

impl InputFile {
    /// Opens `path` to check that it is readable, and sniffs for gzip.
    pub fn open(path: impl AsRef<Path>) -> io::Result<InputFile> {
        let path = path.as_ref().to_path_buf();
        let mut file = File::open(&path)?;
        let len = file.metadata()?.len();
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
            path,
            len,
            gzip: got == 2 && magic == GZIP_MAGIC,
            progress: None,
            spill: None,
            spilled: Cell::new(None),
            spill_created: Cell::new(false),
        })
    }

    /// Sets a callback told, as a read goes on, how many bytes of the file
    /// on disk it has covered so far.
    pub fn on_progress(mut self, f: impl Fn(u64) + 'static) -> InputFile {
        self.progress = Some(Box::new(f));
        self
    }

    /// For a compressed file: decompress only once, keeping the
    /// decompressed bytes in the temporary file `path` (created new, never
    /// overwritten; deleted on drop) for the later reads. It needs as much
    /// disk space as the decompressed input; if the file cannot be created
    /// or written, reads decompress again instead. Does nothing for an
    /// uncompressed file.
    pub fn spill_to(mut self, path: impl AsRef<Path>) -> InputFile {
        if self.gzip {
            self.spill = Some(path.as_ref().to_path_buf());
        }
        self
    }

    /// The file's size on disk.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the file is gzip-compressed.
    pub fn is_gzip(&self) -> bool {
        self.gzip
    }

    /// A reader of the (decompressed) contents from the start.
    pub fn reader(&self) -> io::Result<Box<dyn Read + '_>> {
        let report = self.progress.as_deref();
        if let (Some(spill), Some(total)) = (&self.spill, self.spilled.get()) {
            // Report progress in bytes of the compressed file, scaled.
            let scale = (self.len, total.max(1));
            let counted = Counted {
                inner: File::open(spill)?,
                read: 0,
                report,
                scale,
            };
            return Ok(Box::new(counted));
        }
        let counted = Counted {
            inner: File::open(&self.path)?,
            read: 0,
            report,
            scale: (1, 1),
        };
        if !self.gzip {
            return Ok(Box::new(counted));
        }
        let decoder = MultiGzDecoder::new(BufReader::with_capacity(1 << 16, counted));
        match &self.spill {
            Some(spill) if !self.spill_created.get() => {
                // The spill is a shortcut: if it cannot be created, every
                // read decompresses.
                let created = OpenOptions::new().write(true).create_new(true).open(spill);
                let Ok(out) = created else {
                    return Ok(Box::new(decoder));
                };
                self.spill_created.set(true);
                Ok(Box::new(Tee {
                    inner: decoder,
                    out: Some(BufWriter::with_capacity(1 << 20, out)),
                    written: 0,
                    done: &self.spilled,
                }))
            }
            _ => Ok(Box::new(decoder)),
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

/// Counts the bytes read from a file and reports them, scaled by
/// `scale.0 / scale.1` (to bytes of the compressed file, for a spill).
struct Counted<'a> {
    inner: File,
    read: u64,
    report: Option<&'a dyn Fn(u64)>,
    scale: (u64, u64),
}

impl Read for Counted<'_> {
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
