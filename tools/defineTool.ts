// The tool table's entry type: everything the MCP surface needs to list, call and render one tool.
// buildServer (server.ts) registers the table in one place, so every tool shares one argument path
// (the service's own validation, the same problem object as REST), one error renderer and per-tool metrics.
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { ProgressReporter, ServiceContext } from '../src/service/index.ts';
import type { TextFacts } from './nodeFacts.ts';

export interface ToolCallExtra {
  /** Set when the caller sent a progressToken (writes report sent -> receipt -> indexed). */
  progress?: ProgressReporter;
}

export interface ToolDefinition<R extends object = object> {
  readonly name: string;
  readonly title?: string;
  /** A function when the text depends on what the node can do with text (tools/nodeFacts.ts). */
  readonly description: string | ((facts: TextFacts) => string);
  /** Argument shape, for tools/list only: the service operation validates the raw arguments itself. */
  readonly input: z.ZodRawShape;
  readonly output: z.ZodRawShape;
  readonly annotations: ToolAnnotations;
  /** `write`: listed and callable only on a node with a signer, for callers with the write scope. */
  readonly needs: 'read' | 'write';
  /** Listed and callable only on nodes where this holds (absent: every node). */
  readonly available?: (ctx: ServiceContext) => boolean;
  /** Listed only when the node runs with this `--compat` mode. */
  readonly compat?: 'kuradb';
  /** `message`: errors are the bare message (KuraDB's strings); default: the problem object as JSON. */
  readonly errorStyle?: 'problem' | 'message';
  call(ctx: ServiceContext, args: unknown, extra: ToolCallExtra): Promise<R>;
  /** The text block of a successful answer (structuredContent is the answer itself). */
  render(answer: R): string;
}

/** Declares one tool; the type parameter ties `call`'s answer to `render`'s argument. */
export function defineTool<R extends object>(definition: ToolDefinition<R>): ToolDefinition<R> {
  return definition;
}
