// The @openai/agents `Session` interface, written from its documentation comments, run side by
// side against the SDK's own MemorySession and FoldwiseSession (the real server of `npm test`,
// SQLite or PostgreSQL):
// - getItems(limit): the history in order; with `limit` the most recent `limit` items in
//   chronological order;
// - addItems(items): appends;
// - popItem(): removes and returns the most recent item, undefined when there is none;
// - clearSession(): removes all items of the session.
// Items are compared by what they say (`comparable`, the session's own comparison hook):
// Foldwise gives back a string `content` as parts and adds `status`. The one documented
// difference: a reasoning item goes with the item it precedes when that one is popped (no
// Responses backend takes it alone), so histories are compared as a model receives them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemorySession } from '@openai/agents';
import { FoldwiseSession } from '../dist/agents.js';
import { comparable } from '../dist/agents-items.js';
import { client, uniqueId } from './support/foldwise.mjs';

const KINDS = {
  MemorySession: () => new MemorySession(),
  FoldwiseSession: () => new FoldwiseSession(uniqueId('contract'), { client: client() }),
};

const user = (text) => ({ type: 'message', role: 'user', content: text });
const answer = (text) => ({
  type: 'message',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text }],
});
const reasoning = (id) => ({ type: 'reasoning', id, content: [{ type: 'input_text', text: 'think' }] });
const call = (callId) => ({
  type: 'function_call',
  callId,
  name: 'lookup',
  arguments: '{}',
  status: 'completed',
});
const result = (callId, text) => ({
  type: 'function_call_result',
  callId,
  name: 'lookup',
  status: 'completed',
  output: text,
});

const said = (items) => items.map(comparable);
const history = async (session, limit) => said(await session.getItems(limit));
const sendable = (items) => {
  const out = [...items];
  while (out.at(-1)?.type === 'reasoning') out.pop();
  return out;
};

const CONVERSATION = [user('one'), answer('two'), user('three'), answer('four'), user('five')];

for (const [kind, make] of Object.entries(KINDS)) {
  describe(`Session contract: ${kind}`, () => {
    it('an empty session has no items and pops undefined', async () => {
      const session = make();
      assert.equal(typeof (await session.getSessionId()), 'string');
      assert.deepEqual(await session.getItems(), []);
      assert.deepEqual(await session.getItems(3), []);
      assert.equal(await session.popItem(), undefined);
      await session.addItems([]);
      assert.deepEqual(await session.getItems(), []);
    });

    it('gives back added items in order', async () => {
      const session = make();
      await session.addItems(CONVERSATION.slice(0, 2));
      await session.addItems(CONVERSATION.slice(2));
      assert.deepEqual(await history(session), said(CONVERSATION));
    });

    it('limit is the most recent items in chronological order', async () => {
      const session = make();
      await session.addItems(CONVERSATION);
      const everything = await history(session);
      assert.deepEqual(await history(session, 2), everything.slice(-2));
      assert.deepEqual(await history(session, 100), everything);
      assert.deepEqual(await history(session, 0), []);
    });

    it('popItem removes and returns the most recent item, one at a time', async () => {
      const session = make();
      await session.addItems(CONVERSATION);
      for (let left = CONVERSATION.length; left > 0; left--) {
        const before = await history(session);
        assert.equal(before.length, left);
        assert.deepEqual(comparable(await session.popItem()), before.at(-1));
        assert.deepEqual(await history(session), before.slice(0, -1));
      }
      assert.equal(await session.popItem(), undefined);
    });

    it('popItem splits a turn of several calls item by item', async () => {
      const session = make();
      await session.addItems([user('go'), reasoning('rs_1'), call('c1'), call('c2')]);
      await session.addItems([result('c1', 'a'), result('c2', 'b')]);
      const before = await history(session);
      const popped = [];
      for (let n = 0; n < 3; n++) popped.push(comparable(await session.popItem()));
      assert.deepEqual(popped, before.slice(-3).reverse());
      assert.deepEqual(await history(session), before.slice(0, -3));
    });

    for (const [name, step] of [
      ['a message', answer('done')],
      ['a pending call', call('c9')],
    ]) {
      it(`popping ${name} after a reasoning item leaves a history a model accepts`, async () => {
        const session = make();
        await session.addItems([user('go'), reasoning('rs_1'), step]);
        const before = await history(session);
        assert.deepEqual(comparable(await session.popItem()), comparable(step));
        assert.deepEqual(sendable(await history(session)), sendable(before.slice(0, -1)));
      });
    }

    it('clearSession removes every item', async () => {
      const session = make();
      await session.addItems(CONVERSATION);
      await session.clearSession();
      assert.deepEqual(await session.getItems(), []);
      assert.equal(await session.popItem(), undefined);
      await session.addItems([user('again')]);
      assert.deepEqual(await history(session), said([user('again')]));
      await session.clearSession();
      await session.clearSession();
      assert.equal(await session.popItem(), undefined);
    });

    it('sessions do not share items', async () => {
      const first = make();
      const second = make();
      await first.addItems([user('mine')]);
      assert.deepEqual(await second.getItems(), []);
    });

    it('concurrent calls all land', async () => {
      const session = make();
      const texts = Array.from({ length: 10 }, (_, n) => `m${n}`);
      await Promise.all([...texts.map((text) => session.addItems([user(text)])), session.getItems()]);
      const stored = (await history(session)).map((item) => item.content[0].text).sort();
      assert.deepEqual(stored, [...texts].sort());
    });
  });
}

describe('FoldwiseSession.prepareHistoryItemsForPersistenceComparison', () => {
  it('makes stored items compare equal to the items that were added', async () => {
    const session = KINDS.FoldwiseSession();
    const added = [
      user('hello'),
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'parts' }] },
      reasoning('rs_1'),
      { ...answer('sure'), id: 'msg_1', providerData: { annotations: [] } },
      call('c1'),
      result('c1', 'ok'),
    ];
    await session.addItems(added);
    const stored = await session.getItems();
    assert.notDeepEqual(stored, added, 'the shapes differ');
    assert.deepEqual(
      session.prepareHistoryItemsForPersistenceComparison(stored),
      session.prepareHistoryItemsForPersistenceComparison(added),
    );
  });
});
