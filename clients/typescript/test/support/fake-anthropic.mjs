// A fake Anthropic Messages API on 127.0.0.1: answers every POST /v1/messages with
// "echo: <the last user text>" and records each request (headers and parsed body); failNext(n)
// makes the next n requests fail as an overloaded API does.
import { createServer } from 'node:http';

function lastUserText(messages) {
  const content = messages.at(-1)?.content;
  if (typeof content === 'string') return content;
  return (content ?? [])
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('');
}

export async function startFakeAnthropic({ inputTokens = 321 } = {}) {
  const requests = [];
  let failures = 0;
  const server = createServer(async (request, response) => {
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    requests.push({ method: request.method, url: request.url, headers: request.headers, body });
    if (failures > 0) {
      failures -= 1;
      response.writeHead(529, { 'content-type': 'application/json' });
      return response.end(JSON.stringify({ type: 'error', error: { type: 'overloaded_error' } }));
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        id: `msg_${requests.length}`,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: [{ type: 'text', text: `echo: ${lastUserText(body.messages)}` }],
        stop_reason: 'end_turn',
        usage: {
          input_tokens: inputTokens,
          output_tokens: 7,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      }),
    );
  });
  await new Promise((ready) => server.listen(0, '127.0.0.1', ready));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    /** The next `count` requests answer 529 overloaded_error. */
    failNext: (count) => {
      failures = count;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((done) => server.close(done));
    },
  };
}
