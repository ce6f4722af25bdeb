// Agents SDK items <-> OpenAI Responses input items (what Foldwise stores and serves with
// format=openai_responses). The Agents SDK has a protocol of its own (`callId`,
// `function_call_result`, a `status` on assistant messages, reasoning as `content` parts);
// these functions map the item kinds Foldwise stores: messages, function calls and their
// outputs, and reasoning. Anything else is refused rather than silently dropped.

/** An item in either protocol, as plain JSON. */
type Json = Record<string, any>;

function unsupported(what: string): never {
  throw new TypeError(
    `FoldwiseSession stores messages, function calls, their outputs and reasoning; cannot store ${what}`,
  );
}

const texts = (parts: Json[], type: string, key = 'text') =>
  parts.filter((part) => part.type === type).map((part) => String(part[key]));

function userPart(part: Json): Json {
  if (part.type === 'input_text') return { type: 'input_text', text: part.text };
  if (part.type === 'input_image' && typeof part.image === 'string') {
    return { type: 'input_image', image_url: part.image, ...(part.detail ? { detail: part.detail } : {}) };
  }
  return unsupported(`a user content part of type '${part.type}'`);
}

function assistantPart(part: Json): Json {
  if (part.type === 'output_text') return { type: 'output_text', text: part.text };
  if (part.type === 'refusal') return { type: 'refusal', refusal: part.refusal };
  return unsupported(`an assistant content part of type '${part.type}'`);
}

function callOutput(output: unknown): string | Json[] {
  if (typeof output === 'string') return output;
  const parts = Array.isArray(output) ? (output as Json[]) : [output as Json];
  if (parts.every((part) => part?.type === 'text' || part?.type === 'input_text')) {
    return parts.map((part) => ({ type: 'input_text', text: part.text }));
  }
  return unsupported('a function output that is not text');
}

/**
 * The `id` and `status` an item came with: Foldwise gives them back in its contexts, and the
 * Responses API pairs a reasoning item with the items after it by their ids.
 */
function identity(item: Json): Json {
  return {
    ...(typeof item.id === 'string' && item.id ? { id: item.id } : {}),
    ...(typeof item.status === 'string' ? { status: item.status } : {}),
  };
}

/** One Agents SDK item as the Responses input item Foldwise takes. */
export function toResponsesItem(item: Json): Json {
  const type = item.type ?? 'message';
  if (type === 'message') {
    if (item.role === 'user') {
      const content =
        typeof item.content === 'string' ? item.content : (item.content as Json[]).map(userPart);
      return { type: 'message', role: 'user', content };
    }
    if (item.role === 'system') return { type: 'message', role: 'system', content: item.content };
    if (item.role === 'assistant') {
      const content = (item.content as Json[]).map(assistantPart);
      return { type: 'message', role: 'assistant', content, ...identity(item) };
    }
    return unsupported(`a message with role '${item.role}'`);
  }
  if (type === 'function_call') {
    const call = { type: 'function_call', call_id: item.callId, name: item.name, arguments: item.arguments };
    return { ...call, ...identity(item) };
  }
  if (type === 'function_call_result') {
    const output = { type: 'function_call_output', call_id: item.callId, output: callOutput(item.output) };
    return { ...output, ...identity(item) };
  }
  if (type === 'reasoning') {
    const encrypted = item.providerData?.encryptedContent ?? item.providerData?.encrypted_content;
    return {
      type: 'reasoning',
      ...(item.id ? { id: item.id } : {}),
      summary: texts(item.content ?? [], 'input_text').map((text) => ({ type: 'summary_text', text })),
      ...(item.rawContent
        ? {
            content: texts(item.rawContent, 'reasoning_text').map((text) => ({
              type: 'reasoning_text',
              text,
            })),
          }
        : {}),
      ...(typeof encrypted === 'string' ? { encrypted_content: encrypted } : {}),
    };
  }
  return unsupported(`an item of type '${type}'`);
}

function fromResponsesItem(item: Json, callNames: Map<string, string>): Json {
  if (item.type === 'message' || (item.type === undefined && item.role)) {
    const parts: Json[] =
      typeof item.content === 'string' ? [{ type: 'input_text', text: item.content }] : item.content;
    if (item.role === 'assistant') {
      const content = parts.map((part) =>
        part.type === 'refusal'
          ? { type: 'refusal', refusal: part.refusal }
          : { type: 'output_text', text: part.text },
      );
      return { type: 'message', role: 'assistant', status: 'completed', content, ...identity(item) };
    }
    if (item.role === 'system' || item.role === 'developer') {
      return { type: 'message', role: 'system', content: texts(parts, 'input_text').join('\n\n') };
    }
    const content = parts.map((part) =>
      part.type === 'input_image'
        ? { type: 'input_image', image: part.image_url, ...(part.detail ? { detail: part.detail } : {}) }
        : { type: 'input_text', text: part.text },
    );
    return { type: 'message', role: 'user', content };
  }
  if (item.type === 'function_call') {
    callNames.set(item.call_id, item.name);
    return {
      type: 'function_call',
      callId: item.call_id,
      name: item.name,
      arguments: item.arguments,
      status: 'completed',
      ...identity(item),
    };
  }
  if (item.type === 'function_call_output') {
    const output = typeof item.output === 'string' ? item.output : texts(item.output, 'input_text').join('');
    return {
      type: 'function_call_result',
      callId: item.call_id,
      name: callNames.get(item.call_id) ?? '',
      status: 'completed',
      output,
      ...identity(item),
    };
  }
  if (item.type === 'reasoning') {
    return {
      type: 'reasoning',
      ...(item.id ? { id: item.id } : {}),
      content: texts(item.summary ?? [], 'summary_text').map((text) => ({ type: 'input_text', text })),
      ...(item.content
        ? {
            rawContent: texts(item.content, 'reasoning_text').map((text) => ({
              type: 'reasoning_text',
              text,
            })),
          }
        : {}),
      ...(item.encrypted_content ? { providerData: { encryptedContent: item.encrypted_content } } : {}),
    };
  }
  return item;
}

/** Responses input items (a context, a popped message) as Agents SDK items, in order. */
export function fromResponsesItems(items: Json[]): Json[] {
  const callNames = new Map<string, string>();
  return items.map((item) => fromResponsesItem(item, callNames));
}

function comparableParts(content: unknown, textType: string): Json[] {
  const parts: Json[] =
    typeof content === 'string' ? [{ type: textType, text: content }] : (content as Json[]);
  return parts.map((part) =>
    part.type === 'input_text' || part.type === 'output_text'
      ? { type: part.type, text: part.text }
      : part.type === 'refusal'
        ? { type: 'refusal', refusal: part.refusal }
        : { type: part.type, image: part.image ?? part.image_url },
  );
}

/**
 * An Agents SDK item reduced to what it says: the fields Foldwise keeps, without the ones it
 * adds or normalizes (`id`, `status`, `providerData`, a string `content` given as parts).
 */
export function comparable(item: Json): Json {
  const type = item.type ?? 'message';
  if (type === 'message') {
    if (item.role === 'system') return { type, role: 'system', content: String(item.content) };
    const textType = item.role === 'assistant' ? 'output_text' : 'input_text';
    return { type, role: item.role, content: comparableParts(item.content, textType) };
  }
  if (type === 'function_call') {
    return { type, callId: item.callId, name: item.name, arguments: item.arguments };
  }
  if (type === 'function_call_result') {
    const parts: Json[] = [item.output].flat();
    const output = typeof item.output === 'string' ? item.output : parts.map((p) => p.text).join('');
    return { type, callId: item.callId, output };
  }
  if (type === 'reasoning') {
    return { type, content: texts(item.content ?? [], 'input_text') };
  }
  return item;
}
