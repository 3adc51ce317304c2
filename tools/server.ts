// buildServer: the only place an MCP server is assembled; the stdio and HTTP entry points call it. The
// tool table (table.ts) is served through the SDK's public request-handler API: tools/list from the
// table, tools/call straight to the service operation, which validates the raw arguments itself, so a
// schema error is the same problem object on MCP and REST.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import {
  ForbiddenError,
  type ProgressReporter,
  SignerNotConfiguredError,
  type ServiceContext,
} from '../src/service/index.ts';
import type { ToolDefinition } from './defineTool.ts';
import { portableSchema } from './portableSchema.ts';
import { progressReporter } from './progress.ts';
import { failure, success, type Logger } from './result.ts';
import { embedderSentence, factsKey, textFacts } from './nodeFacts.ts';
import { memoryLifetime } from '../src/service/lifetime.ts';
import { VERSION } from '../src/packageInfo.ts';
import { TOOLS } from './table.ts';

export const SERVER_NAME = 'arkivector';
/** The package's version (package.json), as the MCP server names itself. */
export const SERVER_VERSION = VERSION;

/**
 * The server instructions for this node: the memory flow as far as it works here (a signer to write, an
 * embedder to write and search text), generated from the context.
 */
export function instructionsFor(
  ctx: Pick<ServiceContext, 'embedder' | 'writer'> & { chain?: Pick<ServiceContext['chain'], 'protocol'> },
  httpDocs = false,
): string {
  const facts = textFacts(ctx.embedder);
  const writes = ctx.writer !== undefined;
  const role =
    writes && facts.model
      ? "with its signer and embedder it is an agent's durable memory."
      : writes
        ? 'it has a signer, so it writes, but no embedder: entities are written and searched by vector, or by keyword over their documents.'
        : 'it has no signer, so it only reads (the write tools are not listed).';
  const flow = facts.model
    ? writes
      ? `- Memory flow: if the collection you need is missing, create it with arkivector_create_collection (omit dim: it takes ${facts.model}'s dimension; creating it again is harmless). Remember with arkivector_upsert, entities with an id and a document only (this node embeds the text). Recall with arkivector_search and text (mode semantic by default; keyword or hybrid also match words).`
      : '- Recall with arkivector_search and text (mode semantic by default; keyword or hybrid also match words).'
    : writes
      ? '- Create a collection with arkivector_create_collection and a dim; write entities with arkivector_upsert, each with a vector of that dim (and a document to find it by keyword); search with a vector, or with text and mode "keyword".'
      : '- Search with a vector of the collection\'s dimension, or with text and mode "keyword".';
  return [
    `arkivector serves vector collections stored on the Arkiv chain; ${role}`,
    `- ${embedderSentence(facts)}`,
    "- Start with arkivector_list_collections: it gives each collection's dimension, metric, declared attributes and recorded embedder.",
    flow,
    ...(writes ? [lifetimeLine(ctx.chain?.protocol)] : []),
    ...INSTRUCTION_RULES,
    ...(httpDocs ? ['- How to use this node: GET /docs.md (all docs) and /llms.txt (index) on its HTTP address.'] : []),
  ].join('\n');
}

/** How long a memory lasts here and what that costs, for a node that writes. */
function lifetimeLine(protocol: string | undefined): string {
  const { without_ttl } = memoryLifetime(protocol);
  const how =
    without_ttl === 'never'
      ? 'permanent on this DB-chain (expiresAt 2^64-1)'
      : `on this Arkiv v1 chain that means ${without_ttl} blocks, 100 years (v1 has no permanent entities)`;
  return `- Lifetime: an entity written without ttl (into a collection without default_ttl) is kept until deleted: ${how}. Each write is one transaction paid by this node's wallet, and a kept memory stays on chain until arkivector_delete forgets it; pass ttl (e.g. {"days": 30}) for what should lapse. Answers give expires_at_block ("never": kept until deleted).`;
}

const INSTRUCTION_RULES = [
  "- Browse and forget: arkivector_list_entities pages through a collection newest first (pass next_cursor back as cursor; every page answers from the first page's block); arkivector_delete takes refs or a where/filter and is a dry run unless dry_run is false, so check its count first.",
  '- Every answer carries as_of_block (the chain block it reflects) and sync_state (starting, catching_up, live, stalled). Two nodes at the same as_of_block give the same answer.',
  '- Read after write: a write answers block_number. Pass it as min_block to any read, on this node or another one following the same chain: the node waits until that block is indexed, or answers not_yet_indexed (try again later).',
  '- Filters: where uses Arkiv syntax over declared attributes (=, !=, <, <=, >, >=, ~ glob, IN (...), &&, ||, !(...)) with typed literals like str(\'x\'), i32(-5), f32(0.5), bool(true), and $owner / $creator / $key; filter takes JSON ({"gte": {"stars": 4}}). != only matches entities that have the attribute.',
  "- Errors come back as a problem object with a stable code (e.g. dimension_mismatch, invalid_filter, collection_not_found; embedder_mismatch: the collection was embedded with another model than this node's, so text writes and text searches are refused there; embedder_unavailable: the embedder cannot answer now, the detail says why).",
];

export interface BuildServerDeps {
  ctx: ServiceContext;
  logger?: Logger;
  /** --compat kuradb: also list KuraDB's list_rag and search_rag. */
  compat?: 'kuradb';
  /** Whether this caller may write (HTTP: the token's write scope; stdio: the local user). Default true. */
  canWrite?: boolean;
  /** Called once per tool call with its outcome and duration (src/http/metrics.ts observeTool). */
  observe?: (tool: string, ok: boolean, seconds: number) => void;
  /** The node's HTTP listener serves GET /docs.md and /llms.txt (src/http/docs.ts): the instructions say so. */
  httpDocs?: boolean;
}

// JSON Schemas are derived once per tool, not per request (HTTP builds a server per request). The
// options are the ones the SDK's McpServer used, so the listed surface is unchanged.
const listings = new Map<string, Tool>();
function listing(tool: ToolDefinition, ctx: ServiceContext): Tool {
  const facts = textFacts(ctx.embedder);
  const key = `${tool.name}|${typeof tool.description === 'function' ? factsKey(facts) : ''}`;
  let entry = listings.get(key);
  if (!entry) {
    const schema = (shape: z.ZodRawShape, io: 'input' | 'output') =>
      portableSchema(z.toJSONSchema(z.object(shape), { target: 'draft-7', io })) as Tool['inputSchema'];
    entry = {
      name: tool.name,
      ...(tool.title !== undefined ? { title: tool.title } : {}),
      description: typeof tool.description === 'function' ? tool.description(facts) : tool.description,
      inputSchema: schema(tool.input, 'input'),
      outputSchema: schema(tool.output, 'output'),
      annotations: tool.annotations,
    };
    listings.set(key, entry);
  }
  return entry;
}

const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));

/** The tools/call side of a server, for one node and one kind of caller: it holds nothing per call. */
export interface ToolCaller {
  /** Whether this node serves a tool of that name (a listed one, or a write tool this caller may not use). */
  serves(name: string): boolean;
  /** Calls a tool this node serves; a failure of the tool is an isError result, never a throw. */
  call(name: string, args: Record<string, unknown>, progress?: ProgressReporter): Promise<CallToolResult>;
}

/**
 * The tools/call handler of buildServer, on its own: /mcp answers a plain tools/call with it straight
 * away (src/http/routes/mcp.ts), without a server and transport for that one request.
 */
export function toolCaller({
  ctx,
  logger,
  observe,
  canWrite = true,
  compat,
}: Omit<BuildServerDeps, 'httpDocs'>): ToolCaller {
  const exists = (tool: ToolDefinition | undefined): tool is ToolDefinition =>
    tool !== undefined && (tool.compat === undefined || tool.compat === compat) && (tool.available?.(ctx) ?? true);
  return {
    serves: (name) => exists(BY_NAME.get(name)),
    async call(name, args, progress) {
      const tool = BY_NAME.get(name);
      if (!exists(tool)) throw new Error(`${name} is not a tool of this node`);
      const started = process.hrtime.bigint();
      let ok = false;
      try {
        if (tool.needs === 'write') {
          // The real reason first: without a signer no token could make this call succeed.
          if (!ctx.writer) throw new SignerNotConfiguredError();
          if (!canWrite) throw new ForbiddenError(`${tool.name} needs the write scope`);
        }
        const answer = await tool.call(ctx, args, { progress });
        ok = true;
        return success(tool.render(answer), answer);
      } catch (error) {
        return failure(error, logger, tool.errorStyle);
      } finally {
        observe?.(tool.name, ok, Number(process.hrtime.bigint() - started) / 1e9);
      }
    },
  };
}

// The SDK's Server builds a fresh Ajv instance unless given a validator: a cost paid on every HTTP
// request that builds a server. It only validates elicitation answers, which this server never asks
// for, so one instance serves every server of the process.
let jsonSchemaValidator: AjvJsonSchemaValidator | undefined;

export function buildServer(deps: BuildServerDeps): Server {
  const { ctx, canWrite = true, httpDocs } = deps;
  const server = new Server(
    { name: SERVER_NAME, version: SERVER_VERSION },
    {
      capabilities: { tools: { listChanged: true } },
      instructions: instructionsFor(ctx, httpDocs),
      jsonSchemaValidator: (jsonSchemaValidator ??= new AjvJsonSchemaValidator()),
    },
  );
  const caller = toolCaller(deps);
  // Signer-only tools are listed only when this node can sign and the caller may write.
  const listed = (tool: ToolDefinition) =>
    caller.serves(tool.name) && (tool.needs === 'read' || (ctx.writer !== undefined && canWrite));

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: TOOLS.filter(listed).map((tool) => listing(tool, ctx)),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra): Promise<CallToolResult> => {
    const { name, arguments: args } = request.params;
    // A name this node never serves is a protocol error, as the SDK's own server answers it.
    if (!caller.serves(name)) throw new McpError(ErrorCode.InvalidParams, `Tool ${name} not found`);
    return caller.call(name, args ?? {}, progressReporter(extra));
  });
  return server;
}
