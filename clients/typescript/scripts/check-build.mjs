// dist/ is committed (a linked install does not build): fail when it differs from what
// `npm run build` makes of src/ now.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TSC = join(PACKAGE, 'node_modules', '.bin', 'tsc');

const listing = (dir) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name).slice(dir.length + 1))
    .sort();

const fresh = mkdtempSync(join(tmpdir(), 'foldwise-dist-'));
try {
  execFileSync(TSC, ['-p', PACKAGE, '--outDir', fresh], { stdio: 'inherit' });
  const committed = join(PACKAGE, 'dist');
  const expected = listing(fresh);
  const actual = listing(committed);
  const stale = [
    ...expected.filter((file) => !actual.includes(file)).map((file) => `missing ${file}`),
    ...actual.filter((file) => !expected.includes(file)).map((file) => `extra ${file}`),
    ...expected
      .filter((file) => actual.includes(file))
      .filter(
        (file) => readFileSync(join(fresh, file), 'utf8') !== readFileSync(join(committed, file), 'utf8'),
      )
      .map((file) => `differs ${file}`),
  ];
  if (stale.length > 0) {
    console.error(`dist/ is out of date with src/ (run \`npm run build\`):\n  ${stale.join('\n  ')}`);
    process.exit(1);
  }
  console.log('dist/ matches src/');
} finally {
  rmSync(fresh, { recursive: true, force: true });
}
