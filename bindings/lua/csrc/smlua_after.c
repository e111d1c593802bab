/*
 * smlua_after.c: what atomic() does after the engine's marking, on the
 * collecting thread alone and in Lua's order. Included by smlua_gc.c.
 */

/* Counts of what the clearing did. */
typedef struct smlua_cleared {
  uint64_t entries;  /* weak entries emptied */
  uint64_t dead_keys;  /* keys of empty entries made dead */
} smlua_cleared;

/* Clears the table slot that the engine reported if it still holds the
 * reported target (and, for an ephemeron, its entry the reported key): Lua
 * empties the entry and makes its key dead (clearkey), whichever of its
 * slots died. In an engine cycle the mutator ran after the table's first
 * scan: a write into it made the remark scan it again, and the first
 * scan's records may name slots that the write changed, or that a rehash
 * moved elsewhere or past the table's end. Those no longer hold their
 * target (the rescan's records name the slots that do), and are left
 * alone. */
static void smlua_clear_slot(const sm_weak_ref *w, smlua_cleared *c) {
  GCObject *o = (GCObject *)w->holder;
  const GCObject *target = (const GCObject *)w->target;
  Table *h;
  size_t asize, j;
  Node *n;
  if (o->tt != LUA_VTABLE || w->slot == 0) {
    fprintf(stderr, "stealmark-lua: the engine reported slot %zu of an "
                    "object of type %d to clear\n", w->slot, (int)o->tt);
    abort();
  }
  h = gco2t(o);
  asize = luaH_realasize(h);
  if (w->slot <= asize) {
    TValue *v = &h->array[w->slot - 1];
    if (!iscollectable(v) || gcvalue(v) != target)
      return;
    setempty(v);
    c->entries++;
    return;
  }
  j = (w->slot - 1 - asize) / 2;
  if (j >= (size_t)sizenode(h))
    return;
  n = gnode(h, j);
  if ((w->slot - 1 - asize) % 2 == 0) {  /* the key's slot */
    if (!keyiscollectable(n) || gckey(n) != target)
      return;
  }
  else if (isempty(gval(n)) || !iscollectable(gval(n)) ||
           gcvalue(gval(n)) != target ||
           (w->key != 0 && (!keyiscollectable(n) ||
                            gckey(n) != (const GCObject *)w->key)))
    return;
  if (isempty(gval(n)))
    c->dead_keys++;
  else
    c->entries++;
  setempty(gval(n));
  clearkey(n);
}

/* Clears every slot of the engine's report: weak values judged before
 * finalization, weak keys, ephemerons and weak values of tables first
 * reached while resurrecting judged after it. */
static void smlua_clear_reported(global_State *g, const sm_report *report,
                                 smlua_cleared *c) {
  sm_weak_ref buf[256];
  size_t from = 0, written, i;
  UNUSED(g);
  c->entries = c->dead_keys = 0;
  for (;;) {
    sm_status st = sm_report_cleared(report, from, buf, 256, &written);
    if (st != SM_OK)
      smlua_fatal("sm_report_cleared", st);
    for (i = 0; i < written; i++)
      smlua_clear_slot(&buf[i], c);
    if (written < 256)
      break;
    from += written;
  }
}

/* Moves the objects the engine reported to finalize from 'finobj' to the
 * end of 'tobefnz', in 'finobj' order (as separatetobefnz does: their
 * finalizers run in reverse order of registration). They are already
 * marked, with all they reach. */
static void smlua_separate(global_State *g, const sm_report *report,
                           uint64_t count) {
  sm_ref buf[256];
  size_t from = 0, written, i;
  uint64_t moved = 0;
  GCObject **p = &g->finobj;
  GCObject **last = findlast(&g->tobefnz);
  GCObject *curr;
  if (count == 0)
    return;
  for (;;) {
    sm_status st = sm_report_to_finalize(report, from, buf, 256, &written);
    if (st != SM_OK)
      smlua_fatal("sm_report_to_finalize", st);
    for (i = 0; i < written; i++)
      l_setbit(((GCObject *)buf[i])->marked, SMLUA_TOFINALIZE_BIT);
    if (written < 256)
      break;
    from += written;
  }
  while ((curr = *p) != NULL) {
    if (!testbit(curr->marked, SMLUA_TOFINALIZE_BIT)) {
      p = &curr->next;
      continue;
    }
    resetbit(curr->marked, SMLUA_TOFINALIZE_BIT);
    if (curr == g->finobjsur) g->finobjsur = curr->next;
    *p = curr->next;
    curr->next = *last;
    *last = curr;
    last = &curr->next;
    moved++;
  }
  if (moved != count) {
    fprintf(stderr, "stealmark-lua: %llu objects to finalize reported, %llu "
                    "found on 'finobj'\n", (unsigned long long)count,
                    (unsigned long long)moved);
    abort();
  }
}

/* Clears a marked thread's stack above top and shrinks it (not in an
 * emergency collection); links it back into 'twups' if it has open
 * upvalues. Idempotent: a thread may be handed twice. */
static void smlua_fix_thread(global_State *g, lua_State *th) {
  StkId s;
  if (th->stack.p == NULL)
    return;
  if (!g->gcemergency)
    luaD_shrinkstack(th);
  for (s = th->top.p; s < th->stack_last.p + EXTRA_STACK; s++)
    setnilvalue(s2v(s));
  if (!isintwups(th) && th->openupval != NULL) {
    th->twups = g->twups;
    g->twups = th;
  }
}

/* Unlinks from 'twups' the threads that died or have no open upvalue (the
 * sweep frees dead ones), then fixes every marked thread: those the
 * object model noted, or, if there were too many to note, those found on
 * 'allgc'. */
static void smlua_fix_threads(lua_State *L, global_State *g) {
  lua_State **p = &g->twups;
  lua_State *th;
  GCObject *o;
  size_t seen = atomic_load_explicit(&smlua_threads_seen,
                                     memory_order_relaxed), i;
  UNUSED(L);
  while ((th = *p) != NULL) {
    if (!iswhite(th) && th->openupval != NULL)
      p = &th->twups;
    else {
      *p = th->twups;
      th->twups = th;  /* out of the list */
    }
  }
  if (seen <= SMLUA_THREADS_NOTED) {
    for (i = 0; i < seen; i++)
      smlua_fix_thread(g, smlua_threads[i]);
    return;
  }
  for (o = g->allgc; o != NULL; o = o->next)
    if (o->tt == LUA_VTHREAD && !iswhite(o))
      smlua_fix_thread(g, gco2th(o));
}
