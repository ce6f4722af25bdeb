// A fake OpenAI Responses API on 127.0.0.1 (POST /v1/responses), for the Agents SDK's own
// OpenAIResponsesModel. Records each request body; answers like FakeModel: a user turn
// "weather in <city>" gets a function_call, a function_call_output gets "It is <output>.",
// anything else "You said: <text>.".
import { createServer } from 'node:http';

function lastText(item) {
  if (typeof item.content === 'string') return item.content;
  return (item.content ?? []).map((part) => part.text ?? '').join('');
}

function answer(input, turn) {
  const last = typeof input === 'string' ? { role: 'user', content: input } : input.at(-1);
  if (last.type === 'function_call_output') return message(turn, `It is ${last.output}.`);
  const city = /weather in (\w+)/i.exec(lastText(last))?.[1];
  if (city) {
    const args = JSON.stringify({ city });
    return {
      type: 'function_call',
      id: `fc_${turn}`,
      call_id: `call_${turn}`,
      name: 'weather',
      arguments: args,
      status: 'completed',
    };
  }
  return message(turn, `You said: ${lastText(last)}.`);
}

function message(turn, text) {
  const content = [{ type: 'output_text', text, annotations: [] }];
  return { type: 'message', id: `msg_${turn}`, status: 'completed', role: 'assistant', content };
}

export async function startFakeResponses() {
  const requests = [];
  const server = createServer(async (request, response) => {
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    requests.push({ url: request.url, body });
    const turn = requests.length;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        id: `resp_${turn}`,
        object: 'response',
        created_at: 0,
        status: 'completed',
        model: body.model,
        output: [answer(body.input, turn)],
        usage: {
          input_tokens: 10,
          output_tokens: 5,
          total_tokens: 15,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens_details: { reasoning_tokens: 0 },
        },
      }),
    );
  });
  await new Promise((ready) => server.listen(0, '127.0.0.1', ready));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    close: () => {
      server.closeAllConnections();
      return new Promise((done) => server.close(done));
    },
  };
}
