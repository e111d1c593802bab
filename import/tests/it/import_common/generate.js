// Builds an object graph (lists, cycles, maps, closures, weak references,
// WeakMap and WeakSet entries) and writes a V8 heap snapshot of this process
// to argv[2]. Used by the importer tests.
const v8 = require('v8');
class Node { constructor(v) { this.v = v; this.next = null; this.kids = []; } }
const head = new Node(0);
let cur = head;
for (let i = 1; i < 2000; i++) {
  const n = new Node(i);
  cur.next = n;
  if (i % 3 === 0) cur.kids.push(new Node(-i), head);   // a cycle back to the head
  cur = n;
}
const table = new Map();
for (let i = 0; i < 500; i++) table.set('k' + i, { i, s: 'v' + i, f: () => i });
const weak = [];
for (let i = 0; i < 100; i++) weak.push(new WeakRef({ dropped: i }));
const wm = new WeakMap();
wm.set(head, { meta: 'weakly held' });
// WeakMap and WeakSet entries whose keys live (every other one) or die: V8
// collects garbage before it writes the snapshot, so the dead keys' entries
// are gone from it, and the live ones are ephemerons of their keys.
class WKey { constructor(i) { this.i = i; } }
const entries = new WeakMap(), members = new WeakSet(), liveKeys = [];
for (let i = 0; i < 50; i++) {
  const k = new WKey(i);
  entries.set(k, { value: i, back: k });
  if (i % 2 === 0) { liveKeys.push(k); members.add(k); }
}
globalThis.keep = { head, table, weak, wm, entries, members, liveKeys, big: new Array(10000).fill(0).map((_, i) => ({ i })) };
v8.writeHeapSnapshot(process.argv[2]);
