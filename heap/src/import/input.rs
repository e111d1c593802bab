//! Input files for the importers: gzip detection, re-opening for the HPROF
//! passes, and progress reports in bytes of the file on disk.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;

use super::Reopen;

/// The two bytes every gzip member starts with.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// An input file that the importers can read, and re-read, from the start.
///
/// Gzip-compressed files (recognised by their magic bytes, whatever their
/// name) are decompressed on the fly; error offsets then count decompressed
/// bytes. A progress callback, if set, is told how many bytes of the file on
/// disk the current pass has read.
pub struct InputFile {
    path: PathBuf,
    len: u64,
    gzip: bool,
    progress: Option<Box<dyn Fn(u64)>>,
}

impl std::fmt::Debug for InputFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InputFile")
            .field("path", &self.path)
            .field("len", &self.len)
            .field("gzip", &self.gzip)
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
        })
    }

    /// Sets a callback told, as a pass reads, how many bytes of the file on
    /// disk it has read so far.
    pub fn on_progress(mut self, f: impl Fn(u64) + 'static) -> InputFile {
        self.progress = Some(Box::new(f));
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
        let counted = Counted {
            inner: File::open(&self.path)?,
            read: 0,
            progress: self.progress.as_deref(),
        };
        if self.gzip {
            Ok(Box::new(MultiGzDecoder::new(BufReader::with_capacity(
                1 << 16,
                counted,
            ))))
        } else {
            Ok(Box::new(counted))
        }
    }
}

impl Reopen for InputFile {
    fn reopen(&self) -> io::Result<Box<dyn Read + '_>> {
        self.reader()
    }
}

/// Counts the bytes read from the file and reports them.
struct Counted<'a> {
    inner: File,
    read: u64,
    progress: Option<&'a dyn Fn(u64)>,
}

impl Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if let Some(p) = self.progress {
            p(self.read);
        }
        Ok(n)
    }
}
