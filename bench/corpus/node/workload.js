// Two real Node.js programs for the heap corpus: each builds a working set
// from an npm-installed codebase (bench/corpus/node/package.json, installed
// with `npm ci`) and keeps it reachable until exit, then makes GCS full
// garbage collections (`gc()`, so node runs with --expose-gc; with
// --trace-gc-nvp V8 prints each one's phases, `mark=` among them), then, if
// SNAPSHOT is given, writes a heap snapshot of the same heap for
// `stealmark import v8`.
//
// Usage: node --expose-gc [--trace-gc-nvp] workload.js tsc|eslint MODULES_DIR GCS [SNAPSHOT]
//
// MODULES_DIR is the install's node_modules. The default heap limit is
// plenty (old space peaks under 0.5 GB); writing the snapshot takes up to
// 2.5 GB of RSS besides.
//
// tsc: the TypeScript compiler API: one program over the .ts sources that
// rxjs (src/) and zod (src/) ship, tests and benchmarks left out, strict,
// then a full type check of every file; the program and its type checker
// stay alive. About 4.1 million objects, 370 MiB.
// eslint: ESLint's Linter, flat config, @eslint/js recommended rules plus a
// few scope-heavy ones, over eslint's own lib/ (rules/ left out) and rxjs's
// dist/cjs/; every file's SourceCode (text, AST, tokens, comments, scope
// manager) stays alive. About 3.1 million objects, 180 MiB.
//
// Files are taken in sorted order, so every run builds the same working set
// (V8's own objects, code and feedback, vary by a few hundred between runs).
// The first gc() also frees the garbage of the build.
// Stdout: `built WORKLOAD FILES`, then `done`; anything else goes to stderr.
'use strict';
const fs = require('fs');
const path = require('path');
const v8 = require('v8');
const [workload, modulesArg, gcsArg, snapshot] = process.argv.slice(2);
const gcs = Number(gcsArg);
if (!['tsc', 'eslint'].includes(workload) || !modulesArg || !(gcs >= 0) || typeof gc !== 'function') {
  console.error('usage: node --expose-gc workload.js tsc|eslint MODULES_DIR GCS [SNAPSHOT]');
  process.exit(2);
}
const modulesDir = path.resolve(modulesArg);

// The files under DIR (in MODULES_DIR) whose names end in EXT, sorted,
// skipping directories named in SKIP.
function files(dir, ext, skip = []) {
  const out = [];
  (function walk(d) {
    const entries = fs.readdirSync(d, { withFileTypes: true }).map((e) => e.name).sort();
    for (const name of entries) {
      const p = path.join(d, name);
      if (fs.statSync(p).isDirectory()) {
        if (!skip.includes(name)) walk(p);
      } else if (name.endsWith(ext) && !name.endsWith('.d.ts')) {
        out.push(p);
      }
    }
  })(path.join(modulesDir, dir));
  return out;
}

let keep; // the working set, reachable until exit (also as globalThis.keep)
let count;

if (workload === 'tsc') {
  const ts = require(path.join(modulesDir, 'typescript'));
  const skip = ['tests', 'benchmarks'];
  const roots = [...files('rxjs/src', '.ts', skip), ...files('zod/src', '.ts', skip)];
  const program = ts.createProgram(roots, {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [], // no automatic @types lookup from the working directory
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const diagnostics = ts.getPreEmitDiagnostics(program);
  console.error(`tsc: ${roots.length} root files, ${program.getSourceFiles().length} source files, ${diagnostics.length} diagnostics`);
  keep = { program, checker, diagnostics };
  count = roots.length;
} else {
  const { Linter } = require(path.join(modulesDir, 'eslint'));
  const js = require(path.join(modulesDir, '@eslint/js'));
  const config = [
    js.configs.recommended,
    {
      languageOptions: {
        ecmaVersion: 'latest',
        sourceType: 'commonjs',
        globals: {
          require: 'readonly', module: 'writable', exports: 'writable', __dirname: 'readonly',
          __filename: 'readonly', process: 'readonly', console: 'readonly', Buffer: 'readonly',
          setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly',
          clearInterval: 'readonly', URL: 'readonly', structuredClone: 'readonly',
        },
      },
      rules: {
        'no-shadow': 'error', 'no-use-before-define': 'error', 'block-scoped-var': 'error',
        'no-loop-func': 'error', 'prefer-const': 'error',
      },
    },
  ];
  // Filenames relative to cwd MODULES_DIR, so node_modules isn't ignored.
  const linter = new Linter({ configType: 'flat', cwd: modulesDir });
  const inputs = [...files('eslint/lib', '.js', ['rules']), ...files('rxjs/dist/cjs', '.js')];
  const sourceCodes = [];
  let problems = 0;
  for (const file of inputs) {
    const messages = linter.verify(fs.readFileSync(file, 'utf8'), config, path.relative(modulesDir, file));
    const fatal = messages.find((m) => m.fatal);
    if (fatal) throw new Error(`${file}: ${fatal.message}`);
    problems += messages.length;
    sourceCodes.push(linter.getSourceCode());
  }
  console.error(`eslint: ${inputs.length} files, ${problems} problems`);
  keep = { linter, sourceCodes };
  count = sourceCodes.length;
}

globalThis.keep = keep;

// V8's heap snapshot gives every function's line and column, and for a
// script whose line ends were never computed it scans the script's source
// from the start each time: minutes for typescript.js (9 MB), half the
// snapshot's time for eslint. The inspector computes every script's line
// ends when it reports the scripts to a debugger, so enable one a moment;
// done before the GCs too, so that they and the snapshot see the same heap.
const inspector = require('inspector');
const session = new inspector.Session();
session.connect();
session.post('Debugger.enable');
session.post('Debugger.disable');
session.disconnect();

console.log(`built ${workload} ${count}`);
for (let i = 0; i < gcs; i++) gc();
if (snapshot) v8.writeHeapSnapshot(snapshot);
console.log('done');
