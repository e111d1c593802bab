//! The HPROF record walker: reads the header, the top-level records and the
//! heap-dump sub-records, bounds-checking every length, and hands each record
//! a visitor needs to it as a borrowed [`Record`].

use std::io::Read;

use crate::error::{Format, ImportError, Malformed};

type Result<T> = std::result::Result<T, ImportError>;

// Top-level record tags.
const TAG_STRING: u8 = 0x01;
const TAG_LOAD_CLASS: u8 = 0x02;
const TAG_HEAP_DUMP: u8 = 0x0C;
const TAG_HEAP_DUMP_SEGMENT: u8 = 0x1C;
const TAG_HEAP_DUMP_END: u8 = 0x2C;

// Heap-dump sub-record tags.
const ROOT_UNKNOWN: u8 = 0xFF;
const ROOT_JNI_GLOBAL: u8 = 0x01;
const ROOT_JNI_LOCAL: u8 = 0x02;
const ROOT_JAVA_FRAME: u8 = 0x03;
const ROOT_NATIVE_STACK: u8 = 0x04;
const ROOT_STICKY_CLASS: u8 = 0x05;
const ROOT_THREAD_BLOCK: u8 = 0x06;
const ROOT_MONITOR_USED: u8 = 0x07;
const ROOT_THREAD_OBJECT: u8 = 0x08;
const CLASS_DUMP: u8 = 0x20;
const INSTANCE_DUMP: u8 = 0x21;
const OBJ_ARRAY_DUMP: u8 = 0x22;
const PRIM_ARRAY_DUMP: u8 = 0x23;

/// The HPROF basic type of object references.
pub(crate) const TYPE_OBJECT: u8 = 2;

/// The size in bytes of a value of basic type `ty`, or `None` for a code
/// that is not a basic type. Object references take `id_size` bytes.
pub(crate) fn basic_type_size(ty: u8, id_size: u32) -> Option<u32> {
    Some(match ty {
        TYPE_OBJECT => id_size,
        4 | 8 => 1,  // boolean, byte
        5 | 9 => 2,  // char, short
        6 | 10 => 4, // float, int
        7 | 11 => 8, // double, long
        _ => return None,
    })
}

/// A class dump, with its variable-length parts decoded into reused buffers.
#[derive(Default)]
pub(crate) struct ClassDump {
    pub(crate) id: u64,
    pub(crate) super_id: u64,
    /// Loader, signers and protection domain, in that order.
    pub(crate) meta_refs: [u64; 3],
    /// Object-typed constant-pool entries and static fields, in dump order.
    pub(crate) value_refs: Vec<u64>,
    /// Bytes of static field values (for the size estimate).
    pub(crate) static_bytes: u64,
    /// Object-typed static fields among them (for the size estimate).
    pub(crate) static_refs: u64,
    /// Declared instance fields: (name string id, basic type).
    pub(crate) fields: Vec<(u64, u8)>,
}

/// One record, as the walker hands it to a visitor.
pub(crate) enum Record<'a> {
    /// A STRING record: an id and its modified-UTF-8 bytes.
    String { id: u64, bytes: &'a [u8] },
    /// A LOAD_CLASS record: a class object id and its name's string id.
    LoadClass { class_id: u64, name_id: u64 },
    /// Any ROOT_* sub-record: the object it names.
    Root { id: u64 },
    /// A CLASS_DUMP sub-record.
    Class(&'a ClassDump),
    /// An INSTANCE_DUMP sub-record: its field values, most-derived class first.
    Instance {
        id: u64,
        class_id: u64,
        data: &'a [u8],
    },
    /// An OBJ_ARRAY_DUMP sub-record: `elems` holds the raw element ids.
    ObjArray {
        id: u64,
        class_id: u64,
        elems: &'a [u8],
    },
    /// A PRIM_ARRAY_DUMP sub-record.
    PrimArray { id: u64, elem_type: u8, len: u32 },
}

/// Receives the records of one pass.
pub(crate) trait Visitor {
    /// Whether the visitor reads instance data and array elements; if not,
    /// the walker skips them and hands over empty slices.
    const WANTS_DATA: bool = true;

    /// Called for every record; `offset` is where the record starts.
    fn record(&mut self, rec: Record<'_>, offset: u64, r: &Walker) -> Result<()>;
}

/// Context a visitor may use: the identifier size, and error construction.
pub(crate) struct Walker {
    pub(crate) id_size: u32,
}

impl Walker {
    /// Decodes a big-endian identifier of `id_size` bytes at the start of
    /// `b`; 0 (null) if `b` is shorter (callers check lengths first).
    #[inline]
    pub(crate) fn id_at(&self, b: &[u8]) -> u64 {
        if self.id_size == 8 {
            b.first_chunk::<8>().map_or(0, |c| u64::from_be_bytes(*c))
        } else {
            b.first_chunk::<4>()
                .map_or(0, |c| u64::from(u32::from_be_bytes(*c)))
        }
    }
}

/// An error of kind `kind` at `offset`.
pub(crate) fn malformed(offset: u64, kind: Malformed) -> ImportError {
    ImportError::Malformed {
        format: Format::Hprof,
        offset,
        kind,
    }
}

/// A buffered big-endian reader that tracks its offset and, inside a
/// heap-dump record, how many bytes the record has left.
struct Bytes<R> {
    inner: R,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    base: u64,
    /// Bytes left in the current heap-dump record.
    left: u64,
}

impl<R: Read> Bytes<R> {
    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Makes at least `n` (at most the buffer's length) bytes available;
    /// `false` if the input ends first.
    #[cold]
    fn fill_to(&mut self, n: usize) -> Result<bool> {
        debug_assert!(n <= self.buf.len());
        self.buf.copy_within(self.pos..self.end, 0);
        self.base += self.pos as u64;
        self.end -= self.pos;
        self.pos = 0;
        while self.end < n {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => return Ok(false),
                Ok(k) => self.end += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(ImportError::Read {
                        offset: self.base + self.end as u64,
                        source,
                    })
                }
            }
        }
        Ok(true)
    }

    /// Whether any input is left.
    fn at_end(&mut self) -> Result<bool> {
        Ok(self.pos == self.end && !self.fill_to(1)?)
    }

    /// Borrows the next `n` (at most the buffer's length) bytes and consumes
    /// them.
    #[inline]
    fn take(&mut self, n: usize, expected: &'static str) -> Result<&[u8]> {
        if self.end - self.pos < n && !self.fill_to(n)? {
            return Err(malformed(
                self.offset(),
                Malformed::UnexpectedEof { expected },
            ));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Consumes `n` bytes of the current heap-dump record, failing if the
    /// record has fewer left.
    #[inline]
    fn charge(&mut self, n: u64) -> Result<()> {
        self.left = self
            .left
            .checked_sub(n)
            .ok_or_else(|| malformed(self.offset(), Malformed::SubRecordOverrun))?;
        Ok(())
    }

    fn u1(&mut self, what: &'static str) -> Result<u8> {
        Ok(self.take(1, what)?[0])
    }

    fn u2(&mut self, what: &'static str) -> Result<u16> {
        let b = self.take(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    fn u4(&mut self, what: &'static str) -> Result<u32> {
        let b = self.take(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn id(&mut self, id_size: u32, what: &'static str) -> Result<u64> {
        if id_size == 8 {
            let b = self.take(8, what)?;
            Ok(u64::from_be_bytes([
                b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
            ]))
        } else {
            Ok(u64::from(self.u4(what)?))
        }
    }

    /// Sub-record readers: the same, charged to the heap-dump record.
    fn s1(&mut self, what: &'static str) -> Result<u8> {
        self.charge(1)?;
        self.u1(what)
    }

    fn s2(&mut self, what: &'static str) -> Result<u16> {
        self.charge(2)?;
        self.u2(what)
    }

    fn s4(&mut self, what: &'static str) -> Result<u32> {
        self.charge(4)?;
        self.u4(what)
    }

    fn sid(&mut self, id_size: u32, what: &'static str) -> Result<u64> {
        self.charge(u64::from(id_size))?;
        self.id(id_size, what)
    }

    /// Skips `n` bytes.
    fn skip(&mut self, mut n: u64, what: &'static str) -> Result<()> {
        loop {
            let here = (self.end - self.pos) as u64;
            if n <= here {
                self.pos += n as usize;
                return Ok(());
            }
            n -= here;
            self.pos = self.end;
            if !self.fill_to(1)? {
                return Err(malformed(
                    self.offset(),
                    Malformed::UnexpectedEof { expected: what },
                ));
            }
        }
    }

    /// Copies `n` bytes into `out` (replacing its contents).
    fn read_into(&mut self, n: u64, out: &mut Vec<u8>, what: &'static str) -> Result<()> {
        out.clear();
        let mut n = n;
        // `n` is bounded by the record length the caller checked, but the
        // reservation is still capped so that a lying length cannot make
        // the walker allocate more than the input can fill.
        out.reserve(n.min(1 << 24) as usize);
        loop {
            let here = (self.end - self.pos) as u64;
            let k = n.min(here) as usize;
            out.extend_from_slice(&self.buf[self.pos..self.pos + k]);
            self.pos += k;
            n -= k as u64;
            if n == 0 {
                return Ok(());
            }
            if !self.fill_to(1)? {
                return Err(malformed(
                    self.offset(),
                    Malformed::UnexpectedEof { expected: what },
                ));
            }
        }
    }
}

/// Reads the header (returning the identifier size) and walks every record
/// of `input`, read through a buffer of `buffer_len` bytes (at least
/// [`MIN_BUFFER_LEN`](crate::MIN_BUFFER_LEN)), handing them to `v`.
pub(crate) fn walk<R: Read, V: Visitor>(input: R, buffer_len: usize, v: &mut V) -> Result<u64> {
    let mut b = Bytes {
        inner: input,
        buf: vec![0; buffer_len.max(crate::MIN_BUFFER_LEN)].into_boxed_slice(),
        pos: 0,
        end: 0,
        base: 0,
        left: 0,
    };
    let id_size = header(&mut b)?;
    let w = Walker { id_size };
    let mut data = Vec::new();
    let mut class = ClassDump::default();
    // Whether heap-dump segments have started and HEAP_DUMP_END has not
    // come yet: a dump cut at a record boundary must not pass for whole.
    let mut segments_open = false;
    while !b.at_end()? {
        let at = b.offset();
        let tag = b.u1("a record tag")?;
        b.u4("a record time")?;
        let len = u64::from(b.u4("a record length")?);
        match tag {
            TAG_STRING => {
                let n = len
                    .checked_sub(u64::from(id_size))
                    .ok_or_else(|| malformed(at, Malformed::SubRecordOverrun))?;
                let id = b.id(id_size, "a string id")?;
                b.read_into(n, &mut data, "string bytes")?;
                v.record(Record::String { id, bytes: &data }, at, &w)?;
            }
            TAG_LOAD_CLASS => {
                if len != 8 + 2 * u64::from(id_size) {
                    return Err(malformed(at, Malformed::SubRecordOverrun));
                }
                b.u4("a class serial number")?;
                let class_id = b.id(id_size, "a class id")?;
                b.u4("a stack trace serial number")?;
                let name_id = b.id(id_size, "a class name id")?;
                v.record(Record::LoadClass { class_id, name_id }, at, &w)?;
            }
            TAG_HEAP_DUMP | TAG_HEAP_DUMP_SEGMENT => {
                segments_open |= tag == TAG_HEAP_DUMP_SEGMENT;
                b.left = len;
                while b.left > 0 {
                    sub_record(&mut b, &w, v, &mut data, &mut class)?;
                }
            }
            TAG_HEAP_DUMP_END => {
                segments_open = false;
                b.skip(len, "a record body")?;
            }
            _ => b.skip(len, "a record body")?,
        }
    }
    if segments_open {
        return Err(malformed(
            b.offset(),
            Malformed::UnexpectedEof {
                expected: "HEAP_DUMP_END",
            },
        ));
    }
    Ok(b.offset())
}

/// Reads `JAVA PROFILE 1.0.x\0`, the identifier size and the timestamp.
fn header<R: Read>(b: &mut Bytes<R>) -> Result<u32> {
    let mut magic = Vec::new();
    loop {
        let c = b.u1("the HPROF header")?;
        if c == 0 {
            break;
        }
        magic.push(c);
        if magic.len() > 32 {
            return Err(malformed(0, Malformed::BadHprofHeader));
        }
    }
    if magic != b"JAVA PROFILE 1.0.2" && magic != b"JAVA PROFILE 1.0.1" {
        return Err(malformed(0, Malformed::BadHprofHeader));
    }
    let at = b.offset();
    let id_size = b.u4("the identifier size")?;
    if id_size != 4 && id_size != 8 {
        return Err(malformed(at, Malformed::BadIdSize(id_size)));
    }
    b.skip(8, "the header timestamp")?;
    Ok(id_size)
}

/// Reads one heap-dump sub-record and hands it to `v`.
fn sub_record<R: Read, V: Visitor>(
    b: &mut Bytes<R>,
    w: &Walker,
    v: &mut V,
    data: &mut Vec<u8>,
    class: &mut ClassDump,
) -> Result<()> {
    let idz = w.id_size;
    let at = b.offset();
    let tag = b.s1("a sub-record tag")?;
    // Roots: the object id, then fixed-size extra fields.
    let root_extra = match tag {
        ROOT_UNKNOWN | ROOT_STICKY_CLASS | ROOT_MONITOR_USED => Some(0),
        ROOT_JNI_GLOBAL => Some(u64::from(idz)),
        ROOT_JNI_LOCAL | ROOT_JAVA_FRAME | ROOT_THREAD_OBJECT => Some(8),
        ROOT_NATIVE_STACK | ROOT_THREAD_BLOCK => Some(4),
        _ => None,
    };
    if let Some(extra) = root_extra {
        let id = b.sid(idz, "a root id")?;
        b.charge(extra)?;
        b.skip(extra, "a root record")?;
        return v.record(Record::Root { id }, at, w);
    }
    match tag {
        CLASS_DUMP => {
            class.id = b.sid(idz, "a class id")?;
            b.s4("a stack trace serial number")?;
            class.super_id = b.sid(idz, "a superclass id")?;
            for r in &mut class.meta_refs {
                *r = b.sid(idz, "a class loader, signers or protection domain id")?;
            }
            // Two reserved ids and the instance size.
            let reserved = 2 * u64::from(idz) + 4;
            b.charge(reserved)?;
            b.skip(reserved, "a class dump")?;
            class.value_refs.clear();
            class.fields.clear();
            class.static_bytes = 0;
            class.static_refs = 0;
            let cp = b.s2("a constant pool size")?;
            for _ in 0..cp {
                b.s2("a constant pool index")?;
                value(b, w, class, false)?;
            }
            let statics = b.s2("a static field count")?;
            for _ in 0..statics {
                b.sid(idz, "a static field name id")?;
                value(b, w, class, true)?;
            }
            let fields = b.s2("an instance field count")?;
            for _ in 0..fields {
                let name = b.sid(idz, "a field name id")?;
                let ty_at = b.offset();
                let ty = b.s1("a field type")?;
                if basic_type_size(ty, idz).is_none() {
                    return Err(malformed(ty_at, Malformed::BadBasicType(ty)));
                }
                class.fields.push((name, ty));
            }
            v.record(Record::Class(class), at, w)
        }
        INSTANCE_DUMP => {
            let id = b.sid(idz, "an object id")?;
            b.s4("a stack trace serial number")?;
            let class_id = b.sid(idz, "a class id")?;
            let n = u64::from(b.s4("a field data length")?);
            b.charge(n)?;
            let data = payload::<R, V>(b, n, data, "instance field data")?;
            v.record(Record::Instance { id, class_id, data }, at, w)
        }
        OBJ_ARRAY_DUMP => {
            let id = b.sid(idz, "an array id")?;
            b.s4("a stack trace serial number")?;
            let len = b.s4("an array length")?;
            let class_id = b.sid(idz, "an array class id")?;
            let n = u64::from(len) * u64::from(idz);
            b.charge(n)?;
            let data = payload::<R, V>(b, n, data, "array elements")?;
            v.record(
                Record::ObjArray {
                    id,
                    class_id,
                    elems: data,
                },
                at,
                w,
            )
        }
        PRIM_ARRAY_DUMP => {
            let id = b.sid(idz, "an array id")?;
            b.s4("a stack trace serial number")?;
            let len = b.s4("an array length")?;
            let ty_at = b.offset();
            let elem_type = b.s1("an element type")?;
            let size = match basic_type_size(elem_type, idz) {
                Some(s) if elem_type != TYPE_OBJECT => s,
                _ => return Err(malformed(ty_at, Malformed::BadBasicType(elem_type))),
            };
            let n = u64::from(len) * u64::from(size);
            b.charge(n)?;
            b.skip(n, "array elements")?;
            v.record(Record::PrimArray { id, elem_type, len }, at, w)
        }
        _ => Err(malformed(at, Malformed::UnknownSubRecord(tag))),
    }
}

/// The `n` bytes of an instance's fields or an array's elements: borrowed
/// from the buffer when they fit in it, copied into `spill` otherwise, and
/// skipped (empty) when the visitor does not want them.
fn payload<'a, R: Read, V: Visitor>(
    b: &'a mut Bytes<R>,
    n: u64,
    spill: &'a mut Vec<u8>,
    what: &'static str,
) -> Result<&'a [u8]> {
    if !V::WANTS_DATA {
        b.skip(n, what)?;
        return Ok(&[]);
    }
    if n <= b.buf.len() as u64 {
        return b.take(n as usize, what);
    }
    b.read_into(n, spill, what)?;
    Ok(spill)
}

/// Reads a typed value of a constant-pool entry or static field, keeping
/// object references.
fn value<R: Read>(
    b: &mut Bytes<R>,
    w: &Walker,
    class: &mut ClassDump,
    is_static: bool,
) -> Result<()> {
    let ty_at = b.offset();
    let ty = b.s1("a value type")?;
    let size = basic_type_size(ty, w.id_size)
        .ok_or_else(|| malformed(ty_at, Malformed::BadBasicType(ty)))?;
    if is_static {
        class.static_bytes += u64::from(size);
        class.static_refs += u64::from(ty == TYPE_OBJECT);
    }
    if ty == TYPE_OBJECT {
        let r = b.sid(w.id_size, "a reference value")?;
        class.value_refs.push(r);
    } else {
        b.charge(u64::from(size))?;
        b.skip(u64::from(size), "a primitive value")?;
    }
    Ok(())
}
