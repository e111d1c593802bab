// Counts a V8 heap snapshot independently of the importer: nodes, edges, weak
// edges, and the nodes reachable from node 0 through non-weak edges, with
// JSON.parse and the field layout of snapshot.meta. Prints one JSON line.
const s = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'));
const m = s.snapshot.meta;
const nf = m.node_fields.length, ef = m.edge_fields.length;
const ec = m.node_fields.indexOf('edge_count');
const et = m.edge_fields.indexOf('type'), to = m.edge_fields.indexOf('to_node');
const weakType = m.edge_types[et].indexOf('weak');
const n = s.nodes.length / nf, e = s.edges.length / ef;
const first = new Float64Array(n + 1);
for (let i = 0; i < n; i++) first[i + 1] = first[i] + s.nodes[i * nf + ec];
let weak = 0;
for (let j = 0; j < e; j++) if (s.edges[j * ef + et] === weakType) weak++;
const seen = new Uint8Array(n);
const stack = [0];
seen[0] = 1;
let reachable = 1;
while (stack.length) {
  const v = stack.pop();
  for (let j = first[v]; j < first[v + 1]; j++) {
    if (s.edges[j * ef + et] === weakType) continue;
    const w = s.edges[j * ef + to] / nf;
    if (!seen[w]) { seen[w] = 1; reachable++; stack.push(w); }
  }
}
console.log(JSON.stringify({ objects: n, references: e, weak, roots: 1, reachable }));
