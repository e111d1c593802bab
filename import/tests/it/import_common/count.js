// Counts a V8 heap snapshot independently of the importer, with JSON.parse
// and the field layout of snapshot.meta: nodes; the slots and weak slots
// that the importer's mapping gives (an edge is a slot, weak if its type is
// `weak` or `shortcut` or it is a WeakMap key's edge to its value; a WeakMap
// table's edges become (key, value) pairs: every key slot weak, a weak edge
// a key alone); and the nodes reachable from node 0 as DevTools' heap
// snapshot view reaches them (JSHeapSnapshot.calculateDistances in
// HeapSnapshot.ts): weak edges are not followed, and a WeakMap entry's
// value only once both of its edges, the table's and the key's, have been
// reached. Prints one JSON line.
const s = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'));
const m = s.snapshot.meta;
const nf = m.node_fields.length, ef = m.edge_fields.length;
const ec = m.node_fields.indexOf('edge_count'), idf = m.node_fields.indexOf('id');
const et = m.edge_fields.indexOf('type'), to = m.edge_fields.indexOf('to_node');
const en = m.edge_fields.indexOf('name_or_index');
const types = m.edge_types[et];
const WEAK = types.indexOf('weak'), SHORTCUT = types.indexOf('shortcut');
const INTERNAL = types.indexOf('internal');
const n = s.nodes.length / nf, e = s.edges.length / ef;
const first = new Float64Array(n + 1);
for (let i = 0; i < n; i++) first[i + 1] = first[i] + s.nodes[i * nf + ec];
const idOf = (v) => s.nodes[v * nf + idf];
const byId = new Map();
for (let v = 0; v < n; v++) byId.set(idOf(v), v);

// DevTools' pattern for the names V8 gives a WeakMap entry's two edges.
const PAIR = /^\d+(?<part> \/ part of key \(.*? @(?<key>\d+)\) -> value \(.*? @\d+\) pair in WeakMap \(table @(?<table>\d+)\))$/;
const pairOf = (j) => {
  if (s.edges[j * ef + et] !== INTERNAL) return null;
  const match = s.strings[s.edges[j * ef + en]].match(PAIR);
  return match ? match.groups : null;
};

// The importer's slots.
let references = 0, weak = 0, ephemerons = 0, tables = 0;
for (let v = 0; v < n; v++) {
  const roles = [];
  let table = false;
  for (let j = first[v]; j < first[v + 1]; j++) {
    const p = pairOf(j);
    let role = null;
    if (p && idOf(v) === Number(p.table) && byId.has(Number(p.key))) role = 'value';
    else if (p && idOf(v) === Number(p.key)) role = 'key';
    table = table || role === 'value';
    roles.push(role);
  }
  tables += table ? 1 : 0;
  roles.forEach((role, k) => {
    const t = s.edges[(first[v] + k) * ef + et];
    const isWeak = t === WEAK || t === SHORTCUT || role === 'key';
    if (!table) {
      references += 1;
      weak += isWeak ? 1 : 0;
    } else {
      weak += 1;
      references += role !== 'value' && isWeak ? 1 : 2;
      ephemerons += role === 'value' || !isWeak ? 1 : 0;
    }
  });
}

// Reachability: DevTools' breadth-first search from the root, with its
// filter for WeakMap entries (the first of an entry's two edges waits for
// the second). `shortcuts` says whether shortcut edges are followed
// (DevTools follows them for distances).
function reach(shortcuts) {
  const seen = new Uint8Array(n);
  const pending = new Set();
  const queue = [0];
  seen[0] = 1;
  let count = 1;
  for (let q = 0; q < queue.length; q++) {
    const v = queue[q];
    for (let j = first[v]; j < first[v + 1]; j++) {
      const t = s.edges[j * ef + et];
      if (t === WEAK || (!shortcuts && t === SHORTCUT)) continue;
      const w = s.edges[j * ef + to] / nf;
      if (seen[w]) continue;
      const p = pairOf(j);
      if (p && !pending.delete(p.part)) {
        pending.add(p.part);
        continue;
      }
      seen[w] = 1;
      count++;
      queue.push(w);
    }
  }
  return count;
}

// The reachable count before WeakMap entries were ephemerons: every
// non-weak edge followed.
function reachAllStrong() {
  const seen = new Uint8Array(n);
  const stack = [0];
  seen[0] = 1;
  let count = 1;
  while (stack.length) {
    const v = stack.pop();
    for (let j = first[v]; j < first[v + 1]; j++) {
      if (s.edges[j * ef + et] === WEAK) continue;
      const w = s.edges[j * ef + to] / nf;
      if (!seen[w]) { seen[w] = 1; count++; stack.push(w); }
    }
  }
  return count;
}

console.log(JSON.stringify({
  objects: n, references, weak, ephemerons, tables, roots: 1,
  reachable: reach(true),
  reachable_without_shortcuts: reach(false),
  reachable_all_edges_strong: reachAllStrong(),
}));
