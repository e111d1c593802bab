//! The Java HPROF importer (`JAVA PROFILE 1.0.1` and `1.0.2`).
//!
//! Three streaming passes over the dump, none of which holds more than one
//! record at a time:
//!
//! 1. **scan**: object ids (as `(id, ordinal)` pairs), class layouts, roots,
//!    and the string ids of `java/lang/ref/Reference` and `referent`;
//! 2. **count**: each object's slot count, which needs the full id set
//!    because references to objects missing from the dump are dropped; and
//!    the class names;
//! 3. **emit**: every object with its slots, in dump order, then the roots.
//!
//! Mapping (issue 6): objects are the CLASS_DUMP, INSTANCE_DUMP,
//! OBJ_ARRAY_DUMP and PRIM_ARRAY_DUMP records. Slots, in this order: a class
//! → its super, loader, signers, protection domain, then its object-typed
//! constant-pool entries and static fields; an instance → its class, then its
//! reference fields (own class first, then each superclass, as the dump lays
//! them out); an object array → its class, then its elements. The `referent`
//! field declared by `java.lang.ref.Reference` is weak. Null references are
//! not slots; references to ids missing from the dump are dropped and
//! counted. Roots are the distinct objects the ROOT_* sub-records name.
//!
//! Sizes are estimates of HotSpot's 64-bit layout: a two-identifier header,
//! plus the payload the dump holds (field values, array length and
//! elements, static field values), rounded up to 8 bytes.

mod classes;
mod idmap;
mod reader;

use std::collections::HashMap;
use std::io::Read;

use super::error::{ImportError, Malformed};
use super::{misplaced, payload_words, sink_error, ImportSummary, Placer};
use classes::{ClassInfo, Classes};
use idmap::IdMap;
use reader::{malformed, walk, Record, Visitor, Walker};
use stealmark_heap::HeapSink;
use stealmark_heap::{Pos, Slot};

/// Something the importer can read several times from the start: a file
/// (decompressing `.gz`), or bytes in memory.
pub trait Reopen {
    /// Opens a fresh reader at the start of the (decompressed) dump.
    fn reopen(&self) -> std::io::Result<Box<dyn Read + '_>>;
}

impl Reopen for [u8] {
    fn reopen(&self) -> std::io::Result<Box<dyn Read + '_>> {
        Ok(Box::new(self))
    }
}

/// The fixed type names (offsets from the first type id); class types
/// follow, in dump order.
const TYPE_CLASS: u32 = 0;
/// `1 + (elem_type - 4)` for primitive arrays of basic types 4..=11.
const TYPE_PRIM_ARRAY: u32 = 1;
const TYPE_UNKNOWN_CLASS: u32 = 9;
const FIRST_CLASS_TYPE: u32 = 10;
const FIXED_TYPE_NAMES: [&str; 10] = [
    "java.lang.Class",
    "boolean[]",
    "char[]",
    "float[]",
    "double[]",
    "byte[]",
    "short[]",
    "int[]",
    "long[]",
    "(class missing from the dump)",
];

/// Imports the dump `src` into `sink`. `pass` is told when each of the three
/// passes starts (with its name), so that a caller can show progress.
pub(crate) fn import<S: HeapSink + ?Sized, Src: Reopen + ?Sized>(
    src: &Src,
    sink: &mut S,
    pass: &mut dyn FnMut(&'static str),
) -> Result<ImportSummary, ImportError> {
    let open = || {
        src.reopen()
            .map_err(|source| ImportError::Read { offset: 0, source })
    };

    // Pass 1: scan.
    pass("scan");
    let mut scan = Scan::default();
    let input_bytes = walk(open()?, &mut scan)?;
    if scan.pairs.is_empty() {
        return Err(malformed(input_bytes, Malformed::Empty));
    }
    let ids = IdMap::new(std::mem::take(&mut scan.pairs));
    // Sorted, for binary search: a hostile dump may repeat these names.
    for v in [&mut scan.reference_names, &mut scan.referent_names] {
        v.sort_unstable();
        v.dedup();
    }
    let mut reference_classes: Vec<u64> = scan
        .load_class
        .iter()
        .filter(|(_, name)| scan.reference_names.binary_search(name).is_ok())
        .map(|&(class, _)| class)
        .collect();
    reference_classes.sort_unstable();
    reference_classes.dedup();
    let classes = Classes::new(
        &scan.classes,
        scan.id_size,
        &reference_classes,
        &scan.referent_names,
    )?;
    // Class names: the LOAD_CLASS names of dumped classes.
    let mut names: HashMap<u64, Option<String>> = HashMap::new();
    let mut class_names: Vec<Option<u64>> = vec![None; scan.classes.len()];
    for &(class, name) in &scan.load_class {
        if let Some(i) = classes.find(class) {
            class_names[i as usize] = Some(name);
            names.insert(name, None);
        }
    }
    let class_ids: Vec<u64> = scan.classes.iter().map(|c| c.id).collect();
    let object_count = scan.objects;
    let roots = std::mem::take(&mut scan.roots);
    drop(scan);
    let mut ids = match ids {
        Ok(ids) => ids,
        Err(id) => {
            // Walk again to say where the second occurrence is.
            let mut find = FindDuplicate { id, seen: false };
            walk(open()?, &mut find)?;
            return Err(malformed(0, Malformed::DuplicateId(id)));
        }
    };

    // Pass 2: count slots, lay the objects out, collect the class names.
    pass("count");
    let mut count = Count {
        ids: &mut ids,
        classes: &classes,
        placer: Placer::new(sink),
        names: &mut names,
        next: 0,
        dropped: 0,
        undecoded: 0,
        references: 0,
    };
    walk(open()?, &mut count)?;
    let Count {
        next: counted,
        dropped,
        undecoded,
        references,
        placer,
        ..
    } = count;
    if counted != object_count {
        return Err(changed(input_bytes));
    }
    sink.reserve(object_count, placer.arena_words());
    let mut type_names: Vec<String> = FIXED_TYPE_NAMES.iter().map(|s| (*s).to_owned()).collect();
    for (i, name_id) in class_names.iter().enumerate() {
        let name = name_id.and_then(|n| names.get(&n).cloned().flatten());
        type_names.push(match name {
            Some(n) => java_name(&n),
            None => format!("(unnamed class {:#x})", class_ids[i]),
        });
    }
    drop(names);
    let mut type_base = 0;
    for (i, name) in type_names.iter().enumerate() {
        let id = sink.type_name(name).map_err(sink_error)?;
        if i == 0 {
            type_base = id;
        } else if Some(id) != type_base.checked_add(i as u32) {
            return Err(ImportError::Sink(
                format!("the sink numbered type name {i} as {id}").into(),
            ));
        }
    }

    // Pass 3: emit.
    pass("emit");
    let mut emit = Emit {
        ids: &ids,
        classes: &classes,
        sink,
        type_base,
        next: 0,
        slots: Vec::new(),
        references: 0,
        weak: 0,
    };
    walk(open()?, &mut emit)?;
    let (emitted, emitted_refs, weak) = (emit.next, emit.references, emit.weak);
    if emitted != object_count || emitted_refs != references {
        return Err(changed(input_bytes));
    }
    let mut root_pos: Vec<Pos> = Vec::with_capacity(roots.len());
    let mut missing_roots: Vec<u64> = Vec::new();
    for id in roots.into_iter().filter(|&id| id != 0) {
        match ids.get(id).and_then(Pos::from_offset) {
            Some(p) => root_pos.push(p),
            None => missing_roots.push(id),
        }
    }
    root_pos.sort_unstable();
    root_pos.dedup();
    missing_roots.sort_unstable();
    missing_roots.dedup();
    for &p in &root_pos {
        sink.root(p).map_err(sink_error)?;
    }
    Ok(ImportSummary {
        input_bytes,
        objects: object_count,
        references,
        weak_references: weak,
        roots: root_pos.len() as u64,
        types: type_names.len() as u64,
        dropped_references: dropped,
        dropped_roots: missing_roots.len() as u64,
        undecoded_instances: undecoded,
    })
}

/// The error for a dump whose passes disagree.
fn changed(offset: u64) -> ImportError {
    ImportError::Read {
        offset,
        source: std::io::Error::other("the input changed between import passes"),
    }
}

/// Turns a JVM binary name (`java/lang/String`, `[[I`, `[Ljava/lang/Object;`)
/// into a Java source name (`java.lang.String`, `int[][]`, `java.lang.Object[]`).
fn java_name(binary: &str) -> String {
    let dims = binary.bytes().take_while(|&b| b == b'[').count();
    let elem = &binary[dims..];
    let mut name = if dims == 0 {
        elem.to_owned()
    } else {
        match elem {
            "Z" => "boolean".to_owned(),
            "C" => "char".to_owned(),
            "F" => "float".to_owned(),
            "D" => "double".to_owned(),
            "B" => "byte".to_owned(),
            "S" => "short".to_owned(),
            "I" => "int".to_owned(),
            "J" => "long".to_owned(),
            _ => elem
                .strip_prefix('L')
                .and_then(|e| e.strip_suffix(';'))
                .unwrap_or(elem)
                .to_owned(),
        }
    };
    name = name.replace('/', ".");
    for _ in 0..dims {
        name.push_str("[]");
    }
    name
}

/// Pass 1.
#[derive(Default)]
struct Scan {
    id_size: u32,
    pairs: Vec<(u64, u64)>,
    objects: u64,
    classes: Vec<ClassInfo>,
    roots: Vec<u64>,
    load_class: Vec<(u64, u64)>,
    /// String ids of `java/lang/ref/Reference`.
    reference_names: Vec<u64>,
    /// String ids of `referent`.
    referent_names: Vec<u64>,
}

impl Scan {
    fn object(&mut self, id: u64, offset: u64) -> Result<(), ImportError> {
        // The id map indexes its pairs with u32.
        if self.objects >= u64::from(u32::MAX) {
            return Err(malformed(offset, Malformed::TooMany("objects")));
        }
        self.pairs.push((id, self.objects));
        self.objects += 1;
        Ok(())
    }
}

impl Visitor for Scan {
    const WANTS_DATA: bool = false;

    fn record(&mut self, rec: Record<'_>, offset: u64, w: &Walker) -> Result<(), ImportError> {
        self.id_size = w.id_size;
        match rec {
            Record::String { id, bytes } => {
                if bytes == b"java/lang/ref/Reference" {
                    self.reference_names.push(id);
                } else if bytes == b"referent" {
                    self.referent_names.push(id);
                }
            }
            Record::LoadClass { class_id, name_id } => self.load_class.push((class_id, name_id)),
            Record::Root { id } => self.roots.push(id),
            Record::Class(c) => {
                self.object(c.id, offset)?;
                self.classes.push(ClassInfo {
                    id: c.id,
                    super_id: c.super_id,
                    fields: c.fields.clone(),
                    offset,
                });
            }
            Record::Instance { id, .. }
            | Record::ObjArray { id, .. }
            | Record::PrimArray { id, .. } => {
                self.object(id, offset)?;
            }
        }
        Ok(())
    }
}

/// Finds the second occurrence of a duplicate id, for the error's offset.
struct FindDuplicate {
    id: u64,
    seen: bool,
}

impl Visitor for FindDuplicate {
    const WANTS_DATA: bool = false;

    fn record(&mut self, rec: Record<'_>, offset: u64, _: &Walker) -> Result<(), ImportError> {
        let id = match rec {
            Record::Class(c) => c.id,
            Record::Instance { id, .. }
            | Record::ObjArray { id, .. }
            | Record::PrimArray { id, .. } => id,
            _ => return Ok(()),
        };
        if id == self.id {
            if self.seen {
                return Err(malformed(offset, Malformed::DuplicateId(id)));
            }
            self.seen = true;
        }
        Ok(())
    }
}

/// Calls `f(target, weak)` for every non-null reference of an object record
/// of type `ty` (from [`shape`]), in slot order. Returns `Ok(false)` for an
/// instance whose class layout is unknown (only its class reference is
/// reported).
fn for_each_ref(
    rec: &Record<'_>,
    ty: u32,
    offset: u64,
    w: &Walker,
    classes: &Classes,
    mut f: impl FnMut(u64, bool),
) -> Result<bool, ImportError> {
    let mut strong = |id: u64| {
        if id != 0 {
            f(id, false)
        }
    };
    match *rec {
        Record::Class(c) => {
            strong(c.super_id);
            c.meta_refs.iter().for_each(|&r| strong(r));
            c.value_refs.iter().for_each(|&r| strong(r));
        }
        Record::Instance { id, class_id, data } => {
            strong(class_id);
            let class = ty.checked_sub(FIRST_CLASS_TYPE);
            let Some((class, len)) = class.and_then(|i| Some((i, classes.data_len(i)?))) else {
                return Ok(false);
            };
            if len != data.len() as u64 {
                return Err(malformed(
                    offset,
                    Malformed::InstanceSize {
                        id,
                        expected: len,
                        found: data.len() as u64,
                    },
                ));
            }
            classes.for_each_ref_field(class, |off, weak| {
                // In bounds: every field lies inside the data, whose length
                // was just checked.
                let target = w.id_at(data.get(off as usize..).unwrap_or_default());
                if target != 0 {
                    f(target, weak);
                }
            });
        }
        Record::ObjArray {
            class_id, elems, ..
        } => {
            strong(class_id);
            for e in elems.chunks_exact(w.id_size as usize) {
                strong(w.id_at(e));
            }
        }
        _ => {}
    }
    Ok(true)
}

/// An object record's type (an offset from the first type id) and its
/// estimated size in bytes; `None` for records that are not objects.
fn shape(rec: &Record<'_>, w: &Walker, classes: &Classes) -> Option<(u64, u32, u64)> {
    let class_type = |class_id: u64| match classes.find(class_id) {
        Some(i) => FIRST_CLASS_TYPE + i,
        None => TYPE_UNKNOWN_CLASS,
    };
    let (id, ty, payload) = match *rec {
        Record::String { .. } | Record::LoadClass { .. } | Record::Root { .. } => return None,
        Record::Class(c) => (c.id, TYPE_CLASS, c.static_bytes),
        Record::Instance { id, class_id, data } => (id, class_type(class_id), data.len() as u64),
        Record::ObjArray {
            id,
            class_id,
            elems,
        } => (id, class_type(class_id), 4 + elems.len() as u64),
        Record::PrimArray { id, elem_type, len } => {
            // The walker only passes primitive element types (4..=11).
            let elem = u64::from(reader::basic_type_size(elem_type, w.id_size).unwrap_or(0));
            (
                id,
                TYPE_PRIM_ARRAY + u32::from(elem_type.saturating_sub(4)),
                4 + u64::from(len) * elem,
            )
        }
    };
    let size = (2 * u64::from(w.id_size) + payload).next_multiple_of(8);
    Some((id, ty, size))
}

/// Pass 2.
struct Count<'a> {
    ids: &'a mut IdMap,
    classes: &'a Classes,
    placer: Placer,
    names: &'a mut HashMap<u64, Option<String>>,
    /// The ordinal of the next object.
    next: u64,
    dropped: u64,
    undecoded: u64,
    references: u64,
}

impl Visitor for Count<'_> {
    fn record(&mut self, rec: Record<'_>, offset: u64, w: &Walker) -> Result<(), ImportError> {
        if let Record::String { id, bytes } = rec {
            if let Some(slot) = self.names.get_mut(&id) {
                *slot = Some(String::from_utf8_lossy(bytes).into_owned());
            }
            return Ok(());
        }
        let Some((id, ty, size)) = shape(&rec, w, self.classes) else {
            return Ok(());
        };
        let (ids, mut n, mut dropped) = (&*self.ids, 0u64, 0u64);
        let decoded = for_each_ref(&rec, ty, offset, w, self.classes, |t, _| match ids.get(t) {
            Some(_) => n += 1,
            None => dropped += 1,
        })?;
        self.undecoded += u64::from(!decoded);
        self.dropped += dropped;
        self.references += n;
        let n = u32::try_from(n).map_err(|_| malformed(offset, Malformed::TooMany("slots")))?;
        let payload = payload_words(size, n)
            .ok_or_else(|| malformed(offset, Malformed::TooMany("payload words")))?;
        let pos = self
            .placer
            .push(n, payload)
            .ok_or_else(|| malformed(offset, Malformed::TooMany("arena words")))?;
        // Replace the ordinal by the position; the passes must agree.
        match self.ids.get_mut(id) {
            Some(v) if *v == self.next => *v = pos.offset(),
            _ => return Err(changed(offset)),
        }
        self.next += 1;
        Ok(())
    }
}

/// Pass 3.
struct Emit<'a, S: ?Sized> {
    ids: &'a IdMap,
    classes: &'a Classes,
    sink: &'a mut S,
    type_base: u32,
    next: u64,
    slots: Vec<Slot>,
    references: u64,
    weak: u64,
}

impl<S: HeapSink + ?Sized> Visitor for Emit<'_, S> {
    fn record(&mut self, rec: Record<'_>, offset: u64, w: &Walker) -> Result<(), ImportError> {
        let Some((id, ty, size)) = shape(&rec, w, self.classes) else {
            return Ok(());
        };
        self.slots.clear();
        let (ids, slots) = (self.ids, &mut self.slots);
        for_each_ref(&rec, ty, offset, w, self.classes, |t, weak| {
            if let Some(target) = ids.get(t).and_then(Pos::from_offset) {
                slots.push(Slot::new(target, weak));
            }
        })?;
        self.references += self.slots.len() as u64;
        self.weak += self.slots.iter().filter(|s| s.is_weak()).count() as u64;
        let n = u32::try_from(self.slots.len())
            .map_err(|_| malformed(offset, Malformed::TooMany("slots")))?;
        let payload = payload_words(size, n)
            .ok_or_else(|| malformed(offset, Malformed::TooMany("payload words")))?;
        let expected = self
            .ids
            .get(id)
            .and_then(Pos::from_offset)
            .ok_or_else(|| changed(offset))?;
        let type_id = self
            .type_base
            .checked_add(ty)
            .ok_or_else(|| malformed(offset, Malformed::TooMany("types")))?;
        let pos = self
            .sink
            .object(type_id, &self.slots, payload)
            .map_err(sink_error)?;
        if pos != expected {
            return Err(misplaced(self.next, pos, expected));
        }
        self.next += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::java_name;

    #[test]
    fn binary_names_become_java_names() {
        assert_eq!(java_name("java/lang/String"), "java.lang.String");
        assert_eq!(java_name("[[I"), "int[][]");
        assert_eq!(java_name("[Ljava/lang/Object;"), "java.lang.Object[]");
        assert_eq!(java_name("Foo$Bar"), "Foo$Bar");
        assert_eq!(java_name("["), "[]");
    }
}
