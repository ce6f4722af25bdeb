// What the server sends, checked by tsc against the official `openai` package's Responses
// types: the JSON is written as a typed literal (a missing required field, an unknown part
// type, a wrong literal all fail to compile), so no backend stricter than api.openai.com
// has to be lenient.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const TSC = join(PACKAGE, 'node_modules', 'typescript', 'bin', 'tsc');

/** tsc's diagnostics for `input` as `ResponseInputItem[]` and `tools` as `FunctionTool[]`; '' when both compile. */
export async function officialTypeErrors({ input = [], tools = [] }) {
  const folder = mkdtempSync(join(PACKAGE, 'node_modules', '.openai-types-'));
  const source = [
    "import type { FunctionTool, ResponseInputItem } from 'openai/resources/responses/responses';",
    `export const input: ResponseInputItem[] = ${JSON.stringify(input, null, 1)};`,
    `export const tools: FunctionTool[] = ${JSON.stringify(tools, null, 1)};`,
  ].join('\n');
  writeFileSync(join(folder, 'sent.ts'), source);
  const args = [TSC, '--noEmit', '--strict', '--skipLibCheck', '--module', 'nodenext'];
  try {
    await promisify(execFile)(process.execPath, [...args, join(folder, 'sent.ts')], { cwd: PACKAGE });
    return '';
  } catch (error) {
    return String(error.stdout || error.message);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
