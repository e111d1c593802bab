/*
 * smlua_sweep.c: the sweep of 'allgc' in a full collection, in parallel
 * segments on the engine's threads (sm_marker_run_tasks).
 *
 * Included at the end of the patched lgc.c, after smlua_gc.c. Lua's sweep
 * walks the list 'allgc' object by object: each object's header is a cache
 * miss, and a full collection of a large heap spends more time there than
 * in its mark. A linked list cannot be split without walking it, so the
 * sweep keeps split points: every so many survivors of each complete sweep
 * of 'allgc' (SMLUA_SPLITS_MAX at most, in list order). The next sweep
 * finds them where they were, because
 *   - new objects only ever go to the head of 'allgc' (luaC_newobj, and
 *     finalized objects coming back from 'tobefnz');
 *   - a survivor leaves 'allgc' only when it is freed (freeobj, which
 *     every free goes through), moved to 'finobj' (luaC_checkfinalizer) or
 *     fixed (luaC_fix). Moving a split point, or moving anything during a
 *     sweep, drops the points; so does freeing the next one ahead of the
 *     sweep outside the binding's own sweeps (those frees, sweeptolive's,
 *     go in list order from the sweep's position, so no other point can go
 *     first).
 * The binding's sweep passes the points in order and counts those behind
 * it; the rest of the list is cut at those ahead into segments: the first
 * from the sweep's position to the next point, each later one from a point
 * to the next. A step that may sweep the whole list (a full collection,
 * luaC_fullgc, or a state change run to its end) sweeps every segment in
 * parallel, even when an incremental sweep had begun; an incremental step
 * sweeps the whole segments its budget covers in parallel if they are long
 * (smlua_sweep_segments), else GCSWEEPMAX objects on Lua's thread, as
 * Lua's does, passing and recording points as it goes. Generational mode's collections (each a
 * full one in this binding) sweep 'allgc' with sweep2old's rules, the
 * same way (smlua_sweep2old_allgc). In a parallel step the engine's workers
 * each read and write the headers ('marked', 'next') of their own
 * segment's objects only: they whiten (or age) the survivors, unlink the dead into
 * lists of their own and note candidates for the next split points. Lua's
 * thread then joins the segments, keeps the candidates a spacing apart,
 * and frees the dead itself, segment by segment: freeing touches what is
 * shared (the string table, the memory accounting, a dead thread's
 * upvalues).
 */

#include <string.h>

/* At most this many split points: 64 segments. */
#define SMLUA_SPLITS_MAX 63
/* Segments per worker: several, so that a worker that finishes a segment
 * of mostly dead objects (freed later, on Lua's thread) takes another. */
#define SMLUA_SEGMENTS_PER_WORKER 8
/* Candidates per split point planned: a segment notes one every
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
  /* The split points of the last complete sweep of 'allgc', still in it;
   * the sweep in progress has passed the first 'passed' of them, and
   * 'ahead' is the next one (NULL if none), kept beside 'passed' so that
   * freeobj's test is one comparison (smlua_sweep_pass sets both). */
  smlua_splits valid;
  size_t passed;
  GCObject *ahead;
  /* Survivors of the last complete sweep of 'allgc'. */
  size_t survivors;
  /* The sweep in progress: the points recorded so far, the survivors so
   * far, the objects swept on Lua's thread so far, the spacing of the
   * points, the survivor count at which the next one is due, and whether
   * it still records (a move stops it). */
  smlua_splits next;
  size_t swept_live;
  size_t swept_serial;
  size_t spacing;
  size_t due;
  int recording;
  /* Whether the sweep in progress may go parallel: the last sweep left
   * enough survivors for the whole plan (smlua_sweep_plan). */
  int worth;
} smlua_sweep;

/* Drops the valid split points. */
static void smlua_sweep_drop(void) {
  smlua_sweep.valid.n = 0;
  smlua_sweep.passed = 0;
  smlua_sweep.ahead = NULL;
}

/* The sweep has passed the first 'passed' valid split points. */
static void smlua_sweep_pass(size_t passed) {
  smlua_sweep.passed = passed;
  smlua_sweep.ahead = passed < smlua_sweep.valid.n ? smlua_sweep.valid.at[passed] : NULL;
}

/* Whether 'o' is one of the valid split points. */
static int smlua_sweep_is_point(const GCObject *o) {
  size_t i;
  for (i = 0; i < smlua_sweep.valid.n; i++)
    if (smlua_sweep.valid.at[i] == o)
      return 1;
  return 0;
}

/* freeobj: 'o' is about to be freed; if it is the next split point ahead
 * of the sweep, the points are dropped. Only sweeps free, each in list
 * order: the binding's pass a point before they free it, and the others
 * (sweeptolive, at entersweep and in luaC_checkfinalizer) start at the
 * sweep's position, so the first point they can reach is the next one
 * ahead. (The points the sweep in progress recorded survived it.) */
static void smlua_sweep_forget(GCObject *o) {
  if (o == smlua_sweep.ahead)
    smlua_sweep_drop();
}

/* luaC_checkfinalizer, luaC_fix: 'o' leaves 'allgc' for another list. If
 * it is a valid split point, or if this happens during a sweep (where
 * luaC_checkfinalizer may have swept ahead with sweeptolive, passing a
 * point uncounted), the points are dropped; if the sweep in progress
 * recorded it, that sweep records no more. */
static void smlua_sweep_moved(global_State *g, GCObject *o) {
  size_t i;
  if (smlua_sweep.g != g)
    return;
  if (smlua_sweep.valid.n != 0 && (issweepphase(g) || smlua_sweep_is_point(o)))
    smlua_sweep_drop();
  for (i = 0; i < smlua_sweep.next.n; i++)
    if (smlua_sweep.next.at[i] == o)
      smlua_sweep.recording = 0;
}

/* The split points recorded by the sweep that just completed become the
 * valid ones. */
static void smlua_sweep_promote(void) {
  smlua_sweep_drop();
  smlua_sweep.survivors = smlua_sweep.swept_live;
  if (smlua_sweep.recording) {
    smlua_sweep.valid = smlua_sweep.next;
    smlua_sweep_pass(0);
  }
}

/* A sweep of 'allgc' starts: it records split points for a plan of
 * SMLUA_SEGMENTS_PER_WORKER segments per worker, sized on the last sweep's
 * survivors, none shorter than smlua_sweep_segment nor than
 * SMLUA_CANDIDATES. It may sweep in parallel only if the last sweep left
 * survivors for the whole plan at that length: a smaller heap fits in the
 * caches, where Lua's thread, freeing the dead after the workers unlinked
 * them, reads headers the other core just wrote (binary_trees, 33,000
 * survivors: its generational collections at 2 workers took 15% more GC
 * time with their sweeps in parallel). */
static void smlua_sweep_plan(global_State *g) {
  size_t segments = smlua_workers * SMLUA_SEGMENTS_PER_WORKER;
  if (smlua_sweep.g != g) {
    memset(&smlua_sweep, 0, sizeof(smlua_sweep));
    smlua_sweep.g = g;
  }
  if (segments > SMLUA_SPLITS_MAX + 1)
    segments = SMLUA_SPLITS_MAX + 1;
  smlua_sweep.spacing = smlua_sweep.survivors / segments;
  smlua_sweep.worth = smlua_sweep.spacing >= smlua_sweep_segment;
  if (smlua_sweep.spacing < smlua_sweep_segment)
    smlua_sweep.spacing = smlua_sweep_segment;
  if (smlua_sweep.spacing < SMLUA_CANDIDATES)
    smlua_sweep.spacing = SMLUA_CANDIDATES;
  smlua_sweep.due = smlua_sweep.spacing;
  smlua_sweep.next.n = 0;
  smlua_sweep.swept_live = 0;
  smlua_sweep.swept_serial = 0;
  smlua_sweep.recording = 1;
  smlua_sweep_pass(0);
}

/* entersweep: an incremental sweep of 'allgc' starts, after sweeptolive
 * swept the dead objects at the list's head and its first survivor (which
 * may be the first split point: then it is passed). */
static void smlua_sweep_begin(global_State *g) {
  smlua_sweep_plan(g);
  if (smlua_sweep.valid.n != 0 && g->sweepgc == &smlua_sweep.valid.at[0]->next)
    smlua_sweep_pass(1);
}

/* A survivor of the sweep in progress, on Lua's thread: a split point is
 * recorded every spacing survivors. */
static void smlua_sweep_survivor(GCObject *o) {
  if (++smlua_sweep.swept_live == smlua_sweep.due) {
    smlua_sweep.due += smlua_sweep.spacing;
    if (smlua_sweep.next.n < SMLUA_SPLITS_MAX)
      smlua_sweep.next.at[smlua_sweep.next.n++] = o;
  }
}

/* sweeplist for 'allgc', GCSWEEPMAX objects on Lua's thread: passes the
 * split points and records the next ones. */
static GCObject **smlua_sweep_serial(lua_State *L, GCObject **p, int *countout) {
  global_State *g = G(L);
  int ow = otherwhite(g);
  int white = luaC_white(g);
  int i;
  for (i = 0; *p != NULL && i < GCSWEEPMAX; i++) {
    GCObject *curr = *p;
    int marked = curr->marked;
    if (curr == smlua_sweep.ahead)
      smlua_sweep_pass(smlua_sweep.passed + 1);
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
  smlua_sweep.swept_serial += (size_t)i;
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
  /* The generational sweep's surviving threads, linked through 'gclist'
   * (gray already). */
  GCObject *threads;
  size_t swept;
  size_t live;
  size_t ncandidates;
  smlua_candidate candidates[8 * SMLUA_CANDIDATES];
} smlua_segment;

typedef struct smlua_sweep_job {
  /* Lua's generational sweep (sweep2old: the survivors become old), or
   * its incremental one (they become 'white'; 'ow' is the dead white). */
  int gen;
  int ow;
  int white;
  /* Survivors between two candidates. */
  size_t every;
  smlua_segment seg[SMLUA_SPLITS_MAX + 1];
} smlua_sweep_job;

static smlua_sweep_job smlua_job;

/* sweep2old's survivor: old, and gray (a thread, linked into '*gray'; an
 * open upvalue) or black. */
static void smlua_make_old(GCObject *o, GCObject **gray) {
  setage(o, G_OLD);
  if (o->tt == LUA_VTHREAD)  /* threads must be watched */
    linkgclist(gco2th(o), *gray);
  else if (o->tt == LUA_VUPVAL && upisopen(gco2upv(o)))
    set2gray(o);  /* open upvalues are always gray */
  else  /* everything else is black */
    nw2black(o);
}

/* The task of segment 'index' (on any worker): reads and writes the
 * headers of the segment's own objects only. A segment longer than
 * planned (the new objects since the last sweep are all in the first)
 * keeps its candidates in a fixed array by dropping every other one and
 * noting half as often each time the array fills. */
static void smlua_sweep_task(void *ctx, size_t index) {
  smlua_sweep_job *job = (smlua_sweep_job *)ctx;
  smlua_segment *s = &job->seg[index];
  GCObject *curr = s->start, *dead = NULL, **last = &s->first, *threads = NULL;
  size_t swept = 0, live = 0, every = job->every, until = every, n = 0;
  const size_t cap = sizeof(s->candidates) / sizeof(s->candidates[0]);
  while (curr != s->stop) {
    GCObject *next = curr->next;
    int marked = curr->marked;
    swept++;
    if (job->gen ? iswhite(curr) : isdeadm(job->ow, marked)) {
      curr->next = dead;
      dead = curr;
      curr = next;
      continue;
    }
    if (job->gen)  /* threads go to 'grayagain' at the join */
      smlua_make_old(curr, &threads);
    else
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
    curr = next;
  }
  s->last = last;
  s->dead = dead;
  s->threads = threads;
  s->swept = swept;
  s->live = live;
  s->ncandidates = n;
}

/* Sweeps 'segments' segments from '*p' in parallel (the last one ending at
 * the split point after them, or at the list's end), as Lua's generational
 * sweep if 'gen'; returns the objects swept and sets '*rest' to the field
 * that links to the rest of the list (NULL at its end). */
static size_t smlua_sweep_parallel(lua_State *L, GCObject **p, size_t segments, int gen,
                                   GCObject ***rest) {
  global_State *g = G(L);
  smlua_sweep_job *job = &smlua_job;
  size_t i, swept = 0;
  GCObject *stop = NULL, *o;
  sm_status st;
  job->gen = gen;
  job->ow = otherwhite(g);
  job->white = luaC_white(g);
  job->every = smlua_sweep.spacing / SMLUA_CANDIDATES;
  job->seg[0].start = *p;
  for (i = 0; i < segments; i++) {
    size_t k = smlua_sweep.passed + i;
    stop = k < smlua_sweep.valid.n ? smlua_sweep.valid.at[k] : NULL;
    job->seg[i].stop = stop;
    job->seg[i + 1].start = stop;
  }
  st = sm_marker_run_tasks(smlua_get_marker(g), segments, smlua_sweep_task, job);
  if (st != SM_OK)
    smlua_fatal("sm_marker_run_tasks", st);
  /* Join the survivors in segment order, keep as split points the first
   * candidate at or past each due survivor count, and link the surviving
   * threads into 'grayagain' (the generational sweep). */
  for (i = 0; i < segments; i++) {
    smlua_segment *s = &job->seg[i];
    size_t k;
    if (s->live > 0) {
      *p = s->first;
      p = s->last;
    }
    swept += s->swept;
    for (k = 0; k < s->ncandidates; k++) {
      size_t rank = smlua_sweep.swept_live + s->candidates[k].rank + 1;
      if (rank >= smlua_sweep.due) {
        smlua_sweep.due = rank + smlua_sweep.spacing;
        if (smlua_sweep.next.n < SMLUA_SPLITS_MAX)
          smlua_sweep.next.at[smlua_sweep.next.n++] = s->candidates[k].o;
      }
    }
    smlua_sweep.swept_live += s->live;
    for (o = s->threads; o != NULL;) {
      lua_State *th = gco2th(o);
      GCObject *next = th->gclist;
      th->gclist = g->grayagain;
      g->grayagain = o;
      o = next;
    }
  }
  *p = stop;  /* the rest of the list, from the next point; or its end */
  *rest = stop == NULL ? NULL : p;
  /* the points that started segments 1.. are behind the sweep now */
  smlua_sweep_pass(smlua_sweep.passed + segments - 1);
  /* Free the dead on Lua's thread, segment by segment. */
  for (i = 0; i < segments; i++) {
    o = job->seg[i].dead;
    while (o != NULL) {
      GCObject *next = o->next;
      freeobj(L, o);
      o = next;
    }
  }
  return swept;
}

/* Prints a parallel sweep's line of statistics. */
static void smlua_sweep_report(size_t swept, size_t segments, uint64_t t0) {
  if (smlua_stats())
    fprintf(stderr, SMLUA_NAME " sweep: %lu objects in %zu segments, %.3f ms, "
            "after %zu on Lua's thread\n", (unsigned long)swept, segments,
            (double)(smlua_now_ns() - t0) / 1e6, smlua_sweep.swept_serial);
}

/* Whether the sweep in progress may go parallel: more than one worker,
 * split points ahead, and a heap large enough (smlua_sweep_plan). */
static int smlua_sweep_may_split(void) {
  return smlua_workers >= 2 && smlua_sweep_segment > 0 && smlua_sweep.worth &&
         smlua_sweep.passed < smlua_sweep.valid.n;
}

/* Segments of an incremental step: at least this many times
 * smlua_sweep_segment survivors each. */
#define SMLUA_STEP_SEGMENT_FACTOR 4

/* How many segments this step sweeps in parallel, or 0 for a step of
 * GCSWEEPMAX objects on Lua's thread; never with one worker or without
 * split points ahead.
 *   - A step that may sweep the whole list (outside incstep: a full
 *     collection, or a state change run to its end) sweeps every segment
 *     left.
 *   - An incremental step sweeps as many whole segments as its budget
 *     covers, if that is at least two, past the first segment (whose
 *     length is not known: the new objects are all in it), and if the
 *     segments are long: SMLUA_STEP_SEGMENT_FACTOR times the shortest
 *     planned, so that 8 segments per worker make a heap larger than the
 *     caches. Lua's thread frees the dead after the workers unlinked them,
 *     reading headers the other core just wrote: on a heap that fits in
 *     the caches and dies young (binary_trees), sweeping the steps' budgets
 *     in parallel segments made the steps' pauses a fifth longer. */
static size_t smlua_sweep_segments(void) {
  size_t ahead = smlua_sweep.valid.n - smlua_sweep.passed, budget;
  if (!smlua_sweep_may_split())
    return 0;
  if (smlua_step_owed <= 0)  /* outside incstep: run to the state's end */
    return ahead + 1;
  if (smlua_sweep.passed == 0 ||
      smlua_sweep.spacing < SMLUA_STEP_SEGMENT_FACTOR * smlua_sweep_segment)
    return 0;
  budget = (size_t)smlua_step_owed / smlua_sweep.spacing;
  if (budget < 2)
    return 0;
  return budget < ahead + 1 ? budget : ahead + 1;
}

/* The state GCSswpallgc of singlestep: sweepstep for 'allgc', in parallel
 * segments where smlua_sweep_segments says so, else on Lua's thread. */
static lu_mem smlua_sweep_allgc(lua_State *L) {
  global_State *g = G(L);
  l_mem olddebt = g->GCdebt;
  size_t segments;
  lu_mem work;
  if (g->sweepgc == NULL) {  /* enter next state, as sweepstep does */
    if (smlua_sweep.g == g)
      smlua_sweep_promote();
    g->gcstate = GCSswpfinobj;
    g->sweepgc = &g->finobj;
    return 0;
  }
  if (smlua_sweep.g != g)  /* another state's sweep began since */
    smlua_sweep_begin(g);
  segments = smlua_sweep_segments();
  if (segments > 0) {
    uint64_t t0 = smlua_now_ns();
    work = smlua_sweep_parallel(L, g->sweepgc, segments, 0, &g->sweepgc);
    smlua_sweep_report((size_t)work, segments, t0);
  }
  else {
    int count;
    g->sweepgc = smlua_sweep_serial(L, g->sweepgc, &count);
    work = (lu_mem)count;
  }
  g->GCestimate += g->GCdebt - olddebt;  /* update estimate */
  return work;
}

/* sweep2old for 'allgc' (atomic2gen: the survivors become old, threads go
 * to 'grayagain', open upvalues stay gray), recording split points; in
 * parallel segments with more than one worker and split points. */
static void smlua_sweep2old_allgc(lua_State *L) {
  global_State *g = G(L);
  GCObject **p = &g->allgc, *curr;
  size_t segments;
  smlua_sweep_plan(g);
  segments = smlua_sweep_may_split() ? smlua_sweep.valid.n + 1 : 0;
  if (segments > 0) {
    uint64_t t0 = smlua_now_ns();
    GCObject **rest;
    size_t swept = smlua_sweep_parallel(L, p, segments, 1, &rest);
    smlua_sweep_report(swept, segments, t0);
  }
  else {
    while ((curr = *p) != NULL) {
      if (iswhite(curr)) {  /* dead */
        *p = curr->next;
        freeobj(L, curr);
      }
      else {  /* all surviving objects become old */
        smlua_make_old(curr, &g->grayagain);
        smlua_sweep_survivor(curr);
        p = &curr->next;
      }
    }
  }
  smlua_sweep_promote();
}
