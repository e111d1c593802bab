/*
 * A small runtime in C that uses stealmark for its marking: stop-the-world
 * collections, and concurrent mark cycles while two mutator threads run.
 *
 * Objects carry a Lua-style colour byte in their header (two white bits, a
 * black bit, and an "age" bit the engine must keep). Three object types:
 * plain nodes (strong slots), weak boxes (slot 0 weak, the rest strong) and
 * ephemeron tables (slot 2i a weak key, slot 2i+1 its value). Some objects
 * have finalizers; a finalizer may resurrect its object into the globals.
 *
 * The program mutates a random heap, collects through the engine with one
 * and with two workers, clears what the report says, runs finalizers,
 * sweeps, and after every collection checks the marks and the report
 * against a sequential oracle written here. Every fourth collection is a
 * concurrent mark cycle instead: two pthreads, each holding its own barrier
 * handle (sm_mutator) in its thread state for the whole cycle, allocate and
 * overwrite slots while the background marking runs; after the remark the
 * runtime checks that everything reachable is marked and that the weak
 * slots, ephemerons and finalizers follow the contract. It prints one line
 * per collection and "runtime: OK" at the end, or exits non-zero.
 *
 * Build: see capi/README.md (cc ... runtime.c libstealmark_capi.a ...).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stealmark.h"

#define WHITE 0x08u /* the current white bit */
#define WHITES 0x18u
#define BLACK 0x20u
#define AGE 0x40u /* a bit the engine must keep */

enum { T_NODE, T_WEAKBOX, T_EPHEMERONS, T_COUNT };

/* A reference slot. Mutator threads write slots while GC workers scan them
 * (a mark cycle), so slots are atomic: plain reads and writes of an _Atomic
 * object are atomic loads and stores. */
typedef _Atomic(struct obj *) slot;

typedef struct obj {
  struct obj *next; /* every object, for the sweep */
  uint8_t colour;   /* the mark byte */
  uint8_t type;
  uint8_t finalizer;   /* 1: registered, its finalizer has not run */
  uint8_t finalized;   /* its finalizer ran (at most once) */
  uint32_t nslots;
  uint32_t id;
  uint32_t oracle; /* the oracle's marks */
  slot slots[];
} obj;

#define MAX_GLOBALS 512
#define MAX_STACK 256
#define MAX_FIN 4096
#define THREADS 2       /* mutator threads of a mark cycle */
#define THREAD_STACK 64 /* each one's roots */

static obj *all_objects;
static size_t object_count;
static obj *globals[MAX_GLOBALS];
static obj *stack[MAX_STACK];
/* Row t: mutator thread t's roots (its stack), written only by it. */
static obj *thread_stack[THREADS][THREAD_STACK];
static obj *finalizable[MAX_FIN];
static size_t finalizable_count;
static uint32_t next_id;
/* Guards the object list and the finalizer registry while mutator threads
 * allocate. */
static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local uint64_t rng = 0x2545F4914F6CDD1DULL;
static atomic_ulong failures;

static uint32_t rnd(uint32_t n) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng % n);
}

#define CHECK(cond, ...)                                                      \
  do {                                                                        \
    if (!(cond)) {                                                            \
      fprintf(stderr, "runtime: check failed: " __VA_ARGS__);                 \
      fputc('\n', stderr);                                                    \
      failures++;                                                             \
    }                                                                         \
  } while (0)

static obj *new_object(uint8_t type, uint32_t nslots) {
  obj *o = calloc(1, sizeof(obj) + nslots * sizeof(slot));
  if (!o) {
    perror("calloc");
    exit(2);
  }
  for (uint32_t i = 0; i < nslots; i++)
    atomic_init(&o->slots[i], NULL);
  o->type = type;
  o->nslots = nslots;
  o->colour = WHITE | (rnd(2) ? AGE : 0);
  int finalizer = rnd(8) == 0;
  pthread_mutex_lock(&heap_lock);
  o->id = next_id++;
  o->next = all_objects;
  all_objects = o;
  object_count++;
  if (finalizer && finalizable_count < MAX_FIN) {
    o->finalizer = 1;
    finalizable[finalizable_count++] = o;
  }
  pthread_mutex_unlock(&heap_lock);
  return o;
}

/* Slots per new object of `type` (ephemeron tables: key/value pairs). */
static uint32_t random_slot_count(uint8_t type) {
  uint32_t n = type == T_EPHEMERONS ? 2 * (1 + rnd(4)) : rnd(5);
  if (rnd(50) == 0)
    n = 600 + rnd(800); /* a large array, scanned in chunks */
  if (type == T_EPHEMERONS && n % 2)
    n++;
  return n;
}

/* ---- the object model --------------------------------------------------- */

static uint32_t slot_kind(const obj *o, size_t i) {
  switch (o->type) {
  case T_WEAKBOX:
    return i == 0 ? SM_SLOT_WEAK : SM_SLOT_STRONG;
  case T_EPHEMERONS:
    return i % 2 == 0 ? SM_SLOT_WEAK : SM_SLOT_EPHEMERON;
  default:
    return SM_SLOT_STRONG;
  }
}

static size_t size_bytes(void *ctx, sm_ref r) {
  (void)ctx;
  return sizeof(obj) + ((const obj *)r)->nslots * sizeof(slot);
}

static size_t slot_count(void *ctx, sm_ref r) {
  (void)ctx;
  return ((const obj *)r)->nslots;
}

static size_t type_id(void *ctx, sm_ref r) {
  (void)ctx;
  return ((const obj *)r)->type;
}

static size_t scan_slots(void *ctx, sm_ref r, size_t start, size_t end,
                         sm_slot *out, size_t cap) {
  (void)ctx;
  obj *o = (obj *)r;
  size_t n = 0;
  for (size_t i = start; i < end && n < cap; i++) {
    obj *t = atomic_load_explicit(&o->slots[i], memory_order_relaxed);
    if (!t)
      continue;
    uint32_t kind = slot_kind(o, i);
    sm_ref key = 0;
    if (kind == SM_SLOT_EPHEMERON) {
      key = (sm_ref)atomic_load_explicit(&o->slots[i - 1],
                                         memory_order_relaxed);
      if (!key) /* no key: the entry is empty */
        continue;
    }
    out[n].index = i;
    out[n].target = (sm_ref)t;
    out[n].key = key;
    out[n].kind = kind;
    out[n].reserved = 0;
    n++;
  }
  return n;
}

/* Roots in chunks (the globals, the stack, each mutator thread's stack),
 * through a visitor. */
static size_t root_chunks(void *ctx) {
  (void)ctx;
  return 2 + THREADS;
}

static void visit_roots(void *ctx, size_t chunk,
                        void (*visit)(void *vctx, sm_ref ref), void *vctx) {
  (void)ctx;
  obj **table = chunk == 0   ? globals
                : chunk == 1 ? stack
                             : thread_stack[chunk - 2];
  size_t n = chunk == 0 ? MAX_GLOBALS : chunk == 1 ? MAX_STACK : THREAD_STACK;
  for (size_t i = 0; i < n; i++)
    if (table[i])
      visit(vctx, (sm_ref)table[i]);
}

/* The heap as the engine sees it: the model, the colour byte, the roots. */
static void describe_heap(sm_object_model *model, sm_marks *marks,
                          sm_refs *roots) {
  memset(model, 0, sizeof *model);
  model->size_bytes = size_bytes;
  model->slot_count = slot_count;
  model->scan_slots = scan_slots;
  model->type_count = T_COUNT;
  model->type_id = type_id;
  memset(marks, 0, sizeof *marks);
  marks->mode = SM_MARKS_HEADER_BYTE;
  marks->header.offset = offsetof(obj, colour);
  marks->header.test_mask = WHITES;
  marks->header.test_value = 0;
  marks->header.set_bits = BLACK;
  marks->header.clear_bits = WHITES;
  memset(roots, 0, sizeof *roots);
  roots->chunk_count = root_chunks;
  roots->visit_chunk = visit_roots;
}

/* ---- the oracle: the runtime contract, sequentially ---------------------- */

#define O_REACHED 1u  /* reachable before finalization */
#define O_MARKED 2u   /* marked at the end */

static int oracle_closure(uint32_t bit) {
  /* Until nothing changes: trace strong slots, and ephemeron values whose
   * key has `bit`, from every object that has `bit`. */
  int changed = 1, any = 0;
  while (changed) {
    changed = 0;
    for (obj *o = all_objects; o; o = o->next) {
      if (!(o->oracle & bit))
        continue;
      for (uint32_t i = 0; i < o->nslots; i++) {
        obj *t = o->slots[i];
        if (!t || (t->oracle & bit))
          continue;
        uint32_t k = slot_kind(o, i);
        if (k == SM_SLOT_STRONG ||
            (k == SM_SLOT_EPHEMERON && o->slots[i - 1] &&
             (o->slots[i - 1]->oracle & bit))) {
          t->oracle |= bit;
          changed = any = 1;
        }
      }
    }
  }
  return any;
}

static void run_oracle(void) {
  for (obj *o = all_objects; o; o = o->next)
    o->oracle = 0;
  for (int i = 0; i < MAX_GLOBALS; i++)
    if (globals[i])
      globals[i]->oracle |= O_REACHED | O_MARKED;
  for (int i = 0; i < MAX_STACK; i++)
    if (stack[i])
      stack[i]->oracle |= O_REACHED | O_MARKED;
  for (int t = 0; t < THREADS; t++)
    for (int i = 0; i < THREAD_STACK; i++)
      if (thread_stack[t][i])
        thread_stack[t][i]->oracle |= O_REACHED | O_MARKED;
  oracle_closure(O_REACHED);
  for (obj *o = all_objects; o; o = o->next)
    if (o->oracle & O_REACHED)
      o->oracle |= O_MARKED;
  for (size_t i = 0; i < finalizable_count; i++)
    finalizable[i]->oracle |= O_MARKED;
  oracle_closure(O_MARKED);
}

/* The marks a weak slot of holder h is judged against: those before
 * finalization, or, for a holder reached only by resurrecting a finalizable
 * object, those after (the contract's J2). */
static uint32_t weak_judge(const obj *h) {
  return (h->oracle & O_REACHED) ? O_REACHED : O_MARKED;
}

/* ---- after a collection: the checks, clearing, finalizers, sweep ------- */

static int is_marked(const obj *o) { return (o->colour & WHITES) == 0; }

/* Every object reads as unmarked (white, not black), other bits kept. */
static void whiten_all(void) {
  for (obj *o = all_objects; o; o = o->next)
    o->colour = (uint8_t)((o->colour & ~(WHITES | BLACK)) | WHITE);
}

/* Checks the marks and the report against the oracle, clears the slots the
 * report names, runs the finalizers and sweeps. `exact`: a stop-the-world
 * collection, whose marks are exactly the oracle's. Otherwise a mark cycle
 * (snapshot at the beginning): everything the oracle reaches at the end is
 * marked, and so are the `allocated` objects allocated black during it; the
 * rest of what was reachable at the start may be marked too. */
static void check_and_sweep(sm_report *report, int round, int exact,
                            size_t allocated) {
  sm_stats st;
  if (sm_report_stats(report, &st) != SM_OK) {
    fprintf(stderr, "runtime: sm_report_stats: %s\n", sm_last_error());
    exit(1);
  }

  /* The marks are the oracle's (or include them); the age bits were kept. */
  uint64_t live = 0, live_bytes = 0, marked = 0, by_type[T_COUNT] = {0};
  for (obj *o = all_objects; o; o = o->next) {
    int want = (o->oracle & O_MARKED) != 0;
    if (exact)
      CHECK(is_marked(o) == want, "object %u marked %d, oracle %d", o->id,
            is_marked(o), want);
    else
      CHECK(is_marked(o) || !want, "reachable object %u not marked", o->id);
    if (is_marked(o)) {
      CHECK(o->colour & BLACK, "object %u marked but not black", o->id);
      marked++;
    }
    if (want) {
      live++;
      live_bytes += size_bytes(NULL, (sm_ref)o);
      by_type[o->type]++;
    }
  }
  if (exact) {
    CHECK(st.live_objects == live, "live objects %llu, oracle %llu",
          (unsigned long long)st.live_objects, (unsigned long long)live);
    CHECK(st.live_bytes == live_bytes, "live bytes differ");
    for (size_t t = 0; t < T_COUNT; t++) {
      sm_type_count tc;
      CHECK(sm_report_live_by_type(report, t, &tc) == SM_OK, "type %zu", t);
      CHECK(tc.objects == by_type[t], "type %zu: %llu objects, oracle %llu",
            t, (unsigned long long)tc.objects,
            (unsigned long long)by_type[t]);
    }
  } else {
    /* Objects allocated black are marked but not in the live counts. */
    CHECK(st.live_objects + allocated == marked,
          "live objects %llu + %zu allocated black, %llu marked",
          (unsigned long long)st.live_objects, allocated,
          (unsigned long long)marked);
  }

  /* Clear what the report says, worker by worker (as several threads of a
   * runtime would), and check each slot against the contract. A weak slot
   * is judged against the marks before finalization; only holders the
   * oracle reaches are judged in a mark cycle (an object that was merely
   * reachable at its start may keep or lose its weak referents). */
  size_t workers = 0, cleared = 0;
  CHECK(sm_report_workers(report, &workers) == SM_OK, "workers");
  for (size_t w = 0; w < workers; w++) {
    sm_weak_ref buf[64];
    size_t from = 0, n = 0, total = 0;
    do {
      CHECK(sm_report_cleared_by_worker(report, w, from, buf, 64, &n,
                                        &total) == SM_OK,
            "cleared_by_worker: %s", sm_last_error());
      for (size_t i = 0; i < n; i++) {
        obj *h = (obj *)buf[i].holder;
        obj *t = (obj *)buf[i].target;
        CHECK(is_marked(h), "holder %u of a cleared slot is dead", h->id);
        cleared++;
        /* A slot is cleared only if it still holds the target it was judged
         * on: in a mark cycle a mutator may have overwritten it since. */
        if (h->slots[buf[i].slot] != t) {
          CHECK(!exact, "cleared slot %zu of %u moved", buf[i].slot, h->id);
          continue;
        }
        if (buf[i].kind == SM_SLOT_WEAK)
          CHECK(!(exact || (h->oracle & O_REACHED)) ||
                    !(t->oracle & weak_judge(h)),
                "weak slot to reachable %u cleared", t->id);
        else if (buf[i].kind == SM_SLOT_EPHEMERON)
          CHECK(!(((obj *)buf[i].key)->oracle & O_MARKED),
                "entry with a live key cleared");
        else
          CHECK(0, "unexpected kind %u", buf[i].kind);
        /* An entry whose key died has its key slot reported too (a weak
         * slot whose referent was dead before finalization). */
        h->slots[buf[i].slot] = NULL;
      }
      from += n;
    } while (n == 64);
  }
  CHECK(cleared == st.cleared, "cleared %zu, stats %llu", cleared,
        (unsigned long long)st.cleared);

  /* What survives the sweep points only at what survives it; a stop-the-
   * world collection also left nothing that the contract would clear. */
  for (obj *o = all_objects; o; o = o->next) {
    if (!is_marked(o))
      continue;
    for (uint32_t i = 0; i < o->nslots; i++) {
      obj *t = o->slots[i];
      if (!t)
        continue;
      uint32_t k = slot_kind(o, i);
      /* The key slot may have been cleared (a key dead before
       * finalization and resurrected): the value stays, ignored. */
      if (k == SM_SLOT_EPHEMERON && !o->slots[i - 1])
        continue;
      CHECK(is_marked(t), "slot %u.%u to unmarked %u", o->id, i, t->id);
      if (!exact)
        continue;
      if (k == SM_SLOT_WEAK)
        CHECK(t->oracle & weak_judge(o), "weak slot %u.%u to dead %u kept",
              o->id, i, t->id);
      else if (k == SM_SLOT_EPHEMERON)
        CHECK((o->slots[i - 1]->oracle & O_MARKED) && (t->oracle & O_MARKED),
              "entry %u.%u kept without a live key and value", o->id, i);
      else
        CHECK(t->oracle & O_MARKED, "slot %u.%u to unmarked %u", o->id, i,
              t->id);
    }
  }

  /* Finalizers: registered objects not reachable before finalization (in a
   * stop-the-world collection, exactly those), each once; unregister them,
   * run them, and let some resurrect their object into the globals. */
  sm_ref fbuf[MAX_FIN];
  size_t nf = 0;
  CHECK(sm_report_to_finalize(report, 0, fbuf, MAX_FIN, &nf) == SM_OK,
        "to_finalize");
  size_t expected = 0;
  for (size_t i = 0; i < finalizable_count; i++)
    if (!(finalizable[i]->oracle & O_REACHED))
      expected++;
  CHECK(nf == st.to_finalize && (exact ? nf == expected : nf <= expected),
        "to finalize %zu, stats %llu, oracle %zu", nf,
        (unsigned long long)st.to_finalize, expected);
  for (size_t i = 0; i < nf; i++) {
    obj *o = (obj *)fbuf[i];
    CHECK(o->finalizer && !o->finalized && !(o->oracle & O_REACHED),
          "object %u finalized wrongly", o->id);
    CHECK(is_marked(o), "object %u finalized but not kept", o->id);
    o->finalizer = 0;
    o->finalized = 1;
    if (rnd(3) == 0)
      globals[rnd(MAX_GLOBALS)] = o; /* resurrection */
  }
  size_t kept = 0;
  for (size_t i = 0; i < finalizable_count; i++)
    if (finalizable[i]->finalizer)
      finalizable[kept++] = finalizable[i];
  finalizable_count = kept;

  /* Sweep. */
  size_t freed = 0;
  for (obj **p = &all_objects; *p;) {
    obj *o = *p;
    if (is_marked(o)) {
      p = &o->next;
    } else {
      *p = o->next;
      free(o);
      freed++;
      object_count--;
    }
  }
  printf("%s %d: %llu live, %zu freed, %zu cleared, %zu finalized, "
         "%u of %u workers, %u steps, %.1f us\n",
         exact ? "collection" : "mark cycle", round,
         (unsigned long long)st.live_objects, freed, cleared, nf,
         st.workers_used, st.workers, st.steps, st.pause_ns / 1000.0);
}

/* ---- a stop-the-world collection ---------------------------------------- */

static void collect(sm_marker *marker, int round) {
  whiten_all();
  run_oracle();

  sm_object_model model;
  sm_marks marks;
  sm_refs roots;
  describe_heap(&model, &marks, &roots);
  sm_refs fin = {0};
  fin.refs = (const sm_ref *)finalizable;
  fin.len = finalizable_count;
  sm_collection c = {0};
  c.model = &model;
  c.marks = &marks;
  c.roots = &roots;
  c.finalizable = &fin;

  sm_report report;
  sm_status s = sm_collect(marker, &c, &report);
  if (s != SM_OK) {
    fprintf(stderr, "runtime: sm_collect: %s: %s\n", sm_status_name(s),
            sm_last_error());
    exit(1);
  }
  check_and_sweep(&report, round, 1, 0);
}

/* ---- the mutator --------------------------------------------------------- */

static obj *random_object(void) {
  size_t k = rnd((uint32_t)object_count);
  obj *o = all_objects;
  while (k--)
    o = o->next;
  return o;
}

static void mutate(int steps) {
  for (int s = 0; s < steps; s++) {
    uint32_t what = rnd(10);
    if (what < 5 || object_count < 8) {
      uint8_t type = (uint8_t)rnd(T_COUNT);
      obj *o = new_object(type, random_slot_count(type));
      if (rnd(2))
        globals[rnd(MAX_GLOBALS)] = o;
      else
        stack[rnd(MAX_STACK)] = o;
    } else if (what < 9) {
      obj *h = random_object();
      if (h->nslots)
        h->slots[rnd(h->nslots)] = rnd(6) ? random_object() : NULL;
    } else {
      if (rnd(2))
        globals[rnd(MAX_GLOBALS)] = NULL;
      else
        stack[rnd(MAX_STACK)] = NULL;
    }
  }
  /* An ephemeron value without its key is meaningless here: drop it. */
  for (obj *o = all_objects; o; o = o->next)
    if (o->type == T_EPHEMERONS)
      for (uint32_t i = 1; i < o->nslots; i += 2)
        if (!o->slots[i - 1])
          o->slots[i] = NULL;
}

/* ---- a concurrent mark cycle with two mutator threads -------------------- */

/* A mutator thread's state. Its barrier handle lives here for the whole
 * cycle, as it would in a virtual machine's per-thread state. */
typedef struct mutator {
  sm_cycle *cycle;
  sm_mutator *barrier;
  obj **roots; /* its row of thread_stack */
  uint64_t seed;
  int steps;
  size_t allocated; /* objects it allocated black */
} mutator;

/* A barrier call that must succeed. */
#define BARRIER(call)                                                         \
  do {                                                                        \
    sm_status s_ = (call);                                                    \
    CHECK(s_ == SM_OK, "%s: %s: %s", #call, sm_status_name(s_),               \
          sm_last_error());                                                   \
  } while (0)

/* An object the thread can reach now: a root, then a few strong slots on.
 * It never reads a weak slot or an ephemeron value (a referent read from
 * one would have to go through sm_mutator_pre_write first, as the snapshot
 * may not keep it). NULL if none was found. */
static obj *reachable_object(const mutator *m) {
  obj *o = NULL;
  for (int tries = 0; !o && tries < 16; tries++) {
    uint32_t where = rnd(3);
    o = where == 0   ? globals[rnd(MAX_GLOBALS)]
        : where == 1 ? stack[rnd(MAX_STACK)]
                     : m->roots[rnd(THREAD_STACK)];
  }
  for (uint32_t hops = rnd(4); o && o->nslots && hops > 0; hops--) {
    uint32_t i = rnd(o->nslots);
    obj *t = slot_kind(o, i) == SM_SLOT_STRONG ? o->slots[i] : NULL;
    if (!t)
      break;
    o = t;
  }
  return o;
}

/* The write barrier and the store: the slot's old value goes to the
 * barrier before it is overwritten. */
static void store(mutator *m, obj *holder, uint32_t i, obj *value) {
  BARRIER(sm_mutator_pre_write(m->barrier, (sm_ref)holder->slots[i]));
  holder->slots[i] = value;
}

/* A slot store that keeps every ephemeron entry with a value keyed: an
 * ephemeron table's key slots only ever get a new key. */
static void store_somewhere(mutator *m, obj *holder, obj *value) {
  if (!holder || !holder->nslots)
    return;
  uint32_t i = rnd(holder->nslots);
  if (holder->type == T_EPHEMERONS) {
    if (i % 2 == 0 && !value)
      return;
    if (i % 2 == 1 && !holder->slots[i - 1])
      return;
  }
  store(m, holder, i, value);
}

static void *mutator_main(void *arg) {
  mutator *m = arg;
  rng = m->seed;
  BARRIER(sm_mutator_new(m->cycle, &m->barrier));
  for (int s = 0; s < m->steps; s++) {
    uint32_t what = rnd(10);
    if (what < 3) {
      /* Allocate black before any reference to the object is stored. */
      uint8_t type = (uint8_t)rnd(T_COUNT);
      obj *o = new_object(type, random_slot_count(type));
      BARRIER(sm_mutator_allocate_black(m->barrier, (sm_ref)o));
      m->allocated++;
      for (uint32_t i = 0; i < o->nslots && i < 4; i++)
        store_somewhere(m, o, reachable_object(m));
      if (rnd(2))
        m->roots[rnd(THREAD_STACK)] = o;
      else
        store_somewhere(m, reachable_object(m), o);
    } else if (what < 9) {
      store_somewhere(m, reachable_object(m),
                      rnd(6) ? reachable_object(m) : NULL);
    } else {
      /* Roots are not barriered: the remark reads them again. */
      m->roots[rnd(THREAD_STACK)] = rnd(2) ? reachable_object(m) : NULL;
    }
  }
  /* The safepoint before the remark: hand the records off. The handle
   * stays in the thread's state. */
  BARRIER(sm_mutator_detach(m->barrier));
  return NULL;
}

static void concurrent_cycle(sm_marker *marker, int round) {
  whiten_all();
  sm_object_model model;
  sm_marks marks;
  sm_refs roots;
  describe_heap(&model, &marks, &roots);
  sm_cycle *cycle;
  sm_status s = sm_cycle_start(marker, &model, &marks, &roots, NULL, &cycle);
  if (s != SM_OK) {
    fprintf(stderr, "runtime: sm_cycle_start: %s: %s\n", sm_status_name(s),
            sm_last_error());
    exit(1);
  }
  BARRIER(sm_cycle_start_background(cycle));

  mutator threads[THREADS];
  pthread_t ids[THREADS];
  for (int t = 0; t < THREADS; t++) {
    threads[t] = (mutator){cycle, NULL, thread_stack[t], rng + 977u * t + 1,
                           400 + (int)rnd(800), 0};
    if (pthread_create(&ids[t], NULL, mutator_main, &threads[t]) != 0) {
      perror("pthread_create");
      exit(2);
    }
  }
  size_t allocated = 0;
  for (int t = 0; t < THREADS; t++) {
    pthread_join(ids[t], NULL);
    allocated += threads[t].allocated;
  }

  /* The remark, the mutators stopped, from the heap as it is now. */
  bool quiet = false;
  BARRIER(sm_cycle_wait_quiet(cycle, -1, &quiet));
  run_oracle();
  sm_refs fin = {0};
  fin.refs = (const sm_ref *)finalizable;
  fin.len = finalizable_count;
  sm_remark remark = {0};
  remark.roots = &roots;
  remark.finalizable = &fin;
  sm_report report;
  s = sm_cycle_finish(cycle, &remark, &report);
  if (s != SM_OK) {
    fprintf(stderr, "runtime: sm_cycle_finish: %s: %s\n", sm_status_name(s),
            sm_last_error());
    exit(1);
  }
  /* The report is readable while the cycle is still allocated. */
  check_and_sweep(&report, round, 0, allocated);
  sm_cycle_free(cycle);

  /* A barrier handle used after its cycle ended says so. */
  for (int t = 0; t < THREADS; t++) {
    if (all_objects) {
      s = sm_mutator_pre_write(threads[t].barrier, (sm_ref)all_objects);
      CHECK(s == SM_ERR_ENDED, "a handle after its cycle: %s",
            sm_status_name(s));
    }
    sm_mutator_free(threads[t].barrier);
  }
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 40;
  /* One worker; two workers, never solo; two workers, solo after a
   * collection that marked fewer than 1000 objects. */
  sm_marker *markers[3];
  for (int m = 0; m < 3; m++) {
    sm_config config;
    sm_config_init(&config);
    config.workers = m == 0 ? 1 : 2;
    config.solo_below = m == 1 ? 0 : 1000;
    if (m == 2)
      config.deque = "chase-lev";
    if (sm_marker_new(&config, &markers[m]) != SM_OK) {
      fprintf(stderr, "runtime: sm_marker_new: %s\n", sm_last_error());
      return 1;
    }
  }
  for (int r = 0; r < rounds; r++) {
    mutate(600 + (int)rnd(1200));
    if (r % 4 == 3)
      concurrent_cycle(markers[r % 3], r);
    else
      collect(markers[r % 3], r);
  }
  /* Misuse comes back as an error code with a message. */
  sm_report stale;
  sm_status s = sm_collect(NULL, NULL, &stale);
  CHECK(s == SM_ERR_NULL, "a null marker gave %s", sm_status_name(s));
  printf("misuse: %s: %s\n", sm_status_name(s), sm_last_error());

  for (int m = 0; m < 3; m++)
    sm_marker_free(markers[m]);
  while (all_objects) {
    obj *o = all_objects;
    all_objects = o->next;
    free(o);
  }
  if (failures) {
    fprintf(stderr, "runtime: %lu checks failed\n",
            (unsigned long)atomic_load(&failures));
    return 1;
  }
  printf("runtime: OK\n");
  return 0;
}
