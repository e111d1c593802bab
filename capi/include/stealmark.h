/*
 * stealmark.h: the C interface of the stealmark parallel mark engine.
 *
 * A runtime describes its heap with callbacks (the object model), says where
 * its mark bits live, hands over its roots and registered finalizable
 * objects, and gets back a report: the weak slots to clear, the objects to
 * finalize, live objects and bytes. Everything unmarked after a collection
 * is garbage; sweeping it is the runtime's job.
 *
 * Conventions
 * - Every function except sm_config_init, sm_marker_free, sm_last_error and
 *   sm_status_name returns an sm_status. SM_OK is 0; on any other status, sm_last_error() gives a
 *   message naming what was wrong, and out-parameters are left untouched.
 * - An sm_ref is an object reference: a non-zero word, a multiple of 8
 *   (usually the object's address). 0 means "no reference".
 * - Callbacks are plain C functions. They must return normally: never
 *   longjmp out of one, never throw a C++ exception through one.
 * - Every callback may be called from any GC worker thread, several at once,
 *   while a collection runs, and only then. The heap must not change during
 *   a collection (the runtime's threads are stopped).
 * - A panic inside the engine never unwinds into C: the call returns
 *   SM_ERR_PANIC and the marker is poisoned (later calls on it return
 *   SM_ERR_POISONED; only sm_marker_free is still allowed).
 */
#ifndef STEALMARK_H
#define STEALMARK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Status codes and errors                                                  */
/* ------------------------------------------------------------------------ */

/* The result of every call (an int32_t, so that the ABI never depends on
 * the size of a C enum). */
typedef int32_t sm_status;

/* Success. */
#define SM_OK 0
/* A required pointer argument (handle, struct, callback, out-parameter) was
 * NULL. */
#define SM_ERR_NULL 1
/* The configuration is invalid (worker count, deque name, threshold). */
#define SM_ERR_CONFIG 2
/* The mark-bit description is invalid (sm_marks: an unknown mode, a header
 * byte description that cannot express marking, a missing callback). */
#define SM_ERR_MARKS 3
/* A callback broke its contract during a collection: a slot index outside
 * the range asked for or out of order, a reference that is not a multiple of
 * 8, an unknown slot kind, a type id or dense index out of bounds, a
 * reference outside the declared heap bounds, a scan reporting failure. The
 * collection's results are void; the marker stays usable. */
#define SM_ERR_CONTRACT 4
/* The engine panicked (a bug in stealmark): the marker is now poisoned. */
#define SM_ERR_PANIC 5
/* The marker was poisoned by an earlier SM_ERR_PANIC. */
#define SM_ERR_POISONED 6
/* The marker is in use by another call (a second thread, or a callback that
 * re-entered the engine during a collection). */
#define SM_ERR_BUSY 7
/* A report used after the next collection on its marker began. */
#define SM_ERR_STALE 8
/* An argument out of range (a worker index, a type id). */
#define SM_ERR_RANGE 9
/* The engine could not allocate or start a thread. */
#define SM_ERR_RESOURCE 10
/* A mark cycle, or a barrier handle of one, used after the cycle ended
 * (finished or freed). */
#define SM_ERR_ENDED 11

/* The message of the last call on this thread that did not return SM_OK, or
 * "" if there was none. Valid until the next failing call on this thread.
 * Thread rules: any thread, any time. */
const char *sm_last_error(void);

/* A static name of a status code ("SM_ERR_NULL", ...; "unknown" otherwise).
 * Thread rules: any thread, any time. */
const char *sm_status_name(sm_status status);

/* ------------------------------------------------------------------------ */
/* References and slots                                                     */
/* ------------------------------------------------------------------------ */

/* An object reference: non-zero, a multiple of 8. */
typedef uintptr_t sm_ref;

/* How a reference slot holds its target (sm_slot.kind).
 * - STRONG: always traced.
 * - SOFT: traced if the soft-reference policy keeps the referent, otherwise
 *   weak.
 * - WEAK: never traced; cleared if the referent is unmarked once strong,
 *   soft and ephemeron marking is over, before finalization.
 * - PHANTOM: never traced; cleared if the referent is unmarked after
 *   finalization.
 * - EPHEMERON: the value of an ephemeron entry: traced if and only if its
 *   key (sm_slot.key) is marked, whenever that happens; cleared if the key is
 *   unmarked after finalization. The key itself is usually held by a WEAK
 *   slot of the same holder.
 * - STRONG_LEAF: a strong slot whose target has no reference slots of any
 *   kind (a string, a boxed number, an array of primitives), as the runtime
 *   can tell from the slot itself (a type tag beside the reference) without
 *   reading the target. The engine marks the target but never queues or
 *   scans it. A target with slots breaks the contract: they are skipped.
 *   Debug builds of the engine check the hint (slot_count(target) == 0). */
#define SM_SLOT_STRONG 0u
#define SM_SLOT_SOFT 1u
#define SM_SLOT_WEAK 2u
#define SM_SLOT_PHANTOM 3u
#define SM_SLOT_EPHEMERON 4u
#define SM_SLOT_STRONG_LEAF 5u

/* One non-null reference slot of an object, as the object model's
 * scan_slots callback writes it. */
typedef struct sm_slot {
  /* The slot's index in [0, slot_count(obj)): the report names cleared
   * slots by (holder, index). */
  size_t index;
  /* The referent (non-zero). */
  sm_ref target;
  /* For SM_SLOT_EPHEMERON: the entry's key (non-zero); otherwise 0. */
  sm_ref key;
  /* One of SM_SLOT_*. */
  uint32_t kind;
  /* Set to 0. */
  uint32_t reserved;
} sm_slot;

/* What scan_slots returns to say the object could not be scanned: the
 * collection fails with SM_ERR_CONTRACT. */
#define SM_SCAN_FAILED SIZE_MAX

/* The end scan_slots is given to ask for all of an object's slots, with
 * sm_object_model.scan_clamps_end. */
#define SM_SLOTS_ALL SIZE_MAX

/* ------------------------------------------------------------------------ */
/* The object model                                                         */
/* ------------------------------------------------------------------------ */

/* How the engine reads the heap. Every callback receives `ctx`. Callbacks
 * are called from every GC worker at once; they must not write the heap.
 * Optional callbacks may be NULL. The struct is read at the start of each
 * collection; it need only live until the call returns. */
typedef struct sm_object_model {
  void *ctx;
  /* Required. The object's size in bytes, header included (summed as live
   * bytes). */
  size_t (*size_bytes)(void *ctx, sm_ref obj);
  /* Required. The number of reference slots of the object, null ones
   * included: slot indices lie in [0, slot_count). */
  size_t (*slot_count)(void *ctx, sm_ref obj);
  /* Required. Writes, in slot order, the non-null reference slots of `obj`
   * whose index lies in [start, end) (end <= slot_count(obj), unless
   * scan_clamps_end says the runtime clamps it) into
   * out[0..cap), and returns how many it wrote. If it returns cap, the
   * engine calls it again from the index after the last one written; a
   * return below cap means "no more slots in the range". cap is at least
   * 64. One call per object in the common case, one per chunk of a large
   * array: never one per slot. Return SM_SCAN_FAILED to fail the
   * collection. */
  size_t (*scan_slots)(void *ctx, sm_ref obj, size_t start, size_t end,
                       sm_slot *out, size_t cap);
  /* The number of object types for the live-object histogram; 0 means no
   * types (and type_id may be NULL). */
  size_t type_count;
  /* Required if type_count > 0: the object's type, below type_count. */
  size_t (*type_id)(void *ctx, sm_ref obj);
  /* Optional. Hints that `obj` will be scanned soon, or that its mark bit
   * will be tested soon. NULL: the engine prefetches the reference as an
   * address (see prefetch_bytes), and, with SM_MARKS_HEADER_BYTE, the mark
   * byte before it tests it. Set prefetch_off to skip prefetching
   * altogether (references that are not addresses). */
  void (*prefetch)(void *ctx, sm_ref obj);
  /* Non-zero: no prefetching at all. */
  uint32_t prefetch_off;
  /* Without a prefetch callback: how many bytes from the reference a scan
   * reads first (the header of the object type scanned most), at most 64.
   * Before it scans an object the engine prefetches the cache line at the
   * reference and, if these bytes run into the next line, that one too: an
   * object of 56 bytes at 16-byte alignment crosses a 64-byte line at 3 of
   * its 4 offsets. 0: the line at the reference only. Above 64 fails with
   * SM_ERR_RANGE. */
  uint32_t prefetch_bytes;
  /* Optional heap bounds: when heap_end > heap_start, every reference the
   * engine is given (roots, slots, keys, finalizable objects) must lie in
   * [heap_start, heap_end), or the collection fails with SM_ERR_CONTRACT.
   * Both 0: no check. */
  uintptr_t heap_start;
  uintptr_t heap_end;
  /* Optional. The second stage of prefetching, for a scan that reads memory
   * only the header locates (an array allocated apart from the object):
   * hints that `obj` will be scanned soon, a few objects after its first
   * bytes were prefetched (prefetch, prefetch_bytes), so that reading its
   * header here is likely a cache hit. Prefetch what the scan reads beyond
   * the header; read nothing else, write nothing. Not called with
   * prefetch_off. */
  void (*prefetch_slots)(void *ctx, sm_ref obj);
  /* Non-zero: scan_slots accepts an end past the object's last slot and
   * stops at its last slot (SM_SLOTS_ALL asks for all of them). The engine
   * then scans an object with one call, scan_slots(obj, 0, SM_SLOTS_ALL,
   * ...), and asks slot_count only when that call fills the buffer: an
   * object with cap non-null slots or more, perhaps an array large enough
   * to scan in chunks (that first call's slots are then asked for again).
   * One callback per object rather than two. 0: end <= slot_count(obj) in
   * every call, and slot_count is asked for every object scanned. */
  uint32_t scan_clamps_end;
} sm_object_model;

/* ------------------------------------------------------------------------ */
/* Mark bits                                                                */
/* ------------------------------------------------------------------------ */

/* sm_marks.mode */
/* A byte in each object's header, set atomically by the engine. */
#define SM_MARKS_HEADER_BYTE 1u
/* The runtime's own try_mark / is_marked callbacks. */
#define SM_MARKS_CALLBACKS 2u
/* The engine's side bitmap over dense indices (dense_index callback). */
#define SM_MARKS_SIDE_BITMAP 3u

/* A header byte at `obj + offset`, read and written by the engine with
 * atomic byte operations during a collection. The object is marked iff
 * (byte & test_mask) == test_value. Marking replaces the byte by
 * (byte & ~clear_bits) | set_bits; the other bits are kept.
 *
 * A valid description: test_mask is not 0, test_value lies within
 * test_mask, set_bits and clear_bits are disjoint, and every bit of
 * test_mask is in set_bits or clear_bits with (set_bits & test_mask) ==
 * test_value, so that marking turns any byte into a marked one. Anything
 * else fails with SM_ERR_MARKS.
 *
 * - "Bit 0 set means marked": test_mask 0x01, test_value 0x01,
 *   set_bits 0x01, clear_bits 0x00.
 * - Lua 5.4's colour byte (`marked` of every GCObject; white bits 3 and 4,
 *   black bit 5): marked iff neither white bit is set, marking clears both
 *   white bits and sets black: test_mask 0x18, test_value 0x00,
 *   set_bits 0x20, clear_bits 0x18. A gray object (no white bit) counts as
 *   marked and is not scanned again.
 *
 * The runtime makes every object it wants traced read as unmarked before
 * the collection. */
typedef struct sm_mark_byte {
  /* Byte offset of the mark byte from the object's reference. */
  ptrdiff_t offset;
  uint8_t test_mask;
  uint8_t test_value;
  uint8_t set_bits;
  uint8_t clear_bits;
} sm_mark_byte;

/* Where mark bits live. */
typedef struct sm_marks {
  /* One of SM_MARKS_*. */
  uint32_t mode;
  /* SM_MARKS_HEADER_BYTE and SM_MARKS_CALLBACKS: how many targets ahead of
   * its test the engine prefetches a mark (the model's prefetch, or the mark
   * byte's line), or 0 for the default, 32, right for marks in the objects:
   * the test of a target not touched for a while misses, and the miss needs
   * time to resolve. Marks in a dense side table of the runtime's own
   * (through the callbacks) mostly hit, and do best with 8, as the engine's
   * own bitmap (SM_MARKS_SIDE_BITMAP) does. The engine uses the largest
   * power of two not above it, at most 64. */
  uint32_t prefetch_distance;
  /* SM_MARKS_HEADER_BYTE: the byte's description. */
  sm_mark_byte header;
  /* Context of the callbacks below. */
  void *ctx;
  /* SM_MARKS_CALLBACKS: set obj's mark bit atomically; return true iff this
   * call set it (of two concurrent calls for one object, at most one returns
   * true). */
  bool (*try_mark)(void *ctx, sm_ref obj);
  /* SM_MARKS_CALLBACKS: whether obj is marked: an atomic load of what
   * try_mark writes with an atomic read-modify-write (sequentially
   * consistent fences must order the two). */
  bool (*is_marked)(void *ctx, sm_ref obj);
  /* SM_MARKS_SIDE_BITMAP: the object's dense index, below dense_bound,
   * distinct for distinct objects. The engine clears its bitmap itself at
   * the start of each collection; sm_report_is_marked reads it after. */
  size_t (*dense_index)(void *ctx, sm_ref obj);
  /* SM_MARKS_SIDE_BITMAP: one past the largest dense index. */
  size_t dense_bound;
} sm_marks;

/* ------------------------------------------------------------------------ */
/* Roots, finalizable objects, soft references                              */
/* ------------------------------------------------------------------------ */

/* A set of references in chunks, claimed by the GC workers in parallel (one
 * chunk per thread stack, per block of globals, ...): the roots, or the
 * registered finalizable objects (objects with finalizers that have not run
 * yet).
 *
 * Three forms, checked in this order:
 * 1. refs != NULL: the plain array refs[0..len), in chunks of 1024; the
 *    callbacks are ignored.
 * 2. visit_chunk != NULL: visit_chunk(ctx, c, visit, vctx) calls
 *    visit(vctx, ref) for every reference of chunk c, c < chunk_count(ctx).
 * 3. scan_chunk != NULL: scan_chunk(ctx, c, from, out, cap) writes the
 *    references of chunk c from its `from`th on into out[0..cap) and returns
 *    how many; a return of cap means "call again from from + cap".
 * All NULL (and len 0): the empty set. The callbacks run on GC workers,
 * several at once, each chunk once per use. */
typedef struct sm_refs {
  const sm_ref *refs;
  size_t len;
  void *ctx;
  size_t (*chunk_count)(void *ctx);
  void (*visit_chunk)(void *ctx, size_t chunk,
                      void (*visit)(void *vctx, sm_ref ref), void *vctx);
  size_t (*scan_chunk)(void *ctx, size_t chunk, size_t from, sm_ref *out,
                       size_t cap);
} sm_refs;

/* sm_soft_policy.mode */
/* Clear every soft reference whose referent is not strongly reachable
 * (memory is short). The default (0). */
#define SM_SOFT_CLEAR_ALL 0u
/* Treat soft references as strong. */
#define SM_SOFT_KEEP_ALL 1u
/* Ask keep(ctx, referent) per referent, from the GC workers in parallel. */
#define SM_SOFT_ASK 2u

typedef struct sm_soft_policy {
  uint32_t mode;
  uint32_t reserved;
  void *ctx;
  bool (*keep)(void *ctx, sm_ref referent);
} sm_soft_policy;

/* ------------------------------------------------------------------------ */
/* Configuration and the marker handle                                      */
/* ------------------------------------------------------------------------ */

typedef struct sm_config {
  /* GC workers, the calling thread included; 0: the machine's cores. */
  uint32_t workers;
  /* Non-zero: count live bytes and the per-type histogram while marking
   * (default 1). Objects are counted either way. */
  uint32_t count_live;
  /* The deque kind by name ("steal-half", "chase-lev", "abp", ...); NULL:
   * the default. Copied by sm_marker_new. */
  const char *deque;
  /* A collection runs on the calling thread alone, without waking the other
   * workers, when the previous collection on this marker marked fewer than
   * this many objects (the first collection counts as small). 0: never.
   * Default 16384. */
  uint64_t solo_below;
} sm_config;

/* Fills *config with the defaults. Thread rules: any thread. */
void sm_config_init(sm_config *config);

/* The engine: a pool of parked worker threads and the buffers of the last
 * collection, reused by the next. */
typedef struct sm_marker sm_marker;

/* Validates *config, starts workers - 1 threads (parked between
 * collections) and writes the new marker to *out.
 * Thread rules: any thread; the marker belongs to no thread. */
sm_status sm_marker_new(const sm_config *config, sm_marker **out);

/* Stops the marker's threads and frees it (a poisoned marker too). NULL is
 * ignored. Every report of the marker dies with it.
 * Thread rules: any thread, but not while another call on this marker runs
 * or could start. */
void sm_marker_free(sm_marker *marker);

/* Runs task(ctx, i) once for each i in [0, tasks), spread over the marker's
 * threads (the calling thread is one of them), and returns when every call
 * has returned: the runtime's own parallel work between collections, such as
 * its sweep, on the threads the marker keeps for marking. Tasks are handed
 * out in index order, one at a time, to whichever thread is free: split the
 * work into a few times more tasks than workers to balance it. With one
 * worker, or one task, every call runs on the calling thread. tasks 0
 * returns SM_OK at once (task may then be NULL).
 *
 * The task runs on several threads at once, with the same ctx; it must
 * return normally. Within it, calls on this marker return SM_ERR_BUSY.
 * The last collection's report stays readable afterwards.
 * Thread rules: as sm_collect (one call at a time per marker; SM_ERR_BUSY
 * while a mark cycle holds the marker). */
sm_status sm_marker_run_tasks(sm_marker *marker, size_t tasks,
                              void (*task)(void *ctx, size_t index),
                              void *ctx);

/* ------------------------------------------------------------------------ */
/* A stop-the-world collection                                              */
/* ------------------------------------------------------------------------ */

/* The inputs of one collection. The pointed-to structs need only live until
 * sm_collect returns. */
typedef struct sm_collection {
  const sm_object_model *model;
  const sm_marks *marks;
  /* The roots (required, may be empty). */
  const sm_refs *roots;
  /* The registered finalizable objects; NULL: none. Duplicates allowed. */
  const sm_refs *finalizable;
  /* Soft references (zeroed: clear all). */
  sm_soft_policy soft;
} sm_collection;

/* The results of a collection: a small value naming its marker and the
 * collection; the results themselves stay in the marker. The fields are
 * private. */
typedef struct sm_report {
  sm_marker *marker;
  uint64_t collection;
} sm_report;

/* Runs a whole collection: marks everything reachable from the roots and
 * applies the runtime contract (soft, weak, ephemeron, finalization with
 * resurrection, phantom). With SM_MARKS_HEADER_BYTE or SM_MARKS_CALLBACKS the
 * runtime has made its objects read as unmarked before the call.
 *
 * On SM_OK, *report (if report is not NULL) names the results, readable
 * until the next sm_collect on this marker begins (then the report functions
 * return SM_ERR_STALE) or the marker is freed (then using it is undefined).
 * On failure *report is left untouched and the marks are void.
 *
 * Thread rules: any thread, one call at a time per marker (a concurrent or
 * re-entrant call returns SM_ERR_BUSY). The calling thread is GC worker 0;
 * the callbacks run on it and on the marker's threads. Different markers are
 * independent. */
sm_status sm_collect(sm_marker *marker, const sm_collection *collection,
                     sm_report *report);

/* ------------------------------------------------------------------------ */
/* The report                                                               */
/* Thread rules for every sm_report_* function: any thread, concurrently with
 * each other, but not concurrently with sm_collect or sm_marker_free on the
 * report's marker.                                                          */
/* ------------------------------------------------------------------------ */

/* A slot to clear: `holder`'s slot number `slot`. */
typedef struct sm_weak_ref {
  sm_ref holder;
  size_t slot;
  /* The referent (an ephemeron: its value). */
  sm_ref target;
  /* For SM_SLOT_EPHEMERON: the key; otherwise 0. */
  sm_ref key;
  /* SM_SLOT_SOFT, _WEAK, _PHANTOM or _EPHEMERON. */
  uint32_t kind;
  uint32_t reserved;
} sm_weak_ref;

/* Statistics of a collection. */
typedef struct sm_stats {
  /* Wall time of the collection, in nanoseconds. */
  uint64_t pause_ns;
  /* Objects marked (the finalizable ones and what they reach included). */
  uint64_t live_objects;
  /* Their size_bytes (0 if count_live is off). */
  uint64_t live_bytes;
  /* References read from the roots. */
  uint64_t roots;
  /* Slots to clear. */
  uint64_t cleared;
  /* Objects to finalize. */
  uint64_t to_finalize;
  /* Soft referents kept by the policy. */
  uint64_t soft_kept;
  /* Ephemeron entries found in marked objects. */
  uint64_t ephemerons;
  /* Objects stolen between workers. */
  uint64_t items_stolen;
  /* Steps run (each a parallel job of the workers with its own
   * termination: roots, ephemeron rounds, soft, finalize, judge). */
  uint32_t steps;
  /* Workers configured. */
  uint32_t workers;
  /* Workers that took part: 1 when the collection ran on the calling thread
   * alone. */
  uint32_t workers_used;
  uint32_t reserved;
} sm_stats;

/* Per-type live counts. */
typedef struct sm_type_count {
  uint64_t objects;
  uint64_t bytes;
} sm_type_count;

/* The collection's statistics. */
sm_status sm_report_stats(const sm_report *report, sm_stats *out);

/* The number of workers whose lists the report holds (the configured
 * workers). */
sm_status sm_report_workers(const sm_report *report, size_t *out);

/* Copies slots to clear, all workers' together, from the `from`th on, into
 * out[0..cap); *written says how many. Their total is sm_stats.cleared.
 * After a mark cycle whose mutators wrote non-strong slots, a slot may no
 * longer hold the target it was judged on (written after its holder's
 * scan), and a holder scanned again at the remark may have a slot named
 * twice: clear a slot only if it still holds `target` (an ephemeron's value
 * also `key`). */
sm_status sm_report_cleared(const sm_report *report, size_t from,
                            sm_weak_ref *out, size_t cap, size_t *written);

/* Worker `worker`'s slots to clear (worker < sm_report_workers), from the
 * `from`th on; *total is that worker's count. For a runtime that clears with
 * several threads, one list each. After a mark cycle, the rule of
 * sm_report_cleared applies: clear a slot only if it still holds `target`. */
sm_status sm_report_cleared_by_worker(const sm_report *report, size_t worker,
                                      size_t from, sm_weak_ref *out,
                                      size_t cap, size_t *written,
                                      size_t *total);

/* Copies the objects to finalize (registered, unreachable, now marked with
 * all they reach; each once) from the `from`th on into out[0..cap). Their
 * total is sm_stats.to_finalize. The runtime unregisters them. */
sm_status sm_report_to_finalize(const sm_report *report, size_t from,
                                sm_ref *out, size_t cap, size_t *written);

/* The live objects and bytes of type `type_id` (below the model's
 * type_count; SM_ERR_RANGE otherwise). */
sm_status sm_report_live_by_type(const sm_report *report, size_t type_id,
                                 sm_type_count *out);

/* SM_MARKS_SIDE_BITMAP only: whether the object of dense index
 * `dense_index` was marked. SM_ERR_RANGE for an index at or past the bound,
 * SM_ERR_MARKS for a report of another mark mode. */
sm_status sm_report_is_marked(const sm_report *report, size_t dense_index,
                              bool *out);

/* ------------------------------------------------------------------------ */
/* Mark cycles: incremental and concurrent marking                          */
/* ------------------------------------------------------------------------ */

/* A mark cycle. sm_cycle_start takes the engine
 * out of its marker for the cycle's length: sm_collect on that marker returns
 * SM_ERR_BUSY (and so do its report functions) until sm_cycle_finish
 * succeeds or sm_cycle_free gives the engine back. The marker must outlive
 * the cycle (free the cycle first).
 *
 * While the background marking or a step runs, the runtime's threads keep
 * mutating. Then the callbacks of the model and the marks run on GC threads
 * while mutators write slots: every slot word the model's scan_slots reads
 * must be read atomically, for example with C11
 *   atomic_load_explicit((_Atomic sm_ref *)&obj->slot[i], memory_order_relaxed)
 * and the mutators store it with atomic_store_explicit(...,
 * memory_order_relaxed). Object sizes, slot counts and type ids of an
 * object must not change while it is reachable.
 *
 * The mutator's duties, with either barrier family (a runtime uses the one
 * its store sites can call; both are accepted on every cycle).
 *
 * Snapshot at the beginning (Yuasa): before overwriting a reference
 * slot, pass its old value to sm_mutator_pre_write; give every object
 * allocated during the cycle to sm_mutator_allocate_black before storing a
 * reference to it anywhere; pass a referent read from a non-strong slot (a
 * weak, soft or phantom slot, or an ephemeron's value) to
 * sm_mutator_pre_write before using it; detach (or free) every barrier
 * handle at the safepoint before sm_cycle_finish. Objects reachable at the
 * start or allocated black are then marked at the end.
 *
 * Incremental update (Dijkstra and Steele): after storing a reference into
 * a slot of any kind of a marked holder, pass the value stored to
 * sm_mutator_shade, or the holder to sm_mutator_rescan (it is scanned again,
 * whole, at the remark); allocate white (no call) or black
 * (sm_mutator_allocate_black, and then shade what its slots are initialised
 * with); no call is needed for referents read from non-strong slots. The
 * test "is the holder marked" may skip the barrier only while no
 * marking runs (between sm_cycle_step calls); while the background marking
 * runs, call the barrier on every store. sm_cycle_finish's roots must then
 * be the roots as they are at the remark (stacks are not barriered).
 * Objects reachable at the remark or allocated black are then marked.
 *
 * The callbacks and contexts of sm_cycle_start's model and marks are copied
 * by the call (the structs themselves need not outlive it), but their ctx
 * pointers and everything the callbacks read must stay valid until the
 * cycle is freed. A scan callback that breaks its contract, or an engine
 * panic, poisons the cycle: the call that meets it and every later call on
 * the cycle and its barrier handles return SM_ERR_POISONED, with a message
 * that names the broken contract (as sm_collect's SM_ERR_CONTRACT would);
 * sm_cycle_finish never returns a report; sm_cycle_free then gives the
 * engine back to its marker, usable. A root or finalizable reference that
 * breaks the contract fails sm_cycle_start or sm_cycle_finish with
 * SM_ERR_CONTRACT instead, the cycle unchanged. */
typedef struct sm_cycle sm_cycle;

/* A mutator thread's barrier handle for one cycle. */
typedef struct sm_mutator sm_mutator;

/* Back-pressure: a mutator thread whose buffer hand-off meets a full queue
 * marks a step itself when no other thread marks (the default)... */
#define SM_BACKPRESSURE_ASSIST 0
/* ...or waits until the marking threads took buffers (never use it when the
 * only marking is the mutator's own sm_cycle_step calls). */
#define SM_BACKPRESSURE_WAIT 1

/* The options of a cycle. */
typedef struct sm_cycle_options {
  /* SM_BACKPRESSURE_*. */
  uint32_t backpressure;
  /* 1: each sm_cycle_step runs on the calling thread and the GC workers,
   * which share its budget (for a runtime that stops its mutator for each
   * step); 0 (the default): on the calling thread alone. */
  uint32_t parallel_steps;
  /* Barrier buffers (1024 entries each) that may wait per worker and per
   * buffer held; at least 1. Default 4. */
  size_t buffers_per_thread;
  /* Objects an assisting mutator marks per assist; at least 1. */
  size_t assist_budget;
  /* 1 (the default): mutators may allocate black (sm_mutator_allocate_black;
   * the snapshot-at-the-beginning barrier needs it). 0: a runtime that
   * allocates white (incremental-update barrier): sm_mutator_allocate_black
   * is refused, nothing but the cycle's own marking writes the marks, and a
   * step that runs on one thread (parallel_steps 0, or one worker) marks
   * with plain loads and stores instead of an atomic read-modify-write per
   * object. */
  uint32_t black_allocation;
  /* 1: every part of the cycle runs on the thread that calls it, alone: its
   * steps (whatever parallel_steps says), assists and remark, and its
   * background marking on the background's own thread; the other workers
   * are never woken, and sm_stats.workers_used is 1. For a heap too small
   * to pay for waking them: a cycle marks in many short steps, so it gains
   * from more workers only on a larger heap than one collection does
   * (compare config.solo_below). 0 (the default): as the options above
   * say. */
  uint32_t solo;
} sm_cycle_options;

/* The inputs of the remark. The pointed-to structs need only live until
 * sm_cycle_finish returns. */
typedef struct sm_remark {
  /* The roots now (required, may be empty). */
  const sm_refs *roots;
  /* The registered finalizable objects; NULL: none. */
  const sm_refs *finalizable;
  /* Soft references (zeroed: clear all). */
  sm_soft_policy soft;
} sm_remark;

/* Fills *options with the defaults. Thread rules: any thread. */
void sm_cycle_options_init(sm_cycle_options *options);

/* Starts a cycle on `marker`: copies the roots (the start's pause, the
 * runtime's threads stopped) and writes the cycle to *out. marks->mode is
 * SM_MARKS_HEADER_BYTE or SM_MARKS_CALLBACKS (SM_ERR_MARKS otherwise), with
 * the objects reading as unmarked. options: NULL for the defaults.
 * Thread rules: any thread; SM_ERR_BUSY if another call holds the marker or
 * a cycle already does. */
sm_status sm_cycle_start(sm_marker *marker, const sm_object_model *model,
                         const sm_marks *marks, const sm_refs *roots,
                         const sm_cycle_options *options, sm_cycle **out);

/* Marks at most about `budget` objects on the calling thread (with the
 * option parallel_steps, on the GC workers too, sharing the budget); *done
 * (if not NULL) says whether no marking was left. Returns at once with *done false
 * while another thread marks. Thread rules: any thread, concurrently with
 * every sm_cycle_* and sm_mutator_* call except sm_cycle_free. */
sm_status sm_cycle_step(const sm_cycle *cycle, size_t budget, bool *done);

/* Starts the background marking on the marker's workers; SM_ERR_BUSY while
 * it already runs. Thread rules: as sm_cycle_step. */
sm_status sm_cycle_start_background(const sm_cycle *cycle);

/* Stops the background marking and waits until no worker reaches the heap
 * (SM_OK if it did not run). Thread rules: as sm_cycle_step. */
sm_status sm_cycle_stop_background(const sm_cycle *cycle);

/* *out: whether the background marking has nothing to do now. Thread
 * rules: as sm_cycle_step. */
sm_status sm_cycle_is_quiet(const sm_cycle *cycle, bool *out);

/* Blocks, without spinning, until the background marking is quiet (or does
 * not run), or timeout_ns nanoseconds have passed (negative: no limit);
 * *quiet (if not NULL) says which. Thread rules: as sm_cycle_step. */
sm_status sm_cycle_wait_quiet(const sm_cycle *cycle, int64_t timeout_ns,
                              bool *quiet);

/* The remark, the runtime's threads stopped and every barrier handle
 * detached: stops the background marking, marks from the current roots and
 * the barriers' records, applies the runtime contract (as sm_collect) and
 * gives the engine back to its marker. On SM_OK *report (if not NULL) is
 * readable as sm_collect's; objects allocated black are marked but not in
 * its live counts. SM_ERR_BUSY while handles are attached (the cycle goes
 * on), SM_ERR_POISONED after a failure (no report), SM_ERR_ENDED once
 * finished. Thread rules: any thread, one call at a time per cycle. */
sm_status sm_cycle_finish(const sm_cycle *cycle, const sm_remark *remark,
                          sm_report *report);

/* Frees a cycle (NULL is ignored), abandoning it if it did not finish, and
 * gives the engine back to its marker. Its barrier handles stay safe to
 * call and free (they return SM_ERR_ENDED).
 * Thread rules: any thread, once no other call on the cycle runs. */
void sm_cycle_free(sm_cycle *cycle);

/* Makes a barrier handle for one mutator thread. Thread rules: any thread,
 * concurrently with other sm_cycle_* calls but sm_cycle_free. */
sm_status sm_mutator_new(const sm_cycle *cycle, sm_mutator **out);

/* The SATB write barrier: call it with a reference slot's old value before
 * overwriting the slot (0 records nothing). A plain call whose fast path
 * appends to the handle's buffer. SM_ERR_RANGE for a word that is not a
 * reference inside the heap bounds; SM_ERR_POISONED once the cycle is
 * poisoned (also for 0, and on a handle still holding a buffer: stop
 * mutating and free the cycle), the message naming the contract violation
 * that poisoned it, if one did; SM_ERR_ENDED after the cycle ended (also
 * for 0).
 * Thread rules for every sm_mutator_* function: one thread at a time per
 * handle (the handle may move between threads), concurrently with other
 * handles and with every sm_cycle_* call; a handle does not point into its
 * sm_cycle, so it may outlive it. */
sm_status sm_mutator_pre_write(sm_mutator *m, sm_ref old);

/* The incremental-update barrier's forward half: `value` was stored into a
 * slot of a marked holder; it is marked and traced before the cycle ends
 * (0 records nothing). Errors as sm_mutator_pre_write. */
sm_status sm_mutator_shade(sm_mutator *m, sm_ref value);

/* The incremental-update barrier's backward half: `holder`, marked, was
 * written to; it is scanned again, whole, at the remark (its non-strong
 * slots judged on what they hold then), once however often it was
 * recorded. Errors as sm_mutator_pre_write. */
sm_status sm_mutator_rescan(sm_mutator *m, sm_ref holder);

/* Marks `obj`, allocated during the cycle, black (before any reference to
 * it is stored). SM_ERR_ENDED after the cycle ended: obj is not marked;
 * SM_ERR_CONFIG in a cycle started with black_allocation 0: obj is not
 * marked; SM_ERR_POISONED as sm_mutator_pre_write. */
sm_status sm_mutator_allocate_black(sm_mutator *m, sm_ref obj);

/* Hands the recorded entries to the marker now; stays attached. */
sm_status sm_mutator_flush(sm_mutator *m);

/* Hands the entries off and gives the buffer back, at the thread's
 * safepoint before the remark (or before blocking); the next barrier call
 * attaches again. */
sm_status sm_mutator_detach(sm_mutator *m);

/* Detaches and frees the handle (NULL is ignored), also after its cycle was
 * freed. */
void sm_mutator_free(sm_mutator *m);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STEALMARK_H */
