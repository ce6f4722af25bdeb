// A chat endpoint in plain Node with the Foldwise TypeScript client. Per request it stores
// the user's turn, asks Foldwise for the history that fits the model's window (older turns
// folded into a summary when needed), calls Claude, stores the reply and reports the
// provider's token count so Foldwise's estimates calibrate.
//
//   npm install ./clients/typescript        # in the folder you copy this file to
//   make run                                # Foldwise on 127.0.0.1:8000, in another terminal
//   ANTHROPIC_API_KEY=sk-... node node-handler.mjs
//   curl -s 127.0.0.1:3000/chat -d '{"session_id": "demo", "message": "Hello!"}'
//
// A client that retries a failed turn sends the same "turn_id" (say, its message's id): the
// user's message is stored once however often the turn is tried.
//
// Environment: FOLDWISE_BASE_URL, FOLDWISE_API_KEY (the client reads them), ANTHROPIC_API_KEY,
// ANTHROPIC_BASE_URL (a gateway, or a fake in tests), PORT (default 3000).
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { FoldwiseClient, SessionExistsError, SessionNotFoundError } from 'foldwise';

const SYSTEM_PROMPT = 'You are a concise, friendly assistant.';
const ANTHROPIC_URL = `${process.env.ANTHROPIC_BASE_URL ?? 'https://api.anthropic.com'}/v1/messages`;
const foldwise = new FoldwiseClient();

async function createMessage(params) {
  const response = await fetch(ANTHROPIC_URL, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': process.env.ANTHROPIC_API_KEY ?? '',
      'anthropic-version': '2023-06-01',
    },
    body: JSON.stringify(params),
  });
  if (!response.ok) throw new Error(`Anthropic API answered ${response.status}: ${await response.text()}`);
  return response.json();
}

/**
 * Stores the user's turn and returns the context to send next, in one request; creates the
 * session on its first turn.
 */
async function takeUserTurn(sessionId, text, turnId) {
  const turn = [{ role: 'user', content: text, client_id: `${turnId}:user` }];
  try {
    return (await foldwise.turn(sessionId, turn)).context; // format: 'anthropic'
  } catch (error) {
    if (!(error instanceof SessionNotFoundError)) throw error;
    await foldwise.createSession({ id: sessionId, system_prompt: SYSTEM_PROMPT }).catch((raced) => {
      if (!(raced instanceof SessionExistsError)) throw raced; // another request created it first
    });
    return (await foldwise.turn(sessionId, turn)).context;
  }
}

/**
 * One turn of session `sessionId`: returns the assistant's text. The turn's client_ids make a
 * retry of a failed turn (the same `turnId`) store nothing twice.
 */
async function chat(sessionId, text, turnId) {
  const context = await takeUserTurn(sessionId, text, turnId);
  const reply = await createMessage(context.anthropicParams({ maxTokens: 1024 }));
  const answer = { role: 'assistant', content: reply.content, client_id: `${turnId}:assistant` };
  await foldwise.appendMessages(sessionId, [answer]);
  // What the model read: uncached input, plus prompt-cache writes and reads.
  const usage = reply.usage;
  const inputTokens =
    usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
  await foldwise.reportUsage(sessionId, {
    model: context.model,
    input_tokens: inputTokens,
  });
  return reply.content
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('');
}

async function readJson(request) {
  const chunks = [];
  for await (const chunk of request) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const server = createServer(async (request, response) => {
  const send = (status, body) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  if (request.method !== 'POST' || request.url !== '/chat') return send(404, { error: 'POST /chat' });
  let body;
  try {
    body = await readJson(request);
  } catch {
    return send(400, {
      error: 'the body must be JSON: {"session_id", "message", "turn_id"?}',
    });
  }
  try {
    send(200, {
      reply: await chat(String(body.session_id), String(body.message), String(body.turn_id ?? randomUUID())),
    });
  } catch (error) {
    send(502, { error: error.message });
  }
});

const port = Number(process.env.PORT ?? 3000);
server.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
