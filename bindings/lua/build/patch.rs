//! The hooks inserted into a copy of Lua's `lgc.c`.
//!
//! Each patch replaces one exact snippet of Lua 5.4.9's `lgc.c`; a snippet
//! that is missing, or found more than once, fails the build with its name,
//! so that a change of Lua's sources cannot silently drop a hook.

/// One textual patch: `anchor` must occur exactly once and becomes `with`.
pub struct Patch {
    /// What the patch does, for error messages.
    pub name: &'static str,
    /// The exact text replaced.
    pub anchor: &'static str,
    /// The replacement.
    pub with: &'static str,
    /// If set, the patch replaces everything from `anchor` to the end of
    /// the first `until` after it (a whole function, without restating it).
    pub until: Option<&'static str>,
}

/// The patches, applied in order.
pub const PATCHES: &[Patch] = &[
    Patch {
        name: "the binding's hooks are declared",
        anchor: "static void entersweep (lua_State *L);
",
        with: "static void entersweep (lua_State *L);
/* stealmark (smlua_gc.c): an engine cycle's steps, barriers and end */
static lu_mem smlua_propagate (lua_State *L);
static void smlua_shade (global_State *g, GCObject *v);
static int smlua_rescan (global_State *g, GCObject *o);
static void smlua_end_cycle (global_State *g);
/* stealmark (smlua_sweep.c): the sweep of 'allgc' and its split points */
static lu_mem smlua_sweep_allgc (lua_State *L);
static void smlua_sweep_begin (global_State *g);
static void smlua_sweep_forget (GCObject *o);
static void smlua_sweep_moved (global_State *g, GCObject *o);
static void smlua_sweep2old_allgc (lua_State *L);
/* stealmark: the work units the incremental step in progress still owes
   (set by incstep before each single step; 0 outside one) */
static l_mem smlua_step_owed = 0;
",
        until: None,
    },
    Patch {
        name: "incstep tells each single step what the step still owes",
        anchor: "    lu_mem work = singlestep(L);  /* perform one single step */
",
        with: "    lu_mem work;
    smlua_step_owed = debt + stepsize;  /* stealmark: the engine's budget */
    work = singlestep(L);  /* perform one single step */
    smlua_step_owed = 0;
",
        until: None,
    },
    Patch {
        name: "restartcollection resets the gray lists only",
        anchor: "  cleargraylists(g);
  markobject(g, g->mainthread);
  markvalue(g, &g->l_registry);
  markmt(g);
  markbeingfnz(g);  /* mark any finalizing object left from previous cycle */
}",
        with: "  cleargraylists(g);  /* stealmark: the roots are marked in atomic() */
}",
        until: None,
    },
    Patch {
        name: "the propagate state runs the engine's steps",
        anchor: "      if (g->gray == NULL) {  /* no more gray objects? */
        g->gcstate = GCSenteratomic;  /* finish propagate phase */
        work = 0;
      }
      else
        work = propagatemark(g);  /* traverse one gray object */",
        with: "      work = smlua_propagate(L);  /* stealmark: an engine step, or none */",
        until: None,
    },
    Patch {
        name: "the forward barrier shades through the engine",
        anchor: "  if (keepinvariant(g)) {  /* must keep invariant? */
    reallymarkobject(g, v);  /* restore invariant */
    if (isold(o)) {
      lua_assert(!isold(v));  /* white object could not be old */
      setage(v, G_OLD0);  /* restore generational invariant */
    }
  }",
        with: "  if (keepinvariant(g)) {
    /* stealmark: the engine's cycle shades v (incremental mode); with no
       cycle, every collection marks the whole heap inside atomic(),
       starting from all white, so there is no invariant to restore */
    smlua_shade(g, v);
  }",
        until: None,
    },
    Patch {
        name: "the backward barrier rescans through the engine",
        anchor: "  if (getage(o) == G_TOUCHED2)  /* already in gray list? */
    set2gray(o);  /* make it gray to become touched1 */",
        with: "  if (smlua_rescan(g, o))  /* stealmark: the engine's cycle rescans o */
    return;
  if (getage(o) == G_TOUCHED2)  /* already in gray list? */
    set2gray(o);  /* make it gray to become touched1 */",
        until: None,
    },
    Patch {
        name: "the sweep ends the engine's cycle",
        anchor: "static void entersweep (lua_State *L) {
  global_State *g = G(L);
",
        with: "static void entersweep (lua_State *L) {
  global_State *g = G(L);
  smlua_end_cycle(g);  /* stealmark: a cycle not finished is abandoned */
",
        until: None,
    },
    Patch {
        name: "a sweep of 'allgc' starts recording split points",
        anchor: "  g->sweepgc = sweeptolive(L, &g->allgc);
}",
        with: "  g->sweepgc = sweeptolive(L, &g->allgc);
  smlua_sweep_begin(g);  /* stealmark: split points for the next sweep */
}",
        until: None,
    },
    Patch {
        name: "the state GCSswpallgc sweeps through the binding",
        anchor: "      work = sweepstep(L, g, GCSswpfinobj, &g->finobj);",
        with: "      work = smlua_sweep_allgc(L);  /* stealmark: maybe in parallel */",
        until: None,
    },
    Patch {
        name: "the generational sweep of 'allgc' goes through the binding",
        anchor: "  sweep2old(L, &g->allgc);
",
        with: "  smlua_sweep2old_allgc(L);  /* stealmark: maybe in parallel */
",
        until: None,
    },
    Patch {
        name: "freeing a split point drops the split points",
        anchor: "static void freeobj (lua_State *L, GCObject *o) {
",
        with: "static void freeobj (lua_State *L, GCObject *o) {
  smlua_sweep_forget(o);  /* stealmark: a split point may go */
",
        until: None,
    },
    Patch {
        name: "moving an object to 'finobj' drops the split points",
        anchor: "    *p = o->next;  /* remove 'o' from 'allgc' list */
",
        with: "    *p = o->next;  /* remove 'o' from 'allgc' list */
    smlua_sweep_moved(g, o);  /* stealmark: it may be a split point */
",
        until: None,
    },
    Patch {
        name: "fixing an object drops the split points",
        anchor: "  g->allgc = o->next;  /* remove object from 'allgc' list */
",
        with: "  g->allgc = o->next;  /* remove object from 'allgc' list */
  smlua_sweep_moved(g, o);  /* stealmark: it may be a split point */
",
        until: None,
    },
    Patch {
        name: "closing the state ends the engine's cycle",
        anchor: "void luaC_freeallobjects (lua_State *L) {
  global_State *g = G(L);
",
        with: "void luaC_freeallobjects (lua_State *L) {
  global_State *g = G(L);
  smlua_end_cycle(g);  /* stealmark: before any object is freed */
",
        until: None,
    },
    Patch {
        name: "a generational step does a full collection, paced as one",
        anchor: "      youngcollection(L, g);
      setminordebt(g);",
        with: "      fullgen(L, g);  /* stealmark: no young collections */
      setpause(g);  /* a full collection's pause, not a young one's debt */",
        until: None,
    },
    Patch {
        name: "atomic() marks through stealmark",
        anchor: "static lu_mem atomic (lua_State *L) {
",
        until: Some(
            "  return work;  /* estimate of slots marked by 'atomic' */
}
",
        ),
        with: "static lu_mem smlua_atomic (lua_State *L);

/* stealmark: the whole mark phase, run by the engine (smlua_gc.c) */
static lu_mem atomic (lua_State *L) {
  return smlua_atomic(L);
}
",
    },
];

/// The patches of both interpreters: Lua's `luaC_step` and `luaC_fullgc`
/// are renamed, and `smlua_time.c` defines them, timing each pause.
pub const TIMING: &[Patch] = &[
    Patch {
        name: "luaC_step is timed",
        anchor: "void luaC_step (lua_State *L) {",
        with: "static void smlua_untimed_step (lua_State *L) {",
        until: None,
    },
    Patch {
        name: "luaC_fullgc is timed",
        anchor: "void luaC_fullgc (lua_State *L, int isemergency) {",
        with: "static void smlua_untimed_fullgc (lua_State *L, int isemergency) {",
        until: None,
    },
];

/// The stock interpreter's patch beside [`TIMING`]: `atomic()` is renamed,
/// and `smlua_time.c` defines it, timing stock Lua's mark.
pub const STOCK_TIMING: &[Patch] = &[Patch {
    name: "the stock atomic() is timed",
    anchor: "static lu_mem atomic (lua_State *L) {\n",
    with: "static lu_mem smlua_stock_atomic (lua_State *L) {\n",
    until: None,
}];

/// The lines appended to the stock interpreter's `lgc.c`: the timing.
pub const STOCK_APPENDIX: &str = "\n#include \"smlua_time.c\"\n";

/// The lines appended to `stealmark-lua`'s `lgc.c`: the timing and the
/// binding's collector code (`smlua_gc.c`), included there so that it can
/// use `lgc.c`'s own static helpers (`clearkey`, `cleargraylists`,
/// `findlast`).
pub const APPENDIX: &str =
    "\n#include \"smlua_time.c\"\n#include \"smlua_gc.c\"\n#include \"smlua_sweep.c\"\n";

/// Applies [`TIMING`] and [`PATCHES`] to `source` and appends
/// [`APPENDIX`]: `stealmark-lua`'s `lgc.c`.
pub fn patch_lgc(source: &str) -> Result<String, String> {
    let text = apply(source, TIMING)?;
    let mut text = apply(&text, PATCHES)?;
    text.push_str(APPENDIX);
    Ok(text)
}

/// Applies [`TIMING`] and [`STOCK_TIMING`] to `source` and appends
/// [`STOCK_APPENDIX`]: the stock interpreter's `lgc.c`, whose collector
/// is Lua's own.
pub fn patch_stock_lgc(source: &str) -> Result<String, String> {
    let text = apply(source, TIMING)?;
    let mut text = apply(&text, STOCK_TIMING)?;
    text.push_str(STOCK_APPENDIX);
    Ok(text)
}

/// Applies `patches` to `source`, in order.
fn apply(source: &str, patches: &[Patch]) -> Result<String, String> {
    let mut text = source.to_string();
    for patch in patches {
        let found = text.matches(patch.anchor).count();
        if found != 1 {
            return Err(format!(
                "lgc.c: the anchor of the patch \"{}\" occurs {found} times (expected once)",
                patch.name
            ));
        }
        let start = text.find(patch.anchor).unwrap_or_default();
        let end = match patch.until {
            None => start + patch.anchor.len(),
            Some(until) => text[start..]
                .find(until)
                .map(|at| start + at + until.len())
                .ok_or_else(|| {
                    format!(
                        "lgc.c: the end anchor of the patch \"{}\" is missing",
                        patch.name
                    )
                })?,
        };
        text.replace_range(start..end, patch.with);
    }
    Ok(text)
}
