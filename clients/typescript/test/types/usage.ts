// Compiled, never run, by `npm run check-api` against the package's own dist/*.d.ts, as a
// consumer imports them: the public types accept what the server accepts and refuse what
// it does not. Each @ts-expect-error must stay an error (else tsc fails on it).
import OpenAI from 'openai';
import type { Session } from '@openai/agents';
import { FoldwiseClient, type Context, type Session as FoldwiseSessionRead } from 'foldwise';
import { FoldwiseSession } from 'foldwise/agents';

export async function usage(foldwise: FoldwiseClient, openai: OpenAI): Promise<void> {
  const created: FoldwiseSessionRead = await foldwise.createSession({
    model: 'gpt-4o',
    settings: { keep_recent: 4 },
  });
  const count: number = created.message_count;
  // @ts-expect-error: not a setting
  await foldwise.createSession({ settings: { keep_recnt: 4 } });

  const context: Context = await foldwise.context(created.id, {
    format: 'openai',
    max_tokens: 8000,
    keep_recent: 2,
  });
  // @ts-expect-error: not a format
  await foldwise.context(created.id, { format: 'bedrock' });
  const gemini = await foldwise.context(created.id, { format: 'gemini' });
  const contents: unknown[] = gemini.geminiParams().contents;
  // @ts-expect-error: not a query option
  await foldwise.context(created.id, { maxTokens: 8000 });

  await openai.chat.completions.create(context.openaiChatParams());
  await openai.chat.completions.create({ ...context.openaiChatParams(), temperature: 0 });
  const responses = await foldwise.context(created.id, { format: 'openai_responses' });
  await openai.responses.create(responses.openaiResponsesParams());

  const turn = await foldwise.turn(created.id, [{ role: 'user', content: 'Hi' }], { max_tokens: 8000 });
  await openai.chat.completions.create(turn.context.openaiChatParams());
  const appendedSeq: number | undefined = turn.append.messages[0]?.seq;
  await foldwise.turn(created.id, [{ role: 'user', content: 'Hi' }]);
  // @ts-expect-error: a turn appends, it cannot only look
  await foldwise.turn(created.id, [], { dry_run: true });

  const page = await foldwise.listMessages(created.id, { after_seq: 0, limit: 10 });
  const next: number | null = page.next_after_seq;
  const popped = await foldwise.popMessage(created.id);
  const items: Array<Record<string, unknown>> = popped.items;
  // @ts-expect-error: input_tokens is required
  await foldwise.reportUsage(created.id, { model: 'gpt-4o' });

  const session: Session = new FoldwiseSession('user-7', {
    client: foldwise,
    sessionOptions: { model: 'gpt-4o' },
    contextOptions: { max_tokens: 4000, summary_placement: 'system' },
  });
  // @ts-expect-error: the session always reads openai_responses
  new FoldwiseSession('user-7', { contextOptions: { format: 'anthropic' } });
  void [count, next, items, session, appendedSeq];
}
