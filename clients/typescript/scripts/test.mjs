// `npm test`: starts one real Foldwise server on 127.0.0.1 (API keys on, two tenants), runs
// `node --test` over test/*.test.mjs against it, and stops it.
//   FOLDWISE_TEST_DATABASE_URL  the server's database (default: a fresh SQLite file);
//                               tests/clients/test_typescript.py passes SQLite and PostgreSQL
//   FOLDWISE_BIN                the `foldwise` executable (default: the repository's .venv)
// Extra arguments go to `node --test` (e.g. --test-name-pattern=retries).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, openSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const REPO = resolve(PACKAGE, '..', '..');
const FOLDWISE = process.env.FOLDWISE_BIN ?? join(REPO, '.venv', 'bin', 'foldwise');
const READY_TIMEOUT_MS = 30_000;

function freePort() {
  return new Promise((done, fail) => {
    const probe = createServer().once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => done(port));
    });
  });
}

async function waitReady(url, server, log) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (server.exitCode !== null)
      throw new Error(`foldwise exited:\n${readFileSync(log, 'utf8').slice(-2000)}`);
    try {
      if ((await fetch(`${url}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((wake) => setTimeout(wake, 100));
  }
  throw new Error(
    `foldwise not ready after ${READY_TIMEOUT_MS} ms:\n${readFileSync(log, 'utf8').slice(-2000)}`,
  );
}

function run(command, args, env) {
  return new Promise((done) => {
    spawn(command, args, { cwd: PACKAGE, env, stdio: 'inherit' }).on('exit', (code, signal) =>
      done(code ?? (signal ? 1 : 0)),
    );
  });
}

const workdir = mkdtempSync(join(tmpdir(), 'foldwise-ts-'));
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const key = randomBytes(16).toString('hex');
const otherKey = randomBytes(16).toString('hex');
const log = join(workdir, 'server.log');
const serverEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([name]) => !name.startsWith('FOLDWISE_') && !name.startsWith('ANTHROPIC_'),
  ),
);
Object.assign(serverEnv, {
  FOLDWISE_DATABASE_URL:
    process.env.FOLDWISE_TEST_DATABASE_URL ?? `sqlite:///${join(workdir, 'foldwise.db')}`,
  FOLDWISE_API_KEYS: `ts-tests:${key},ts-other:${otherKey}`,
  FOLDWISE_LOG_LEVEL: 'warning',
});
const output = openSync(log, 'a');
// cwd: the temporary folder, so no developer .env reaches the server.
const server = spawn(FOLDWISE, ['serve', '--host', '127.0.0.1', '--port', String(port)], {
  cwd: workdir,
  env: serverEnv,
  stdio: ['ignore', output, output],
});
const stop = () => {
  if (server.exitCode === null) server.kill('SIGTERM');
};
process.on('SIGINT', () => {
  stop();
  process.exit(130);
});

let status = 1;
try {
  await waitReady(url, server, log);
  const files = readdirSync(join(PACKAGE, 'test'))
    .filter((name) => name.endsWith('.test.mjs'))
    .sort()
    .map((name) => join('test', name));
  const env = {
    ...process.env,
    FOLDWISE_TEST_URL: url,
    FOLDWISE_TEST_API_KEY: key,
    FOLDWISE_TEST_OTHER_KEY: otherKey,
  };
  status = await run(
    process.execPath,
    ['--test', '--test-reporter=spec', ...process.argv.slice(2), ...files],
    env,
  );
} finally {
  stop();
  await new Promise((done) => (server.exitCode !== null ? done() : server.once('exit', done)));
  if (status !== 0) console.error(`server log (${log}):\n${readFileSync(log, 'utf8').slice(-3000)}`);
  rmSync(workdir, { recursive: true, force: true });
}
process.exit(status);
