// Friendly names for the generated wire types (src/openapi.ts). Fields keep the wire's
// snake_case names, exactly as the server sends and accepts them.
import type { components, paths } from './openapi.js';

type Schemas = components['schemas'];
type Query<P extends keyof paths, M extends 'get'> = NonNullable<
  paths[P][M] extends { parameters: { query?: infer Q } } ? Q : never
>;

export type Session = Schemas['SessionRead'];
export type SessionPage = Schemas['SessionPage'];
export type SessionCreate = Schemas['SessionCreate'];
export type SessionUpdate = Schemas['SessionUpdate'];
/** Per-session overrides of the context settings (docs/reference.md §Settings). */
export type SessionSettings = NonNullable<SessionCreate['settings']>;
export type SummaryState = Schemas['SummaryState'];
export type ListSessionsQuery = Query<'/sessions', 'get'>;
export type SessionsDeleted = Schemas['SessionsDeleted'];
/** POST /sessions/import: `created`, or `unchanged` when the same session is stored. */
export type SessionImport = Schemas['SessionImport'];

/** A message in Anthropic or OpenAI shape (or, where the server takes them, a Responses item). */
export type MessageInput = { [key: string]: unknown; client_id?: string | null };
export type AppendResult = Schemas['AppendResult'];
export type AppendedMessage = Schemas['AppendedMessage'];
export type StoredMessage = Schemas['MessageRead'];
export type MessagePage = Schemas['MessagePage'];
/** DELETE /sessions/{id}/messages/last: the removed message, and it as Responses items (`items`). */
export type PoppedMessage = Schemas['RemovedMessage'];
export type ListMessagesQuery = Query<'/sessions/{session_id}/messages', 'get'>;

export type ContextResponse = Schemas['ContextResponse'];
export type ContextQuery = Query<'/sessions/{session_id}/context', 'get'>;
export type ContextFormat = ContextResponse['format'];
export type ContextUsage = Schemas['ContextUsage'];
/** A turn's context query: GET …/context's as JSON, without `preview` and `dry_run`; every
 * key has a default (the generated type requires those with one). */
export type TurnContext = Partial<Schemas['TurnContext']>;
export type TurnResponse = Schemas['TurnResponse'];
export type AssembleRequest = Schemas['AssembleRequest'];
export type AssembleResponse = Schemas['AssembleResponse'];

export type SessionSummarizeRequest = Schemas['SessionSummarizeRequest'];
export type SessionSummarizeResponse = Schemas['SessionSummarizeResponse'];
export type SummaryHistoryPage = Schemas['SummaryHistoryPage'];
export type SummaryHistoryItem = Schemas['SummaryHistoryItem'];
export type ListSummariesQuery = Query<'/sessions/{session_id}/summaries', 'get'>;
export type UsageReport = Schemas['UsageReport'];
export type UsageReportResponse = Schemas['UsageReportResponse'];

export type SummarizeRequest = Schemas['SummarizeRequest'];
export type SummarizeResponse = Schemas['SummarizeResponse'];
export type CountTokensRequest = Schemas['CountTokensRequest'];
export type CountTokensResponse = Schemas['CountTokensResponse'];
export type ModelInfo = Schemas['ModelRead'];
export type ModelList = Schemas['ModelList'];

export type ErrorEnvelope = Schemas['ErrorResponse'];
