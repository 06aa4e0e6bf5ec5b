/**
 * The front end knows its back ends through their registry rows (model/backends.ts, `BACKENDS`) and their own
 * folders (src/backends/<name>/): no other source tests a back end's name. The scan below reads every source file
 * and fails on a test of one (`run.backend === 'export'`, `!== 'trace'`, `case 'export':`, the schema-2 name
 * `'torchscript-archive'`); the rows also give the saved files the archive viewer opens.
 */
import { readdirSync, readFileSync } from 'fs';
import { join, relative, sep } from 'path';
import { describe, expect, it } from 'vitest';

import { checkOffWords, savedFileTypes, schema2Backend } from '../src/model/backends';
import { BACKENDS } from '../src/model/protocol.generated';

const SRC = join(__dirname, '..', 'src');

/** The back ends' names, and the one schema 2 had for a TorchScript archive read back. */
const NAMES = [...Object.keys(BACKENDS), 'torchscript-archive'];

/**
 * Where a test of a back end's name may stand: the registry's reader and each back end's folder. And, until the
 * options move into the registry rows (the options bar's and the history's choice of option specs and words per
 * back end, being moved by another branch), the sites named here with their count: a count that changes fails
 * too, so the list shrinks with them.
 */
const ALLOWED_FILES = [/^model\/backends\.ts$/, /^backends\/[^/]+\//];
const PENDING_SITES: Record<string, number> = {};

/** The lines of `text` that test a back end's name. */
function nameTests(text: string): string[] {
  const name = `(['"\`])(?:${NAMES.map(n => n.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')).join('|')})\\1`;
  const patterns = [
    /\bbackend\b\s*[!=]==?/, // run.backend === ..., backend != ...
    /[!=]==?\s*[\w.?!]*\bbackend\b/, // ... === run?.backend
    /\.includes\([^)]*\bbackend\b/, // [...].includes(run.backend)
    new RegExp(`[!=]==?\\s*${name}`), // ... === 'export'
    new RegExp(`${name}\\s*[!=]==?`), // 'export' === ...
    new RegExp(`\\bcase\\s+${name}\\s*:`), // case 'export':
    /(['"`])torchscript-archive\1/ // schema 2's name, anywhere
  ];
  // comments may name a back end (they say why); only code tests one
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  return code.split('\n').filter(line => patterns.some(p => p.test(line)));
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(e =>
    e.isDirectory()
      ? sources(join(dir, e.name))
      : /\.(ts|mjs)$/.test(e.name) && !e.name.includes('.generated.')
        ? [join(dir, e.name)]
        : []
  );
}

describe('back-end names', () => {
  it('are found by the scan however a test spells them', () => {
    const tests = [
      "if (run.backend === 'export') {",
      'return run?.backend !== "trace";',
      "const archive = 'torchscript-archive';",
      "case 'export':",
      "['trace', 'export'].includes(run.raw.backend)",
      "'export' === kind"
    ];
    expect(tests.map(nameTests)).toEqual(tests.map(t => [t]));
    // the words and the data the views show are no tests, nor is a comment
    const words = "labels: ['trace', 'export'],\nconst b = run.raw.backend ?? 'trace';\n/** `backend === 'export'` */";
    expect(nameTests(words)).toEqual([]);
  });

  it('are tested only by the registry reader and the back ends’ own folders', () => {
    const found: Record<string, number> = {};
    for (const file of sources(SRC)) {
      const path = relative(SRC, file).split(sep).join('/');
      if (ALLOWED_FILES.some(p => p.test(path))) {
        continue;
      }
      const lines = nameTests(readFileSync(file, 'utf8'));
      if (lines.length) {
        found[path] = lines.length;
      }
    }
    expect(found).toEqual(PENDING_SITES);
  });
});

describe('the back ends’ rows', () => {
  it('name the saved files the archive viewer opens', () => {
    expect(savedFileTypes()).toEqual([
      { name: 'torchscript-archive', displayName: 'TorchScript archive', extensions: ['.pt'] },
      { name: 'torch-export-archive', displayName: 'torch.export archive', extensions: ['.pt2'] }
    ]);
  });

  it('say what turned a run’s check off, as its back end spells it', () => {
    expect(checkOffWords(BACKENDS.trace)).toBe('The check was off (check_trace=False).');
    expect(checkOffWords(BACKENDS.compile)).toBe('The check was off (check=False).');
    expect(checkOffWords(BACKENDS.export)).toBe('The export check was off.');
  });

  it('read a schema-2 back end as schema 3 names it', () => {
    expect(schema2Backend('torchscript-archive')).toEqual({ backend: 'trace', file: true });
    expect(schema2Backend('export')).toEqual({ backend: 'export', file: false });
    expect(schema2Backend('trace')).toEqual({ backend: 'trace', file: false });
  });
});
