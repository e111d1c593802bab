//! Readers for testing code that consumes [`Read`] input, such as the
//! importers: [`Chunked`] returns short, uneven reads with an `Interrupted`
//! error now and then, the reads a pipe, a socket or a decompressor may
//! return and that a parser must survive. With a small import buffer
//! ([`ImportOptions::buffer_len`](crate::ImportOptions::buffer_len), or
//! the fuzzing build's [`DEFAULT_BUFFER_LEN`](crate::DEFAULT_BUFFER_LEN)),
//! every token and record of a few-KiB input crosses a refill somewhere,
//! at varying offsets, and the retry paths run.
//!
//! Behind the `test-support` feature: the importers' own tests and the fuzz
//! targets use it.

use std::io::{self, Read};

use crate::Reopen;

/// The lengths the reads of a [`Chunked`] reader cycle through (at most
/// these; less at the end of the input or of the caller's buffer).
const CHUNKS: [usize; 19] = [
    1, 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61,
];

/// Every `INTERRUPT_EVERY`th read of a [`Chunked`] reader fails with
/// [`io::ErrorKind::Interrupted`] (and reads nothing).
const INTERRUPT_EVERY: usize = 23;

/// A reader over bytes whose reads return short, uneven chunks (1, 2, 3, 5,
/// 7, … up to 61 bytes, then again), with an `Interrupted` error every 23rd
/// call. It delivers every byte, in order.
///
/// ```
/// use std::io::Read;
/// use stealmark_import::test_support::Chunked;
///
/// let input: Vec<u8> = (0..=255).collect();
/// let mut got = Vec::new();
/// // `read_to_end` retries `Interrupted` reads, as an importer must.
/// Chunked::new(&input).read_to_end(&mut got).unwrap();
/// assert_eq!(got, input);
/// ```
pub struct Chunked<'a> {
    rest: &'a [u8],
    calls: usize,
}

impl<'a> Chunked<'a> {
    /// A reader of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Chunked<'a> {
        Chunked {
            rest: bytes,
            calls: 0,
        }
    }
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.calls += 1;
        if self.calls % INTERRUPT_EVERY == 0 {
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

/// Bytes that the HPROF importer re-reads (it makes three passes), each
/// pass through a new [`Chunked`] reader.
pub struct ChunkedSource<'a>(pub &'a [u8]);

impl Reopen for ChunkedSource<'_> {
    fn reopen(&self) -> io::Result<Box<dyn Read + '_>> {
        Ok(Box::new(Chunked::new(self.0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_short_uneven_and_sometimes_interrupted() {
        let input: Vec<u8> = (0..2000).map(|i| (i % 251) as u8).collect();
        let mut r = Chunked::new(&input);
        let mut buf = [0u8; 64];
        let (mut got, mut lengths, mut interrupted) = (Vec::new(), Vec::new(), 0);
        loop {
            match r.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    got.extend_from_slice(&buf[..n]);
                    lengths.push(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => interrupted += 1,
                Err(e) => panic!("unexpected error {e}"),
            }
        }
        assert_eq!(got, input);
        assert!(interrupted > 0);
        assert!(lengths.iter().all(|&n| n <= 61));
        assert!(lengths.contains(&1) && lengths.contains(&61));
    }

    #[test]
    fn a_source_reopens_from_the_start() {
        let src = ChunkedSource(b"the same bytes each pass");
        for _ in 0..3 {
            let mut got = Vec::new();
            src.reopen().unwrap().read_to_end(&mut got).unwrap();
            assert_eq!(got, src.0);
        }
    }
}
