//! The HPROF importer against real heap dumps that a Java program writes of
//! itself at test time, checked against a naive reader in this file that
//! loads the whole dump into hash maps and applies the mapping rules of
//! issue 6 on its own.

mod import_common;

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use import_common::{corrupt, count, have, read, run, tempdir, Counts};
use stealmark_heap::import::{self, ImportError, InputFile, Malformed};
use stealmark_heap::{HeapBuilder, HeapGraph};

/// A program with an inheritance chain, weak and soft references whose
/// referents nothing else holds, object arrays with nulls, statics, a cycle,
/// and garbage (the dump includes unreachable objects: `live` is false).
const PROGRAM: &str = include_str!("import_common/Dump.java");

/// Compiles and runs the program once per test run, returning the dump,
/// or `None` (the tests say they are skipped) without a JDK.
fn dump() -> Option<&'static Path> {
    static DUMP: OnceLock<Option<PathBuf>> = OnceLock::new();
    DUMP.get_or_init(|| {
        if !have("java", "the HPROF import tests") || !have("javac", "the HPROF import tests") {
            return None;
        }
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("import_hprof");
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("Dump.java");
        std::fs::write(&src, PROGRAM).unwrap();
        run(Command::new("javac").arg("-d").arg(&dir).arg(&src));
        let out = dir.join("test.hprof");
        // HotSpot refuses to overwrite a dump.
        let _ = std::fs::remove_file(&out);
        run(Command::new("java")
            .arg("-Xmx256m")
            .arg("-cp")
            .arg(&dir)
            .arg("Dump")
            .arg(&out));
        Some(out)
    })
    .as_deref()
}

/// The naive reader's counts.
#[derive(Debug, PartialEq, Eq)]
struct Naive {
    counts: Counts,
    dropped: u64,
}

/// A whole-file cursor.
struct Cur<'a> {
    b: &'a [u8],
    at: usize,
    idz: usize,
}

impl Cur<'_> {
    fn bytes(&mut self, n: usize) -> &[u8] {
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        s
    }
    fn u(&mut self, n: usize) -> u64 {
        self.bytes(n)
            .iter()
            .fold(0, |acc, &b| acc << 8 | u64::from(b))
    }
    fn id(&mut self) -> u64 {
        self.u(self.idz)
    }
}

fn type_size(ty: u8, idz: usize) -> usize {
    match ty {
        2 => idz,
        4 | 8 => 1,
        5 | 9 => 2,
        6 | 10 => 4,
        7 | 11 => 8,
        _ => panic!("basic type {ty}"),
    }
}

struct NaiveClass {
    super_id: u64,
    others: Vec<u64>,
    fields: Vec<(u64, u8)>,
}

/// Loads the whole dump and counts it by the rules of issue 6.
fn naive(bytes: &[u8]) -> Naive {
    let nul = bytes.iter().position(|&b| b == 0).unwrap();
    assert_eq!(&bytes[..nul], b"JAVA PROFILE 1.0.2");
    let mut c = Cur {
        b: bytes,
        at: nul + 1,
        idz: 4,
    };
    c.idz = c.u(4) as usize;
    c.u(8);
    let mut strings: HashMap<u64, Vec<u8>> = HashMap::new();
    let mut class_names: HashMap<u64, u64> = HashMap::new();
    let mut classes: HashMap<u64, NaiveClass> = HashMap::new();
    let mut instances: Vec<(u64, u64, Vec<u8>)> = Vec::new();
    let mut arrays: Vec<(u64, Vec<u64>)> = Vec::new(); // class then elements
    let mut ids: HashSet<u64> = HashSet::new();
    let mut order: Vec<u64> = Vec::new();
    let mut roots: HashSet<u64> = HashSet::new();
    while c.at < bytes.len() {
        let tag = c.u(1);
        c.u(4);
        let len = c.u(4) as usize;
        let end = c.at + len;
        match tag {
            0x01 => {
                let id = c.id();
                strings.insert(id, c.bytes(len - c.idz).to_vec());
            }
            0x02 => {
                c.u(4);
                let class = c.id();
                c.u(4);
                class_names.insert(class, c.id());
            }
            0x0C | 0x1C => {
                while c.at < end {
                    let sub = c.u(1);
                    let root_extra = match sub {
                        0xFF | 0x05 | 0x07 => Some(0),
                        0x01 => Some(c.idz),
                        0x02 | 0x03 | 0x08 => Some(8),
                        0x04 | 0x06 => Some(4),
                        _ => None,
                    };
                    if let Some(extra) = root_extra {
                        roots.insert(c.id());
                        c.bytes(extra);
                        continue;
                    }
                    let id = c.id();
                    c.u(4);
                    match sub {
                        0x20 => {
                            let super_id = c.id();
                            let mut others = vec![c.id(), c.id(), c.id()];
                            c.id();
                            c.id();
                            c.u(4);
                            for _ in 0..c.u(2) {
                                c.u(2);
                                let ty = c.u(1) as u8;
                                let v = c.u(type_size(ty, c.idz));
                                if ty == 2 {
                                    others.push(v);
                                }
                            }
                            for _ in 0..c.u(2) {
                                c.id();
                                let ty = c.u(1) as u8;
                                let v = c.u(type_size(ty, c.idz));
                                if ty == 2 {
                                    others.push(v);
                                }
                            }
                            let mut fields = Vec::new();
                            for _ in 0..c.u(2) {
                                let name = c.id();
                                fields.push((name, c.u(1) as u8));
                            }
                            classes.insert(
                                id,
                                NaiveClass {
                                    super_id,
                                    others,
                                    fields,
                                },
                            );
                        }
                        0x21 => {
                            let class = c.id();
                            let n = c.u(4) as usize;
                            instances.push((id, class, c.bytes(n).to_vec()));
                        }
                        0x22 => {
                            let n = c.u(4) as usize;
                            let mut v = vec![c.id()];
                            for _ in 0..n {
                                v.push(c.id());
                            }
                            arrays.push((id, v));
                        }
                        0x23 => {
                            let n = c.u(4) as usize;
                            let ty = c.u(1) as u8;
                            c.bytes(n * type_size(ty, c.idz));
                        }
                        _ => panic!("sub-record {sub:#x}"),
                    }
                    assert!(ids.insert(id), "duplicate id");
                    order.push(id);
                }
            }
            _ => c.at = end,
        }
        assert_eq!(c.at, end);
    }

    // Every object's references, by the rules.
    let name_of = |class: u64| {
        class_names
            .get(&class)
            .and_then(|n| strings.get(n))
            .map(Vec::as_slice)
    };
    let mut refs: HashMap<u64, Vec<(u64, bool)>> = HashMap::new();
    for (&id, k) in &classes {
        let r = refs.entry(id).or_default();
        r.push((k.super_id, false));
        r.extend(k.others.iter().map(|&o| (o, false)));
    }
    for (id, class, data) in &instances {
        let r = refs.entry(*id).or_default();
        r.push((*class, false));
        let (mut k, mut off) = (*class, 0);
        while k != 0 {
            let kc = &classes[&k];
            let is_ref_class = name_of(k) == Some(b"java/lang/ref/Reference".as_slice());
            for &(name, ty) in &kc.fields {
                let n = type_size(ty, c.idz);
                if ty == 2 {
                    let v = data[off..off + n]
                        .iter()
                        .fold(0, |a, &b| a << 8 | u64::from(b));
                    let weak = is_ref_class
                        && strings.get(&name).map(Vec::as_slice) == Some(b"referent".as_slice());
                    r.push((v, weak));
                }
                off += n;
            }
            k = kc.super_id;
        }
        assert_eq!(off, data.len());
    }
    for (id, v) in &arrays {
        refs.entry(*id)
            .or_default()
            .extend(v.iter().map(|&e| (e, false)));
    }
    let (mut references, mut weak, mut dropped) = (0, 0, 0);
    for r in refs.values_mut() {
        r.retain(|&(t, _)| t != 0);
        dropped += r.iter().filter(|(t, _)| !ids.contains(t)).count() as u64;
        r.retain(|(t, _)| ids.contains(t));
        references += r.len() as u64;
        weak += r.iter().filter(|(_, w)| *w).count() as u64;
    }
    let roots: Vec<u64> = roots.into_iter().filter(|r| ids.contains(r)).collect();
    let mut seen: HashSet<u64> = roots.iter().copied().collect();
    let mut stack = roots.clone();
    while let Some(v) = stack.pop() {
        for &(t, w) in refs.get(&v).map(Vec::as_slice).unwrap_or(&[]) {
            if !w && seen.insert(t) {
                stack.push(t);
            }
        }
    }
    Naive {
        counts: Counts {
            objects: order.len() as u64,
            references,
            weak,
            roots: roots.len() as u64,
            reachable: seen.len() as u64,
        },
        dropped,
    }
}

/// Imports a dump file into a builder.
fn import_file(path: &Path) -> (import::ImportSummary, stealmark_heap::Heap) {
    let input = InputFile::open(path).unwrap();
    let mut b = HeapBuilder::new();
    let summary = import::hprof(&input, &mut b, &mut |_| {}).unwrap();
    (summary, b.finish().unwrap())
}

#[test]
fn java_dump_matches_naive_reader() {
    let Some(path) = dump() else {
        return;
    };
    let dir = tempdir();
    let bytes = read(path);
    let expected = naive(&bytes);
    let (summary, heap) = import_file(path);
    let got = count(&heap);
    eprintln!("java dump: {got:?}, summary {summary:?}");
    assert_eq!(got, expected.counts);
    assert_eq!(summary.dropped_references, expected.dropped);
    assert_eq!(
        (
            summary.objects,
            summary.references,
            summary.weak_references,
            summary.roots
        ),
        (got.objects, got.references, got.weak, got.roots)
    );
    assert_eq!(summary.input_bytes, bytes.len() as u64);
    assert_eq!(summary.undecoded_instances, 0);
    assert!(
        got.weak >= 400,
        "each Weak/SoftReference has a referent slot"
    );
    assert!(
        got.reachable < got.objects,
        "garbage and weakly held objects are not reachable"
    );

    // Class names become Java names, with one type per dumped class.
    let names: Vec<&str> = (0..heap.type_count() as u32)
        .filter_map(|t| heap.type_name(t))
        .collect();
    for want in [
        "Dump$Leaf",
        "java.lang.ref.WeakReference",
        "java.lang.Object[]",
        "int[]",
        "java.lang.Class",
    ] {
        assert!(names.contains(&want), "no type {want}");
    }

    // The same dump, gzip-compressed, imports identically.
    let gz = dir.path().join("test.hprof.gz");
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::fast(),
    );
    enc.write_all(&bytes).unwrap();
    enc.finish().unwrap();
    assert!(InputFile::open(&gz).unwrap().is_gzip());
    let (gz_summary, gz_heap) = import_file(&gz);
    assert_eq!(gz_summary, summary);
    assert_eq!(gz_heap.view().words(), heap.view().words());
}

#[test]
fn java_dump_truncated_or_corrupted_never_panics() {
    let Some(path) = dump() else {
        return;
    };
    let bytes = read(path);
    corrupt(&bytes, bytes.len() / 31, 40, |input| {
        import::hprof(input, &mut HeapBuilder::new(), &mut |_| {})
            .map(|_| ())
            .map_err(|e| {
                let off = e.offset();
                (e, off)
            })
    });
}

/// A tiny dump builder for hand-made cases (4-byte ids).
struct Hprof(Vec<u8>);

impl Hprof {
    fn new() -> Hprof {
        let mut b = b"JAVA PROFILE 1.0.2\0".to_vec();
        b.extend_from_slice(&4u32.to_be_bytes());
        b.extend_from_slice(&[0; 8]);
        Hprof(b)
    }
    fn record(mut self, tag: u8, body: &[u8]) -> Hprof {
        self.0.push(tag);
        self.0.extend_from_slice(&[0; 4]);
        self.0.extend_from_slice(&(body.len() as u32).to_be_bytes());
        self.0.extend_from_slice(body);
        self
    }
}

/// Big-endian u32s, concatenated.
fn be(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_be_bytes()).collect()
}

/// A class dump with no fields and the given super.
fn class(id: u32, super_id: u32, fields: &[(u32, u8)]) -> Vec<u8> {
    let mut b = vec![0x20];
    b.extend(be(&[id, 0, super_id, 0, 0, 0, 0, 0, 0]));
    b.extend_from_slice(&[0, 0, 0, 0]); // no constant pool, no statics
    b.extend_from_slice(&(fields.len() as u16).to_be_bytes());
    for &(name, ty) in fields {
        b.extend(be(&[name]));
        b.push(ty);
    }
    b
}

fn malformed(bytes: &[u8]) -> (Malformed, u64) {
    match import::hprof(bytes, &mut HeapBuilder::new(), &mut |_| {}) {
        Err(ImportError::Malformed { kind, offset, .. }) => (kind, offset),
        other => panic!("expected a malformed-input error, got {other:?}"),
    }
}

#[test]
fn hand_made_dumps() {
    // Class 0x10 with one object field; an instance 0x20 pointing to a
    // missing object 0x99, an array 0x30 holding 0x20, null and 0x98; roots
    // 0x30 (twice) and 0x97 (missing).
    let mut heap = class(0x10, 0, &[(1, 2)]);
    heap.extend([0x21]);
    heap.extend(be(&[0x20, 0, 0x10, 4, 0x99]));
    heap.extend([0x22]);
    heap.extend(be(&[0x30, 0, 3, 0x10, 0x20, 0, 0x98]));
    heap.extend([0xFF]);
    heap.extend(be(&[0x30]));
    heap.extend([0x05]);
    heap.extend(be(&[0x30]));
    heap.extend([0x05]);
    heap.extend(be(&[0x97]));
    let dump = Hprof::new().record(0x1C, &heap).record(0x2C, &[]);
    let mut b = HeapBuilder::new();
    let s = import::hprof(dump.0.as_slice(), &mut b, &mut |_| {}).unwrap();
    assert_eq!((s.objects, s.references, s.roots), (3, 3, 1));
    assert_eq!((s.dropped_references, s.dropped_roots), (2, 1));
    let heap = b.finish().unwrap();
    assert_eq!(count(&heap).reachable, 3);
    // Segments without HEAP_DUMP_END: cut at a record boundary.
    let (kind, _) = malformed(&Hprof::new().record(0x1C, &class(0x10, 0, &[])).0);
    assert_eq!(
        kind,
        Malformed::UnexpectedEof {
            expected: "HEAP_DUMP_END"
        }
    );

    // An instance whose data does not match its class layout.
    let mut bad = class(0x10, 0, &[(1, 2)]);
    bad.extend([0x21]);
    bad.extend(be(&[0x20, 0, 0x10, 2]));
    bad.extend([0, 0]);
    let dump = Hprof::new().record(0x0C, &bad);
    let (kind, off) = malformed(&dump.0);
    assert!(matches!(
        kind,
        Malformed::InstanceSize {
            id: 0x20,
            expected: 4,
            found: 2
        }
    ));
    assert_eq!(dump.0[off as usize], 0x21);

    // A superclass cycle, a duplicate id, an unknown sub-record, a bad type.
    let mut cyc = class(0x10, 0x11, &[]);
    cyc.extend(class(0x11, 0x10, &[]));
    assert!(matches!(
        malformed(&Hprof::new().record(0x0C, &cyc).0).0,
        Malformed::SuperclassCycle(_)
    ));
    let mut dup = class(0x10, 0, &[]);
    dup.extend([0x23]);
    dup.extend(be(&[0x10, 0, 0]));
    dup.push(10);
    let dump = Hprof::new().record(0x0C, &dup);
    let (kind, off) = malformed(&dump.0);
    assert_eq!(kind, Malformed::DuplicateId(0x10));
    assert_eq!(dump.0[off as usize], 0x23);
    let (kind, _) = malformed(&Hprof::new().record(0x0C, &[0x42]).0);
    assert_eq!(kind, Malformed::UnknownSubRecord(0x42));
    let mut prim = vec![0x23];
    prim.extend(be(&[0x10, 0, 1]));
    prim.push(2); // an object-typed primitive array
    let dump = Hprof::new().record(0x0C, &prim);
    let (kind, off) = malformed(&dump.0);
    assert_eq!(kind, Malformed::BadBasicType(2));
    assert_eq!(off as usize, dump.0.len() - 1);

    // A sub-record that runs past its record; a truncated record; headers.
    let mut over = class(0x10, 0, &[]);
    over.truncate(over.len() - 1);
    assert_eq!(
        malformed(&Hprof::new().record(0x0C, &over).0).0,
        Malformed::SubRecordOverrun
    );
    let mut cut = Hprof::new().record(0x0C, &class(0x10, 0, &[])).0;
    cut.truncate(cut.len() - 3);
    assert!(matches!(malformed(&cut).0, Malformed::UnexpectedEof { .. }));
    assert_eq!(
        malformed(b"JAVA PROFILE 9.9\0").0,
        Malformed::BadHprofHeader
    );
    let mut id3 = b"JAVA PROFILE 1.0.2\0".to_vec();
    id3.extend_from_slice(&[0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(malformed(&id3), (Malformed::BadIdSize(3), 19));
    assert_eq!(malformed(&Hprof::new().0).0, Malformed::Empty);
}
