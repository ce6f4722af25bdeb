// A fake Agents SDK `Model`: no network. It records every request's input and answers:
//   a user turn "weather in <city>"  -> a function_call of `weather`
//   a function_call_result           -> "It is <output>."
//   any other user turn              -> "You said: <text>."
import { Usage } from '@openai/agents';

function text(item) {
  if (typeof item.content === 'string') return item.content;
  return (item.content ?? []).map((part) => part.text ?? '').join('');
}

export class FakeModel {
  requests = [];
  #calls = 0;
  #inputTokens;

  /** `inputTokens`: what each response reports the provider counted (default: no usage). */
  constructor({ inputTokens = 0 } = {}) {
    this.#inputTokens = inputTokens;
  }

  async getResponse(request) {
    this.requests.push(structuredClone(request.input));
    const last = Array.isArray(request.input)
      ? request.input.at(-1)
      : { role: 'user', content: request.input };
    const usage = new Usage({
      requests: 1,
      inputTokens: this.#inputTokens,
      outputTokens: 1,
      totalTokens: this.#inputTokens + 1,
    });
    return { usage, output: [this.#answer(last)], responseId: `resp_${this.requests.length}` };
  }

  async *getStreamedResponse() {
    throw new Error('FakeModel does not stream');
  }

  #answer(last) {
    if (last.type === 'function_call_result') {
      return this.#message(`It is ${typeof last.output === 'string' ? last.output : last.output.text}.`);
    }
    const city = /weather in (\w+)/i.exec(text(last))?.[1];
    if (city) {
      this.#calls += 1;
      const callId = `call_${this.#calls}`;
      return {
        type: 'function_call',
        id: `fc_${this.#calls}`,
        callId,
        name: 'weather',
        arguments: JSON.stringify({ city }),
        status: 'completed',
      };
    }
    return this.#message(`You said: ${text(last)}.`);
  }

  #message(value) {
    return {
      type: 'message',
      id: `msg_${this.requests.length}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: value }],
    };
  }
}
