// A plain tools/call: one JSON-RPC request naming a tool and its arguments, without _meta (no progress
// token) or task, under the headers every SDK client sends. Agents make it over and over, so /mcp answers
// it with the node's ToolCaller at once (src/http/routes/mcp.ts), and its answer is the bytes the SDK's
// server would send for it. Anything else, or anything the SDK would parse differently, is not plain:
// it goes through the SDK's own server and transport.
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import { type CallToolResult, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

export interface PlainCall {
  id: string | number;
  name: string;
  args: Record<string, unknown>;
}

/** The headers the SDK's transport checks before it reads a POST. */
export interface PlainCallHeaders {
  accept: string | undefined;
  contentType: string | undefined;
  protocolVersion: string | undefined;
}

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAMS_KEYS = new Set(['name', 'arguments']);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;

const onlyKeys = (value: Record<string, unknown>, allowed: ReadonlySet<string>) => {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
};

/**
 * The call in `body` (a parsed JSON-RPC message) when it is plain, else undefined. A plain call is one
 * the SDK's transport and server take as they are (its JSON-RPC request schema is strict; its tool-call
 * schema copies the arguments key by key, which a `__proto__` key would not survive).
 */
export function plainToolCall(body: unknown, headers: PlainCallHeaders): PlainCall | undefined {
  const { accept, contentType, protocolVersion } = headers;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (contentType === undefined || !isJsonContentType(contentType)) return undefined;
  if (protocolVersion !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)) return undefined;
  if (!isPlainObject(body) || !onlyKeys(body, REQUEST_KEYS)) return undefined;
  const { jsonrpc, id, method, params } = body;
  if (jsonrpc !== '2.0' || method !== 'tools/call') return undefined;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  if (!isPlainObject(params) || !onlyKeys(params, PARAMS_KEYS) || typeof params.name !== 'string') return undefined;
  // Absent arguments are none; a null is what the SDK refuses.
  const args = params.arguments === undefined ? {} : params.arguments;
  if (!isPlainObject(args) || Object.hasOwn(args, '__proto__')) return undefined;
  return { id: id as string | number, name: params.name, args };
}

/** The JSON-RPC answer to a plain call, as the SDK's streamable HTTP transport writes it. */
export const plainAnswer = (call: PlainCall, result: CallToolResult): string =>
  JSON.stringify({ result, jsonrpc: '2.0', id: call.id });
