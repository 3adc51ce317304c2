// Converts service answers and errors into MCP tool results: one text block plus structuredContent and
// isError false on success; isError true with the problem object as text on failure (README, "Errors"),
// the same object REST answers. Unknown errors are logged in full and answered generically, so no stack
// or secret reaches a client; a caller's mistake (any ArkivectorError) is never logged as a server error.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { internalProblem, problemFor } from '../src/errors.ts';

export type Logger = { error(fields: Record<string, unknown>, message: string): void };

export function success(text: string, structured: object): CallToolResult {
  // isError is sent on successes too (false): the tools spec promises it on every result.
  return {
    content: [{ type: 'text', text }],
    structuredContent: structured as Record<string, unknown>,
    isError: false,
  };
}

export function failure(error: unknown, logger?: Logger, style: 'problem' | 'message' = 'problem'): CallToolResult {
  const known = problemFor(error);
  if (!known) logger?.error({ error: (error as Error)?.stack ?? String(error) }, 'tool failed');
  const problem = known ?? internalProblem();
  const text = style === 'message' ? problem.detail : JSON.stringify(problem);
  return { content: [{ type: 'text', text }], isError: true };
}
