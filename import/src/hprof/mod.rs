//! The Java HPROF importer (`JAVA PROFILE 1.0.1` and `1.0.2`).
//!
//! Three streaming passes over the dump, none of which holds more than one
//! record at a time:
//!
//! 1. **scan**: object ids (as `(id, ordinal)` pairs), class layouts, roots,
//!    and the string ids of `referent` and of the reference classes
//!    (`java/lang/ref/Reference`, `SoftReference`, `WeakReference`,
//!    `PhantomReference`, `FinalReference`);
//! 2. **count**: each object's slot count, which needs the full id set
//!    because references to objects missing from the dump are dropped, its
//!    runtime size and arena position; and the class names (run again for
//!    the wide layout if the compressed arena would not fit);
//! 3. **emit**: every object with its slots, in dump order, then the roots.
//!
//! Mapping (issue 6): objects are the CLASS_DUMP, INSTANCE_DUMP,
//! OBJ_ARRAY_DUMP and PRIM_ARRAY_DUMP records. Slots, in this order: a class
//! → its super, loader, signers, protection domain, then its object-typed
//! constant-pool entries and static fields; an instance → its class, then its
//! reference fields (own class first, then each superclass, as the dump lays
//! them out); an object array → its class, then its elements. Null
//! references are not slots; references to ids missing from the dump are
//! dropped and counted. Roots are the distinct objects the ROOT_* sub-records
//! name.
//!
//! Reference objects: an instance of a class whose nearest ancestor among
//! `SoftReference`, `WeakReference`, `PhantomReference`, `FinalReference`
//! and `Reference` is one of them gets the `referent` field declared by
//! `java.lang.ref.Reference` as its slot 0, null when the referent is null
//! or missing from the dump (then counted as dropped), before its class
//! and its other fields; the class's type is `soft-ref`, `weak-ref`
//! (`WeakReference`, and `Reference` itself) or `phantom-ref`
//! (`PhantomReference`, and `FinalReference`: see
//! [`RefKind::type_kind`]). A `FinalReference`'s referent is registered
//! finalizable.
//!
//! Runtime sizes are estimates of HotSpot's 64-bit layout for the arena
//! layout written (with 4-byte identifiers, a 32-bit VM's, the same for
//! both): compressed, HotSpot's default under 32 GiB (compressed oops and
//! class pointers): a 12-byte header (16 for arrays, with the length),
//! 4-byte references; wide: a header of two identifiers (plus the 4-byte
//! length for arrays) and identifier-sized references; plus the primitive
//! values the dump holds (fields, elements, static values), rounded up to
//! 8 bytes.

mod classes;
mod idmap;
mod reader;

use std::collections::HashMap;
use std::io::Read;

use super::error::{ImportError, Malformed};
use super::{misplaced, sink_error, sized, ImportOptions, ImportSummary, Placer};
use classes::{ClassInfo, Classes, RefKind};
use idmap::IdMap;
use reader::{malformed, walk, Record, Visitor, Walker};
use stealmark_heap::{ArenaFormat, ArenaLayout, HeapSink, Pos, Slot};

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

/// The reference classes, by their binary names.
const REF_CLASSES: [(&[u8], RefKind); 5] = [
    (b"java/lang/ref/Reference", RefKind::Weak),
    (b"java/lang/ref/SoftReference", RefKind::Soft),
    (b"java/lang/ref/WeakReference", RefKind::Weak),
    (b"java/lang/ref/PhantomReference", RefKind::Phantom),
    (b"java/lang/ref/FinalReference", RefKind::Final),
];

/// Imports the dump `src` into `sink`. `pass` is told when each of the three
/// passes starts (with its name), so that a caller can show progress.
pub(crate) fn import<S: HeapSink + ?Sized, Src: Reopen + ?Sized>(
    src: &Src,
    sink: &mut S,
    pass: &mut dyn FnMut(&'static str),
    options: &ImportOptions,
) -> Result<ImportSummary, ImportError> {
    let open = || {
        src.reopen()
            .map_err(|source| ImportError::Read { offset: 0, source })
    };

    let buffer = options.buffer();

    // Pass 1: scan.
    pass("scan");
    let mut scan = Scan::default();
    let input_bytes = walk(open()?, buffer, &mut scan)?;
    if scan.pairs.is_empty() {
        return Err(malformed(input_bytes, Malformed::Empty));
    }
    let ids = IdMap::new(std::mem::take(&mut scan.pairs));
    // Sorted, for binary search: a hostile dump may repeat these names.
    scan.referent_names.sort_unstable();
    scan.referent_names.dedup();
    scan.ref_names.sort_unstable();
    scan.ref_names.dedup();
    let name_kind = |name: u64| {
        scan.ref_names
            .binary_search_by_key(&name, |r| r.0)
            .ok()
            .map(|i| scan.ref_names[i].1)
    };
    let mut ref_roots: Vec<(u64, usize)> = scan
        .load_class
        .iter()
        .filter_map(|&(class, name)| name_kind(name).map(|k| (class, k)))
        .collect();
    ref_roots.sort_unstable();
    ref_roots.dedup_by_key(|r| r.0);
    let reference_classes: Vec<u64> = ref_roots.iter().filter(|r| r.1 == 0).map(|r| r.0).collect();
    let ref_roots: Vec<(u64, RefKind)> = ref_roots
        .iter()
        .map(|&(class, k)| (class, REF_CLASSES[k].1))
        .collect();
    let classes = Classes::new(
        &scan.classes,
        scan.id_size,
        &reference_classes,
        &scan.referent_names,
        &ref_roots,
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
            walk(open()?, buffer, &mut find)?;
            return Err(malformed(0, Malformed::DuplicateId(id)));
        }
    };

    // Pass 2: count slots, estimate sizes, lay the objects out (compressed
    // unless asked otherwise or too large: then again, wide), collect the
    // class names.
    pass("count");
    let mut layout = options.layout.unwrap_or(ArenaLayout::Compressed);
    let count = loop {
        let mut count = Count {
            ids: &mut ids,
            classes: &classes,
            placer: Placer::new(sink, layout),
            names: &mut names,
            layout,
            next: 0,
            dropped: 0,
            undecoded: 0,
            references: 0,
            overflow: false,
            retry: layout == ArenaLayout::Wide && options.layout.is_none(),
            targets: Vec::new(),
        };
        let walked = walk(open()?, buffer, &mut count);
        let (overflow, words) = (count.overflow, count.placer.arena_words());
        let totals = (count.next, count.dropped, count.undecoded, count.references);
        match walked {
            Ok(_) => break (totals, words),
            Err(_) if overflow && layout == ArenaLayout::Compressed => {
                if options.layout.is_some() {
                    return Err(ImportError::TooLarge { layout, words });
                }
                layout = ArenaLayout::Wide;
            }
            Err(e) => return Err(e),
        }
    };
    let ((counted, dropped, undecoded, references), arena_words) = count;
    if counted != object_count {
        return Err(changed(input_bytes));
    }
    sink.set_format(ArenaFormat::new(layout).with_runtime_sizes())
        .map_err(sink_error)?;
    sink.reserve(object_count, arena_words);
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
    for i in 0..class_ids.len() as u32 {
        if let Some(kind) = classes.ref_kind(i) {
            let type_id = type_base + FIRST_CLASS_TYPE + i;
            sink.type_kind(type_id, kind.type_kind())
                .map_err(sink_error)?;
        }
    }

    // Pass 3: emit.
    pass("emit");
    let mut emit = Emit {
        ids: &ids,
        classes: &classes,
        sink,
        type_base,
        layout,
        next: 0,
        slots: Vec::new(),
        targets: Vec::new(),
        references: 0,
        counts: [0; 4],
    };
    walk(open()?, buffer, &mut emit)?;
    let (emitted, emitted_refs, counts) = (emit.next, emit.references, emit.counts);
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
        weak_references: counts[RefKind::Weak as usize],
        ephemeron_references: 0,
        soft_references: counts[RefKind::Soft as usize],
        phantom_references: counts[RefKind::Phantom as usize] + counts[RefKind::Final as usize],
        finalizable: counts[RefKind::Final as usize],
        layout,
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
    /// String ids of the reference classes' names, with the index of the
    /// name in [`REF_CLASSES`].
    ref_names: Vec<(u64, usize)>,
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
                if let Some(k) = REF_CLASSES.iter().position(|r| r.0 == bytes) {
                    self.ref_names.push((id, k));
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

/// Collects the references of an object record of type `ty` (from
/// [`shape`]) into `out`, in slot order, nulls left out, except that an
/// instance of a reference class starts with its referent, null or not (0
/// for null). Returns the record's reference kind, and `false` for an
/// instance whose class layout is unknown (only its class reference, after a
/// null referent for a reference class, is collected).
fn slot_ids(
    rec: &Record<'_>,
    ty: u32,
    offset: u64,
    w: &Walker,
    classes: &Classes,
    out: &mut Vec<u64>,
) -> Result<(Option<RefKind>, bool), ImportError> {
    out.clear();
    let strong = |id: u64, out: &mut Vec<u64>| {
        if id != 0 {
            out.push(id);
        }
    };
    match *rec {
        Record::Class(c) => {
            strong(c.super_id, out);
            c.meta_refs.iter().for_each(|&r| strong(r, out));
            c.value_refs.iter().for_each(|&r| strong(r, out));
        }
        Record::Instance { id, class_id, data } => {
            let class = ty.checked_sub(FIRST_CLASS_TYPE);
            let kind = class.and_then(|i| classes.ref_kind(i));
            if kind.is_some() {
                out.push(0);
            }
            strong(class_id, out);
            let Some((class, len)) = class.and_then(|i| Some((i, classes.data_len(i)?))) else {
                return Ok((kind, false));
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
            let mut referent_seen = false;
            classes.for_each_ref_field(class, |off, referent| {
                // In bounds: every field lies inside the data, whose length
                // was just checked.
                let target = w.id_at(data.get(off as usize..).unwrap_or_default());
                if kind.is_some() && referent && !referent_seen {
                    referent_seen = true;
                    out[0] = target;
                } else {
                    strong(target, out);
                }
            });
            return Ok((kind, true));
        }
        Record::ObjArray {
            id,
            class_id,
            elems,
        } => {
            // Typed by its class, an array of a reference class would get
            // the class's kind, which makes slot 0 a referent.
            let class = ty.checked_sub(FIRST_CLASS_TYPE);
            if class.and_then(|i| classes.ref_kind(i)).is_some() {
                return Err(malformed(
                    offset,
                    Malformed::ReferenceClassArray { id, class_id },
                ));
            }
            strong(class_id, out);
            for e in elems.chunks_exact(w.id_size as usize) {
                strong(w.id_at(e), out);
            }
        }
        _ => {}
    }
    Ok((None, true))
}

/// An object record's id, type (an offset from the first type id) and
/// estimated runtime size in bytes in `layout`; `None` for records that are
/// not objects.
fn shape(
    rec: &Record<'_>,
    w: &Walker,
    classes: &Classes,
    layout: ArenaLayout,
) -> Option<(u64, u32, u64)> {
    let class_type = |class_id: u64| match classes.find(class_id) {
        Some(i) => FIRST_CLASS_TYPE + i,
        None => TYPE_UNKNOWN_CLASS,
    };
    let id_size = u64::from(w.id_size);
    // HotSpot with compressed oops and class pointers on a 64-bit VM; a
    // 32-bit VM (4-byte identifiers) has 4-byte references either way.
    let compressed = layout == ArenaLayout::Compressed && id_size == 8;
    let (header, array_header, reference) = if compressed {
        (12, 16, 4)
    } else {
        (2 * id_size, 2 * id_size + 4, id_size)
    };
    let (id, ty, size) = match *rec {
        Record::String { .. } | Record::LoadClass { .. } | Record::Root { .. } => return None,
        Record::Class(c) => {
            let statics = c.static_bytes - c.static_refs * (id_size - reference);
            (c.id, TYPE_CLASS, header + statics)
        }
        Record::Instance { id, class_id, data } => {
            let ty = class_type(class_id);
            let refs = ty
                .checked_sub(FIRST_CLASS_TYPE)
                .map_or(0, |i| classes.ref_fields(i));
            // Saturating: a hostile dump's layout may claim more reference
            // fields than its data holds (then the instance is rejected).
            let fields = (data.len() as u64).saturating_sub(refs * (id_size - reference));
            (id, ty, header + fields)
        }
        Record::ObjArray {
            id,
            class_id,
            elems,
        } => {
            let n = elems.len() as u64 / id_size;
            (id, class_type(class_id), array_header + n * reference)
        }
        Record::PrimArray { id, elem_type, len } => {
            // The walker only passes primitive element types (4..=11).
            let elem = u64::from(reader::basic_type_size(elem_type, w.id_size).unwrap_or(0));
            (
                id,
                TYPE_PRIM_ARRAY + u32::from(elem_type.saturating_sub(4)),
                array_header + u64::from(len) * elem,
            )
        }
    };
    Some((id, ty, size.next_multiple_of(8)))
}

/// Pass 2.
struct Count<'a> {
    ids: &'a mut IdMap,
    classes: &'a Classes,
    placer: Placer,
    names: &'a mut HashMap<u64, Option<String>>,
    layout: ArenaLayout,
    /// The ordinal of the next object.
    next: u64,
    dropped: u64,
    undecoded: u64,
    /// Non-null slots.
    references: u64,
    /// Whether the arena outgrew its layout.
    overflow: bool,
    /// Whether this is the second count (the ids hold positions of the
    /// first, not ordinals).
    retry: bool,
    targets: Vec<u64>,
}

impl Visitor for Count<'_> {
    fn record(&mut self, rec: Record<'_>, offset: u64, w: &Walker) -> Result<(), ImportError> {
        if let Record::String { id, bytes } = rec {
            if let Some(slot) = self.names.get_mut(&id) {
                *slot = Some(String::from_utf8_lossy(bytes).into_owned());
            }
            return Ok(());
        }
        let Some((id, ty, size)) = shape(&rec, w, self.classes, self.layout) else {
            return Ok(());
        };
        let (kind, decoded) = slot_ids(&rec, ty, offset, w, self.classes, &mut self.targets)?;
        self.undecoded += u64::from(!decoded);
        let ids = &*self.ids;
        let referent = usize::from(kind.is_some());
        let present = self.targets[referent..]
            .iter()
            .filter(|&&t| ids.get(t).is_some())
            .count() as u64;
        let missing = (self.targets.len() - referent) as u64 - present;
        let referent_present = referent == 1 && ids.get(self.targets[0]).is_some();
        let referent_dropped = referent == 1 && self.targets[0] != 0 && !referent_present;
        self.dropped += missing + u64::from(referent_dropped);
        self.references += present + u64::from(referent_present);
        let n = u32::try_from(present + referent as u64)
            .map_err(|_| malformed(offset, Malformed::TooMany("slots")))?;
        let header = sized(0, n, size, self.layout);
        let Some(pos) = self.placer.push(header) else {
            self.overflow = true;
            return Err(malformed(offset, Malformed::TooMany("arena words")));
        };
        // Replace the ordinal by the position; the passes must agree.
        match self.ids.get_mut(id) {
            Some(v) if self.retry || *v == self.next => *v = pos.offset(),
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
    layout: ArenaLayout,
    next: u64,
    slots: Vec<Slot>,
    targets: Vec<u64>,
    /// Non-null slots.
    references: u64,
    /// Non-null referents by [`RefKind`].
    counts: [u64; 4],
}

impl<S: HeapSink + ?Sized> Visitor for Emit<'_, S> {
    fn record(&mut self, rec: Record<'_>, offset: u64, w: &Walker) -> Result<(), ImportError> {
        let Some((id, ty, size)) = shape(&rec, w, self.classes, self.layout) else {
            return Ok(());
        };
        let (kind, _) = slot_ids(&rec, ty, offset, w, self.classes, &mut self.targets)?;
        self.slots.clear();
        let ids = self.ids;
        let position = |t: u64| ids.get(t).and_then(Pos::from_offset);
        let mut rest = self.targets.as_slice();
        if let Some(kind) = kind {
            let referent = position(rest[0]);
            self.slots.push(referent.map_or(Slot::NULL, Slot::strong));
            if let Some(p) = referent {
                self.counts[kind as usize] += 1;
                if kind == RefKind::Final {
                    self.sink.finalizable(p).map_err(sink_error)?;
                }
            }
            rest = &rest[1..];
        }
        self.slots
            .extend(rest.iter().filter_map(|&t| position(t)).map(Slot::strong));
        self.references += self.slots.iter().filter(|s| !s.is_null()).count() as u64;
        let n = u32::try_from(self.slots.len())
            .map_err(|_| malformed(offset, Malformed::TooMany("slots")))?;
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
            .begin_object(sized(type_id, n, size, self.layout))
            .map_err(sink_error)?;
        self.sink.slots(&self.slots).map_err(sink_error)?;
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
