// FoldwiseSession with the real @openai/agents Runner and a fake Model (no network).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Agent, OpenAIResponsesModel, run, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { FoldwiseSession } from '../dist/agents.js';
import { client, uniqueId } from './support/foldwise.mjs';
import { FakeModel } from './support/fake-model.mjs';
import { startFakeResponses } from './support/fake-responses.mjs';

setTracingDisabled(true);

const weather = tool({
  name: 'weather',
  description: 'The weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}`,
});

function agentWith(model) {
  return new Agent({ name: 'helper', instructions: 'Answer briefly.', model, tools: [weather] });
}

const newSession = (options = {}) =>
  new FoldwiseSession(uniqueId('agents'), {
    client: client(),
    sessionOptions: { model: 'gpt-4o' },
    ...options,
  });

const brief = (item) => [item.type ?? 'message', item.role ?? item.name ?? '', item.callId ?? ''];

describe('FoldwiseSession with the Agents SDK runner', () => {
  it('stores each turn in Foldwise and replays it to the model on the next run', async () => {
    const model = new FakeModel();
    const session = newSession();
    const first = await run(agentWith(model), 'What is the weather in Oslo?', { session });
    assert.equal(first.finalOutput, 'It is sunny in Oslo.');

    const sessionId = await session.getSessionId();
    assert.equal(sessionId, session.sessionId);
    const stored = await client().listMessages(sessionId);
    assert.deepEqual(
      stored.messages.map((m) => m.role),
      ['user', 'assistant', 'tool', 'assistant'],
    );
    assert.equal(stored.messages[1].tool_calls[0].id, 'call_1');

    // A new session object (another process, say) with the same id sees the same history.
    const again = new FoldwiseSession(sessionId, { client: client() });
    const second = await run(agentWith(model), 'Thanks!', { session: again });
    assert.equal(second.finalOutput, 'You said: Thanks!.');
    const input = model.requests.at(-1);
    assert.deepEqual(input.map(brief), [
      ['message', 'user', ''],
      ['function_call', 'weather', 'call_1'],
      ['function_call_result', 'weather', 'call_1'],
      ['message', 'assistant', ''],
      ['message', 'user', ''],
    ]);
    assert.equal(input[2].output, 'sunny in Oslo');
    assert.equal(input[3].content[0].text, 'It is sunny in Oslo.');
  });

  it('sends the folded context: a summary and the newest turns under the budget', async () => {
    const model = new FakeModel();
    const session = newSession({
      contextOptions: { max_tokens: 900, keep_recent: 2, pin_first_message: false },
    });
    const filler = 'lorem ipsum dolor sit amet '.repeat(30);
    for (let turn = 0; turn < 6; turn++) await run(agentWith(model), `Turn ${turn}: ${filler}`, { session });

    const input = model.requests.at(-1);
    const sessionId = await session.getSessionId();
    const { message_count: stored, summary } = await client().getSession(sessionId);
    assert.equal(stored, 12);
    assert.ok(summary?.text, 'Foldwise folded older turns');
    assert.ok(input.length < stored, `${input.length} items sent for ${stored} stored`);
    // The summary leads, as a user/assistant pair (summary_placement=messages by default).
    assert.deepEqual(input.slice(0, 2).map(brief), [
      ['message', 'user', ''],
      ['message', 'assistant', ''],
    ]);
    assert.match(input[0].content[0].text, /Turn 0/, 'the summary carries the first turns');
    assert.doesNotMatch(JSON.stringify(input.slice(2)), /Turn 0/);
    assert.match(JSON.stringify(input.at(-1)), /Turn 5/);
  });

  it('pops exactly one item, putting back the rest of a grouped assistant turn', async () => {
    const session = newSession();
    await session.addItems([
      { type: 'message', role: 'user', content: 'weather?' },
      {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Checking.' }],
      },
      {
        type: 'function_call',
        callId: 'call_9',
        name: 'weather',
        arguments: '{"city":"Rome"}',
        status: 'completed',
      },
    ]);
    const popped = await session.popItem();
    assert.deepEqual(popped, {
      type: 'function_call',
      callId: 'call_9',
      name: 'weather',
      arguments: '{"city":"Rome"}',
      status: 'completed',
    });
    assert.deepEqual((await session.getItems()).map(brief), [
      ['message', 'user', ''],
      ['message', 'assistant', ''],
    ]);
    assert.equal((await session.popItem()).content[0].text, 'Checking.');
    assert.equal((await session.popItem()).content[0].text, 'weather?');
    assert.equal(await session.popItem(), undefined);
  });

  it('returns the newest items with a limit, and nothing after a clear', async () => {
    const session = newSession();
    await session.addItems([
      { role: 'user', content: 'one' },
      { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'two' }] },
      { role: 'user', content: 'three' },
    ]);
    assert.deepEqual(
      (await session.getItems(2)).map((item) => item.content[0].text),
      ['two', 'three'],
    );
    assert.deepEqual(await session.getItems(0), []);
    await session.clearSession();
    assert.deepEqual(await session.getItems(), []);
    assert.equal(
      (await client().getSession(await session.getSessionId())).message_count,
      3,
      'stored messages stay',
    );
  });

  it('reads nothing before the first append, which creates the session with sessionOptions', async () => {
    const session = new FoldwiseSession(uniqueId('agents'), {
      client: client(),
      sessionOptions: { model: 'gpt-4o', system_prompt: 'Be kind.' },
    });
    assert.deepEqual(await session.getItems(), []);
    assert.equal(await session.popItem(), undefined);
    await session.clearSession();
    await session.addItems([{ role: 'user', content: 'hello' }]);
    assert.equal((await client().getSession(session.sessionId)).model, 'gpt-4o');
    assert.deepEqual((await session.getItems()).map(brief), [
      ['message', 'system', ''],
      ['message', 'user', ''],
    ]);
    assert.equal((await session.getItems())[0].content, 'Be kind.');
  });

  it('refuses an item it cannot store, storing nothing', async () => {
    const session = newSession();
    await assert.rejects(
      session.addItems([
        { role: 'user', content: 'hi' },
        { type: 'computer_call', callId: 'c', action: {}, status: 'completed' },
      ]),
      /cannot store an item of type 'computer_call'/,
    );
    await assert.rejects(client().getSession(session.sessionId), /does not exist/, 'nothing was sent');
  });

  it('round-trips reasoning, ids, function outputs given as text parts, and images', async () => {
    const session = newSession();
    const reasoning = {
      type: 'reasoning',
      id: 'rs_1',
      content: [{ type: 'input_text', text: 'The user wants Rome.' }],
      providerData: { encryptedContent: 'opaque-blob' },
    };
    await session.addItems([
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'Look:' },
          { type: 'input_image', image: 'https://example.com/a.png', detail: 'low' },
        ],
      },
      reasoning,
      {
        type: 'function_call',
        id: 'fc_r',
        callId: 'call_r',
        name: 'weather',
        arguments: '{"city":"Rome"}',
        status: 'completed',
      },
      {
        type: 'function_call_result',
        callId: 'call_r',
        name: 'weather',
        status: 'completed',
        output: { type: 'text', text: 'rainy' },
      },
    ]);
    const items = await session.getItems();
    assert.deepEqual(items.map(brief), [
      ['message', 'user', ''],
      ['reasoning', '', ''],
      ['function_call', 'weather', 'call_r'],
      ['function_call_result', 'weather', 'call_r'],
    ]);
    assert.deepEqual(items[0].content[1], {
      type: 'input_image',
      image: 'https://example.com/a.png',
      detail: 'low',
    });
    assert.deepEqual(items[1], reasoning);
    assert.equal(items[2].id, 'fc_r', 'the id the API gave the call (reasoning pairs with it)');
    assert.equal(items[3].output, 'rainy');
  });

  it('reports the first model call of a run for calibration, with what was not served', async () => {
    const reports = [];
    const recording = client({
      fetch: async (url, init) => {
        if (String(url).endsWith('/usage')) reports.push(JSON.parse(init.body));
        return fetch(url, init);
      },
    });
    // gpt-3.5-turbo: a model family (cl100k_base) no other test of this suite reports usage for.
    const session = new FoldwiseSession(uniqueId('usage'), {
      client: recording,
      sessionOptions: { model: 'gpt-3.5-turbo' },
    });
    const agent = agentWith(new FakeModel({ inputTokens: 150 }));
    await run(agent, 'What is the weather in Oslo?', { session });
    const second = await run(agent, 'Thanks!', { session });
    assert.equal(await session.reportUsage(agent, second), true);

    assert.equal(reports.length, 1);
    const [report] = reports;
    assert.equal(report.input_tokens, 150);
    assert.equal(report.unserved.system, 'Answer briefly.');
    assert.deepEqual(
      report.unserved.tools.map((tool) => [tool.name, tool.strict]),
      [['weather', true]],
    );
    assert.deepEqual(report.unserved.messages, [{ type: 'message', role: 'user', content: 'Thanks!' }]);
    const { calibration } = (await recording.context(session.sessionId, { preview: true })).usage;
    assert.equal(calibration.family, 'cl100k_base');
    assert.ok(calibration.samples >= 1);

    const silent = new FakeModel();
    const noUsage = await run(agentWith(silent), 'Hello', { session });
    assert.equal(await session.reportUsage(agent, noUsage), false, 'nothing counted: no report');
  });

  it("replays the history through the SDK's own Responses model, on a fake Responses API", async () => {
    const api = await startFakeResponses();
    try {
      const openai = new OpenAI({ apiKey: 'test-key', baseURL: api.url, maxRetries: 0 });
      const model = new OpenAIResponsesModel(openai, 'gpt-4o');
      const session = newSession();
      const first = await run(agentWith(model), 'What is the weather in Lima?', { session });
      assert.equal(first.finalOutput, 'It is sunny in Lima.');
      await run(agentWith(model), 'Thanks!', { session });

      const sent = api.requests.at(-1).body;
      assert.equal(sent.instructions, 'Answer briefly.');
      const input = sent.input.map((item) => [
        item.type ?? 'message',
        item.role ?? item.name ?? '',
        item.call_id ?? '',
      ]);
      assert.deepEqual(input, [
        ['message', 'user', ''],
        ['function_call', 'weather', 'call_1'],
        ['function_call_output', '', 'call_1'],
        ['message', 'assistant', ''],
        ['message', 'user', ''],
      ]);
      assert.equal(sent.input[2].output, 'sunny in Lima');
    } finally {
      await api.close();
    }
  });
});
