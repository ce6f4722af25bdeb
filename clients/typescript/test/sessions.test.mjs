import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  APIStatusError,
  AuthenticationError,
  ConflictError,
  FoldwiseClient,
  FoldwiseError,
  NotFoundError,
  SessionExistsError,
  SessionNotFoundError,
  UnprocessableEntityError,
} from '../dist/index.js';
import { BASE_URL, OTHER_KEY, client, uniqueId } from './support/foldwise.mjs';

describe('sessions', () => {
  it('creates, reads, updates and deletes a session', async () => {
    const foldwise = client();
    const id = uniqueId();
    const created = await foldwise.createSession({
      id,
      system_prompt: 'You are terse.',
      settings: { keep_recent: 4 },
      metadata: { user: 'ada' },
    });
    assert.equal(created.id, id);
    assert.equal(created.message_count, 0);
    assert.deepEqual(created.settings, { keep_recent: 4 });

    const updated = await foldwise.updateSession(id, {
      settings: { threshold: 0.5 },
      metadata: { team: 'core' },
    });
    assert.deepEqual(updated.settings, { keep_recent: 4, threshold: 0.5 }, 'settings merge key by key');
    assert.deepEqual(updated.metadata, { team: 'core' }, 'metadata replaces');
    assert.equal((await foldwise.getSession(id)).system_prompt, 'You are terse.');

    assert.equal(await foldwise.deleteSession(id), undefined);
    await assert.rejects(foldwise.getSession(id), SessionNotFoundError);
  });

  it('assigns an id when none is given', async () => {
    const session = await client().createSession();
    assert.match(session.id, /^[0-9a-f-]{36}$/);
  });

  it('lists every session of a prefix across pages', async () => {
    const foldwise = client();
    const prefix = uniqueId('list');
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await foldwise.createSession({ id: `${prefix}-${i}` })).id);

    const page = await foldwise.listSessions({ id_prefix: prefix, limit: 2 });
    assert.deepEqual(
      page.sessions.map((s) => s.id),
      ids.slice(0, 2),
    );
    assert.notEqual(page.next_cursor, null);

    const all = [];
    for await (const session of foldwise.iterSessions({
      id_prefix: prefix,
      limit: 2,
      sort: 'id',
      order: 'desc',
    })) {
      all.push(session.id);
    }
    assert.deepEqual(all, [...ids].reverse());
  });
});

describe('errors', () => {
  it('maps the envelope of a missing session to SessionNotFoundError', async () => {
    const error = await client()
      .getSession(uniqueId('missing'))
      .catch((e) => e);
    assert.ok(error instanceof SessionNotFoundError);
    assert.ok(error instanceof NotFoundError);
    assert.ok(error instanceof APIStatusError);
    assert.ok(error instanceof FoldwiseError);
    assert.equal(error.status, 404);
    assert.equal(error.code, 'session_not_found');
    assert.equal(error.name, 'SessionNotFoundError');
    assert.match(error.message, /does not exist/);
    assert.equal(error.details.session_id.startsWith('missing-'), true);
  });

  it('maps a taken id to SessionExistsError, a ConflictError', async () => {
    const foldwise = client();
    const id = uniqueId();
    await foldwise.createSession({ id });
    const error = await foldwise.createSession({ id }).catch((e) => e);
    assert.ok(error instanceof SessionExistsError);
    assert.ok(error instanceof ConflictError);
    assert.equal(error.status, 409);
    assert.equal(error.code, 'session_exists');
  });

  it('maps a rejected message to UnprocessableEntityError with its details', async () => {
    const foldwise = client();
    const { id } = await foldwise.createSession({ id: uniqueId() });
    const error = await foldwise.appendMessages(id, [{ role: 'robot', content: 'beep' }]).catch((e) => e);
    assert.ok(error instanceof UnprocessableEntityError);
    assert.equal(error.status, 422);
    assert.equal(error.code, 'invalid_message');
    assert.ok(error.details, 'details name the message');
  });

  it('sends the API key as a bearer token, and maps 401 to AuthenticationError', async () => {
    const anonymous = new FoldwiseClient({ baseUrl: BASE_URL, apiKey: '' });
    const missing = await anonymous.listModels().catch((e) => e);
    assert.ok(missing instanceof AuthenticationError);
    assert.equal(missing.status, 401);
    assert.equal(missing.code, 'unauthorized');

    const wrong = await client({ apiKey: 'not-a-key' })
      .listModels()
      .catch((e) => e);
    assert.ok(wrong instanceof AuthenticationError);
    assert.ok((await client().listModels()).length > 0);
  });

  it('keeps tenants apart: another tenant sees 404', async () => {
    const { id } = await client().createSession({ id: uniqueId() });
    await assert.rejects(client({ apiKey: OTHER_KEY }).getSession(id), NotFoundError);
  });
});
