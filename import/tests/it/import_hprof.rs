//! The HPROF importer against real heap dumps that a Java program writes of
//! itself at test time, checked against a naive reader in this file that
//! loads the whole dump into hash maps and applies the mapping rules of
//! issue 6 on its own.

use crate::import_common;

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use import_common::{assert_same_heap, corrupt, count, have, read, run, tempdir, Counts};
use stealmark_heap::{ArenaLayout, HeapBuilder, HeapGraph, ObjectModel, SlotKind, TypeKind};
use stealmark_import::test_support::ChunkedSource;
use stealmark_import::{self as import, ImportError, ImportOptions, InputFile, Malformed};

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
    /// Present referents of soft references, of phantom (and final)
    /// references, and of final references.
    soft: u64,
    phantom: u64,
    finalizable: u64,
}

/// What a referent slot is: by the nearest reference class up the chain.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Strength {
    Strong,
    Weak,
    Soft,
    Phantom,
    Final,
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
    // The strength of a class's referent: its nearest reference class.
    let strength_of = |mut k: u64| {
        while k != 0 {
            match name_of(k) {
                Some(b"java/lang/ref/SoftReference") => return Strength::Soft,
                Some(b"java/lang/ref/PhantomReference") => return Strength::Phantom,
                Some(b"java/lang/ref/FinalReference") => return Strength::Final,
                Some(b"java/lang/ref/WeakReference" | b"java/lang/ref/Reference") => {
                    return Strength::Weak
                }
                _ => k = classes[&k].super_id,
            }
        }
        Strength::Strong
    };
    let mut refs: HashMap<u64, Vec<(u64, Strength)>> = HashMap::new();
    for (&id, k) in &classes {
        let r = refs.entry(id).or_default();
        r.push((k.super_id, Strength::Strong));
        r.extend(k.others.iter().map(|&o| (o, Strength::Strong)));
    }
    for (id, class, data) in &instances {
        let r = refs.entry(*id).or_default();
        r.push((*class, Strength::Strong));
        let strength = strength_of(*class);
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
                    let referent = is_ref_class
                        && strings.get(&name).map(Vec::as_slice) == Some(b"referent".as_slice());
                    r.push((v, if referent { strength } else { Strength::Strong }));
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
            .extend(v.iter().map(|&e| (e, Strength::Strong)));
    }
    let (mut references, mut dropped) = (0, 0);
    let mut by_strength: HashMap<Strength, u64> = HashMap::new();
    for r in refs.values_mut() {
        r.retain(|&(t, _)| t != 0);
        dropped += r.iter().filter(|(t, _)| !ids.contains(t)).count() as u64;
        r.retain(|(t, _)| ids.contains(t));
        references += r.len() as u64;
        for &(_, s) in r.iter() {
            *by_strength.entry(s).or_default() += 1;
        }
    }
    let strength = |s| by_strength.get(&s).copied().unwrap_or(0);
    let roots: Vec<u64> = roots.into_iter().filter(|r| ids.contains(r)).collect();
    let mut seen: HashSet<u64> = roots.iter().copied().collect();
    let mut stack = roots.clone();
    while let Some(v) = stack.pop() {
        for &(t, s) in refs.get(&v).map(Vec::as_slice).unwrap_or(&[]) {
            if s == Strength::Strong && seen.insert(t) {
                stack.push(t);
            }
        }
    }
    Naive {
        counts: Counts {
            objects: order.len() as u64,
            references,
            weak: strength(Strength::Weak),
            roots: roots.len() as u64,
            reachable: seen.len() as u64,
        },
        dropped,
        soft: strength(Strength::Soft),
        phantom: strength(Strength::Phantom) + strength(Strength::Final),
        finalizable: strength(Strength::Final),
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
            summary.soft_references,
            summary.phantom_references,
            summary.finalizable
        ),
        (expected.soft, expected.phantom, expected.finalizable)
    );
    assert_eq!(heap.finalizable().len() as u64, summary.finalizable);
    assert_eq!(summary.layout, ArenaLayout::Compressed);
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
        got.weak >= 200 && summary.soft_references >= 200,
        "each WeakReference and SoftReference has a referent slot"
    );
    assert!(
        summary.phantom_references >= 100 && summary.finalizable >= 100,
        "the PhantomReferences and the finalizers of the Resource objects"
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
    // Reference types and runtime sizes: a `Dump$Leaf` (four references, an
    // int and a long) is 40 bytes with compressed oops (what jmap -histo
    // reports for a default JVM), 64 with 8-byte references and header.
    let type_of = |name: &str| names.iter().position(|&n| n == name).unwrap() as u32;
    let view = heap.view();
    for (name, kind) in [
        ("java.lang.ref.WeakReference", TypeKind::WeakRef),
        ("java.lang.ref.SoftReference", TypeKind::SoftRef),
        ("java.lang.ref.PhantomReference", TypeKind::PhantomRef),
        ("java.lang.ref.Finalizer", TypeKind::PhantomRef),
        ("Dump$Leaf", TypeKind::Plain),
    ] {
        assert_eq!(view.type_kind(type_of(name)), kind, "{name}");
    }
    let leaf = view
        .objects()
        .find(|&o| view.type_id(o) == type_of("Dump$Leaf"))
        .unwrap();
    assert_eq!(view.size_bytes(leaf), 40);
    let input = InputFile::open(path).unwrap();
    let mut b = HeapBuilder::new();
    let wide = ImportOptions::layout(Some(ArenaLayout::Wide));
    let wide_summary = import::hprof_with(&input, &mut b, &mut |_| {}, &wide).unwrap();
    let wide_heap = b.finish().unwrap();
    let wide_view = wide_heap.view();
    assert_eq!(wide_summary.layout, ArenaLayout::Wide);
    assert_eq!(count(&wide_heap), got);
    let leaf = wide_view
        .objects()
        .find(|&o| wide_view.type_id(o) == type_of("Dump$Leaf"))
        .unwrap();
    assert_eq!(wide_view.size_bytes(leaf), 64);
    // Compressed references shrink the arena by a third here (primitive
    // arrays, a third of the bytes, do not shrink).
    assert!(view.arena_bytes() * 5 < wide_view.arena_bytes() * 4);
    assert!(view.runtime_bytes() < wide_view.runtime_bytes());

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
    assert_eq!(gz_heap.view().to_words(), heap.view().to_words());

    // Decompressing once into a spill file gives the same heap, and the
    // spill is gone afterwards.
    let spill = dir.path().join("spill");
    let input = InputFile::open(&gz).unwrap().spill_to(&spill);
    let mut b = HeapBuilder::new();
    let mut passes = Vec::new();
    let spilled = import::hprof(&input, &mut b, &mut |p| passes.push(p)).unwrap();
    assert_eq!(passes, ["scan", "count", "emit"]);
    assert_eq!(spilled, summary);
    assert_eq!(std::fs::metadata(&spill).unwrap().len(), bytes.len() as u64);
    drop(input);
    assert!(!spill.exists());
    assert_eq!(
        b.finish().unwrap().view().to_words(),
        heap.view().to_words()
    );
}

/// Read through tiny buffers (a few sizes) from readers that return short,
/// uneven chunks, the Java dump imports to exactly the heap the default
/// buffer gives: every record crosses a refill somewhere, and instance
/// data and arrays longer than the buffer are copied out of it.
#[test]
fn java_dump_through_tiny_buffers_imports_the_same() {
    let Some(path) = dump() else {
        return;
    };
    let bytes = read(path);
    let mut b = HeapBuilder::new();
    let summary = import::hprof(bytes.as_slice(), &mut b, &mut |_| {}).unwrap();
    let heap = b.finish().unwrap();
    for len in [1, 16, 61, 64, 4093] {
        let options = ImportOptions::default().with_buffer_len(len);
        let mut b = HeapBuilder::new();
        let src = ChunkedSource(&bytes);
        let got = import::hprof_with(&src, &mut b, &mut |_| {}, &options).unwrap();
        assert_eq!(got, summary, "buffer of {len} bytes");
        assert_same_heap(&heap, &b.finish().unwrap());
    }
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

/// An object array whose class is a `java.lang.ref.Reference` class (found
/// by the `roundtrip_hprof` fuzz target): its type would be the class's,
/// whose kind makes slot 0 a weak referent, so the array's class reference
/// would be weak in the heap while the summary counted no weak reference.
/// Real dumps give arrays array classes; this one is malformed.
#[test]
fn object_array_of_a_reference_class_is_malformed() {
    let name = |id: u32, s: &[u8]| [be(&[id]), s.to_vec()].concat();
    let load = |class: u32, name: u32| be(&[1, class, 0, name]);
    let mut heap = class(0x10, 0, &[]);
    heap.extend([0x22]);
    heap.extend(be(&[0x30, 0, 1, 0x10, 0x40]));
    heap.extend([0x23]);
    heap.extend(be(&[0x40, 0, 1]));
    heap.extend([10, 0, 0, 0, 7]);
    let names = Hprof::new()
        .record(0x01, &name(1, b"java/lang/ref/WeakReference"))
        .record(0x02, &load(0x10, 1));
    let array_at = names.0.len() + 9 + class(0x10, 0, &[]).len();
    let dump = names.record(0x1C, &heap).record(0x2C, &[]);
    assert_eq!(dump.0[array_at], 0x22, "the test's offset arithmetic");
    let (kind, off) = malformed(&dump.0);
    assert_eq!(
        kind,
        Malformed::ReferenceClassArray {
            id: 0x30,
            class_id: 0x10
        }
    );
    assert_eq!(off as usize, array_at);
    // The same array of a plain class imports, its class reference strong.
    let plain = Hprof::new()
        .record(0x01, &name(1, b"Foo[]"))
        .record(0x02, &load(0x10, 1))
        .record(0x1C, &heap)
        .record(0x2C, &[]);
    let mut b = HeapBuilder::new();
    let s = import::hprof(plain.0.as_slice(), &mut b, &mut |_| {}).unwrap();
    assert_eq!((s.objects, s.references, s.weak_references), (3, 2, 0));
    let heap = b.finish().unwrap();
    assert_eq!(count(&heap).weak, 0);
}

/// A reference in a random dump: null, the object with this index, or an id
/// that is not in the dump.
#[derive(Clone, Copy, Debug)]
enum Target {
    Null,
    Object(usize),
    Missing,
}

/// A random object: an instance of class 0 (Base: `a` object, `x` int),
/// 1 (Derived extends Base: `b` object, `y` long) or 2 (Reference:
/// `referent` object, `next` object), or an object array.
#[derive(Clone, Debug)]
enum Obj {
    Instance(usize, Vec<Target>),
    Array(Vec<Target>),
}

fn target(n: usize) -> impl proptest::strategy::Strategy<Value = Target> {
    use proptest::prelude::*;
    prop_oneof![
        Just(Target::Null),
        (0..n).prop_map(Target::Object),
        Just(Target::Missing)
    ]
}

fn objects() -> impl proptest::strategy::Strategy<Value = Vec<Obj>> {
    use proptest::prelude::*;
    (1usize..30).prop_flat_map(|n| {
        let t = move || target(n);
        let obj = prop_oneof![
            (0usize..3, proptest::collection::vec(t(), 2)).prop_map(|(c, f)| Obj::Instance(c, f)),
            proptest::collection::vec(t(), 0..5).prop_map(Obj::Array),
        ];
        proptest::collection::vec(obj, n)
    })
}

/// Expected slots of one object: `Some((object index, weak))`, or `None` for
/// a null slot (a reference object's null or missing referent).
type Slots = Vec<Option<(usize, bool)>>;

/// The id of object `i` (classes take ids 0x10..; objects 0x1000 + 16 i).
fn obj_id(i: usize) -> u64 {
    0x1000 + 16 * i as u64
}

/// Writes the dump; returns it with the expected slots of every object in
/// dump order (the four classes first) and the expected number of dropped
/// references. An instance of the Reference class has its referent first
/// (null if null or missing), then its class and its other fields.
fn random_dump(objs: &[Obj], roots: &[Target], idz: usize) -> (Vec<u8>, Vec<Slots>, u64) {
    let id = |v: u64| v.to_be_bytes()[8 - idz..].to_vec();
    let tid = |t: Target| match t {
        Target::Null => 0,
        Target::Object(i) => obj_id(i),
        Target::Missing => 0xdead0,
    };
    const BASE: u64 = 0x10;
    const DERIVED: u64 = 0x20;
    const REFERENCE: u64 = 0x30;
    const ARRAY: u64 = 0x40;
    let mut out = b"JAVA PROFILE 1.0.2\0".to_vec();
    out.extend((idz as u32).to_be_bytes());
    out.extend([0; 8]);
    let rec = |out: &mut Vec<u8>, tag: u8, body: &[u8]| {
        out.push(tag);
        out.extend([0; 4]);
        out.extend((body.len() as u32).to_be_bytes());
        out.extend(body);
    };
    // Strings 1..: names; LOAD_CLASS for the Reference class.
    for (sid, s) in [
        (1u64, "java/lang/ref/Reference"),
        (2, "referent"),
        (3, "a"),
        (4, "b"),
    ] {
        let mut b = id(sid);
        b.extend(s.as_bytes());
        rec(&mut out, 0x01, &b);
    }
    let mut b = vec![0, 0, 0, 1];
    b.extend(id(REFERENCE));
    b.extend([0, 0, 0, 0]);
    b.extend(id(1));
    rec(&mut out, 0x02, &b);

    let mut seg = Vec::new();
    let class = |seg: &mut Vec<u8>, cid: u64, sup: u64, fields: &[(u64, u8)]| {
        seg.push(0x20);
        seg.extend(id(cid));
        seg.extend([0; 4]);
        seg.extend(id(sup));
        for _ in 0..5 {
            seg.extend(id(0));
        }
        seg.extend([0; 4]);
        seg.extend([0, 0, 0, 0]);
        seg.extend((fields.len() as u16).to_be_bytes());
        for &(name, ty) in fields {
            seg.extend(id(name));
            seg.push(ty);
        }
    };
    class(&mut seg, BASE, 0, &[(3, 2), (5, 10)]);
    class(&mut seg, DERIVED, BASE, &[(4, 2), (6, 11)]);
    class(&mut seg, REFERENCE, 0, &[(2, 2), (7, 2)]);
    class(&mut seg, ARRAY, 0, &[]);
    // Slots of the classes: Derived -> Base.
    let n_classes = 4;
    let mut expected: Vec<Slots> = vec![vec![], vec![Some((0, false))], vec![], vec![]];
    let mut dropped = 0;
    let mut push = |slots: &mut Slots, t: Target, referent: bool| match t {
        Target::Object(i) => slots.push(Some((n_classes + i, referent))),
        Target::Missing => {
            dropped += 1;
            if referent {
                slots.push(None);
            }
        }
        Target::Null if referent => slots.push(None),
        Target::Null => {}
    };
    for (i, o) in objs.iter().enumerate() {
        let mut slots = Vec::new();
        match o {
            Obj::Instance(c, f) => {
                let cid = [BASE, DERIVED, REFERENCE][*c];
                if *c == 2 {
                    push(&mut slots, f[0], true);
                }
                slots.push(Some((*c, false)));
                seg.push(0x21);
                seg.extend(id(obj_id(i)));
                seg.extend([0; 4]);
                seg.extend(id(cid));
                let mut data = Vec::new();
                match c {
                    0 => {
                        data.extend(id(tid(f[0])));
                        data.extend([0; 4]);
                        push(&mut slots, f[0], false);
                    }
                    1 => {
                        // Own fields first (b, y), then Base's (a, x).
                        data.extend(id(tid(f[1])));
                        data.extend([0; 8]);
                        data.extend(id(tid(f[0])));
                        data.extend([0; 4]);
                        push(&mut slots, f[1], false);
                        push(&mut slots, f[0], false);
                    }
                    _ => {
                        data.extend(id(tid(f[0])));
                        data.extend(id(tid(f[1])));
                        push(&mut slots, f[1], false);
                    }
                }
                seg.extend((data.len() as u32).to_be_bytes());
                seg.extend(data);
            }
            Obj::Array(elems) => {
                seg.push(0x22);
                seg.extend(id(obj_id(i)));
                seg.extend([0; 4]);
                seg.extend((elems.len() as u32).to_be_bytes());
                seg.extend(id(ARRAY));
                slots.push(Some((3, false)));
                for &e in elems {
                    seg.extend(id(tid(e)));
                    push(&mut slots, e, false);
                }
            }
        }
        expected.push(slots);
    }
    for &r in roots {
        seg.push(0xFF);
        seg.extend(id(tid(r)));
    }
    rec(&mut out, 0x1C, &seg);
    rec(&mut out, 0x2C, &[]);
    (out, expected, dropped)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

    /// Every object gets exactly the slots of the mapping rules, in order,
    /// to the right objects, with `referent` weak and first; nulls are not
    /// slots (but a null referent is), missing targets are dropped and
    /// counted; roots are distinct. In both layouts.
    #[test]
    fn random_dumps_import_exactly(
        objs in objects(),
        roots in proptest::collection::vec(target(30), 0..6),
        wide: bool,
        compressed: bool,
        buffer in proptest::option::of(16usize..100),
    ) {
        let layout = if compressed { ArenaLayout::Compressed } else { ArenaLayout::Wide };
        let roots: Vec<Target> = roots
            .into_iter()
            .map(|t| match t { Target::Object(i) if i >= objs.len() => Target::Missing, t => t })
            .collect();
        let (dump, expected, dropped) = random_dump(&objs, &roots, if wide { 8 } else { 4 });
        let mut b = HeapBuilder::new();
        let mut options = ImportOptions::layout(Some(layout));
        options.buffer_len = buffer;
        let summary = import::hprof_with(&ChunkedSource(&dump), &mut b, &mut |_| {}, &options).unwrap();
        proptest::prop_assert_eq!(summary.layout, layout);
        let heap = b.finish().unwrap();
        let view = heap.view();
        let all: Vec<_> = view.objects().collect();
        proptest::prop_assert_eq!(all.len(), expected.len());
        for (k, want) in expected.iter().enumerate() {
            let got: Vec<_> = view.slots(all[k]).collect();
            let want: Vec<_> = want
                .iter()
                .map(|s| s.map(|(t, weak)| (all[t], if weak { SlotKind::Weak } else { SlotKind::Strong })))
                .collect();
            proptest::prop_assert_eq!(got, want, "object {}", k);
        }
        proptest::prop_assert_eq!(summary.dropped_references, dropped);
        let mut want_roots: Vec<_> = roots
            .iter()
            .filter_map(|t| match t { Target::Object(i) => Some(all[4 + i]), _ => None })
            .collect();
        want_roots.sort();
        want_roots.dedup();
        let mut got_roots = heap.roots().to_vec();
        got_roots.sort();
        proptest::prop_assert_eq!(got_roots, want_roots);
        let missing_roots = u64::from(roots.iter().any(|t| matches!(t, Target::Missing)));
        proptest::prop_assert_eq!(summary.dropped_roots, missing_roots);
    }
}
