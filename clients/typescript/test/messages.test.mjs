import assert from 'node:assert/strict';
import { request as httpRequest, createServer } from 'node:http';
import { describe, it } from 'node:test';
import { ConflictError, FoldwiseClient, NoMessagesError, NotFoundError } from '../dist/index.js';
import { API_KEY, BASE_URL, client, transcript, uniqueId } from './support/foldwise.mjs';

/**
 * A proxy to Foldwise that forwards the first request, lets Foldwise answer, then drops the
 * connection instead of passing the answer on: the response is lost after the write happened.
 */
async function startLossyProxy() {
  let forwarded = 0;
  const target = new URL(BASE_URL);
  const proxy = createServer((incoming, outgoing) => {
    forwarded += 1;
    const loseIt = forwarded === 1;
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: incoming.url,
        method: incoming.method,
        headers: incoming.headers,
      },
      (answer) => {
        if (loseIt) {
          answer.resume();
          answer.on('end', () => incoming.socket.destroy());
          return;
        }
        outgoing.writeHead(answer.statusCode, answer.headers);
        answer.pipe(outgoing);
      },
    );
    incoming.pipe(upstream);
  });
  await new Promise((ready) => proxy.listen(0, '127.0.0.1', ready));
  return {
    url: `http://127.0.0.1:${proxy.address().port}`,
    close: () => {
      proxy.closeAllConnections();
      return new Promise((done) => proxy.close(done));
    },
  };
}

describe('messages', () => {
  it('appends a batch and pages through it in seq order', async () => {
    const foldwise = client();
    const { id } = await foldwise.createSession({ id: uniqueId() });
    const appended = await foldwise.appendMessages(id, transcript(3));
    assert.deepEqual(
      appended.messages.map((m) => m.seq),
      [1, 2, 3, 4, 5, 6],
    );
    assert.ok(appended.messages.every((m) => m.client_id && !m.duplicate && m.token_count > 0));

    const page = await foldwise.listMessages(id, { limit: 4 });
    assert.deepEqual(
      page.messages.map((m) => m.seq),
      [1, 2, 3, 4],
    );
    assert.equal(page.next_after_seq, 4);

    const seqs = [];
    for await (const message of foldwise.iterMessages(id, { limit: 2 })) seqs.push(message.seq);
    assert.deepEqual(seqs, [1, 2, 3, 4, 5, 6]);

    assert.equal(page.messages[0].items, null);
    const asItems = await foldwise.listMessages(id, { limit: 2, format: 'openai_responses' });
    assert.deepEqual(
      asItems.messages.map((m) => m.items.map((item) => [item.type, item.role])),
      [[[undefined, 'user']], [['message', 'assistant']]], // a string posted: the easy form back
    );
    assert.equal(asItems.messages[1].items[0].content, page.messages[1].content);
  });

  it('returns a known client_id as a duplicate and stores nothing', async () => {
    const foldwise = client();
    const { id } = await foldwise.createSession({ id: uniqueId() });
    const first = await foldwise.appendMessages(id, [{ role: 'user', content: 'once', client_id: 'c1' }]);
    const again = await foldwise.appendMessages(id, [{ role: 'user', content: 'once', client_id: 'c1' }]);
    assert.equal(again.messages[0].duplicate, true);
    assert.equal(again.messages[0].id, first.messages[0].id);
    assert.equal((await foldwise.getSession(id)).message_count, 1);
  });

  it('stores a message once when the response to the first attempt is lost', async () => {
    const proxy = await startLossyProxy();
    try {
      const { id } = await client().createSession({ id: uniqueId() });
      const throughProxy = new FoldwiseClient({ baseUrl: proxy.url, apiKey: API_KEY });
      const result = await throughProxy.appendMessages(id, [{ role: 'user', content: 'exactly once' }]);
      assert.equal(result.messages[0].duplicate, true, 'the retry found the first attempt stored');
      const stored = await client().listMessages(id);
      assert.deepEqual(
        stored.messages.map((m) => m.content),
        ['exactly once'],
      );
    } finally {
      await proxy.close();
    }
  });

  it('pops the newest message, with its Responses items, until none is left', async () => {
    const foldwise = client();
    const { id } = await foldwise.createSession({ id: uniqueId() });
    await foldwise.appendMessages(id, [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'weather?' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
      { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{"city":"Oslo"}' },
    ]);
    const popped = await foldwise.popMessage(id);
    assert.equal(popped.seq, 2);
    assert.equal(popped.role, 'assistant');
    assert.deepEqual(
      popped.items.map((item) => item.type),
      ['message', 'function_call'],
    );
    assert.equal(popped.items[1].call_id, 'call_1');

    assert.equal((await foldwise.popMessage(id)).seq, 1);
    const error = await foldwise.popMessage(id).catch((e) => e);
    assert.ok(error instanceof NoMessagesError);
    assert.ok(error instanceof NotFoundError);
    assert.equal(error.code, 'no_messages');
  });

  it('refuses to pop a message the summary already covers', async () => {
    const foldwise = client();
    const { id } = await foldwise.createSession({ id: uniqueId() });
    await foldwise.appendMessages(id, [
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
    ]);
    await foldwise.clear(id);
    const error = await foldwise.popMessage(id).catch((e) => e);
    assert.ok(error instanceof ConflictError, String(error));
    assert.equal(error.status, 409);
  });
});
