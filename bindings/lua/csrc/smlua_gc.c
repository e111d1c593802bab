/*
 * smlua_gc.c: Lua 5.4's mark phase run by stealmark.
 *
 * Included at the end of the patched lgc.c, after smlua_time.c (it uses
 * lgc.c's static helpers: clearkey, cleargraylists, findlast). In Lua's
 * incremental mode, the propagate state runs an engine cycle with the
 * incremental-update barrier: its first step starts the cycle, each later
 * one marks a budget of objects on the calling thread and the GC workers,
 * and Lua's barriers feed the cycle (luaC_barrier_: the value is shaded;
 * luaC_barrierback_: the holder is rescanned). atomic() calls
 * smlua_atomic(), which finishes that cycle (its remark), or, without one
 * (generational mode, emergency collections, STEALMARK_LUA_STW=1), hands
 * the whole mark phase to the engine stop-the-world; then it does in Lua's
 * order what must stay single-threaded: clearing weak entries and dead
 * keys, moving the objects to finalize from 'finobj' to 'tobefnz', clearing
 * and shrinking thread stacks, and unlinking dead threads from 'twups'.
 * The engine is reached through its C interface (stealmark.h) only.
 *
 * Environment:
 *   STEALMARK_LUA_WORKERS  GC workers (default: the machine's cores)
 *   STEALMARK_LUA_SOLO_BELOW  a collection after one that marked fewer
 *                          objects runs on the calling thread alone, and
 *                          so does a cycle after one that marked fewer
 *                          than 8 times as many (default 16384; 0: never)
 *   STEALMARK_LUA_SWEEP_SEGMENT  full collections sweep 'allgc' in
 *                          parallel segments of at least this many
 *                          survivors (default 8192; 0: never;
 *                          smlua_sweep.c)
 *   STEALMARK_LUA_STW=1    incremental mode marks stop-the-world in
 *                          atomic() too, as generational mode does
 *   STEALMARK_LUA_STATS=1  one line per collection on stderr
 *   STEALMARK_LUA_CHECK=1  after every marking, walk Lua's object lists and
 *                          check the marks (smlua_check.c)
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "smlua_model.c"

/* Bit of 'marked' that flags an object the engine reported to finalize,
 * between the report and its move to 'tobefnz' (Lua uses it only in its
 * test build, ltests.c, which this interpreter does not include). */
#define SMLUA_TOFINALIZE_BIT TESTBIT

/* The process's engine, made on the first collection; and a second one,
 * made only if a Lua state collects while another state's cycle holds the
 * first. */
static sm_marker *smlua_marker = NULL;
static sm_marker *smlua_spare_marker = NULL;
static unsigned long smlua_collections = 0;

/* The engine's incremental cycle, if one runs: at most one in the process,
 * owned by the Lua state whose global state is smlua_cycle_g; and the
 * barrier handle of that state's mutator (Lua runs one OS thread per
 * state). */
static sm_cycle *smlua_cycle = NULL;
static sm_mutator *smlua_barrier = NULL;
static global_State *smlua_cycle_g = NULL;
/* Objects marked by the last collection: below the solo threshold
 * (STEALMARK_LUA_SOLO_BELOW), incremental mode marks stop-the-world; below
 * SMLUA_SOLO_CYCLES times that, its cycle runs on the calling thread alone. */
static uint64_t smlua_last_marked = 0;

/* A cycle gains from more workers only on a larger heap than one
 * collection does: each of its many steps would wake them, and Lua's
 * thread then sweeps lines the other cores wrote. With 2 workers,
 * binary_trees (33,000 to 97,000 objects marked) spent 8-12% more time in
 * its collector with parallel steps than on one thread, and heaps of
 * 200,000 and more took about as long either way. */
#define SMLUA_SOLO_CYCLES 8

/* Stops the process: the collector cannot go on (Lua has no way to report
 * a failed mark phase, and sweeping after one would free live objects). */
static void smlua_fatal(const char *what, sm_status status) {
  fprintf(stderr, "stealmark-lua: %s failed: %s: %s\n", what,
          sm_status_name(status), sm_last_error());
  fflush(stderr);
  abort();
}

/* The engine's default for solo collections, or STEALMARK_LUA_SOLO_BELOW. */
static uint64_t smlua_solo_below = 0;

/* The marker's workers, the calling thread included; and the shortest
 * segment a full collection's parallel sweep plans, in survivors
 * (STEALMARK_LUA_SWEEP_SEGMENT; 0: no parallel sweep; smlua_sweep.c). */
static size_t smlua_workers = 1;
static size_t smlua_sweep_segment = 8192;

/* The object count in the environment variable 'name', or 'otherwise'
 * when it is unset or empty; anything else stops the interpreter. */
static uint64_t smlua_env_count(const char *name, uint64_t otherwise) {
  const char *v = getenv(name);
  char *end;
  unsigned long long n;
  if (v == NULL || v[0] == '\0')
    return otherwise;
  n = strtoull(v, &end, 10);
  if (*end != '\0') {
    fprintf(stderr, "stealmark-lua: %s='%s' is not an object count\n", name, v);
    exit(EXIT_FAILURE);
  }
  return (uint64_t)n;
}

static sm_marker *smlua_new_marker(void) {
  sm_marker *marker = NULL;
  sm_config config;
  sm_status st;
  const char *workers = getenv("STEALMARK_LUA_WORKERS");
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
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
  config.solo_below = smlua_env_count("STEALMARK_LUA_SOLO_BELOW", config.solo_below);
  smlua_sweep_segment =
      (size_t)smlua_env_count("STEALMARK_LUA_SWEEP_SEGMENT", smlua_sweep_segment);
  smlua_solo_below = config.solo_below;
  /* workers 0: the machine's cores, as the engine counts them */
  smlua_workers = config.workers != 0 ? config.workers
                                      : (cores > 0 ? (size_t)cores : 1);
  st = sm_marker_new(&config, &marker);
  if (st != SM_OK)
    smlua_fatal("creating the marker", st);
  return marker;
}

/* The marker a stop-the-world collection of 'g' uses: the process's, or,
 * while another state's cycle holds it, the spare one. */
static sm_marker *smlua_get_marker(const global_State *g) {
  if (smlua_marker == NULL)
    smlua_marker = smlua_new_marker();
  if (smlua_cycle != NULL && smlua_cycle_g != g) {
    if (smlua_spare_marker == NULL)
      smlua_spare_marker = smlua_new_marker();
    return smlua_spare_marker;
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

/* The engine's description of Lua's heap: the object model (its scans
 * noting threads, and, with 'check', every object; with 'cycle', an
 * incremental cycle's, its scans counting Lua's work units) and the marks,
 * Lua's colour byte: marked iff neither white bit is set (a gray fixed
 * object counts as marked); marking clears the whites and sets black. */
static void smlua_describe(global_State *g, int check, int cycle,
                           sm_object_model *model, sm_marks *marks) {
  memset(model, 0, sizeof(*model));
  model->ctx = g;
  model->size_bytes = smlua_size_bytes;
  model->slot_count = smlua_slot_count;
  if (check)
    model->scan_slots = cycle ? smlua_check_scan_counted
                              : smlua_check_scan_slots;
  else
    model->scan_slots = cycle ? smlua_scan_counted : smlua_scan_slots;
  /* Every scan stops at the object's last slot: one call scans an object
   * whole, without a call for its count first. */
  model->scan_clamps_end = 1;
  /* A table's scan reads its whole header (it reads 'lastfree' last,
   * to size the node part), and the header crosses a cache line at most
   * of its offsets: both lines are prefetched. The array part, allocated
   * apart, is prefetched in the second stage. */
  model->prefetch_bytes = sizeof(Table);
  model->prefetch_slots = smlua_prefetch_slots;
  memset(marks, 0, sizeof(*marks));
  marks->mode = SM_MARKS_HEADER_BYTE;
  marks->header.offset = (ptrdiff_t)offsetof(GCObject, marked);
  marks->header.test_mask = WHITEBITS;
  marks->header.test_value = 0;
  marks->header.set_bits = bitmask(BLACKBIT);
  marks->header.clear_bits = WHITEBITS;
}

/* The roots (as smlua_visit_roots gives them) and the finalizable set. */
static void smlua_sources(global_State *g, smlua_roots *rootctx,
                          sm_refs *roots, sm_refs *finalizable) {
  memset(roots, 0, sizeof(*roots));
  roots->ctx = rootctx;
  roots->chunk_count = smlua_one_chunk;
  roots->visit_chunk = smlua_visit_roots;
  memset(finalizable, 0, sizeof(*finalizable));
  finalizable->ctx = g;
  finalizable->chunk_count = smlua_finobj_chunks;
  finalizable->visit_chunk = smlua_visit_finobj;
}

/* Lua's work units per object scanned (smlua_work_add), as the last step
 * that used up its budget measured them; a step's budget, in objects, is
 * Lua's step size over this. It starts at a guess for a heap of small
 * tables. */
static size_t smlua_units_per_object = 8;

/* Starts the engine's cycle for 'L''s state: the start's pause copies the
 * roots. Its steps run on every worker, or, after a collection that marked
 * fewer than SMLUA_SOLO_CYCLES times the solo threshold, the whole cycle
 * runs on the calling thread. */
static void smlua_begin(lua_State *L) {
  global_State *g = G(L);
  sm_object_model model;
  sm_marks marks;
  sm_refs roots, finalizable;
  sm_cycle_options options;
  smlua_roots rootctx;
  sm_status st;
  int check = smlua_check_on();
  sm_marker *marker = smlua_get_marker(g);
  if (check)
    smlua_check_before(g);
  smlua_describe(g, check, 1, &model, &marks);
  rootctx.g = g;
  rootctx.L = L;
  smlua_sources(g, &rootctx, &roots, &finalizable);
  sm_cycle_options_init(&options);
  options.parallel_steps = 1;
  options.solo = smlua_last_marked < SMLUA_SOLO_CYCLES * smlua_solo_below;
  /* Lua allocates white and runs no Lua code while a step marks: at one
   * worker a step marks with plain stores to the colour bytes. */
  options.black_allocation = 0;
  atomic_store_explicit(&smlua_threads_seen, 0, memory_order_relaxed);
  st = sm_cycle_start(marker, &model, &marks, &roots, &options, &smlua_cycle);
  if (st != SM_OK)
    smlua_fatal("sm_cycle_start", st);
  st = sm_mutator_new(smlua_cycle, &smlua_barrier);
  if (st != SM_OK)
    smlua_fatal("sm_mutator_new", st);
  smlua_cycle_g = g;
}

static int smlua_stw_flag = -1;

/* STEALMARK_LUA_STW=1: no incremental cycle. */
static int smlua_stw(void) {
  if (smlua_stw_flag < 0)
    smlua_stw_flag = smlua_env_flag("STEALMARK_LUA_STW");
  return smlua_stw_flag;
}

/* Lua's step size in work units, as incstep computes it. */
static l_mem smlua_stepsize(global_State *g) {
  int stepmul = (getgcparam(g->gcstepmul) | 1);
  return (g->gcstepsize <= log2maxs(l_mem))
             ? ((cast(l_mem, 1) << g->gcstepsize) / WORK2MEM) * stepmul
             : MAX_LMEM;
}

/* The propagate state's step (singlestep): without a cycle of this state,
 * starts one (incremental mode, outside full collections, emergency ones
 * included, when the last collection marked at least the solo threshold:
 * a smaller heap is marked faster in one short pause, on the calling
 * thread alone, than a cycle starts, steps and ends) or goes to the atomic
 * state, where the whole mark runs stop-the-world; with one, marks a budget of the
 * work incstep still owes (at most Lua's step size) and goes to the atomic state,
 * the remark, once no marking is left. Returns the work done in Lua's
 * units (at least 1: incstep steps again until Lua's debt is paid, as it
 * does with propagatemark), 1 for the step that starts a cycle, or 0 for
 * no step. */
static lu_mem smlua_propagate(lua_State *L) {
  global_State *g = G(L);
  l_mem stepsize = smlua_stepsize(g);
  size_t budget, before, work;
  bool done = false;
  sm_status st;
  if (smlua_cycle_g != g) {
    smlua_get_marker(g);  /* the solo threshold is read with the marker */
    if (g->gckind != KGC_INC || smlua_full_depth > 0 || smlua_cycle != NULL ||
        smlua_stw() || smlua_last_marked < smlua_solo_below) {
      g->gcstate = GCSenteratomic;
      return 0;
    }
    smlua_begin(L);
    return 1;
  }
  /* incstep stops once its debt is paid: a budget of the whole step size
   * on top of what earlier single steps of this luaC_step did would
   * overshoot by up to a step (stock Lua's propagatemark does one object
   * per single step, and stops on time). Outside incstep (a state change
   * run to its end), a step size. */
  if (smlua_step_owed > 0 && smlua_step_owed < stepsize)
    stepsize = smlua_step_owed;
  budget = (size_t)stepsize / smlua_units_per_object;
  if (budget == 0)
    budget = 1;
  /* What the barrier recorded goes to this step. */
  st = sm_mutator_flush(smlua_barrier);
  if (st != SM_OK)
    smlua_fatal("sm_mutator_flush", st);
  before = smlua_work_done();
  st = sm_cycle_step(smlua_cycle, budget, &done);
  if (st != SM_OK)
    smlua_fatal("sm_cycle_step", st);
  work = smlua_work_done() - before;
  if (done)
    g->gcstate = GCSenteratomic;
  else if (work >= budget)
    smlua_units_per_object = work / budget;
  return work > 0 ? (lu_mem)work : 1;
}

/* luaC_barrier_ while Lua keeps its invariant: 'v', stored into a black
 * object, is shaded if this state's cycle runs. */
static void smlua_shade(global_State *g, GCObject *v) {
  if (smlua_cycle_g == g) {
    sm_status st = sm_mutator_shade(smlua_barrier, (sm_ref)v);
    if (st != SM_OK)
      smlua_fatal("sm_mutator_shade", st);
  }
}

/* luaC_barrierback_: if this state's cycle runs, 'o', a black object
 * written to, is rescanned before the cycle ends (1); else Lua's own
 * barrier applies (0). 'o' stays black: the next write into it records it
 * again, and the barrier drops repeats in a row. */
static int smlua_rescan(global_State *g, GCObject *o) {
  sm_status st;
  if (smlua_cycle_g != g)
    return 0;
  st = sm_mutator_rescan(smlua_barrier, (sm_ref)o);
  if (st != SM_OK)
    smlua_fatal("sm_mutator_rescan", st);
  return 1;
}

/* Frees this state's cycle, if it runs: finished, or abandoned (a full
 * collection sweeps everything white; lua_close frees everything). */
static void smlua_end_cycle(global_State *g) {
  if (smlua_cycle_g != g)
    return;
  sm_mutator_free(smlua_barrier);
  sm_cycle_free(smlua_cycle);
  smlua_barrier = NULL;
  smlua_cycle = NULL;
  smlua_cycle_g = NULL;
}

/* What the barriers do not see, handed to the remark: every thread the
 * cycle scanned (stack writes are not barriered), those it noted or, past
 * SMLUA_THREADS_NOTED, every marked thread on 'allgc'; and the open
 * upvalues, still marked, of unmarked threads (remarkupvals: a dead
 * thread's upvalues are closed with the values its stack holds now). */
static void smlua_remark_unbarriered(global_State *g) {
  size_t seen = atomic_load_explicit(&smlua_threads_seen,
                                     memory_order_relaxed), i;
  lua_State *th;
  GCObject *o;
  if (seen <= SMLUA_THREADS_NOTED) {
    for (i = 0; i < seen; i++)
      smlua_rescan(g, obj2gco(smlua_threads[i]));
  }
  else {
    for (o = g->allgc; o != NULL; o = o->next)
      if (o->tt == LUA_VTHREAD && !iswhite(o))
        smlua_rescan(g, o);
  }
  for (th = g->twups; th != NULL; th = th->twups)
    if (iswhite(th)) {
      UpVal *uv;
      for (uv = th->openupval; uv != NULL; uv = uv->u.open.next)
        if (!iswhite(uv))
          smlua_rescan(g, obj2gco(uv));
    }
}

/* The whole mark phase of a collection, or the remark of this state's
 * cycle, with what atomic() does after it. Returns, as atomic() returns
 * what it traversed, the remark's work in Lua's units (smlua_work_add), or
 * the objects a stop-the-world mark marked (it counts no units). */
static lu_mem smlua_atomic(lua_State *L) {
  global_State *g = G(L);
  sm_object_model model;
  sm_marks marks;
  sm_refs roots, finalizable;
  sm_report report;
  sm_stats stats;
  smlua_roots rootctx;
  smlua_cleared cleared;
  sm_status st;
  uint64_t t0, t1, t2;
  size_t work = smlua_work_done();
  int check = smlua_check_on();
  int remark = smlua_cycle_g == g;

  g->gcstate = GCSatomic;
  cleargraylists(g);  /* nothing is gray: no gray list is used */
  rootctx.g = g;
  rootctx.L = L;
  smlua_sources(g, &rootctx, &roots, &finalizable);
  t0 = smlua_now_ns();
  if (remark) {
    sm_remark inputs;
    smlua_remark_unbarriered(g);
    st = sm_mutator_detach(smlua_barrier);
    if (st != SM_OK)
      smlua_fatal("sm_mutator_detach", st);
    memset(&inputs, 0, sizeof(inputs));
    inputs.roots = &roots;
    inputs.finalizable = &finalizable;
    st = sm_cycle_finish(smlua_cycle, &inputs, &report);
    if (st != SM_OK)
      smlua_fatal("sm_cycle_finish", st);
  }
  else {
    sm_collection collection;
    if (check)
      smlua_check_before(g);
    smlua_describe(g, check, 0, &model, &marks);
    memset(&collection, 0, sizeof(collection));
    collection.model = &model;
    collection.marks = &marks;
    collection.roots = &roots;
    collection.finalizable = &finalizable;
    atomic_store_explicit(&smlua_threads_seen, 0, memory_order_relaxed);
    st = sm_collect(smlua_get_marker(g), &collection, &report);
    if (st != SM_OK)
      smlua_fatal("sm_collect", st);
  }
  t1 = smlua_now_ns();
  work = smlua_work_done() - work;
  st = sm_report_stats(&report, &stats);
  if (st != SM_OK)
    smlua_fatal("sm_report_stats", st);
  if (check)
    smlua_check_after(g, L, &stats);

  smlua_clear_reported(g, &report, &cleared);
  smlua_separate(g, &report, stats.to_finalize);
  smlua_fix_threads(L, g);
  smlua_end_cycle(g);
  luaS_clearcache(g);
  g->currentwhite = cast_byte(otherwhite(g));  /* flip current white */
  t2 = smlua_now_ns();

  smlua_collections++;
  smlua_last_marked = stats.live_objects;
  smlua_time_mark(t1 - t0);
  if (smlua_stats())
    fprintf(stderr,
            "stealmark-lua gc %lu: %s %.3f ms, after %.3f ms, marked %llu, "
            "workers %u/%u, cleared %llu entries %llu dead keys, "
            "ephemerons %llu, to finalize %llu%s\n",
            smlua_collections, remark ? "remark" : "mark",
            (double)(t1 - t0) / 1e6,
            (double)(t2 - t1) / 1e6, (unsigned long long)stats.live_objects,
            stats.workers_used, stats.workers,
            (unsigned long long)cleared.entries,
            (unsigned long long)cleared.dead_keys,
            (unsigned long long)stats.ephemerons,
            (unsigned long long)stats.to_finalize,
            g->gcemergency ? " (emergency)" : "");
  return remark ? (lu_mem)work : (lu_mem)stats.live_objects;
}
