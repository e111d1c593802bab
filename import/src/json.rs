//! A small streaming JSON tokenizer, built for heap snapshots: huge arrays of
//! non-negative integers and of strings, read one element at a time with a
//! fixed buffer, with the byte offset of every error.
//!
//! It reads only what the V8 importer needs: objects are walked key by key,
//! numeric arrays element by element, strings are decoded or skipped, and any
//! other value is skipped (or captured whole, up to a limit, for `serde_json`).

use std::io::Read;

use super::error::{Format, ImportError, Malformed};

/// The deepest nesting [`JsonReader::skip_value`] accepts.
pub(crate) const MAX_DEPTH: usize = 4096;

/// A JSON token stream over a reader, tracking the byte offset.
pub(crate) struct JsonReader<R> {
    inner: R,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    /// Input offset of `buf[0]`.
    base: u64,
}

type Result<T> = std::result::Result<T, ImportError>;

impl<R: Read> JsonReader<R> {
    /// Wraps `inner`, with a buffer of the default size.
    #[cfg(test)]
    pub(crate) fn new(inner: R) -> Self {
        JsonReader::with_buffer(inner, crate::DEFAULT_BUFFER_LEN)
    }

    /// Wraps `inner`, with a buffer of `len` (at least 1) bytes.
    pub(crate) fn with_buffer(inner: R, len: usize) -> Self {
        JsonReader {
            inner,
            buf: vec![0; len.max(1)].into_boxed_slice(),
            pos: 0,
            end: 0,
            base: 0,
        }
    }

    /// The input offset of the next unread byte.
    #[inline]
    pub(crate) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// An error of kind `kind` at the current offset.
    pub(crate) fn error(&self, kind: Malformed) -> ImportError {
        self.error_at(self.offset(), kind)
    }

    /// An error of kind `kind` at `offset`.
    pub(crate) fn error_at(&self, offset: u64, kind: Malformed) -> ImportError {
        ImportError::Malformed {
            format: Format::V8,
            offset,
            kind,
        }
    }

    /// Refills an exhausted buffer. Returns `false` at the end of input.
    #[cold]
    fn fill(&mut self) -> Result<bool> {
        debug_assert_eq!(self.pos, self.end);
        self.base += self.end as u64;
        self.pos = 0;
        self.end = 0;
        loop {
            match self.inner.read(&mut self.buf) {
                Ok(n) => {
                    self.end = n;
                    return Ok(n > 0);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(ImportError::Read {
                        offset: self.base,
                        source,
                    })
                }
            }
        }
    }

    /// The next byte without consuming it, or `None` at the end of input.
    #[inline]
    fn peek(&mut self) -> Result<Option<u8>> {
        if self.pos == self.end && !self.fill()? {
            return Ok(None);
        }
        Ok(Some(self.buf[self.pos]))
    }

    /// The next byte, consumed; an error naming `expected` at the end of input.
    #[inline]
    fn next_byte(&mut self, expected: &'static str) -> Result<u8> {
        match self.peek()? {
            Some(b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(self.error(Malformed::UnexpectedEof { expected })),
        }
    }

    /// The next non-whitespace byte without consuming it.
    #[inline]
    pub(crate) fn peek_token(&mut self) -> Result<Option<u8>> {
        loop {
            while self.pos < self.end {
                match self.buf[self.pos] {
                    b' ' | b'\n' | b'\r' | b'\t' => self.pos += 1,
                    b => return Ok(Some(b)),
                }
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    /// Consumes the next non-whitespace byte, which must be `want`.
    pub(crate) fn expect(&mut self, want: u8, expected: &'static str) -> Result<()> {
        match self.peek_token()? {
            Some(b) if b == want => {
                self.pos += 1;
                Ok(())
            }
            Some(found) => Err(self.error(Malformed::UnexpectedByte { found, expected })),
            None => Err(self.error(Malformed::UnexpectedEof { expected })),
        }
    }

    /// Checks that only whitespace remains.
    pub(crate) fn expect_end(&mut self) -> Result<()> {
        match self.peek_token()? {
            None => Ok(()),
            Some(found) => Err(self.error(Malformed::UnexpectedByte {
                found,
                expected: "end of input",
            })),
        }
    }

    /// After an element or member: consumes `,` (returns `true`) or the
    /// closing `close` (returns `false`).
    #[inline]
    pub(crate) fn comma_or(&mut self, close: u8, expected: &'static str) -> Result<bool> {
        match self.peek_token()? {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(b) if b == close => {
                self.pos += 1;
                Ok(false)
            }
            Some(found) => Err(self.error(Malformed::UnexpectedByte { found, expected })),
            None => Err(self.error(Malformed::UnexpectedEof { expected })),
        }
    }

    /// Consumes `[`, and `]` too if the array is empty. Returns whether the
    /// array has elements.
    pub(crate) fn begin_array(&mut self) -> Result<bool> {
        self.expect(b'[', "`[`")?;
        if self.peek_token()? == Some(b']') {
            self.pos += 1;
            return Ok(false);
        }
        Ok(true)
    }

    /// Consumes `{`, and `}` too if the object is empty. Returns whether the
    /// object has members.
    pub(crate) fn begin_object(&mut self) -> Result<bool> {
        self.expect(b'{', "`{`")?;
        if self.peek_token()? == Some(b'}') {
            self.pos += 1;
            return Ok(false);
        }
        Ok(true)
    }

    /// Reads an object key and its `:` into `key` (decoded).
    pub(crate) fn key(&mut self, key: &mut Vec<u8>, limit: usize) -> Result<()> {
        key.clear();
        self.string(Some(key), limit)?;
        self.expect(b':', "`:`")
    }

    /// Reads a non-negative integer (no sign, fraction or exponent).
    #[inline]
    pub(crate) fn u64(&mut self, field: &'static str) -> Result<u64> {
        let first = match self.peek_token()? {
            Some(b) => b,
            None => return Err(self.error(Malformed::UnexpectedEof { expected: field })),
        };
        if !first.is_ascii_digit() {
            return Err(self.error(Malformed::UnexpectedByte {
                found: first,
                expected: "a non-negative integer",
            }));
        }
        let start = self.offset();
        let mut value: u64 = 0;
        loop {
            while self.pos < self.end {
                let d = self.buf[self.pos].wrapping_sub(b'0');
                if d > 9 {
                    return self.number_end(start, value, field);
                }
                value = match value
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(u64::from(d)))
                {
                    Some(v) => v,
                    None => return Err(self.error_at(start, Malformed::NumberOutOfRange { field })),
                };
                self.pos += 1;
            }
            if !self.fill()? {
                return Ok(value);
            }
        }
    }

    /// Rejects a fraction or exponent after an integer's digits.
    #[inline]
    fn number_end(&mut self, start: u64, value: u64, field: &'static str) -> Result<u64> {
        match self.buf[self.pos] {
            b'.' | b'e' | b'E' => Err(self.error_at(start, Malformed::NumberOutOfRange { field })),
            _ => Ok(value),
        }
    }

    /// Reads a string. Decodes it into `out` when given (escapes resolved,
    /// lone surrogates replaced by U+FFFD), keeping at most `limit` bytes of
    /// it (a longer string is cut, possibly inside a character); skips it
    /// otherwise.
    pub(crate) fn string(&mut self, mut out: Option<&mut Vec<u8>>, limit: usize) -> Result<()> {
        self.expect(b'"', "a string")?;
        loop {
            if self.pos == self.end && !self.fill()? {
                return Err(self.error(Malformed::UnexpectedEof { expected: "`\"`" }));
            }
            // Copy (or skip) the run of plain bytes in one go.
            let chunk = &self.buf[self.pos..self.end];
            let run = chunk
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20);
            let n = run.unwrap_or(chunk.len());
            if let Some(out) = out.as_deref_mut() {
                let room = limit.saturating_sub(out.len());
                out.extend_from_slice(&chunk[..n.min(room)]);
            }
            self.pos += n;
            if run.is_none() {
                continue;
            }
            match self.buf[self.pos] {
                b'"' => {
                    self.pos += 1;
                    return Ok(());
                }
                b'\\' => {
                    self.pos += 1;
                    let c = self.escape()?;
                    if let Some(out) = out.as_deref_mut() {
                        let mut utf8 = [0u8; 4];
                        let s = c.encode_utf8(&mut utf8);
                        if out.len() + s.len() <= limit {
                            out.extend_from_slice(s.as_bytes());
                        }
                    }
                }
                found => {
                    return Err(self.error(Malformed::UnexpectedByte {
                        found,
                        expected: "a string character (control bytes must be escaped)",
                    }))
                }
            }
        }
    }

    /// Decodes the escape after a `\`.
    fn escape(&mut self) -> Result<char> {
        let at = self.offset();
        Ok(match self.next_byte("an escape")? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = self.hex4()?;
                if (0xD800..0xDC00).contains(&hi) {
                    // A high surrogate: pair it with a following `\uDC00..`.
                    if self.peek()? == Some(b'\\') {
                        self.pos += 1;
                        if self.next_byte("an escape")? != b'u' {
                            return Err(self.error_at(at, Malformed::BadEscape));
                        }
                        let lo = self.hex4()?;
                        if (0xDC00..0xE000).contains(&lo) {
                            let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                            return Ok(char::from_u32(c).unwrap_or('\u{FFFD}'));
                        }
                    }
                    '\u{FFFD}'
                } else {
                    char::from_u32(hi).unwrap_or('\u{FFFD}')
                }
            }
            _ => return Err(self.error_at(at, Malformed::BadEscape)),
        })
    }

    /// Four hex digits of a `\u` escape.
    fn hex4(&mut self) -> Result<u32> {
        let mut v = 0;
        for _ in 0..4 {
            let at = self.offset();
            let b = self.next_byte("a hex digit")?;
            let d = (b as char)
                .to_digit(16)
                .ok_or_else(|| self.error_at(at, Malformed::BadEscape))?;
            v = v * 16 + d;
        }
        Ok(v)
    }

    /// Skips one value of any type, nested ones included, without recursion.
    /// When `capture` is given, the raw bytes of the value are appended to it,
    /// up to `limit` bytes.
    pub(crate) fn skip_value(
        &mut self,
        mut capture: Option<&mut Vec<u8>>,
        limit: usize,
    ) -> Result<()> {
        // Only brackets are tracked: JSON's grammar is checked loosely while
        // skipping (a skipped value is never interpreted).
        let mut depth = 0usize;
        loop {
            let b = match self.peek_token()? {
                Some(b) => b,
                None => {
                    return Err(self.error(Malformed::UnexpectedEof {
                        expected: "a value",
                    }))
                }
            };
            match b {
                b'"' => {
                    if let Some(cap) = capture.as_deref_mut() {
                        let mut s = Vec::new();
                        self.string(Some(&mut s), limit)?;
                        push_capped(self, cap, &serde_json_escape(&s), limit)?;
                    } else {
                        self.string(None, 0)?;
                    }
                }
                b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return Err(self.error(Malformed::TooDeep { limit: MAX_DEPTH }));
                    }
                    self.pos += 1;
                    if let Some(cap) = capture.as_deref_mut() {
                        push_capped(self, cap, &[b], limit)?;
                    }
                }
                b']' | b'}' => {
                    if depth == 0 {
                        return Err(self.error(Malformed::UnexpectedByte {
                            found: b,
                            expected: "a value",
                        }));
                    }
                    depth -= 1;
                    self.pos += 1;
                    if let Some(cap) = capture.as_deref_mut() {
                        push_capped(self, cap, &[b], limit)?;
                    }
                }
                b',' | b':' => {
                    if depth == 0 {
                        return Err(self.error(Malformed::UnexpectedByte {
                            found: b,
                            expected: "a value",
                        }));
                    }
                    self.pos += 1;
                    if let Some(cap) = capture.as_deref_mut() {
                        push_capped(self, cap, &[b], limit)?;
                    }
                }
                b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                    // A scalar: its bytes run to the next delimiter.
                    loop {
                        match self.peek()? {
                            Some(c)
                                if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'+' | b'.') =>
                            {
                                self.pos += 1;
                                if let Some(cap) = capture.as_deref_mut() {
                                    push_capped(self, cap, &[c], limit)?;
                                }
                            }
                            _ => break,
                        }
                    }
                }
                found => {
                    return Err(self.error(Malformed::UnexpectedByte {
                        found,
                        expected: "a value",
                    }))
                }
            }
            if depth == 0 {
                return Ok(());
            }
        }
    }
}

/// Appends `bytes` to a capture buffer, failing beyond `limit` bytes.
fn push_capped<R: Read>(
    r: &JsonReader<R>,
    cap: &mut Vec<u8>,
    bytes: &[u8],
    limit: usize,
) -> Result<()> {
    if cap.len() + bytes.len() > limit {
        return Err(r.error(Malformed::TooLong {
            what: "value",
            limit,
        }));
    }
    cap.extend_from_slice(bytes);
    Ok(())
}

/// Re-encodes decoded string bytes as a JSON string literal.
fn serde_json_escape(s: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(s);
    // Serialising a `str` cannot fail.
    serde_json::to_vec(&*text).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(s: &str) -> JsonReader<&[u8]> {
        JsonReader::new(s.as_bytes())
    }

    #[test]
    fn integers_and_commas() {
        let mut r = reader(" [1, 23 ,\n456]");
        assert!(r.begin_array().unwrap());
        let mut got = vec![];
        loop {
            got.push(r.u64("n").unwrap());
            if !r.comma_or(b']', "`,` or `]`").unwrap() {
                break;
            }
        }
        assert_eq!(got, [1, 23, 456]);
        r.expect_end().unwrap();
    }

    #[test]
    fn integer_errors_carry_offsets() {
        let mut r = reader("[1.5]");
        r.begin_array().unwrap();
        let e = r.u64("n").unwrap_err();
        assert_eq!(e.offset(), Some(1));
        let mut r = reader("  -3");
        assert_eq!(r.u64("n").unwrap_err().offset(), Some(2));
        let mut r = reader("99999999999999999999999");
        assert!(matches!(
            r.u64("n").unwrap_err(),
            ImportError::Malformed {
                kind: Malformed::NumberOutOfRange { .. },
                ..
            }
        ));
    }

    #[test]
    fn strings_decode_escapes_and_surrogates() {
        let mut out = Vec::new();
        let mut r = reader(r#""a\"b\\\u00e9\ud83d\ude00\ud800x""#);
        r.string(Some(&mut out), 100).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "a\"b\\é😀\u{FFFD}x");
        let mut r = reader(r#""\q""#);
        assert!(r.string(None, 0).is_err());
        let mut r = reader("\"abc");
        assert!(r.string(None, 0).is_err());
        let mut r = reader("\"abcdef\\n\" 5");
        let mut cut = Vec::new();
        r.string(Some(&mut cut), 3).unwrap();
        assert_eq!(cut, b"abc");
        assert_eq!(r.u64("n").unwrap(), 5);
    }

    #[test]
    fn skip_and_capture() {
        let text = r#"{"a": [1, -2.5e3, true, null, {"b": "x\ny"}], "c": {}} 7"#;
        let mut r = reader(text);
        let mut cap = Vec::new();
        r.skip_value(Some(&mut cap), 1000).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&cap).unwrap();
        assert_eq!(v["a"][4]["b"], "x\ny");
        assert_eq!(r.u64("n").unwrap(), 7);
        let mut r = reader("]");
        assert!(r.skip_value(None, 0).is_err());
        let deep = "[".repeat(MAX_DEPTH + 1);
        let mut r = reader(&deep);
        assert!(matches!(
            r.skip_value(None, 0).unwrap_err(),
            ImportError::Malformed {
                kind: Malformed::TooDeep { .. },
                ..
            }
        ));
    }

    #[test]
    fn numbers_split_across_refills() {
        // A reader that returns one byte at a time exercises every refill path.
        struct OneByte<'a>(&'a [u8]);
        impl Read for OneByte<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                match self.0.split_first() {
                    Some((&b, rest)) if !buf.is_empty() => {
                        buf[0] = b;
                        self.0 = rest;
                        Ok(1)
                    }
                    _ => Ok(0),
                }
            }
        }
        let mut r = JsonReader::new(OneByte(b"[12345, \"ab\\u0041\"]"));
        r.begin_array().unwrap();
        assert_eq!(r.u64("n").unwrap(), 12345);
        assert!(r.comma_or(b']', "").unwrap());
        let mut s = Vec::new();
        r.string(Some(&mut s), 10).unwrap();
        assert_eq!(s, b"abA");
        assert!(!r.comma_or(b']', "").unwrap());
    }
}
