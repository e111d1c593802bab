// The V8 side of bench/headline.sh: builds one of vs_hotspot's graphs in
// this node process, makes GCS full garbage collections (`gc()`, so node
// runs with --expose-gc; with --trace-gc-nvp V8 prints each one's phases,
// `mark=` among them), then, if SNAPSHOT is given, writes a heap snapshot
// of the same heap for `stealmark import v8`.
//
// Usage: node --expose-gc --trace-gc-nvp graph.js random|tree OBJECTS GCS [SNAPSHOT]
//
// random: OBJECTS objects of four references each, every target uniformly
// random (seeded), 8 random objects kept as roots; tree: a complete binary
// tree of OBJECTS nodes, allocated breadth-first. The same graphs as
// bench/hotspot/VsHotspot.java builds.
'use strict';
const v8 = require('v8');
const [graph, objectsArg, gcsArg, snapshot] = process.argv.slice(2);
const n = Number(objectsArg);
const gcs = Number(gcsArg);
if (!['random', 'tree'].includes(graph) || !(n > 0) || !(gcs >= 0)) {
  console.error('usage: graph.js random|tree OBJECTS GCS [SNAPSHOT]');
  process.exit(2);
}

// xorshift32, seeded: the same graph in every run.
let state = 0x9e3779b9 | 0;
function next(bound) {
  state ^= state << 13; state ^= state >>> 17; state ^= state << 5;
  return (state >>> 0) % bound;
}

class Node { constructor() { this.a = null; this.b = null; this.c = null; this.d = null; } }
class TreeNode { constructor(v) { this.left = null; this.right = null; this.value = v; } }

let keep;
if (graph === 'random') {
  const nodes = new Array(n);
  for (let i = 0; i < n; i++) nodes[i] = new Node();
  for (let i = 0; i < n; i++) {
    const x = nodes[i];
    x.a = nodes[next(n)]; x.b = nodes[next(n)]; x.c = nodes[next(n)]; x.d = nodes[next(n)];
  }
  keep = [];
  for (let i = 0; i < 8; i++) keep.push(nodes[next(n)]);
} else {
  const nodes = new Array(n);
  for (let i = 0; i < n; i++) nodes[i] = new TreeNode(i);
  for (let i = 0; i < n; i++) {
    if (2 * i + 1 < n) nodes[i].left = nodes[2 * i + 1];
    if (2 * i + 2 < n) nodes[i].right = nodes[2 * i + 2];
  }
  keep = nodes[0];
}
globalThis.keep = keep;
for (let i = 0; i < gcs; i++) gc();
if (snapshot) v8.writeHeapSnapshot(snapshot);
