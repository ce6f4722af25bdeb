import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SessionNotFoundError, UnprocessableEntityError } from '../dist/index.js';
import { client, uniqueId } from './support/foldwise.mjs';

describe('data lifecycle', () => {
  it('exports a session as JSONL and imports it back with the same context', async () => {
    const foldwise = client();
    const id = uniqueId('moved');
    await foldwise.createSession({ id, system_prompt: 'Be exact.' });
    await foldwise.appendMessages(id, [
      { role: 'user', content: 'Fix the failing test' },
      { role: 'assistant', content: 'Reading it.' },
    ]);
    await foldwise.context(id, { max_tokens: 2000 });
    const before = await foldwise.context(id, { max_tokens: 2000 });

    const jsonl = await foldwise.exportSession(id);
    const records = jsonl
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    // A `calibration` record comes along when the tenant has learned one (other tests may).
    const kinds = records.map((r) => r.kind).filter((kind) => kind !== 'calibration');
    assert.deepEqual(kinds, ['session', 'message', 'message', 'end']);
    await assert.rejects(foldwise.importSession(jsonl.slice(0, -10)), UnprocessableEntityError);

    await foldwise.deleteSession(id);
    await assert.rejects(foldwise.exportSession(id), SessionNotFoundError);
    const imported = await foldwise.importSession(jsonl);
    assert.equal(imported.status, 'created');
    assert.equal(imported.checksum, records.at(-1).checksum);
    assert.equal((await foldwise.importSession(jsonl)).status, 'unchanged');
    assert.deepEqual(await foldwise.context(id, { max_tokens: 2000 }), before);
  });

  it("deletes a user's sessions by id prefix", async () => {
    const foldwise = client();
    const prefix = uniqueId('user');
    for (const name of ['a', 'b']) await foldwise.createSession({ id: `${prefix}:${name}` });
    assert.deepEqual(await foldwise.deleteSessions(`${prefix}:`), { deleted: 2 });
    assert.deepEqual((await foldwise.listSessions({ id_prefix: prefix })).sessions, []);
  });
});
