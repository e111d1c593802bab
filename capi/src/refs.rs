//! [`CRefs`]: an `sm_refs` (roots, finalizable objects) as the engine's
//! [`RootSource`], every reference checked.

use std::any::Any;
use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use stealmark_marker::model::ROOT_CHUNK;
use stealmark_marker::{ObjRef, RootSource};

use crate::bounds::Bounds;
use crate::contract::{violated, Violation};
use crate::status::{Error, SM_ERR_CONTRACT};
use crate::types::{sm_refs, VisitFn};

/// References per `scan_chunk` call (2 KiB on the worker's stack).
const REF_BATCH: usize = 256;

/// How the source hands out its chunks.
enum Form {
    /// `refs[0..len)`, in chunks of [`ROOT_CHUNK`].
    Array(*const usize, usize),
    /// `visit_chunk(ctx, chunk, visit, vctx)`.
    Visit(unsafe extern "C" fn(*mut c_void, usize, VisitFn, *mut c_void)),
    /// `scan_chunk(ctx, chunk, from, out, cap)`.
    Scan(unsafe extern "C" fn(*mut c_void, usize, usize, *mut usize, usize) -> usize),
}

/// A checked `sm_refs`: `what` names it in error messages.
pub(crate) struct CRefs {
    what: &'static str,
    form: Form,
    ctx: *mut c_void,
    chunks: usize,
    bounds: Bounds,
}

// SAFETY: the header requires the callbacks to be callable from any GC
// worker thread, several at once; the array is only read, and the runtime
// keeps it alive and unchanged for the collection.
unsafe impl Sync for CRefs {}

impl CRefs {
    /// The empty source.
    pub(crate) fn empty(what: &'static str) -> CRefs {
        CRefs {
            what,
            form: Form::Array(std::ptr::null(), 0),
            ctx: std::ptr::null_mut(),
            chunks: 0,
            bounds: Bounds::of_none(),
        }
    }

    /// Checks `refs` (see the header's `sm_refs` for the three forms) and
    /// reads its chunk count.
    pub(crate) fn new(refs: &sm_refs, what: &'static str, bounds: Bounds) -> Result<CRefs, Error> {
        let form = if !refs.refs.is_null() {
            Form::Array(refs.refs, refs.len)
        } else if refs.len > 0 {
            return Err(Error::null(&format!(
                "{what}.refs (with {what}.len = {})",
                refs.len
            )));
        } else if let Some(f) = refs.visit_chunk {
            Form::Visit(f)
        } else if let Some(f) = refs.scan_chunk {
            Form::Scan(f)
        } else {
            return Ok(CRefs::empty(what));
        };
        let chunks = match form {
            Form::Array(_, len) => len.div_ceil(ROOT_CHUNK),
            _ => match refs.chunk_count {
                // SAFETY: a present callback of the runtime, called on the
                // thread that called the collection.
                Some(f) => unsafe { f(refs.ctx) },
                None => return Err(Error::null(&format!("{what}.chunk_count"))),
            },
        };
        Ok(CRefs {
            what,
            form,
            ctx: refs.ctx,
            chunks,
            bounds,
        })
    }
}

impl CRefs {
    /// Every reference of the source, read and checked on the calling
    /// thread: a broken contract is an `SM_ERR_CONTRACT` error (any other
    /// panic unwinds on).
    pub(crate) fn collect(&self) -> Result<Vec<ObjRef>, Error> {
        let mut refs = Vec::new();
        let read = catch_unwind(AssertUnwindSafe(|| {
            for chunk in 0..self.chunks {
                self.scan_chunk(chunk, |r| refs.push(r));
            }
        }));
        match read {
            Ok(()) => Ok(refs),
            Err(payload) => match payload.downcast::<Violation>() {
                Ok(v) => Err(Error::new(SM_ERR_CONTRACT, v.0)),
                Err(payload) => resume_unwind(payload),
            },
        }
    }
}

/// What `visit_chunk`'s visitor works on: the engine's visitor, and the
/// first failure (the visitor returns into C, so it must not unwind).
struct Visiting<'v> {
    visit: &'v mut dyn FnMut(ObjRef),
    check: &'v dyn Fn(usize) -> ObjRef,
    failure: Option<Box<dyn Any + Send>>,
}

/// The visitor handed to `visit_chunk`: checks and visits one reference;
/// after a failure, ignores the rest of the chunk.
unsafe extern "C" fn visit_one(vctx: *mut c_void, word: usize) {
    // SAFETY: `vctx` is the `Visiting` that `scan_chunk` below passed with
    // this function, alive and not otherwise borrowed during the call.
    let v = unsafe { &mut *vctx.cast::<Visiting<'_>>() };
    if v.failure.is_some() {
        return;
    }
    // A panic here (a broken contract, in this reference or in a callback
    // the engine calls while marking it) must not unwind into C: it is kept
    // and re-raised once `visit_chunk` has returned.
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| (v.visit)((v.check)(word)))) {
        v.failure = Some(payload);
    }
}

impl RootSource for CRefs {
    fn chunk_count(&self) -> usize {
        self.chunks
    }

    fn scan_chunk<V: FnMut(ObjRef)>(&self, chunk: usize, mut visit: V) {
        let what = self.what;
        let check = |word: usize| match self.bounds.get(word) {
            Some(r) => r,
            None => violated(self.bounds.why(word, format!("{what} chunk {chunk}"))),
        };
        match self.form {
            Form::Array(refs, len) => {
                let lo = chunk * ROOT_CHUNK;
                let hi = (lo + ROOT_CHUNK).min(len);
                // SAFETY: the runtime keeps `refs[0..len)` alive and unchanged
                // for the collection (the header's contract); `lo..hi` lies
                // within it.
                let part = unsafe { std::slice::from_raw_parts(refs.add(lo), hi - lo) };
                part.iter().for_each(|&w| visit(check(w)));
            }
            Form::Visit(f) => {
                let mut v = Visiting {
                    visit: &mut visit,
                    check: &check,
                    failure: None,
                };
                // SAFETY: a present callback, called as the header documents;
                // `v` outlives the call and `visit_one` is its visitor.
                unsafe { f(self.ctx, chunk, visit_one, (&raw mut v).cast()) };
                if let Some(payload) = v.failure {
                    resume_unwind(payload);
                }
            }
            Form::Scan(f) => {
                let mut buf = [MaybeUninit::<usize>::uninit(); REF_BATCH];
                let mut from = 0;
                loop {
                    // SAFETY: a present callback, called as the header
                    // documents; `buf` has room for `REF_BATCH` references.
                    let n = unsafe { f(self.ctx, chunk, from, buf.as_mut_ptr().cast(), REF_BATCH) };
                    if n > REF_BATCH {
                        violated(format!(
                            "{what}.scan_chunk({chunk}) returned {n}, more than the buffer's \
                             {REF_BATCH} entries"
                        ));
                    }
                    for w in &buf[..n] {
                        // SAFETY: the callback wrote the `n` references it
                        // returned (the header's contract).
                        visit(check(unsafe { w.assume_init() }));
                    }
                    if n < REF_BATCH {
                        break;
                    }
                    from += n;
                }
            }
        }
    }
}
