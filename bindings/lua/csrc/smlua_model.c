/*
 * smlua_model.c: Lua 5.4's heap as stealmark's object model.
 *
 * Included by smlua_gc.c, itself included at the end of the patched lgc.c,
 * so that it sees Lua's internal headers. Every function here only reads
 * the heap: the engine calls them from several workers at once.
 *
 * Slot numbering, per type:
 * - table: 0 the metatable; 1..asize the array part; then node j's key at
 *   1 + asize + 2j and its value at 1 + asize + 2j + 1;
 * - full userdata: 0 the metatable; 1.. the user values;
 * - Lua closure: 0 the prototype; 1.. the upvalues;
 * - C closure: 0.. the upvalue values;
 * - upvalue: 0 its value;
 * - prototype: 0 the source; then k[], the upvalue names, p[], the local
 *   variable names;
 * - thread: its stack from the bottom to top, then its open upvalues;
 * - strings: none.
 *
 * A strong slot holding a string is a leaf (SM_SLOT_STRONG_LEAF): the
 * prototype's names and source always, a value when its type tag says
 * string.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "stealmark.h"

/* A table's weakness, from its metatable's __mode. */
typedef enum smlua_weakness {
  SMLUA_STRONG,  /* no weak mode */
  SMLUA_WEAK_VALUES,  /* "v" */
  SMLUA_WEAK_KEYS,  /* "k": an ephemeron table */
  SMLUA_ALL_WEAK  /* "kv" */
} smlua_weakness;

/* The slots of one scan_slots call: the range asked for and the buffer. */
typedef struct smlua_scan {
  size_t start, end;
  sm_slot *out;
  size_t cap, n;
} smlua_scan;

/* Writes one slot at out[n] (the caller knows it fits). */
static void smlua_write(sm_slot *out, size_t n, size_t index,
                        const GCObject *target, uint32_t kind,
                        const GCObject *key) {
  out[n].index = index;
  out[n].target = (sm_ref)target;
  out[n].key = (sm_ref)key;
  out[n].kind = kind;
  out[n].reserved = 0;
}

/* Appends slot 'index' if it lies in the range asked for and 'target' is
 * not NULL. Returns 0 when the buffer is full (the caller returns then). */
static int smlua_put(smlua_scan *s, size_t index, const GCObject *target,
                     uint32_t kind, const GCObject *key) {
  if (target == NULL || index < s->start || index >= s->end)
    return 1;
  smlua_write(s->out, s->n++, index, target, kind, key);
  return s->n < s->cap;
}

#define SMLUA_PUT(s, index, target, kind, key) \
  do { \
    if (!smlua_put((s), (index), (target), (kind), (key))) return (s)->n; \
  } while (0)

static const GCObject *smlua_gcvalue(const TValue *v) {
  return iscollectable(v) ? gcvalue(v) : NULL;
}

/* The kind of a strong slot holding 'v': strings have no references, and
 * the value's type tag says so without reading the string, so they are
 * leaves, which the engine marks without queueing or scanning them (as
 * Lua's reallymarkobject blackens them at once). */
static uint32_t smlua_strong(const TValue *v) {
  return ttisstring(v) ? SM_SLOT_STRONG_LEAF : SM_SLOT_STRONG;
}

/* The kind of the key slot of hash node 'nd' of a table without weak
 * mode: an empty entry's key is there only to be cleared if it dies (its
 * value, empty, is no slot); a live entry's key is strong, a string one a
 * leaf. */
static uint32_t smlua_strong_key(const Node *nd) {
  if (isempty(gval(nd)))
    return SM_SLOT_PHANTOM;
  return novariant(keytt(nd)) == LUA_TSTRING ? SM_SLOT_STRONG_LEAF
                                             : SM_SLOT_STRONG;
}

/* The weakness of 'h', read without writing the metatable's flags cache
 * (gfasttm writes it, which races with other workers). Reading the cache
 * is safe: nothing writes it while the mutator is stopped. */
static smlua_weakness smlua_table_weakness(global_State *g, const Table *h) {
  const Table *mt = h->metatable;
  const TValue *mode;
  const char *s;
  int weakkeys, weakvalues;
  if (mt == NULL || (mt->flags & (1u << TM_MODE)))
    return SMLUA_STRONG;
  mode = luaH_getshortstr((Table *)mt, g->tmname[TM_MODE]);
  if (!ttisshrstring(mode))
    return SMLUA_STRONG;
  s = getstr(tsvalue(mode));
  weakkeys = strchr(s, 'k') != NULL;
  weakvalues = strchr(s, 'v') != NULL;
  if (weakkeys && weakvalues) return SMLUA_ALL_WEAK;
  if (weakkeys) return SMLUA_WEAK_KEYS;
  if (weakvalues) return SMLUA_WEAK_VALUES;
  return SMLUA_STRONG;
}

/* How one slot holds its target. */
typedef struct smlua_hold {
  uint32_t kind;
  const GCObject *key; /* for SM_SLOT_EPHEMERON */
} smlua_hold;

static smlua_hold smlua_held(uint32_t kind, const GCObject *key) {
  smlua_hold h;
  h.kind = kind;
  h.key = key;
  return h;
}

/*
 * The kinds of a non-empty entry's key and value ('kstr' and 'vstr': they
 * are strings, from their type tags). Lua's rules: a weak object is cleared
 * once unmarked; strings are values, never cleared for being unmarked, but
 * a string in a weak entry lives as long as the entry: it is held like an
 * ephemeron value keyed by the entry's weak object. Weak values are WEAK
 * (cleared before finalization), weak keys PHANTOM (cleared after
 * resurrection), ephemeron values EPHEMERON; strong strings are leaves.
 */
static void smlua_entry_kinds(smlua_weakness w, const GCObject *k, int kstr,
                              const GCObject *v, int vstr, smlua_hold *kh,
                              smlua_hold *vh) {
  int kobj = k != NULL && !kstr;
  int vobj = v != NULL && !vstr;
  *kh = smlua_held(kstr ? SM_SLOT_STRONG_LEAF : SM_SLOT_STRONG, NULL);
  *vh = smlua_held(vstr ? SM_SLOT_STRONG_LEAF : SM_SLOT_STRONG, NULL);
  switch (w) {
    case SMLUA_STRONG:
      break;
    case SMLUA_WEAK_VALUES:
      if (vobj) *vh = smlua_held(SM_SLOT_WEAK, NULL);
      break;
    case SMLUA_WEAK_KEYS:
      if (kobj) {
        *kh = smlua_held(SM_SLOT_PHANTOM, NULL);
        *vh = smlua_held(SM_SLOT_EPHEMERON, k);
      }
      break;
    case SMLUA_ALL_WEAK:
      if (kobj) {
        *kh = smlua_held(SM_SLOT_PHANTOM, NULL);
        *vh = vobj ? smlua_held(SM_SLOT_WEAK, NULL)
                   : smlua_held(SM_SLOT_EPHEMERON, k);
      }
      else if (vobj) {
        *vh = smlua_held(SM_SLOT_WEAK, NULL);
        if (k != NULL) *kh = smlua_held(SM_SLOT_EPHEMERON, v);
      }
      break;
  }
}

/* The size of 'h''s array part: luaH_realasize without its call in the
 * common case (the limit is the size). */
static size_t smlua_asize(const Table *h) {
  return isrealasize(h) ? (size_t)h->alimit : (size_t)luaH_realasize(h);
}

/* The key and value of hash node 'nd' of a table of weakness 'w', with
 * their kinds; NULL where not collectable. An empty entry has no value,
 * and its key is cleared (made dead) if it dies. */
static void smlua_node(smlua_weakness w, const Node *nd, const GCObject **k,
                       smlua_hold *kh, const GCObject **v, smlua_hold *vh) {
  *k = keyiscollectable(nd) ? gckey(nd) : NULL;
  if (isempty(gval(nd))) {
    *kh = smlua_held(SM_SLOT_PHANTOM, NULL);
    *v = NULL;
    *vh = smlua_held(SM_SLOT_STRONG, NULL);
    return;
  }
  *v = smlua_gcvalue(gval(nd));
  smlua_entry_kinds(w, *k, novariant(keytt(nd)) == LUA_TSTRING, *v,
                    ttisstring(gval(nd)), kh, vh);
}

/* The slots of 'h' in [s->start, s->end). The loops run over the parts of
 * the table that the range covers, so only the nodes at its ends are
 * cut by it; a table without weak mode reads its entries inline. */
static size_t smlua_scan_table(global_State *g, const Table *h,
                               smlua_scan *s) {
  smlua_weakness w = smlua_table_weakness(g, h);
  int weakarray = (w == SMLUA_WEAK_VALUES || w == SMLUA_ALL_WEAK);
  size_t asize = smlua_asize(h);
  size_t nsize = allocsizenode(h);
  size_t base = 1 + asize, i, j, last, n;
  if (s->start >= s->end)
    return 0;
  SMLUA_PUT(s, 0, obj2gco(h->metatable), SM_SLOT_STRONG, NULL);
  /* The array part: slot 1 + i, every one in the range (SMLUA_PUT without
   * its range check, on a local count: the loop the largest arrays run). */
  last = s->end - 1 < asize ? s->end - 1 : asize;
  n = s->n;
  for (i = s->start > 1 ? s->start - 1 : 0; i < last; i++) {
    const TValue *v = &h->array[i];
    if (iscollectable(v)) {
      smlua_write(s->out, n++, 1 + i, gcvalue(v),
                  (weakarray && !ttisstring(v)) ? SM_SLOT_WEAK
                                                : smlua_strong(v), NULL);
      if (n == s->cap) {
        s->n = n;
        return n;
      }
    }
  }
  s->n = n;
  if (s->end <= base)
    return s->n;
  /* The hash part: node j's key at base + 2j, its value next to it. */
  last = (s->end - base + 1) / 2 < nsize ? (s->end - base + 1) / 2 : nsize;
  for (j = s->start > base ? (s->start - base) / 2 : 0; j < last; j++) {
    const Node *nd = gnode(h, j);
    size_t at = base + 2 * j;
    if (w == SMLUA_STRONG) {
      SMLUA_PUT(s, at, keyiscollectable(nd) ? gckey(nd) : NULL,
                smlua_strong_key(nd), NULL);
      SMLUA_PUT(s, at + 1, smlua_gcvalue(gval(nd)), smlua_strong(gval(nd)),
                NULL);
    } else {
      const GCObject *k, *v;
      smlua_hold kh, vh;
      smlua_node(w, nd, &k, &kh, &v, &vh);
      SMLUA_PUT(s, at, k, kh.kind, kh.key);
      SMLUA_PUT(s, at + 1, v, vh.kind, vh.key);
    }
  }
  return s->n;
}

/* The number of open upvalues of a thread. */
static size_t smlua_open_upvalues(const lua_State *th) {
  size_t n = 0;
  const UpVal *uv;
  for (uv = th->openupval; uv != NULL; uv = uv->u.open.next)
    n++;
  return n;
}

static size_t smlua_stack_slots(const lua_State *th) {
  return th->stack.p == NULL ? 0 : (size_t)(th->top.p - th->stack.p);
}

static size_t smlua_scan_thread(const lua_State *th, smlua_scan *s) {
  size_t top = smlua_stack_slots(th), i;
  const UpVal *uv;
  if (th->stack.p == NULL)
    return 0; /* not built yet */
  for (i = s->start; i < top && i < s->end; i++)
    SMLUA_PUT(s, i, smlua_gcvalue(s2v(th->stack.p + i)),
              smlua_strong(s2v(th->stack.p + i)), NULL);
  for (i = top, uv = th->openupval; uv != NULL; uv = uv->u.open.next, i++)
    SMLUA_PUT(s, i, obj2gco(uv), SM_SLOT_STRONG, NULL);
  return s->n;
}

static size_t smlua_scan_proto(const Proto *f, smlua_scan *s) {
  size_t i = 0, at = 1;
  SMLUA_PUT(s, 0, obj2gco(f->source), SM_SLOT_STRONG_LEAF, NULL);
  for (i = 0; i < (size_t)f->sizek; i++, at++)
    SMLUA_PUT(s, at, smlua_gcvalue(&f->k[i]), smlua_strong(&f->k[i]), NULL);
  for (i = 0; i < (size_t)f->sizeupvalues; i++, at++)
    SMLUA_PUT(s, at, obj2gco(f->upvalues[i].name), SM_SLOT_STRONG_LEAF, NULL);
  for (i = 0; i < (size_t)f->sizep; i++, at++)
    SMLUA_PUT(s, at, obj2gco(f->p[i]), SM_SLOT_STRONG, NULL);
  for (i = 0; i < (size_t)f->sizelocvars; i++, at++)
    SMLUA_PUT(s, at, obj2gco(f->locvars[i].varname), SM_SLOT_STRONG_LEAF, NULL);
  return s->n;
}

/* sm_object_model.prefetch_slots: a table's array part, allocated apart
 * from its header (the header, prefetched a few objects earlier, says
 * where). */
static void smlua_prefetch_slots(void *ctx, sm_ref ref) {
  const GCObject *o = (const GCObject *)ref;
  UNUSED(ctx);
  if (o->tt == LUA_VTABLE && gco2t(o)->array != NULL)
    __builtin_prefetch(gco2t(o)->array);
}

/* The threads the engine scanned in this collection (each scan of an
 * object starts with a call for its slot 0; a thread may be noted twice,
 * when a deque delivers it twice), so that the work after marking need not
 * walk 'allgc' to find them. Past SMLUA_THREADS_NOTED threads, it does. */
#define SMLUA_THREADS_NOTED 64
static lua_State *smlua_threads[SMLUA_THREADS_NOTED];
static atomic_size_t smlua_threads_seen;

static void smlua_note_thread(const GCObject *o) {
  /* Relaxed: each worker writes its own element; the array is read after
   * sm_collect returns, which joins the workers. */
  size_t at = atomic_fetch_add_explicit(&smlua_threads_seen, 1,
                                        memory_order_relaxed);
  if (at < SMLUA_THREADS_NOTED)
    smlua_threads[at] = gco2th(o);
}

/* The slots of 'o' in [start, end) (an end past its last slot stops
 * there), as sm_object_model.scan_slots writes them; with 'note', a scan
 * of a thread from its slot 0 notes the thread. */
__attribute__((noinline))
static size_t smlua_scan_object(global_State *g, const GCObject *o,
                                size_t start, size_t end, sm_slot *out,
                                size_t cap, int note) {
  smlua_scan s;
  size_t i;
  s.start = start; s.end = end; s.out = out; s.cap = cap; s.n = 0;
  switch (o->tt) {
    case LUA_VTABLE:
      return smlua_scan_table(g, gco2t(o), &s);
    case LUA_VUSERDATA: {
      const Udata *u = gco2u(o);
      SMLUA_PUT(&s, 0, obj2gco(u->metatable), SM_SLOT_STRONG, NULL);
      for (i = 0; i < (size_t)u->nuvalue; i++)
        SMLUA_PUT(&s, 1 + i, smlua_gcvalue(&u->uv[i].uv),
                  smlua_strong(&u->uv[i].uv), NULL);
      return s.n;
    }
    case LUA_VLCL: {
      const LClosure *cl = gco2lcl(o);
      SMLUA_PUT(&s, 0, obj2gco(cl->p), SM_SLOT_STRONG, NULL);
      for (i = 0; i < (size_t)cl->nupvalues; i++)
        SMLUA_PUT(&s, 1 + i, obj2gco(cl->upvals[i]), SM_SLOT_STRONG, NULL);
      return s.n;
    }
    case LUA_VCCL: {
      const CClosure *cl = gco2ccl(o);
      for (i = 0; i < (size_t)cl->nupvalues; i++)
        SMLUA_PUT(&s, i, smlua_gcvalue(&cl->upvalue[i]),
                  smlua_strong(&cl->upvalue[i]), NULL);
      return s.n;
    }
    case LUA_VUPVAL:
      SMLUA_PUT(&s, 0, smlua_gcvalue(gco2upv(o)->v.p),
                smlua_strong(gco2upv(o)->v.p), NULL);
      return s.n;
    case LUA_VPROTO:
      return smlua_scan_proto(gco2p(o), &s);
    case LUA_VTHREAD:
      if (note && start == 0)
        smlua_note_thread(o);
      return smlua_scan_thread(gco2th(o), &s);
    case LUA_VSHRSTR: case LUA_VLNGSTR:
      return 0;
    default:
      return SM_SCAN_FAILED;
  }
}

/* The slots of 'h', a table without weak mode, all of them, as
 * smlua_scan_object writes them: the scan of nearly every table, in straight
 * loops over the table's parts with the count of slots written in a
 * register. 'asize' is the array part's size. Inlined into its callers,
 * which have read the table's sizes already. */
static inline __attribute__((always_inline)) size_t
smlua_scan_strong_whole(const Table *h, size_t asize, sm_slot *out,
                        size_t cap) {
  size_t nsize = allocsizenode(h);
  size_t n = 0, i;
  const TValue *a = h->array;
  if (h->metatable != NULL) {
    smlua_write(out, n, 0, obj2gco(h->metatable), SM_SLOT_STRONG, NULL);
    if (++n == cap)
      return n;
  }
  for (i = 0; i < asize; i++)
    if (iscollectable(&a[i])) {
      smlua_write(out, n, 1 + i, gcvalue(&a[i]), smlua_strong(&a[i]), NULL);
      if (++n == cap)
        return n;
    }
  for (i = 0; i < nsize; i++) {
    const Node *nd = gnode(h, i);
    size_t at = 1 + asize + 2 * i;
    if (keyiscollectable(nd)) {
      smlua_write(out, n, at, gckey(nd), smlua_strong_key(nd), NULL);
      if (++n == cap)
        return n;
    }
    if (iscollectable(gval(nd))) {
      smlua_write(out, n, at + 1, gcvalue(gval(nd)), smlua_strong(gval(nd)),
                  NULL);
      if (++n == cap)
        return n;
    }
  }
  return n;
}

/* The slots of 'h', a table without weak mode, in [0, end) (an end past
 * its last slot stops there), as smlua_scan_object writes them: the
 * straight scan of the whole table, unless the end is short of its last
 * slot, which only a holder's rescan or a chunk of a large array gives:
 * then the general path. */
static size_t smlua_scan_strong_table(global_State *g, const Table *h,
                                      size_t end, sm_slot *out, size_t cap) {
  size_t asize = smlua_asize(h);
  if (end < 1 + asize + 2 * (size_t)allocsizenode(h))
    return smlua_scan_object(g, obj2gco(h), 0, end, out, cap, 1);
  return smlua_scan_strong_whole(h, asize, out, cap);
}

/* Whether the scan of 'h' from slot 0 may take the straight path: its
 * metatable's cache says it has no __mode (smlua_table_weakness's first
 * test), the common case. */
static int smlua_straight(const Table *h) {
  const Table *mt = h->metatable;
  return mt == NULL || (mt->flags & (1u << TM_MODE));
}

/* sm_object_model.scan_slots: the engine's scans, which note threads. A
 * scan of a table from slot 0 takes the straight path where it may
 * (smlua_straight). */
static size_t smlua_scan_slots(void *ctx, sm_ref ref, size_t start,
                               size_t end, sm_slot *out, size_t cap) {
  global_State *g = (global_State *)ctx;
  const GCObject *o = (const GCObject *)ref;
  if (o->tt == LUA_VTABLE && start == 0 && smlua_straight(gco2t(o)))
    return smlua_scan_strong_table(g, gco2t(o), end, out, cap);
  return smlua_scan_object(g, o, start, end, out, cap, 1);
}

/* The number of reference slots of 'o'. */
static size_t smlua_count_slots(const GCObject *o) {
  switch (o->tt) {
    case LUA_VTABLE: {
      const Table *h = gco2t(o);
      return 1 + smlua_asize(h) + 2 * (size_t)allocsizenode(h);
    }
    case LUA_VUSERDATA: return 1 + (size_t)gco2u(o)->nuvalue;
    case LUA_VLCL: return 1 + (size_t)gco2lcl(o)->nupvalues;
    case LUA_VCCL: return (size_t)gco2ccl(o)->nupvalues;
    case LUA_VUPVAL: return 1;
    case LUA_VPROTO: {
      const Proto *f = gco2p(o);
      return 1 + (size_t)f->sizek + (size_t)f->sizeupvalues +
             (size_t)f->sizep + (size_t)f->sizelocvars;
    }
    case LUA_VTHREAD: {
      const lua_State *th = gco2th(o);
      return smlua_stack_slots(th) + smlua_open_upvalues(th);
    }
    default: return 0;
  }
}

/* Lua's work units of the marking: the slots of the ranges the engine
 * scanned, nil ones included, as stock Lua's propagatemark counts a gray
 * object's traversal (a table: 1 + its array size + twice its node count,
 * its slot count here; strings, never scanned, count nothing). They pace
 * the incremental steps and size atomic()'s work as Lua's own marking
 * would. Only an incremental cycle counts them (its scans go through
 * smlua_scan_counted): a stop-the-world mark's scans stay as lean as they
 * can be. Each scanning thread adds to a counter of its own, on a cache line
 * of its own (a 65th thread shares the first: the count is an estimate for
 * pacing, and an add lost there only makes Lua ask for a little more
 * work); the collecting thread sums them after the engine returned, when
 * its workers no longer scan. */
#define SMLUA_WORK_COUNTERS 64
/* Padded to a cache line: counters 64 bytes apart never share one. */
typedef struct smlua_work_counter {
  atomic_size_t units;
  char pad[64 - sizeof(atomic_size_t)];
} smlua_work_counter;
static smlua_work_counter smlua_work[SMLUA_WORK_COUNTERS];
static atomic_size_t smlua_work_threads;
/* Thread-local storage in C11, and in C++ (the ThreadSanitizer build
 * compiles Lua as C++). */
#ifdef __cplusplus
#define SMLUA_THREAD_LOCAL thread_local
#else
#define SMLUA_THREAD_LOCAL _Thread_local
#endif
static SMLUA_THREAD_LOCAL smlua_work_counter *smlua_my_work = NULL;

static inline void smlua_work_add(size_t units) {
  smlua_work_counter *c = smlua_my_work;
  if (c == NULL) {
    /* Relaxed: it only hands out distinct indices; smlua_work_done reads
     * it after the engine's return, as it reads the counters. */
    size_t i = atomic_fetch_add_explicit(&smlua_work_threads, 1,
                                         memory_order_relaxed);
    c = smlua_my_work = &smlua_work[i % SMLUA_WORK_COUNTERS];
  }
  /* Relaxed, and a load and a store rather than an atomic add: the thread
   * is the counter's only writer, and the reader runs after the engine's
   * return has ordered the writes before it. */
  atomic_store_explicit(&c->units,
                        atomic_load_explicit(&c->units, memory_order_relaxed)
                            + units,
                        memory_order_relaxed);
}

/* The work units counted so far, by every thread. */
static size_t smlua_work_done(void) {
  size_t n = atomic_load_explicit(&smlua_work_threads, memory_order_relaxed);
  size_t sum = 0, i;
  for (i = 0; i < n && i < SMLUA_WORK_COUNTERS; i++)
    sum += atomic_load_explicit(&smlua_work[i].units, memory_order_relaxed);
  return sum;
}

/* sm_object_model.scan_slots in an incremental cycle: the scan, and its
 * work units: the range asked for, up to the object's last slot, or, when
 * the buffer filled, the part of it up to the last slot written (the
 * engine asks for the rest next). A table's slot count comes from the
 * sizes its scan reads, and a whole table without weak mode takes the
 * straight path, so that the scan of nearly every table reads its header
 * once. */
static size_t smlua_scan_counted(void *ctx, sm_ref ref, size_t start,
                                 size_t end, sm_slot *out, size_t cap) {
  global_State *g = (global_State *)ctx;
  const GCObject *o = (const GCObject *)ref;
  size_t n, count;
  if (o->tt == LUA_VTABLE) {
    const Table *h = gco2t(o);
    size_t asize = smlua_asize(h);
    count = 1 + asize + 2 * (size_t)allocsizenode(h);
    if (start == 0 && end >= count && smlua_straight(h))
      n = smlua_scan_strong_whole(h, asize, out, cap);
    else
      n = smlua_scan_object(g, o, start, end, out, cap, 1);
  } else {
    n = smlua_scan_object(g, o, start, end, out, cap, 1);
    count = n < cap ? smlua_count_slots(o) : 0;
  }
  if (n < cap) {
    if (end > count)
      end = count;
    if (end > start)
      smlua_work_add(end - start);
  }
  else if (n == cap && n > 0)
    smlua_work_add(out[n - 1].index + 1 - start);
  return n;
}

/* sm_object_model.slot_count */
static size_t smlua_slot_count(void *ctx, sm_ref ref) {
  UNUSED(ctx);
  return smlua_count_slots((const GCObject *)ref);
}

/* sm_object_model.size_bytes: the object's main allocation. */
static size_t smlua_size_bytes(void *ctx, sm_ref ref) {
  const GCObject *o = (const GCObject *)ref;
  UNUSED(ctx);
  switch (o->tt) {
    case LUA_VTABLE: {
      const Table *h = gco2t(o);
      return sizeof(Table) + sizeof(TValue) * luaH_realasize(h) +
             sizeof(Node) * (size_t)allocsizenode(h);
    }
    case LUA_VSHRSTR: return sizelstring(gco2ts(o)->shrlen);
    case LUA_VLNGSTR: return sizelstring(gco2ts(o)->u.lnglen);
    case LUA_VUSERDATA: {
      const Udata *u = gco2u(o);
      return sizeudata(u->nuvalue, u->len);
    }
    case LUA_VLCL: return sizeLclosure(gco2lcl(o)->nupvalues);
    case LUA_VCCL: return sizeCclosure(gco2ccl(o)->nupvalues);
    case LUA_VUPVAL: return sizeof(UpVal);
    case LUA_VPROTO: return sizeof(Proto);
    case LUA_VTHREAD:
      return sizeof(lua_State) + sizeof(StackValue) * (size_t)stacksize(gco2th(o));
    default: return 0;
  }
}
