/*
 * smlua_sweep.c: the sweep of 'allgc' in a full collection, on the
 * engine's threads (sm_marker_run_tasks).
 *
 * Included at the end of the patched lgc.c, after smlua_gc.c. Lua's sweep
 * walks the list 'allgc' object by object: each object's header is a cache
 * miss, and a full collection of a large heap spends more time there than
 * in its mark. A linked list cannot be split without walking it, so the
 * sweep keeps split points: every so many survivors of each complete sweep
 * of 'allgc' (SMLUA_SPLITS_MAX at most, in list order). The next sweep
 * starts at the list's head and finds them where they were, because
 *   - new objects only ever go to the head of 'allgc' (luaC_newobj, and
 *     finalized objects coming back from 'tobefnz');
 *   - a survivor leaves 'allgc' only when it is freed (freeobj, which
 *     every free goes through), moved to 'finobj' (luaC_checkfinalizer) or
 *     fixed (luaC_fix); the split points are dropped when either happens
 *     to one of them (a filter makes the test a few instructions per freed
 *     object), or at once for a move.
 * A full collection's sweep (inside luaC_fullgc, where no Lua code runs)
 * that starts with split points cuts the list there into segments, and the
 * engine's workers sweep the segments in parallel: each reads and writes
 * the headers ('marked', 'next') of its own segment's objects only,
 * whitens the survivors, unlinks the dead into a list of its own and
 * records the next split points. The calling thread then joins the
 * segments and frees the dead, in order, as Lua's sweep would: freeing
 * touches shared state (the string table, the allocator's accounting,
 * threads' upvalues), so it stays on Lua's thread. Incremental steps sweep
 * on Lua's thread as before, GCSWEEPMAX objects at a time, recording the
 * split points as they go.
 */

#include <string.h>

/* At most this many split points: 64 segments. */
#define SMLUA_SPLITS_MAX 63
/* Segments per worker: several, so that a worker that finishes a segment
 * of mostly dead objects (freed later, on Lua's thread) takes another. */
#define SMLUA_SEGMENTS_PER_WORKER 8

/* Candidates per split point planned: a segment records one every
 * spacing / SMLUA_CANDIDATES survivors, so that the points kept, a
 * spacing apart over the whole list, fall within a fraction of a spacing
 * of where a sequential sweep would put them. */
#define SMLUA_CANDIDATES 4

/* Split points of one sweep: objects of 'allgc' in list order. */
typedef struct smlua_splits {
  size_t n;
  GCObject *at[SMLUA_SPLITS_MAX];
} smlua_splits;

/* The sweep's state for the one Lua state whose sweeps it follows. */
static struct {
  const global_State *g;
  /* The split points of the last complete sweep of 'allgc', still in it. */
  smlua_splits valid;
  /* A filter of 'valid': bit (hash of the address) for each point. */
  uint64_t filter[16];
  /* Survivors of the last complete sweep of 'allgc'. */
  size_t survivors;
  /* The sweep in progress: points recorded so far, survivors so far, the
   * spacing between two points, survivors until the next one, and
   * whether it still records (a move stops it). */
  smlua_splits next;
  size_t swept_live;
  size_t spacing;
  size_t until;
  int recording;
  /* Whether the sweep in progress is still where entersweep left it. */
  int fresh;
} smlua_sweep;

/* The filter bit of 'o': 10 bits of a multiplicative hash. */
static unsigned smlua_split_hash(const GCObject *o) {
  return (unsigned)(((uint64_t)(uintptr_t)o * 0x9E3779B97F4A7C15ull) >> 54);
}

/* Drops the valid split points. */
static void smlua_sweep_drop(void) {
  smlua_sweep.valid.n = 0;
  memset(smlua_sweep.filter, 0, sizeof(smlua_sweep.filter));
}

/* Whether 'o' is one of the valid split points. */
static int smlua_sweep_is_point(const GCObject *o) {
  unsigned h = smlua_split_hash(o);
  size_t i;
  if (((smlua_sweep.filter[h >> 6] >> (h & 63)) & 1) == 0)
    return 0;
  for (i = 0; i < smlua_sweep.valid.n; i++)
    if (smlua_sweep.valid.at[i] == o)
      return 1;
  return 0;
}

/* freeobj: 'o' is about to be freed; if it is a valid split point, the
 * points are dropped. (The points the sweep in progress recorded survived
 * it, and only a sweep frees.) */
static void smlua_sweep_forget(global_State *g, GCObject *o) {
  if (smlua_sweep.valid.n != 0 && smlua_sweep.g == g && smlua_sweep_is_point(o))
    smlua_sweep_drop();
}

/* A sweep of 'allgc' that may free split points begins on Lua's thread:
 * Lua's own sweep2old (generational mode), or the binding's serial
 * sweep. The points are dropped at once: that sweep does not use them,
 * and freeobj then tests one word per object it frees. */
static void smlua_sweep_elsewhere(global_State *g) {
  if (smlua_sweep.g == g && smlua_sweep.valid.n != 0)
    smlua_sweep_drop();
}

/* luaC_checkfinalizer, luaC_fix: 'o' leaves 'allgc' for another list. If
 * it is a valid split point, the points are dropped; if the sweep in
 * progress recorded it, that sweep records no more. */
static void smlua_sweep_moved(global_State *g, GCObject *o) {
  size_t i;
  if (smlua_sweep.g != g)
    return;
  smlua_sweep_forget(g, o);
  for (i = 0; i < smlua_sweep.next.n; i++)
    if (smlua_sweep.next.at[i] == o)
      smlua_sweep.recording = 0;
}

/* The split points recorded by the sweep that just completed become the
 * valid ones. */
static void smlua_sweep_promote(void) {
  size_t i;
  memset(smlua_sweep.filter, 0, sizeof(smlua_sweep.filter));
  smlua_sweep.survivors = smlua_sweep.swept_live;
  if (!smlua_sweep.recording) {
    smlua_sweep.valid.n = 0;
    return;
  }
  smlua_sweep.valid = smlua_sweep.next;
  for (i = 0; i < smlua_sweep.valid.n; i++) {
    unsigned h = smlua_split_hash(smlua_sweep.valid.at[i]);
    smlua_sweep.filter[h >> 6] |= (uint64_t)1 << (h & 63);
  }
}

/* entersweep: a sweep of 'allgc' starts (after sweeptolive). It records
 * split points for a plan of SMLUA_SEGMENTS_PER_WORKER segments per
 * worker, sized on the last sweep's survivors, none shorter than
 * smlua_sweep_segment (a shorter sweep is faster on one thread than worth
 * waking the workers for) nor than SMLUA_CANDIDATES. */
static void smlua_sweep_begin(global_State *g) {
  size_t segments = smlua_workers * SMLUA_SEGMENTS_PER_WORKER;
  if (smlua_sweep.g != g) {
    memset(&smlua_sweep, 0, sizeof(smlua_sweep));
    smlua_sweep.g = g;
  }
  if (segments > SMLUA_SPLITS_MAX + 1)
    segments = SMLUA_SPLITS_MAX + 1;
  smlua_sweep.spacing = smlua_sweep.survivors / segments;
  if (smlua_sweep.spacing < smlua_sweep_segment)
    smlua_sweep.spacing = smlua_sweep_segment;
  if (smlua_sweep.spacing < SMLUA_CANDIDATES)
    smlua_sweep.spacing = SMLUA_CANDIDATES;
  smlua_sweep.until = smlua_sweep.spacing;
  smlua_sweep.next.n = 0;
  smlua_sweep.swept_live = 0;
  smlua_sweep.recording = 1;
  smlua_sweep.fresh = 1;
}

/* One survivor of the sweep in progress, on Lua's thread. */
static void smlua_sweep_survivor(GCObject *o) {
  smlua_sweep.swept_live++;
  if (--smlua_sweep.until == 0) {
    smlua_sweep.until = smlua_sweep.spacing;
    if (smlua_sweep.next.n < SMLUA_SPLITS_MAX)
      smlua_sweep.next.at[smlua_sweep.next.n++] = o;
  }
}

/* sweeplist for 'allgc', GCSWEEPMAX objects, recording split points. */
static GCObject **smlua_sweep_serial(lua_State *L, GCObject **p, int *countout) {
  global_State *g = G(L);
  int ow = otherwhite(g);
  int white = luaC_white(g);
  int i;
  for (i = 0; *p != NULL && i < GCSWEEPMAX; i++) {
    GCObject *curr = *p;
    int marked = curr->marked;
    if (isdeadm(ow, marked)) {
      *p = curr->next;
      freeobj(L, curr);
    }
    else {
      curr->marked = cast_byte((marked & ~maskgcbits) | white);
      smlua_sweep_survivor(curr);
      p = &curr->next;
    }
  }
  *countout = i;
  return (*p == NULL) ? NULL : p;
}

/* A split point a segment found: the survivor and how many survivors of
 * its segment come before it. */
typedef struct smlua_candidate {
  GCObject *o;
  size_t rank;
} smlua_candidate;

/* One segment of a parallel sweep: objects from 'start' up to 'stop'
 * (the next segment's start, or NULL). */
typedef struct smlua_segment {
  GCObject *start;
  GCObject *stop;
  /* Results: the survivors linked from 'first' to the field '*last' (not
   * yet linked onward), the dead linked through 'next' from 'dead', the
   * counts, and the candidate split points. */
  GCObject *first;
  GCObject **last;
  GCObject *dead;
  size_t swept;
  size_t live;
  size_t ncandidates;
  smlua_candidate candidates[8 * SMLUA_CANDIDATES];
} smlua_segment;

typedef struct smlua_sweep_job {
  int ow;
  int white;
  /* Survivors between two candidates. */
  size_t every;
  smlua_segment seg[SMLUA_SPLITS_MAX + 1];
} smlua_sweep_job;

static smlua_sweep_job smlua_job;

/* The task of segment 'index' (on any worker): reads and writes the
 * headers of the segment's own objects only. A segment longer than
 * planned (the new objects since the last sweep are all in the first)
 * keeps its candidates in a fixed array by dropping every other one and
 * recording half as often each time the array fills. */
static void smlua_sweep_task(void *ctx, size_t index) {
  smlua_sweep_job *job = (smlua_sweep_job *)ctx;
  smlua_segment *s = &job->seg[index];
  GCObject *curr = s->start, *dead = NULL, **last = &s->first;
  size_t swept = 0, live = 0, every = job->every, until = every, n = 0;
  const size_t cap = sizeof(s->candidates) / sizeof(s->candidates[0]);
  while (curr != s->stop) {
    GCObject *next = curr->next;
    int marked = curr->marked;
    swept++;
    if (isdeadm(job->ow, marked)) {
      curr->next = dead;
      dead = curr;
    }
    else {
      curr->marked = cast_byte((marked & ~maskgcbits) | job->white);
      *last = curr;
      last = &curr->next;
      if (--until == 0) {
        if (n == cap) {
          size_t j;
          for (j = 0; j < cap / 2; j++)
            s->candidates[j] = s->candidates[2 * j + 1];
          n = cap / 2;
          every *= 2;
        }
        until = every;
        s->candidates[n].o = curr;
        s->candidates[n++].rank = live;
      }
      live++;
    }
    curr = next;
  }
  s->last = last;
  s->dead = dead;
  s->swept = swept;
  s->live = live;
  s->ncandidates = n;
}

/* The rest of 'allgc' from 'g->sweepgc', swept in parallel segments cut at
 * the valid split points; returns the objects swept. */
static size_t smlua_sweep_parallel(lua_State *L, sm_marker *marker) {
  global_State *g = G(L);
  smlua_sweep_job *job = &smlua_job;
  size_t n = 0, i, swept = 0;
  GCObject **p = g->sweepgc, *o;
  sm_status st;
  size_t base = 0, due;
  job->ow = otherwhite(g);
  job->white = luaC_white(g);
  job->every = smlua_sweep.spacing / SMLUA_CANDIDATES;
  job->seg[0].start = *p;
  for (i = 0; i < smlua_sweep.valid.n; i++) {
    GCObject *at = smlua_sweep.valid.at[i];
    /* sweeptolive swept the first survivor already: a point there is
     * behind the sweep, not ahead of it */
    if (&at->next == p)
      continue;
    job->seg[n].stop = at;
    job->seg[++n].start = at;
  }
  job->seg[n++].stop = NULL;
  st = sm_marker_run_tasks(marker, n, smlua_sweep_task, job);
  if (st != SM_OK)
    smlua_fatal("sm_marker_run_tasks", st);
  /* Join the survivors in segment order, and keep as split points the
   * first candidate at or past each multiple of the spacing (counted in
   * survivors over the whole list). */
  smlua_sweep.next.n = 0;
  due = smlua_sweep.spacing;
  for (i = 0; i < n; i++) {
    smlua_segment *s = &job->seg[i];
    size_t k;
    if (s->live > 0) {
      *p = s->first;
      p = s->last;
    }
    swept += s->swept;
    for (k = 0; k < s->ncandidates && smlua_sweep.next.n < SMLUA_SPLITS_MAX; k++)
      if (base + s->candidates[k].rank >= due) {
        smlua_sweep.next.at[smlua_sweep.next.n++] = s->candidates[k].o;
        due = base + s->candidates[k].rank + smlua_sweep.spacing;
      }
    base += s->live;
  }
  smlua_sweep.swept_live += base;
  *p = NULL;
  /* Free the dead on Lua's thread, segment by segment. */
  for (i = 0; i < n; i++) {
    o = job->seg[i].dead;
    while (o != NULL) {
      GCObject *next = o->next;
      freeobj(L, o);
      o = next;
    }
  }
  return swept;
}

/* The state GCSswpallgc of singlestep: sweepstep for 'allgc'. A full
 * collection's sweep that entersweep has just started, with split points
 * and more than one worker, sweeps the whole list at once in parallel;
 * any other sweeps GCSWEEPMAX objects on Lua's thread. Both record the
 * next split points. */
static lu_mem smlua_sweep_allgc(lua_State *L) {
  global_State *g = G(L);
  l_mem olddebt = g->GCdebt;
  int fresh = smlua_sweep.fresh && smlua_sweep.g == g;
  lu_mem work;
  if (g->sweepgc == NULL) {  /* enter next state, as sweepstep does */
    if (smlua_sweep.g == g)
      smlua_sweep_promote();
    g->gcstate = GCSswpfinobj;
    g->sweepgc = &g->finobj;
    return 0;
  }
  if (fresh && smlua_full_depth > 0 && smlua_sweep.valid.n > 0 &&
      smlua_workers > 1 && smlua_sweep_segment > 0) {
    uint64_t t0 = smlua_now_ns();
    size_t segments = smlua_sweep.valid.n + 1;
    smlua_sweep.fresh = 0;
    work = smlua_sweep_parallel(L, smlua_get_marker(g));
    g->sweepgc = NULL;
    if (smlua_stats())
      fprintf(stderr, SMLUA_NAME " sweep: %lu objects in %zu segments, %.3f ms\n",
              (unsigned long)work, segments, (double)(smlua_now_ns() - t0) / 1e6);
  }
  else {
    int count;
    if (smlua_sweep.g != g)  /* another state's sweep began since */
      smlua_sweep_begin(g);
    smlua_sweep.fresh = 0;
    smlua_sweep_elsewhere(g);
    g->sweepgc = smlua_sweep_serial(L, g->sweepgc, &count);
    work = (lu_mem)count;
  }
  g->GCestimate += g->GCdebt - olddebt;  /* update estimate */
  return work;
}
