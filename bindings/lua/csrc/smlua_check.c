/*
 * smlua_check.c: the cross-check (STEALMARK_LUA_CHECK=1). Before marking,
 * every object on Lua's lists must read unmarked; after it, the marked
 * objects on the lists must be as many as the engine marked, the engine
 * must have scanned every one of them but the strings, which it marks as
 * leaves without a scan, and no other object; every strong slot of a
 * marked object must point to a marked object, as must every ephemeron
 * value whose key is marked, and every root and every registered
 * finalizable object must be marked; the straight scan of a table without
 * weak mode must write what the general scan writes. Included by
 * smlua_gc.c.
 */
#include <stdatomic.h>

static int smlua_check_flag = -1;

/* The objects the engine scanned, as a set: open addressing over atomic
 * words, sized before marking from the number of objects on Lua's lists. */
static _Atomic(uintptr_t) *smlua_check_set = NULL;
static size_t smlua_check_mask = 0;
static atomic_size_t smlua_check_distinct;

static int smlua_check_on(void) {
  if (smlua_check_flag < 0)
    smlua_check_flag = smlua_env_flag("STEALMARK_LUA_CHECK");
  return smlua_check_flag;
}

static void smlua_check_fail(const char *what, const GCObject *o);

/* Adds 'ref' to the set; returns 1 if it was not there. */
static int smlua_check_insert(uintptr_t ref) {
  size_t i = (size_t)(ref >> 4) * 0x9E3779B97F4A7C15u, probes;
  for (probes = 0;; i++, probes++) {
    if (probes > smlua_check_mask)
      smlua_check_fail("the cross-check's set is full", (const GCObject *)ref);
    uintptr_t seen = 0;
    _Atomic(uintptr_t) *slot = &smlua_check_set[i & smlua_check_mask];
    /* Relaxed: the set is read only after sm_collect returns, which joins
     * the workers; the compare-exchange alone decides who inserts. */
    if (atomic_compare_exchange_strong_explicit(slot, &seen, ref,
                                                memory_order_relaxed,
                                                memory_order_relaxed))
      return 1;
    if (seen == ref)
      return 0;
  }
}

static int smlua_check_contains(uintptr_t ref) {
  size_t i = (size_t)(ref >> 4) * 0x9E3779B97F4A7C15u, probes;
  for (probes = 0; probes <= smlua_check_mask; i++, probes++) {
    uintptr_t seen = atomic_load_explicit(
        &smlua_check_set[i & smlua_check_mask], memory_order_relaxed);
    if (seen == ref) return 1;
    if (seen == 0) return 0;
  }
  return 0;
}

/* Notes 'ref' as scanned at the first call of its scan (every scan of an
 * object starts at its slot 0). */
static void smlua_check_scanned(sm_ref ref, size_t start) {
  if (start == 0 && smlua_check_insert(ref))
    /* Relaxed: a count read after sm_collect joins the workers. */
    atomic_fetch_add_explicit(&smlua_check_distinct, 1, memory_order_relaxed);
}

/* The scans, noting each object the engine scans. */
static size_t smlua_check_scan_slots(void *ctx, sm_ref ref, size_t start,
                                     size_t end, sm_slot *out, size_t cap) {
  smlua_check_scanned(ref, start);
  return smlua_scan_slots(ctx, ref, start, end, out, cap);
}

/* The same in an incremental cycle. */
static size_t smlua_check_scan_counted(void *ctx, sm_ref ref, size_t start,
                                       size_t end, sm_slot *out, size_t cap) {
  smlua_check_scanned(ref, start);
  return smlua_scan_counted(ctx, ref, start, end, out, cap);
}

static void smlua_check_fail(const char *what, const GCObject *o) {
  fprintf(stderr, "stealmark-lua cross-check: %s (object %p, type %d, "
                  "marked 0x%02x)\n", what, (const void *)o,
          o ? (int)o->tt : -1, o ? (unsigned)o->marked : 0u);
  abort();
}

static void smlua_check_before(global_State *g) {
  GCObject *lists[3];
  int i;
  size_t objects = 0, size = 64;
  const GCObject *o;
  lists[0] = g->allgc; lists[1] = g->finobj; lists[2] = g->tobefnz;
  for (i = 0; i < 3; i++)
    for (o = lists[i]; o != NULL; o = o->next) {
      if (!iswhite(o))
        smlua_check_fail("an object reads marked before marking", o);
      objects++;
    }
  /* Room for what a cycle allocates meanwhile too (a set that fills up
   * fails the check). */
  while (size < 8 * objects + 65536)
    size *= 2;
  free((void *)smlua_check_set);
  smlua_check_set = (_Atomic(uintptr_t) *)calloc(size, sizeof(*smlua_check_set));
  if (smlua_check_set == NULL)
    smlua_check_fail("no memory for the cross-check's set", NULL);
  smlua_check_mask = size - 1;
  atomic_store_explicit(&smlua_check_distinct, 0, memory_order_relaxed);
}

static int smlua_check_marked(const GCObject *o) {
  return !iswhite(o);
}

/* Every strong slot, and every ephemeron slot with a marked key, of the
 * marked object 'o' points to a marked object. */
static void smlua_check_slots(global_State *g, const GCObject *o) {
  sm_slot buf[64];
  size_t count = smlua_count_slots(o), from = 0, n, i;
  while (from < count) {
    n = smlua_scan_object(g, o, from, count, buf, 64, 0);
    if (n == SM_SCAN_FAILED)
      smlua_check_fail("an object cannot be scanned", o);
    for (i = 0; i < n; i++) {
      const GCObject *t = (const GCObject *)buf[i].target;
      int must = buf[i].kind == SM_SLOT_STRONG ||
                 (buf[i].kind == SM_SLOT_EPHEMERON &&
                  smlua_check_marked((const GCObject *)buf[i].key));
      if (must && !smlua_check_marked(t))
        smlua_check_fail("a marked object points to an unmarked one", o);
    }
    if (n < 64)
      break;
    from = buf[n - 1].index + 1;
  }
}

/* A table without weak mode: the straight path of its scan writes what
 * the general one writes. */
static void smlua_check_strong_table(global_State *g, const GCObject *o) {
  size_t cap, fast, general;
  sm_slot *a, *b;
  if (o->tt != LUA_VTABLE || smlua_table_weakness(g, gco2t(o)) != SMLUA_STRONG)
    return;
  cap = smlua_count_slots(o) + 1;
  a = (sm_slot *)malloc(2 * cap * sizeof(sm_slot));
  if (a == NULL)
    smlua_check_fail("no memory for the cross-check's scans", o);
  b = a + cap;
  fast = smlua_scan_strong_table(g, gco2t(o), SM_SLOTS_ALL, a, cap);
  general = smlua_scan_object(g, o, 0, SM_SLOTS_ALL, b, cap, 0);
  if (fast != general || memcmp(a, b, fast * sizeof(sm_slot)) != 0)
    smlua_check_fail("a table's two scans differ", o);
  free(a);
}

/* Whether the thread 'th' is among the noted ones (or too many were). */
static int smlua_check_noted(lua_State *th) {
  size_t seen = atomic_load_explicit(&smlua_threads_seen,
                                     memory_order_relaxed), i;
  if (seen > SMLUA_THREADS_NOTED)
    return 1;
  for (i = 0; i < seen; i++)
    if (smlua_threads[i] == th)
      return 1;
  return 0;
}

static void smlua_check_after(global_State *g, lua_State *L,
                              const sm_stats *stats) {
  GCObject *lists[3];
  uint64_t marked = 0;
  size_t counted = atomic_load_explicit(&smlua_check_distinct,
                                        memory_order_relaxed), scanned = 0;
  int i;
  const GCObject *o;
  lists[0] = g->allgc; lists[1] = g->finobj; lists[2] = g->tobefnz;
  for (i = 0; i < 3; i++)
    for (o = lists[i]; o != NULL; o = o->next)
      if (smlua_check_marked(o)) {
        marked++;
        /* A string is marked as a leaf and never scanned. */
        if (smlua_check_contains((uintptr_t)o))
          scanned++;
        else if (novariant(o->tt) != LUA_TSTRING)
          smlua_check_fail("a marked object was not scanned", o);
        smlua_check_slots(g, o);
        smlua_check_strong_table(g, o);
        if (o->tt == LUA_VTHREAD && !smlua_check_noted(gco2th(o)))
          smlua_check_fail("a marked thread was not noted", o);
      }
  for (o = g->finobj; o != NULL; o = o->next)
    if (!smlua_check_marked(o))
      smlua_check_fail("a registered finalizable object is unmarked", o);
  if (!smlua_check_marked(obj2gco(L)) ||
      !smlua_check_marked(obj2gco(g->mainthread)) ||
      (iscollectable(&g->l_registry) &&
       !smlua_check_marked(gcvalue(&g->l_registry))))
    smlua_check_fail("a root is unmarked", obj2gco(L));
  /* Every object scanned is a marked one on the lists: 'scanned' counts
   * those found among the 'counted' distinct ones. */
  if (marked != stats->live_objects || scanned != counted) {
    fprintf(stderr, "stealmark-lua cross-check: %llu objects marked on Lua's "
                    "lists, the engine marked %llu; %zu objects scanned, "
                    "%zu of them marked on the lists\n",
            (unsigned long long)marked,
            (unsigned long long)stats->live_objects, counted, scanned);
    abort();
  }
  free((void *)smlua_check_set);
  smlua_check_set = NULL;
}
