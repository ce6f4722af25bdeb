import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConflictError, UnprocessableEntityError } from '../dist/index.js';
import { client, transcript, uniqueId } from './support/foldwise.mjs';
import { officialTypeErrors } from './support/openai-types.mjs';

const READ_FILE = {
  name: 'read_file',
  description: 'Read a file',
  input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

async function sessionWith(messages, create = {}) {
  const foldwise = client();
  const { id } = await foldwise.createSession({ id: uniqueId(), system_prompt: 'Be brief.', ...create });
  if (messages.length) await foldwise.appendMessages(id, messages);
  return { foldwise, id };
}

describe('context', () => {
  it('gives anthropic params that spread into messages.create', async () => {
    const { foldwise, id } = await sessionWith(transcript(2), { tools: [READ_FILE] });
    const context = await foldwise.context(id, { cache_breakpoints: false });
    assert.equal(context.format, 'anthropic');
    const params = context.anthropicParams();
    assert.deepEqual(Object.keys(params).sort(), ['max_tokens', 'messages', 'model', 'system', 'tools']);
    assert.equal(params.model, 'claude-sonnet-4-6');
    assert.equal(params.max_tokens, context.usage.reserved_output_tokens);
    assert.deepEqual(context.anthropicParams({ maxTokens: 64, model: 'claude-haiku-4-5' }).max_tokens, 64);
    assert.equal(params.system, 'Be brief.');
    assert.equal(params.messages.length, 4);
    assert.equal(params.tools[0].name, 'read_file');
    assert.ok(context.usage.total_tokens <= context.usage.budget);
    assert.deepEqual(Object.keys(JSON.parse(JSON.stringify(context))).includes('anthropicParams'), false);
    assert.throws(() => context.openaiChatParams(), TypeError);
  });

  it('gives openai chat params with the system prompt as the first message', async () => {
    const { foldwise, id } = await sessionWith(transcript(1));
    const params = (await foldwise.context(id, { format: 'openai', model: 'gpt-4o' })).openaiChatParams();
    assert.equal(params.model, 'gpt-4o');
    assert.deepEqual(params.messages[0], { role: 'system', content: 'Be brief.' });
    assert.equal(params.messages.length, 3);
    assert.equal('tools' in params, false, 'no tools key without tools');
  });

  it('gives openai responses params: instructions, input items and flat tools', async () => {
    const { foldwise, id } = await sessionWith(transcript(1), { tools: [READ_FILE] });
    const context = await foldwise.context(id, { format: 'openai_responses', model: 'gpt-4o' });
    const params = context.openaiResponsesParams();
    assert.equal(params.model, 'gpt-4o');
    assert.equal(params.instructions, 'Be brief.');
    assert.deepEqual(
      params.input.map((item) => [item.type, item.role, typeof item.content]),
      [
        [undefined, 'user', 'string'], // posted as a string: the easy form back, unchanged
        ['message', 'assistant', 'string'], // the easy form: no id was posted
      ],
    );
    assert.equal(params.tools[0].type, 'function');
    assert.equal(params.tools[0].name, 'read_file');
    assert.equal(params.tools[0].strict, false, 'as strict as its source: not unless it says so');
    assert.equal(await officialTypeErrors(params), '');
    assert.throws(() => context.anthropicParams(), /format 'anthropic'/);
  });

  it('serves items of every stored shape that compile as the openai ResponseInputItem type', async () => {
    const image = { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } };
    const { foldwise, id } = await sessionWith([
      { role: 'user', content: [image, { type: 'text', text: 'What is this?' }] },
      { role: 'assistant', content: 'Anthropic-shaped answer.' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Read it.' }] },
      { type: 'reasoning', id: 'rs_1', summary: [] },
      {
        type: 'message',
        id: 'msg_1',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Reading.', annotations: [] }],
      },
      { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'read_file', arguments: '{"path": "a"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'contents' },
      { role: 'assistant', tool_calls: [], content: 'Chat-shaped answer.' },
    ]);
    await foldwise.summarize(id, { strategy: 'rule' });
    const context = await foldwise.context(id, {
      format: 'openai_responses',
      summary_placement: 'messages',
      keep_recent: 8,
    });
    assert.equal(await officialTypeErrors(context.openaiResponsesParams()), '');
  });

  it('gives gemini params: contents, and a config with systemInstruction and function declarations', async () => {
    const { foldwise, id } = await sessionWith(transcript(1), { tools: [READ_FILE] });
    const context = await foldwise.context(id, { format: 'gemini', model: 'gemini-2.5-flash' });
    const params = context.geminiParams();
    assert.equal(params.model, 'gemini-2.5-flash');
    assert.deepEqual(
      params.contents.map((content) => content.role),
      ['user', 'model'],
    );
    assert.equal(params.config.systemInstruction, 'Be brief.');
    assert.equal(params.config.tools[0].functionDeclarations[0].name, 'read_file');
    assert.throws(() => context.openaiChatParams(), /format 'openai'/);
  });

  it("fails the openai types' check with items they refuse (the check's own control)", async () => {
    const bare = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'x' }] };
    assert.match(await officialTypeErrors({ input: [bare] }), /error TS/);
    const loose = { type: 'function', name: 'f', parameters: {} };
    assert.match(await officialTypeErrors({ tools: [loose] }), /strict/);
  });

  it('folds older messages into a summary under a small budget', async () => {
    const { foldwise, id } = await sessionWith(transcript(12, 60));
    const context = await foldwise.context(id, { max_tokens: 1200, keep_recent: 2, explain: true });
    assert.equal(context.summarized, true);
    assert.ok(context.summary?.text, 'a summary was written');
    assert.ok(context.messages_included < context.messages_total);
    assert.ok(context.usage.total_tokens <= 1200);
    assert.ok(context.explain.some((item) => item.status === 'summarized'));

    const history = await foldwise.listSummaries(id);
    assert.equal(history.summaries[0].version, context.summary.version);
  });

  it('folds on demand, then clears the context', async () => {
    const { foldwise, id } = await sessionWith(transcript(8));
    const folded = await foldwise.summarize(id, { focus: 'the questions asked', strategy: 'rule' });
    assert.equal(folded.folded, true);
    assert.ok(folded.messages_folded > 0);
    assert.equal(folded.method, 'rule');

    const cleared = await foldwise.clear(id);
    assert.equal(cleared.id, id);
    const after = await foldwise.context(id);
    assert.equal(after.messages.length, 0);
    await foldwise.appendMessages(id, [{ role: 'user', content: 'a fresh start' }]);
    const fresh = await foldwise.context(id, { format: 'openai' });
    assert.deepEqual(
      fresh.messages.map((m) => m.content),
      ['Be brief.', 'a fresh start'],
    );
  });

  it('calibrates from a usage report after a context was served', async () => {
    const { foldwise, id } = await sessionWith(transcript(2));
    await assert.rejects(foldwise.reportUsage(id, { input_tokens: 100 }), (error) => {
      assert.ok(error instanceof ConflictError);
      assert.equal(error.code, 'no_context_served');
      return true;
    });
    const context = await foldwise.context(id);
    const report = await foldwise.reportUsage(id, { input_tokens: context.usage.estimated_tokens * 2 });
    assert.equal(report.input_tokens, context.usage.estimated_tokens * 2);
    assert.equal(report.calibration.samples, 1);
    assert.ok(report.calibration.ratio > 1.5);
  });

  it('rejects a budget below the system prompt with UnprocessableEntityError', async () => {
    const { foldwise, id } = await sessionWith([], { system_prompt: 'word '.repeat(400) });
    const error = await foldwise.context(id, { max_tokens: 50 }).catch((e) => e);
    assert.ok(error instanceof UnprocessableEntityError);
    assert.equal(error.code, 'budget_too_small');
  });
});

describe('stateless routes', () => {
  it('assembles posted messages with the same helpers', async () => {
    const assembled = await client().assembleContext({
      messages: transcript(10, 80),
      system: 'Be brief.',
      format: 'openai',
      max_tokens: 800,
      keep_recent: 2,
    });
    assert.ok(assembled.dropped.length > 0 || assembled.pruned.length > 0);
    assert.ok(assembled.usage.total_tokens <= 800);
    assert.equal(assembled.openaiChatParams().messages[0].role, 'system');
  });

  it('summarizes posted messages', async () => {
    const summary = await client().summarizeContext({ messages: transcript(4), strategy: 'rule' });
    assert.equal(summary.strategy, 'rule');
    assert.equal(summary.input_messages, 8);
    assert.ok(summary.summary.length > 0);
  });

  it('counts tokens and lists models', async () => {
    const foldwise = client();
    const text = await foldwise.countTokens({ text: 'hello', model: 'gpt-4o' });
    assert.deepEqual(text, {
      tokens: 1,
      encoding: 'o200k_base',
      exact: true,
      model: 'gpt-4o',
      media: [],
      media_rule: 'openai-tiles-4o',
      counted_by: 'rules',
      warnings: [],
    });
    const messages = await foldwise.countTokens({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hello' }],
    });
    assert.ok(messages.tokens > text.tokens, 'messages carry framing');
    const models = await foldwise.listModels();
    assert.ok(models.some((m) => m.name === 'gpt-4o' && m.provider === 'openai'));
  });
});
