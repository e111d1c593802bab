/*
 * smlua_gc.c: Lua 5.4's mark phase run by stealmark.
 *
 * Included at the end of the patched lgc.c, after smlua_time.c (it uses
 * lgc.c's static helpers: clearkey, cleargraylists, findlast). atomic() calls
 * smlua_atomic(), which hands the whole mark phase to the engine through
 * its C interface (stealmark.h), stop-the-world, then does in Lua's order
 * what must stay single-threaded: clearing weak entries and dead keys,
 * moving the objects to finalize from 'finobj' to 'tobefnz', clearing and
 * shrinking thread stacks, and unlinking dead threads from 'twups'.
 *
 * Environment:
 *   STEALMARK_LUA_WORKERS  GC workers (default: the machine's cores)
 *   STEALMARK_LUA_SOLO_BELOW  a collection after one that marked fewer
 *                          objects runs on the calling thread alone
 *                          (default 16384; 0: never)
 *   STEALMARK_LUA_STATS=1  one line per collection on stderr
 *   STEALMARK_LUA_CHECK=1  after every marking, walk Lua's object lists and
 *                          check the marks (smlua_check.c)
 */
#include <stdio.h>
#include <stdlib.h>

#include "smlua_model.c"

/* Bit of 'marked' that flags an object the engine reported to finalize,
 * between the report and its move to 'tobefnz' (Lua uses it only in its
 * test build, ltests.c, which this interpreter does not include). */
#define SMLUA_TOFINALIZE_BIT TESTBIT

/* The process's engine, made on the first collection. */
static sm_marker *smlua_marker = NULL;
static unsigned long smlua_collections = 0;

/* Stops the process: the collector cannot go on (Lua has no way to report
 * a failed mark phase, and sweeping after one would free live objects). */
static void smlua_fatal(const char *what, sm_status status) {
  fprintf(stderr, "stealmark-lua: %s failed: %s: %s\n", what,
          sm_status_name(status), sm_last_error());
  fflush(stderr);
  abort();
}

static sm_marker *smlua_get_marker(void) {
  if (smlua_marker == NULL) {
    sm_config config;
    sm_status st;
    const char *workers = getenv("STEALMARK_LUA_WORKERS");
    const char *solo = getenv("STEALMARK_LUA_SOLO_BELOW");
    sm_config_init(&config);
    config.count_live = 0;
    if (workers != NULL && workers[0] != '\0') {
      char *end;
      unsigned long n = strtoul(workers, &end, 10);
      if (*end != '\0' || n == 0 || n > 1024) {
        fprintf(stderr, "stealmark-lua: STEALMARK_LUA_WORKERS='%s' is not a "
                        "worker count in 1..1024\n", workers);
        exit(EXIT_FAILURE);
      }
      config.workers = (uint32_t)n;
    }
    if (solo != NULL && solo[0] != '\0') {
      char *end;
      unsigned long long n = strtoull(solo, &end, 10);
      if (*end != '\0') {
        fprintf(stderr, "stealmark-lua: STEALMARK_LUA_SOLO_BELOW='%s' is not "
                        "an object count\n", solo);
        exit(EXIT_FAILURE);
      }
      config.solo_below = (uint64_t)n;
    }
    st = sm_marker_new(&config, &smlua_marker);
    if (st != SM_OK)
      smlua_fatal("creating the marker", st);
  }
  return smlua_marker;
}

/* The roots and the running thread, for the roots callback. */
typedef struct smlua_roots {
  global_State *g;
  lua_State *L;
} smlua_roots;

static size_t smlua_one_chunk(void *ctx) {
  UNUSED(ctx);
  return 1;
}

/* The finalizable set is one chunk, or none when 'finobj' is empty: the
 * engine then skips its finalization step. */
static size_t smlua_finobj_chunks(void *ctx) {
  return ((global_State *)ctx)->finobj != NULL;
}

/* The roots: the running and main threads, the registry, the basic types'
 * metatables and the objects still waiting for their finalizers. */
static void smlua_visit_roots(void *ctx, size_t chunk,
                              void (*visit)(void *, sm_ref), void *vctx) {
  smlua_roots *r = (smlua_roots *)ctx;
  global_State *g = r->g;
  const GCObject *o;
  int i;
  UNUSED(chunk);
  visit(vctx, (sm_ref)obj2gco(r->L));
  visit(vctx, (sm_ref)obj2gco(g->mainthread));
  if (iscollectable(&g->l_registry))
    visit(vctx, (sm_ref)gcvalue(&g->l_registry));
  for (i = 0; i < LUA_NUMTAGS; i++)
    if (g->mt[i] != NULL)
      visit(vctx, (sm_ref)obj2gco(g->mt[i]));
  for (o = g->tobefnz; o != NULL; o = o->next)
    visit(vctx, (sm_ref)o);
}

/* The finalizable set: the objects on 'finobj'. */
static void smlua_visit_finobj(void *ctx, size_t chunk,
                               void (*visit)(void *, sm_ref), void *vctx) {
  const GCObject *o;
  UNUSED(chunk);
  for (o = ((global_State *)ctx)->finobj; o != NULL; o = o->next)
    visit(vctx, (sm_ref)o);
}

#include "smlua_check.c"
#include "smlua_after.c"

/* The whole mark phase of a collection, with what atomic() does after it. */
static lu_mem smlua_atomic(lua_State *L) {
  global_State *g = G(L);
  sm_object_model model;
  sm_marks marks;
  sm_refs roots, finalizable;
  sm_collection collection;
  sm_report report;
  sm_stats stats;
  smlua_roots rootctx;
  smlua_cleared cleared;
  sm_status st;
  uint64_t t0, t1, t2;
  int check = smlua_check_on();

  g->gcstate = GCSatomic;
  cleargraylists(g);  /* nothing is gray: no gray list is used */
  if (check)
    smlua_check_before(g);

  memset(&model, 0, sizeof(model));
  model.ctx = g;
  model.size_bytes = smlua_size_bytes;
  model.slot_count = check ? smlua_check_slot_count : smlua_slot_count;
  model.scan_slots = smlua_scan_slots;

  /* Lua's colour byte: marked iff neither white bit is set (a gray fixed
   * object counts as marked); marking clears the whites and sets black. */
  memset(&marks, 0, sizeof(marks));
  marks.mode = SM_MARKS_HEADER_BYTE;
  marks.header.offset = (ptrdiff_t)offsetof(GCObject, marked);
  marks.header.test_mask = WHITEBITS;
  marks.header.test_value = 0;
  marks.header.set_bits = bitmask(BLACKBIT);
  marks.header.clear_bits = WHITEBITS;

  rootctx.g = g;
  rootctx.L = L;
  memset(&roots, 0, sizeof(roots));
  roots.ctx = &rootctx;
  roots.chunk_count = smlua_one_chunk;
  roots.visit_chunk = smlua_visit_roots;
  memset(&finalizable, 0, sizeof(finalizable));
  finalizable.ctx = g;
  finalizable.chunk_count = smlua_finobj_chunks;
  finalizable.visit_chunk = smlua_visit_finobj;

  memset(&collection, 0, sizeof(collection));
  collection.model = &model;
  collection.marks = &marks;
  collection.roots = &roots;
  collection.finalizable = &finalizable;

  atomic_store_explicit(&smlua_threads_seen, 0, memory_order_relaxed);
  t0 = smlua_now_ns();
  st = sm_collect(smlua_get_marker(), &collection, &report);
  if (st != SM_OK)
    smlua_fatal("sm_collect", st);
  t1 = smlua_now_ns();
  st = sm_report_stats(&report, &stats);
  if (st != SM_OK)
    smlua_fatal("sm_report_stats", st);
  if (check)
    smlua_check_after(g, L, &stats);

  smlua_clear_reported(g, &report, &cleared);
  smlua_separate(g, &report, stats.to_finalize);
  smlua_fix_threads(L, g);
  luaS_clearcache(g);
  g->currentwhite = cast_byte(otherwhite(g));  /* flip current white */
  t2 = smlua_now_ns();

  smlua_collections++;
  smlua_time_mark(t1 - t0);
  if (smlua_stats())
    fprintf(stderr,
            "stealmark-lua gc %lu: mark %.3f ms, after %.3f ms, marked %llu, "
            "workers %u/%u, cleared %llu entries %llu dead keys, "
            "ephemerons %llu, to finalize %llu%s\n",
            smlua_collections, (double)(t1 - t0) / 1e6,
            (double)(t2 - t1) / 1e6, (unsigned long long)stats.live_objects,
            stats.workers_used, stats.workers,
            (unsigned long long)cleared.entries,
            (unsigned long long)cleared.dead_keys,
            (unsigned long long)stats.ephemerons,
            (unsigned long long)stats.to_finalize,
            g->gcemergency ? " (emergency)" : "");
  return (lu_mem)stats.live_objects;
}
