// plainToolCall takes only what the SDK's transport and server take as it is: a message it calls plain
// passes the SDK's JSON-RPC and tools/call schemas with the same name and arguments, and carries no _meta
// (so no progress token); what SDK clients send for a call without progress is plain.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CallToolRequestSchema,
  JSONRPCMessageSchema,
  JSONRPCRequestSchema,
  LATEST_PROTOCOL_VERSION,
} from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { plainToolCall } from '../../tools/plainCall.ts';

const SDK_HEADERS = {
  accept: 'application/json, text/event-stream',
  contentType: 'application/json',
  protocolVersion: LATEST_PROTOCOL_VERSION,
};

const json = fc.jsonValue({ maxDepth: 2 });
type Message = Record<string, unknown> & { params: Record<string, unknown> };
type Headers = typeof SDK_HEADERS;
/** A call as SDK clients send it, then none or one change, each of which the SDK may take differently. */
const valid = fc.record({
  id: fc.oneof(fc.nat(), fc.string({ maxLength: 4 })),
  name: fc.string({ maxLength: 8 }),
  args: fc.dictionary(fc.string({ maxLength: 6 }), json, { maxKeys: 4 }),
});
const change = fc.oneof(
  fc.constant((_m: Message, _h: Headers) => {}),
  json.map((v) => (m: Message) => void (m.id = v)),
  fc.constantFrom(2 ** 53, 1.5, -0).map((v) => (m: Message) => void (m.id = v)),
  fc.constantFrom('1.0', 2).map((v) => (m: Message) => void (m.jsonrpc = v)),
  fc.constantFrom('tools/list', 'initialize').map((v) => (m: Message) => void (m.method = v)),
  json.map((v) => (m: Message) => void (m.extra = v)),
  json.map((v) => (m: Message) => void (m.params = v as Message['params'])),
  json.map((v) => (m: Message) => void (m.params.name = v)),
  json.map((v) => (m: Message) => void (m.params.arguments = v)),
  // An own "__proto__" key, as JSON.parse makes one (an assignment would set the prototype instead).
  json.map((value) => (m: Message) => {
    Object.defineProperty(m.params.arguments, '__proto__', { value, enumerable: true });
  }),
  fc.constant((m: Message) => void delete m.params.arguments),
  fc.constantFrom({}, { progressToken: 1 }).map((v) => (m: Message) => void (m.params._meta = v)),
  json.map((v) => (m: Message) => void (m.params.task = v)),
  json.map((v) => (m: Message) => void (m.params.extra = v)),
  fc
    .constantFrom('application/json', 'text/event-stream', 'text/event-stream, application/json', '')
    .map((v) => (_m: Message, h: Headers) => void (h.accept = v)),
  fc
    .constantFrom('application/json; charset=utf-8', 'text/plain', 'application/jsonx')
    .map((v) => (_m: Message, h: Headers) => void (h.contentType = v)),
  fc.constantFrom('2024-11-05', '1999-01-01').map((v) => (_m: Message, h: Headers) => void (h.protocolVersion = v)),
);

/** As a request body reaches the server: JSON text parsed (own `__proto__` keys, no undefined values). */
const overTheWire = (value: unknown): unknown => JSON.parse(JSON.stringify(value) ?? 'null');

test('a plain call passes the SDK schemas with the same name and arguments, and has no _meta', () => {
  let plainCalls = 0;
  fc.assert(
    fc.property(valid, change, ({ id, name, args }, edit) => {
      const sent: Message = { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { ...args } } };
      const sentHeaders = { ...SDK_HEADERS };
      edit(sent, sentHeaders);
      const body = overTheWire(sent);
      const plain = plainToolCall(body, sentHeaders);
      if (plain === undefined) return;
      plainCalls++;
      assert.ok(JSONRPCMessageSchema.safeParse(body).success);
      assert.ok(JSONRPCRequestSchema.safeParse(body).success);
      const parsed = CallToolRequestSchema.safeParse(body);
      assert.ok(parsed.success);
      assert.equal(parsed.data.params.name, plain.name);
      assert.equal(parsed.data.params._meta, undefined);
      assert.equal(JSON.stringify(parsed.data.params.arguments ?? {}), JSON.stringify(plain.args));
      assert.equal(plain.id, (body as { id: unknown }).id);
    }),
    { numRuns: 2000 },
  );
  // The property says something only if plain calls were drawn.
  assert.ok(plainCalls >= 50, `${plainCalls} plain calls drawn`);
});

test('what SDK clients send for a tool call without progress is plain', () => {
  fc.assert(
    fc.property(
      fc.nat(),
      fc.string({ maxLength: 12 }),
      fc.dictionary(
        fc.string({ maxLength: 6 }).filter((k) => k !== '__proto__'),
        json,
      ),
      (id, name, toolArgs) => {
        const body = overTheWire({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: toolArgs } });
        const sentArgs = (body as { params: { arguments: unknown } }).params.arguments;
        assert.deepEqual(plainToolCall(body, SDK_HEADERS), { id, name, args: sentArgs });
      },
    ),
  );
});
