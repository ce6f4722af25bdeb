// The exact body of the next provider call, built from the context response as the client
// sends it (system, messages, tools, cache_control breakpoints as placed), and the same call
// as curl, Python and TypeScript.
export const PROVIDERS = {
  anthropic: {
    url: "https://api.anthropic.com/v1/messages",
    headers: ['x-api-key: $ANTHROPIC_API_KEY', "anthropic-version: 2023-06-01"],
    python: ["import anthropic", "", "client = anthropic.Anthropic()", "response = client.messages.create(**body)"],
    typescript: ['import Anthropic from "@anthropic-ai/sdk";', "", "const client = new Anthropic();", "const response = await client.messages.create(body);"],
  },
  openai: {
    url: "https://api.openai.com/v1/chat/completions",
    headers: ["Authorization: Bearer $OPENAI_API_KEY"],
    python: ["from openai import OpenAI", "", "client = OpenAI()", "response = client.chat.completions.create(**body)"],
    typescript: ['import OpenAI from "openai";', "", "const client = new OpenAI();", "const response = await client.chat.completions.create(body);"],
  },
  openai_responses: {
    url: "https://api.openai.com/v1/responses",
    headers: ["Authorization: Bearer $OPENAI_API_KEY"],
    python: ["from openai import OpenAI", "", "client = OpenAI()", "response = client.responses.create(**body)"],
    typescript: ['import OpenAI from "openai";', "", "const client = new OpenAI();", "const response = await client.responses.create(body);"],
  },
  gemini: {
    url: "https://generativelanguage.googleapis.com/v1beta/models/{model}:generateContent",
    headers: ["x-goog-api-key: $GEMINI_API_KEY"],
    python: [
      "from google import genai",
      "",
      "client = genai.Client()",
      "response = client.models.generate_content(",
      "    model=MODEL,",
      '    contents=body["contents"],',
      "    config={",
      '        "system_instruction": body.get("systemInstruction"),',
      '        "tools": body.get("tools"),',
      '        "max_output_tokens": body["generationConfig"]["maxOutputTokens"],',
      "    },",
      ")",
    ],
    typescript: [
      'import { GoogleGenAI } from "@google/genai";',
      "",
      "const ai = new GoogleGenAI({});",
      "const { contents, systemInstruction, tools, generationConfig } = body;",
      "const response = await ai.models.generateContent({",
      "  model: MODEL,",
      "  contents,",
      "  config: { systemInstruction, tools, maxOutputTokens: generationConfig.maxOutputTokens },",
      "});",
    ],
  },
};

/** Where `format`'s request goes (Gemini names the model in the path). */
export function providerUrl(format, model) {
  return PROVIDERS[format].url.replace("{model}", encodeURIComponent(model));
}

/** The provider request body for `ctx` (a GET …/context response), or null for `raw`. */
export function requestBody(ctx) {
  const out = ctx.usage.reserved_output_tokens;
  const tools = ctx.tools && ctx.tools.length ? { tools: ctx.tools } : {};
  if (ctx.format === "anthropic") {
    const system = ctx.system === null || ctx.system === undefined ? {} : { system: ctx.system };
    return { model: ctx.model, max_tokens: out, ...system, messages: ctx.messages, ...tools };
  }
  if (ctx.format === "openai") {
    return { model: ctx.model, max_completion_tokens: out, messages: ctx.messages, ...tools };
  }
  if (ctx.format === "gemini") {
    const system = ctx.system ? { systemInstruction: { parts: [{ text: ctx.system }] } } : {};
    return { contents: ctx.messages, ...system, ...tools, generationConfig: { maxOutputTokens: out } };
  }
  if (ctx.format === "openai_responses") {
    const instructions = ctx.system ? { instructions: ctx.system } : {};
    return { model: ctx.model, max_output_tokens: out, ...instructions, input: ctx.messages, ...tools };
  }
  return null;
}

/** Breakpoints (`cache_control` markers) anywhere in the body. */
export function breakpoints(value) {
  if (Array.isArray(value)) return value.reduce((n, v) => n + breakpoints(v), 0);
  if (value && typeof value === "object") {
    return Object.entries(value).reduce((n, [k, v]) => n + (k === "cache_control" ? 1 : breakpoints(v)), 0);
  }
  return 0;
}

// A JSON value as a Python literal: JSON strings are valid Python string literals.
function python(value, indent = "") {
  const inner = indent + "    ";
  if (value === null) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (Array.isArray(value)) {
    if (!value.length) return "[]";
    return `[\n${value.map((v) => inner + python(v, inner)).join(",\n")},\n${indent}]`;
  }
  if (typeof value === "object") {
    const entries = Object.entries(value);
    if (!entries.length) return "{}";
    return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${python(v, inner)}`).join(",\n")},\n${indent}}`;
  }
  return JSON.stringify(value);
}

export function snippet(kind, format, body, model = "") {
  const provider = PROVIDERS[format];
  const json = JSON.stringify(body, null, 2);
  if (kind === "json") return json;
  if (kind === "curl") {
    const headers = [...provider.headers, "content-type: application/json"].map((x) => `  -H "${x}" \\`);
    // A quoted here-document: the body goes through the shell untouched.
    return [`curl ${providerUrl(format, model)} \\`, ...headers, "  --data-binary @- <<'FOLDWISE_BODY'", json, "FOLDWISE_BODY"].join("\n");
  }
  const named = (lines) => lines.map((line) => line.replace("MODEL", JSON.stringify(model)));
  if (kind === "python") return [provider.python[0], "", `body = ${python(body)}`, ...named(provider.python.slice(1))].join("\n");
  return [provider.typescript[0], "", `const body = ${json};`, ...named(provider.typescript.slice(1))].join("\n");
}
