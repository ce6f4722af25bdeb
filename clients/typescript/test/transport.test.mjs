// Retries, timeouts and cancellation, against a scripted server on loopback.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import {
  APIConnectionError,
  APIStatusError,
  APITimeoutError,
  BadRequestError,
  FoldwiseClient,
  InternalServerError,
  PayloadTooLargeError,
  PermissionDeniedError,
  RateLimitError,
  ServiceUnavailableError,
} from '../dist/index.js';
import { startFakeHttp } from './support/fake-http.mjs';

const UNAVAILABLE = {
  status: 503,
  headers: { 'retry-after': '0' },
  body: { error: { code: 'database_unavailable', message: 'down', details: null } },
};
const MODELS = { status: 200, body: { models: [] } };
const POPPED = { status: 200, body: { id: 'm1', seq: 1 } };

let fake;
afterEach(() => fake?.close());

const clientFor = (url, options = {}) => new FoldwiseClient({ baseUrl: url, apiKey: 'k', ...options });

describe('retries', () => {
  it('retries a 503 and returns the answer that follows', async () => {
    fake = await startFakeHttp([UNAVAILABLE, UNAVAILABLE, MODELS]);
    assert.deepEqual(await clientFor(fake.url).listModels(), []);
    assert.equal(fake.requests.length, 3);
  });

  it('gives up after maxRetries with ServiceUnavailableError', async () => {
    fake = await startFakeHttp([UNAVAILABLE]);
    const error = await clientFor(fake.url, { maxRetries: 1 })
      .listModels()
      .catch((e) => e);
    assert.ok(error instanceof ServiceUnavailableError);
    assert.equal(error.code, 'database_unavailable');
    assert.equal(fake.requests.length, 2);
  });

  it('does not retry a 500', async () => {
    fake = await startFakeHttp([
      { status: 500, body: { error: { code: 'internal_error', message: 'bug', details: null } } },
      MODELS,
    ]);
    await assert.rejects(clientFor(fake.url).listModels(), InternalServerError);
    assert.equal(fake.requests.length, 1);
  });

  it('maps a body that is not an envelope to http_<status>', async () => {
    fake = await startFakeHttp([{ status: 502, body: 'bad gateway' }]);
    const error = await clientFor(fake.url)
      .listModels()
      .catch((e) => e);
    assert.ok(error instanceof InternalServerError);
    assert.equal(error.code, 'http_502');
    assert.equal(error.status, 502);
    assert.equal(error.message, '"bad gateway"');
  });

  for (const [status, ErrorClass] of [
    [400, BadRequestError],
    [403, PermissionDeniedError],
    [413, PayloadTooLargeError],
  ]) {
    it(`maps ${status} to ${ErrorClass.name}`, async () => {
      const envelope = { error: { code: `code_${status}`, message: 'refused', details: { status } } };
      fake = await startFakeHttp([{ status, body: envelope }]);
      const error = await clientFor(fake.url)
        .listModels()
        .catch((e) => e);
      assert.equal(error.constructor, ErrorClass);
      assert.deepEqual([error.status, error.code, error.details], [status, `code_${status}`, { status }]);
      assert.equal(fake.requests.length, 1);
    });
  }

  it('maps other statuses by family, without retrying them', async () => {
    fake = await startFakeHttp([
      { status: 429, body: { error: { code: 'rate_limited', message: 'slow down', details: { limit: 1 } } } },
    ]);
    const limited = await clientFor(fake.url)
      .listModels()
      .catch((e) => e);
    assert.ok(limited instanceof RateLimitError);
    assert.deepEqual(
      [limited.code, limited.message, limited.details],
      ['rate_limited', 'slow down', { limit: 1 }],
    );
    await fake.close();
    fake = await startFakeHttp([
      { status: 418, body: { error: { code: 'teapot', message: 'no', details: null } } },
    ]);
    const other = await clientFor(fake.url)
      .listModels()
      .catch((e) => e);
    assert.equal(other.constructor, APIStatusError);
    assert.equal(fake.requests.length, 1);
  });

  it('retries a dropped connection of a replayable call, keeping its client_id', async () => {
    fake = await startFakeHttp(['drop', { status: 201, body: { messages: [] } }]);
    await clientFor(fake.url).appendMessages('s1', [{ role: 'user', content: 'hi' }]);
    assert.equal(fake.requests.length, 2);
    const [first, second] = fake.requests.map((r) => r.body.messages[0].client_id);
    assert.match(first, /^[0-9a-f-]{36}$/);
    assert.equal(second, first, 'the retry carries the same client_id, so the server deduplicates it');
  });

  it('does not replay a pop after a dropped connection', async () => {
    fake = await startFakeHttp(['drop', POPPED]);
    await assert.rejects(clientFor(fake.url).popMessage('s1'), APIConnectionError);
    assert.equal(fake.requests.length, 1);
  });

  it('retries a refused connection even for a call that is not replayable', async () => {
    const port = await new Promise((done) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address();
        probe.close(() => done(port));
      });
    });
    const attempts = [];
    const countingFetch = (url, init) => {
      attempts.push(url);
      return fetch(url, init);
    };
    const foldwise = clientFor(`http://127.0.0.1:${port}`, { fetch: countingFetch, maxRetries: 2 });
    const error = await foldwise.popMessage('s1').catch((e) => e);
    assert.ok(error instanceof APIConnectionError);
    assert.equal(error.cause.cause.code, 'ECONNREFUSED');
    assert.equal(attempts.length, 3);
    const where = `DELETE http://127.0.0.1:${port}/sessions/s1/messages/last`;
    assert.ok(error.message.startsWith(`${where}: could not reach the Foldwise server`), error.message);
    assert.match(error.message, /ECONNREFUSED/);
  });
});

describe('timeouts and cancellation', () => {
  it('throws APITimeoutError when no answer arrives in time, after retrying a replayable call', async () => {
    fake = await startFakeHttp([{ ...MODELS, delayMs: 2000 }]);
    const started = Date.now();
    const error = await clientFor(fake.url, { timeoutMs: 100, maxRetries: 1 })
      .listModels()
      .catch((e) => e);
    assert.ok(error instanceof APITimeoutError, String(error));
    assert.ok(error instanceof APIConnectionError);
    assert.match(error.message, new RegExp(`^GET ${fake.url}/models: no response from the Foldwise server`));
    assert.ok(Date.now() - started < 1900, 'did not wait for the slow answer');
    assert.equal(fake.requests.length, 2);
  });

  it('does not resend a call that is not replayable after a timeout', async () => {
    fake = await startFakeHttp([{ ...POPPED, delayMs: 2000 }]);
    await assert.rejects(clientFor(fake.url).popMessage('s1', { timeoutMs: 100 }), APITimeoutError);
    assert.equal(fake.requests.length, 1);
  });

  it("throws the caller's abort reason, also while waiting to retry", async () => {
    fake = await startFakeHttp([{ ...UNAVAILABLE, headers: { 'retry-after': '20' } }]);
    const controller = new AbortController();
    const pending = clientFor(fake.url).listModels({ signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user gave up')), 200);
    await assert.rejects(pending, /user gave up/);
    assert.equal(fake.requests.length, 1);
  });
});

describe('requests', () => {
  it('sends the bearer key, JSON, and encodes ids and query values', async () => {
    fake = await startFakeHttp([{ status: 200, body: { messages: [], next_after_seq: null } }]);
    await clientFor(fake.url, { headers: { 'x-trace': 't1' } }).listMessages('a b/c', {
      after_seq: 3,
      limit: 10,
    });
    const [request] = fake.requests;
    assert.equal(request.url, '/sessions/a%20b%2Fc/messages?after_seq=3&limit=10');
    assert.equal(request.headers.authorization, 'Bearer k');
    assert.equal(request.headers['x-trace'], 't1');
  });

  it('keeps a client_id the caller gave', async () => {
    fake = await startFakeHttp([{ status: 201, body: { messages: [] } }]);
    await clientFor(fake.url).appendMessages('s1', [{ role: 'user', content: 'hi', client_id: 'mine' }]);
    assert.equal(fake.requests[0].body.messages[0].client_id, 'mine');
  });
});
