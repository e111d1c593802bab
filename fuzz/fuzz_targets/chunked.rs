//! Input for the importer fuzz targets: the fuzz input read in short,
//! uneven chunks (1, 2, 3, 5, 7, … up to 61 bytes, then again), with an
//! `Interrupted` error now and then. Built for fuzzing, the importers read
//! through a 64-byte buffer (`stealmark_import::DEFAULT_BUFFER_LEN`), so
//! with these reads every token and record of a few-KiB input crosses a
//! refill somewhere, and the retry paths run.

// Shared by several targets, each of which uses a part.
#![allow(dead_code)]

use std::io::{self, Read};

use stealmark_import::Reopen;

/// A reader of short, uneven chunks.
pub struct Chunked<'a> {
    rest: &'a [u8],
    calls: usize,
}

impl<'a> Chunked<'a> {
    pub fn new(bytes: &'a [u8]) -> Chunked<'a> {
        Chunked {
            rest: bytes,
            calls: 0,
        }
    }
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        const CHUNKS: [usize; 19] = [
            1, 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61,
        ];
        self.calls += 1;
        if self.calls % 23 == 0 {
            return Err(io::ErrorKind::Interrupted.into());
        }
        let n = CHUNKS[self.calls % CHUNKS.len()]
            .min(buf.len())
            .min(self.rest.len());
        buf[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        Ok(n)
    }
}

/// Bytes that the HPROF importer re-reads through [`Chunked`] readers.
pub struct Source<'a>(pub &'a [u8]);

impl Reopen for Source<'_> {
    fn reopen(&self) -> io::Result<Box<dyn Read + '_>> {
        Ok(Box::new(Chunked::new(self.0)))
    }
}
