import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UnprocessableEntityError } from '../dist/index.js';
import { client, transcript, uniqueId } from './support/foldwise.mjs';

async function session() {
  const foldwise = client();
  const { id } = await foldwise.createSession({ id: uniqueId(), system_prompt: 'Be brief.' });
  return { foldwise, id };
}

const withoutCache = (context) => {
  const body = JSON.parse(JSON.stringify(context));
  delete body.usage.cache;
  delete body.summarized;
  return body;
};

describe('turn', () => {
  it('appends and answers the context a read right after would', async () => {
    const { foldwise, id } = await session();
    await foldwise.appendMessages(id, transcript(2));
    const turn = await foldwise.turn(id, [{ role: 'user', content: 'And now?' }], {
      format: 'openai',
      max_tokens: 4000,
    });
    const [appended] = turn.append.messages;
    assert.equal(appended.seq, 5);
    assert.ok(appended.client_id, 'a client_id is added');
    assert.equal(appended.duplicate, false);
    const params = turn.context.openaiChatParams();
    assert.deepEqual(params.messages.at(-1), { role: 'user', content: 'And now?' });
    const read = await foldwise.context(id, { format: 'openai', max_tokens: 4000 });
    assert.deepEqual(withoutCache(read), withoutCache(turn.context));
  });

  it('stores a retried turn once', async () => {
    const { foldwise, id } = await session();
    const batch = [{ role: 'user', content: 'Once', client_id: 'u-1' }];
    const first = await foldwise.turn(id, batch);
    const again = await foldwise.turn(id, batch);
    assert.deepEqual(
      again.append.messages.map((m) => [m.id, m.duplicate]),
      [[first.append.messages[0].id, true]],
    );
    assert.deepEqual(again.context.messages, first.context.messages);
    assert.equal((await foldwise.listMessages(id)).messages.length, 1);
  });

  it('refuses a look-only query and stores nothing', async () => {
    const { foldwise, id } = await session();
    await assert.rejects(
      foldwise.turn(id, [{ role: 'user', content: 'Hello' }], { dry_run: true }),
      (error) => error instanceof UnprocessableEntityError && error.code === 'validation_error',
    );
    assert.equal((await foldwise.listMessages(id)).messages.length, 0);
  });
});
