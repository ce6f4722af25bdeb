// The server `npm test` started (scripts/test.mjs), and clients for its two tenants.
import { randomUUID } from 'node:crypto';
import { FoldwiseClient } from '../../dist/index.js';

export const BASE_URL = process.env.FOLDWISE_TEST_URL;
export const API_KEY = process.env.FOLDWISE_TEST_API_KEY;
export const OTHER_KEY = process.env.FOLDWISE_TEST_OTHER_KEY;
if (!BASE_URL || !API_KEY) throw new Error('run the tests with `npm test`: it starts the Foldwise server');

/** A client of tenant `ts-tests` (options override). */
export function client(options = {}) {
  return new FoldwiseClient({ baseUrl: BASE_URL, apiKey: API_KEY, ...options });
}

/** A session id no other test uses. */
export function uniqueId(prefix = 'ts') {
  return `${prefix}-${randomUUID()}`;
}

/** `count` user/assistant pairs of `words` words each. */
export function transcript(count, words = 40) {
  const messages = [];
  for (let i = 0; i < count; i++) {
    messages.push({ role: 'user', content: `Question ${i}: ${'detail '.repeat(words)}` });
    messages.push({ role: 'assistant', content: `Answer ${i}: ${'result '.repeat(words)}` });
  }
  return messages;
}
