/*
 * A small runtime in C that uses stealmark for its stop-the-world marking.
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
 * against a sequential oracle written here. It prints one line per
 * collection and "runtime: OK" at the end, or exits non-zero.
 *
 * Build: see capi/README.md (cc ... runtime.c libstealmark_capi.a ...).
 */
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

typedef struct obj {
  struct obj *next; /* every object, for the sweep */
  uint8_t colour;   /* the mark byte */
  uint8_t type;
  uint8_t finalizer;   /* 1: registered, its finalizer has not run */
  uint8_t finalized;   /* its finalizer ran (at most once) */
  uint32_t nslots;
  uint32_t id;
  uint32_t oracle; /* the oracle's marks */
  struct obj *slots[];
} obj;

#define MAX_GLOBALS 512
#define MAX_STACK 256
#define MAX_FIN 4096

static obj *all_objects;
static size_t object_count;
static obj *globals[MAX_GLOBALS];
static obj *stack[MAX_STACK];
static obj *finalizable[MAX_FIN];
static size_t finalizable_count;
static uint32_t next_id;
static uint64_t rng = 0x2545F4914F6CDD1DULL;
static unsigned long failures;

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
  obj *o = calloc(1, sizeof(obj) + nslots * sizeof(obj *));
  if (!o) {
    perror("calloc");
    exit(2);
  }
  o->type = type;
  o->nslots = nslots;
  o->id = next_id++;
  o->colour = WHITE | (rnd(2) ? AGE : 0);
  o->next = all_objects;
  all_objects = o;
  object_count++;
  if (rnd(8) == 0 && finalizable_count < MAX_FIN) {
    o->finalizer = 1;
    finalizable[finalizable_count++] = o;
  }
  return o;
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
  return sizeof(obj) + ((const obj *)r)->nslots * sizeof(obj *);
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
  const obj *o = (const obj *)r;
  size_t n = 0;
  for (size_t i = start; i < end && n < cap; i++) {
    obj *t = o->slots[i];
    if (!t)
      continue;
    uint32_t kind = slot_kind(o, i);
    sm_ref key = 0;
    if (kind == SM_SLOT_EPHEMERON) {
      key = (sm_ref)o->slots[i - 1];
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

/* Roots in two chunks (the globals, the stack), through a visitor. */
static size_t root_chunks(void *ctx) {
  (void)ctx;
  return 2;
}

static void visit_roots(void *ctx, size_t chunk,
                        void (*visit)(void *vctx, sm_ref ref), void *vctx) {
  (void)ctx;
  obj **table = chunk == 0 ? globals : stack;
  size_t n = chunk == 0 ? MAX_GLOBALS : MAX_STACK;
  for (size_t i = 0; i < n; i++)
    if (table[i])
      visit(vctx, (sm_ref)table[i]);
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

/* ---- one collection ------------------------------------------------------ */

static int is_marked(const obj *o) { return (o->colour & WHITES) == 0; }

static void collect(sm_marker *marker, int round) {
  /* Every object reads as unmarked (white, not black), other bits kept. */
  for (obj *o = all_objects; o; o = o->next)
    o->colour = (uint8_t)((o->colour & ~(WHITES | BLACK)) | WHITE);
  run_oracle();

  sm_object_model model = {0};
  model.size_bytes = size_bytes;
  model.slot_count = slot_count;
  model.scan_slots = scan_slots;
  model.type_count = T_COUNT;
  model.type_id = type_id;
  sm_marks marks = {0};
  marks.mode = SM_MARKS_HEADER_BYTE;
  marks.header.offset = offsetof(obj, colour);
  marks.header.test_mask = WHITES;
  marks.header.test_value = 0;
  marks.header.set_bits = BLACK;
  marks.header.clear_bits = WHITES;
  sm_refs roots = {0};
  roots.chunk_count = root_chunks;
  roots.visit_chunk = visit_roots;
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
  sm_stats st;
  if (sm_report_stats(&report, &st) != SM_OK) {
    fprintf(stderr, "runtime: sm_report_stats: %s\n", sm_last_error());
    exit(1);
  }

  /* The marks are the oracle's; the age bits were kept. */
  uint64_t live = 0, live_bytes = 0, by_type[T_COUNT] = {0};
  for (obj *o = all_objects; o; o = o->next) {
    int want = (o->oracle & O_MARKED) != 0;
    CHECK(is_marked(o) == want, "object %u marked %d, oracle %d", o->id,
          is_marked(o), want);
    if (want) {
      CHECK(o->colour & BLACK, "object %u marked but not black", o->id);
      live++;
      live_bytes += size_bytes(NULL, (sm_ref)o);
      by_type[o->type]++;
    }
  }
  CHECK(st.live_objects == live, "live objects %llu, oracle %llu",
        (unsigned long long)st.live_objects, (unsigned long long)live);
  CHECK(st.live_bytes == live_bytes, "live bytes differ");
  for (size_t t = 0; t < T_COUNT; t++) {
    sm_type_count tc;
    CHECK(sm_report_live_by_type(&report, t, &tc) == SM_OK, "type %zu", t);
    CHECK(tc.objects == by_type[t], "type %zu: %llu objects, oracle %llu", t,
          (unsigned long long)tc.objects, (unsigned long long)by_type[t]);
  }

  /* Clear what the report says, worker by worker (as several threads of a
   * runtime would), and check each slot against the contract. */
  size_t workers = 0, cleared = 0;
  CHECK(sm_report_workers(&report, &workers) == SM_OK, "workers");
  for (size_t w = 0; w < workers; w++) {
    sm_weak_ref buf[64];
    size_t from = 0, n = 0, total = 0;
    do {
      CHECK(sm_report_cleared_by_worker(&report, w, from, buf, 64, &n,
                                        &total) == SM_OK,
            "cleared_by_worker: %s", sm_last_error());
      for (size_t i = 0; i < n; i++) {
        obj *h = (obj *)buf[i].holder;
        obj *t = (obj *)buf[i].target;
        CHECK(h->oracle & O_MARKED, "holder %u of a cleared slot is dead",
              h->id);
        CHECK(h->slots[buf[i].slot] == t, "cleared slot %zu of %u moved",
              buf[i].slot, h->id);
        if (buf[i].kind == SM_SLOT_WEAK)
          CHECK(!(t->oracle & weak_judge(h)),
                "weak slot to reachable %u cleared", t->id);
        else if (buf[i].kind == SM_SLOT_EPHEMERON)
          CHECK(!(((obj *)buf[i].key)->oracle & O_MARKED),
                "entry with a live key cleared");
        else
          CHECK(0, "unexpected kind %u", buf[i].kind);
        /* An entry whose key died has its key slot reported too (a weak
         * slot whose referent was dead before finalization). */
        h->slots[buf[i].slot] = NULL;
        cleared++;
      }
      from += n;
    } while (n == 64);
  }
  CHECK(cleared == st.cleared, "cleared %zu, stats %llu", cleared,
        (unsigned long long)st.cleared);

  /* Nothing left that the contract would clear. */
  for (obj *o = all_objects; o; o = o->next) {
    if (!(o->oracle & O_MARKED))
      continue;
    for (uint32_t i = 0; i < o->nslots; i++) {
      obj *t = o->slots[i];
      if (!t)
        continue;
      uint32_t k = slot_kind(o, i);
      if (k == SM_SLOT_WEAK)
        CHECK(t->oracle & weak_judge(o), "weak slot %u.%u to dead %u kept",
              o->id, i, t->id);
      else if (k == SM_SLOT_EPHEMERON)
        /* The key slot may have been cleared (a key dead before
         * finalization and resurrected): the value stays. */
        CHECK(!o->slots[i - 1] || ((o->slots[i - 1]->oracle & O_MARKED) &&
                                   (t->oracle & O_MARKED)),
              "entry %u.%u kept without a live key and value", o->id, i);
      else
        CHECK(t->oracle & O_MARKED, "slot %u.%u to unmarked %u", o->id, i,
              t->id);
    }
  }

  /* Finalizers: exactly the registered objects not reachable before
   * finalization, each once; unregister them, run them, and let some
   * resurrect their object into the globals. */
  sm_ref fbuf[MAX_FIN];
  size_t nf = 0;
  CHECK(sm_report_to_finalize(&report, 0, fbuf, MAX_FIN, &nf) == SM_OK,
        "to_finalize");
  size_t expected = 0;
  for (size_t i = 0; i < finalizable_count; i++)
    if (!(finalizable[i]->oracle & O_REACHED))
      expected++;
  CHECK(nf == expected && nf == st.to_finalize, "to finalize %zu, oracle %zu",
        nf, expected);
  for (size_t i = 0; i < nf; i++) {
    obj *o = (obj *)fbuf[i];
    CHECK(o->finalizer && !o->finalized && !(o->oracle & O_REACHED),
          "object %u finalized wrongly", o->id);
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
  printf("collection %d: %llu live, %zu freed, %zu cleared, %zu finalized, "
         "%u of %u workers, %u steps, %.1f us\n",
         round, (unsigned long long)st.live_objects, freed, cleared, nf,
         st.workers_used, st.workers, st.steps, st.pause_ns / 1000.0);
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
      uint32_t n = type == T_EPHEMERONS ? 2 * (1 + rnd(4)) : rnd(5);
      if (rnd(50) == 0)
        n = 600 + rnd(800); /* a large array, scanned in chunks */
      if (type == T_EPHEMERONS && n % 2)
        n++;
      obj *o = new_object(type, n);
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
    fprintf(stderr, "runtime: %lu checks failed\n", failures);
    return 1;
  }
  printf("runtime: OK\n");
  return 0;
}
