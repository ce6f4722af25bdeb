// What the README promises a new user: in an empty folder, `npm install <this package>`,
// then the README's snippet and examples/node-handler.mjs run as written, against Foldwise
// (and a fake Anthropic API for the handler).
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BASE_URL, OTHER_KEY, client, uniqueId } from './support/foldwise.mjs';
import { startFakeAnthropic } from './support/fake-anthropic.mjs';

const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const REPO = resolve(PACKAGE, '..', '..');
const EXAMPLE = join(REPO, 'examples', 'node-handler.mjs');
const tenant = () => client({ apiKey: OTHER_KEY });
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Starts the example on a free port; resolves with its URL once it logs that it listens. */
function startExample(folder, env) {
  const child = spawn(process.execPath, ['node-handler.mjs'], {
    cwd: folder,
    env: { ...process.env, ...env },
  });
  let output = '';
  const listening = new Promise((ready, fail) => {
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) ready(match[1]);
    });
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => fail(new Error(`example exited with ${code}:\n${output}`)));
  });
  return { child, listening };
}

/** The first ```js block of the README's "TypeScript client" section. */
function readmeSnippet() {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## TypeScript client'));
  const match = /```js\n([\s\S]*?)```/.exec(section);
  assert.ok(match, 'the README has a js block in its TypeScript client section');
  return match[1];
}

describe('README and examples/node-handler.mjs', () => {
  let folder;
  let anthropic;
  let example;
  let url;

  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'foldwise-example-'));
    copyFileSync(EXAMPLE, join(folder, 'node-handler.mjs'));
    execFileSync(NPM, ['install', '--offline', '--no-audit', '--no-fund', PACKAGE], {
      cwd: folder,
      stdio: 'ignore',
    });
    anthropic = await startFakeAnthropic({ inputTokens: 321 });
    example = startExample(folder, {
      PORT: '0',
      FOLDWISE_BASE_URL: BASE_URL,
      // The second tenant: no other test reports usage there, so calibration counts are exact.
      FOLDWISE_API_KEY: OTHER_KEY,
      ANTHROPIC_BASE_URL: anthropic.url,
      ANTHROPIC_API_KEY: 'test-key',
    });
    url = await example.listening;
  });

  after(async () => {
    example?.child.kill();
    await anthropic?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  const post = async (body) => {
    const response = await fetch(`${url}/chat`, { method: 'POST', body: JSON.stringify(body) });
    return { status: response.status, body: await response.json() };
  };

  it('answers each turn with the whole conversation sent to the model', async () => {
    const sessionId = uniqueId('example');
    assert.deepEqual(await post({ session_id: sessionId, message: 'Hello there' }), {
      status: 200,
      body: { reply: 'echo: Hello there' },
    });
    assert.deepEqual(await post({ session_id: sessionId, message: 'And again' }), {
      status: 200,
      body: { reply: 'echo: And again' },
    });

    const [first, second] = anthropic.requests.slice(-2);
    assert.equal(second.url, '/v1/messages');
    assert.equal(second.headers['x-api-key'], 'test-key');
    assert.equal(second.body.model, 'claude-sonnet-4-6');
    assert.equal(second.body.max_tokens, 1024);
    assert.match(JSON.stringify(second.body.system), /concise, friendly assistant/);
    assert.equal(first.body.messages.length, 1);
    const sent = second.body.messages.map((m) => [m.role, JSON.stringify(m.content)]);
    assert.equal(sent.length, 3);
    assert.match(sent[0][1], /Hello there/);
    assert.deepEqual(sent[1][0], 'assistant');
    assert.match(sent[1][1], /echo: Hello there/);
    assert.match(sent[2][1], /And again/);

    const stored = await tenant().listMessages(sessionId);
    assert.deepEqual(
      stored.messages.map((m) => m.role),
      ['user', 'assistant', 'user', 'assistant'],
    );
  });

  it('reports the provider token count, so the next context is calibrated', async () => {
    const sessionId = uniqueId('example');
    await post({ session_id: sessionId, message: 'Count me' });
    const before = (await tenant().context(sessionId, { preview: true })).usage.calibration;
    await post({ session_id: sessionId, message: 'And me' });
    const after = (await tenant().context(sessionId, { preview: true })).usage.calibration;
    assert.equal(after.samples, before.samples + 1, 'one usage report per turn');
    assert.equal(after.family, 'anthropic');
  });

  it('stores a turn retried after a provider failure once, by its turn_id', async () => {
    const sessionId = uniqueId('example');
    anthropic.failNext(1);
    const failed = await post({ session_id: sessionId, message: 'Try me', turn_id: 't1' });
    assert.equal(failed.status, 502);
    assert.deepEqual(await post({ session_id: sessionId, message: 'Try me', turn_id: 't1' }), {
      status: 200,
      body: { reply: 'echo: Try me' },
    });
    const stored = await tenant().listMessages(sessionId);
    assert.deepEqual(
      stored.messages.map((m) => [m.role, m.client_id]),
      [
        ['user', 't1:user'],
        ['assistant', 't1:assistant'],
      ],
    );
  });

  it("runs the README's snippet as written", () => {
    writeFileSync(join(folder, 'quickstart.mjs'), readmeSnippet());
    const output = execFileSync(process.execPath, ['quickstart.mjs'], {
      cwd: folder,
      env: { ...process.env, FOLDWISE_BASE_URL: BASE_URL, FOLDWISE_API_KEY: OTHER_KEY },
      encoding: 'utf8',
    });
    assert.match(output, /role: 'system'/);
    assert.match(output, /Fix the failing test/);
    assert.match(output, /\d+ of \d+ tokens/);
  });

  it('answers 400 to a body that is not JSON', async () => {
    const response = await fetch(`${url}/chat`, { method: 'POST', body: 'nope' });
    assert.equal(response.status, 400);
  });
});
