/*
 * smlua_time.c: the collector's timing, compiled into both interpreters
 * (stealmark-lua and stealmark-lua-stock) so that the benchmark measures
 * them the same way.
 *
 * Included at the end of both patched copies of lgc.c. The build renames
 * Lua's luaC_step and luaC_fullgc to smlua_untimed_step and
 * smlua_untimed_fullgc; the functions of the same names here time each
 * outermost call (a pause: Lua's collector runs on the mutator's thread,
 * finalizers included) and call them. In the stock interpreter, atomic()
 * is renamed smlua_stock_atomic and timed here too: with all marking in
 * atomic() (generational mode) that is stock Lua's mark, with its
 * clearing of weak tables.
 *
 * With STEALMARK_LUA_STATS=1 the stock interpreter prints one line per
 * atomic() ("stealmark-lua-stock gc N: atomic X ms"), and both print at
 * exit "<name> gc summary: pauses N, gc X ms, largest pause Y ms, mark Z
 * ms, largest mark W ms", where a mark is the engine's marking
 * (stealmark-lua) or atomic() (stock).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef SMLUA_STOCK
#define SMLUA_NAME "stealmark-lua-stock"
#else
#define SMLUA_NAME "stealmark-lua"
#endif

static int smlua_stats_on = -1;

static int smlua_env_flag(const char *name) {
  const char *v = getenv(name);
  return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

static int smlua_stats(void) {
  if (smlua_stats_on < 0)
    smlua_stats_on = smlua_env_flag("STEALMARK_LUA_STATS");
  return smlua_stats_on;
}

static uint64_t smlua_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The totals of the run, printed at exit. */
static struct {
  unsigned long pauses;
  uint64_t gc_ns, max_pause_ns, mark_ns, max_mark_ns;
  int depth;  /* nesting of timed calls (an emergency collection) */
  int registered;  /* the exit report is registered */
} smlua_time;

static void smlua_time_report(void) {
  fprintf(stderr,
          SMLUA_NAME " gc summary: pauses %lu, gc %.3f ms, largest pause "
          "%.3f ms, mark %.3f ms, largest mark %.3f ms\n",
          smlua_time.pauses, (double)smlua_time.gc_ns / 1e6,
          (double)smlua_time.max_pause_ns / 1e6,
          (double)smlua_time.mark_ns / 1e6,
          (double)smlua_time.max_mark_ns / 1e6);
}

/* Adds one collection's mark time. */
static void smlua_time_mark(uint64_t ns) {
  smlua_time.mark_ns += ns;
  if (ns > smlua_time.max_mark_ns)
    smlua_time.max_mark_ns = ns;
}

/* Starts a timed call; returns its start, or 0 when it is nested or the
 * statistics are off. */
static uint64_t smlua_pause_begin(void) {
  if (!smlua_stats() || smlua_time.depth++ > 0)
    return 0;
  if (!smlua_time.registered) {
    smlua_time.registered = 1;
    atexit(smlua_time_report);
  }
  return smlua_now_ns();
}

static void smlua_pause_end(uint64_t start) {
  uint64_t ns;
  if (!smlua_stats())
    return;
  smlua_time.depth--;
  if (start == 0)
    return;
  ns = smlua_now_ns() - start;
  smlua_time.pauses++;
  smlua_time.gc_ns += ns;
  if (ns > smlua_time.max_pause_ns)
    smlua_time.max_pause_ns = ns;
}

void luaC_step (lua_State *L) {
  uint64_t start = smlua_pause_begin();
  smlua_untimed_step(L);
  smlua_pause_end(start);
}

/* Full collections in progress (luaC_fullgc calls), which stealmark-lua
 * marks stop-the-world rather than in an incremental cycle's steps. */
static int smlua_full_depth = 0;

void luaC_fullgc (lua_State *L, int isemergency) {
  uint64_t start = smlua_pause_begin();
  smlua_full_depth++;
  smlua_untimed_fullgc(L, isemergency);
  smlua_full_depth--;
  smlua_pause_end(start);
}

#ifdef SMLUA_STOCK
static unsigned long smlua_stock_collections = 0;

static lu_mem atomic (lua_State *L) {
  uint64_t t0, ns;
  lu_mem work;
  if (!smlua_stats())
    return smlua_stock_atomic(L);
  t0 = smlua_now_ns();
  work = smlua_stock_atomic(L);
  ns = smlua_now_ns() - t0;
  smlua_time_mark(ns);
  fprintf(stderr, SMLUA_NAME " gc %lu: atomic %.3f ms%s\n",
          ++smlua_stock_collections, (double)ns / 1e6,
          G(L)->gcemergency ? " (emergency)" : "");
  return work;
}
#endif
