// Converts service answers and errors into MCP tool results: one text block plus structuredContent on
// success; isError with the problem object as text on failure (DESIGN.md §8). Unknown errors are
// logged in full and answered generically, so no stack or secret reaches a client.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ArkivectorError, toProblem } from '../src/errors.ts';

export type Logger = { error(fields: Record<string, unknown>, message: string): void };

export function success(text: string, structured: object): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured as Record<string, unknown> };
}

export function failure(error: unknown, logger?: Logger): CallToolResult {
  const known = error instanceof ArkivectorError ? error : undefined;
  if (!known) logger?.error({ error: (error as Error)?.stack ?? String(error) }, 'tool failed');
  const problem = toProblem(known ?? new ArkivectorError('internal', 'internal error; the server log has the details'));
  return { content: [{ type: 'text', text: JSON.stringify(problem) }], isError: true };
}

/** Runs one service operation and renders its answer or its error. */
export async function run<T extends object>(
  operation: () => Promise<T>,
  render: (answer: T) => string,
  logger?: Logger,
): Promise<CallToolResult> {
  try {
    const answer = await operation();
    return success(render(answer), answer);
  } catch (error) {
    return failure(error, logger);
  }
}
