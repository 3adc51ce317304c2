// The OpenAI-compatible embedder client against a faithful loopback fixture of `POST /v1/embeddings`:
// batching and input order, retries (429 with Retry-After, 5xx, dropped connections, silence) and their
// bound, Basic auth from URL credentials, the bearer key, the dimension probe, and `embedder_unavailable`
// for an endpoint that is down or answers garbage — also as the REST answer of a text search.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { createEmbedder, EMBEDDER_MAX_BATCH } from '../../src/embedder/index.ts';
import { ArkivectorError } from '../../src/errors.ts';
import { assertProblem, call, startChain, type Chain } from '../http/fixture.ts';
import { hashedEmbedding, startEmbedder, type EmbedderFixture } from '../helpers/embedder.ts';
import { defined } from '../helpers/defined.ts';

const fast = { backoffMs: 1, timeoutMs: 10_000 };

async function unavailable(promise: Promise<unknown>, pattern?: RegExp): Promise<ArkivectorError> {
  const error = await promise.then(
    () => assert.fail('expected embedder_unavailable'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof ArkivectorError, String(error));
  assert.equal(error.code, 'embedder_unavailable');
  assert.equal(error.status, 502);
  if (pattern) assert.match(error.message, pattern);
  return error;
}

describe('embedder client', () => {
  let fixture: EmbedderFixture;
  before(async () => {
    fixture = await startEmbedder({
      models: { 'nomic-embed-text': (t) => hashedEmbedding(t, 768), 'all-minilm': (t) => hashedEmbedding(t, 384) },
      maxInputs: EMBEDDER_MAX_BATCH,
      reverse: true,
    });
  });
  after(() => fixture.close());
  const fresh = () => {
    fixture.requests.length = 0;
    fixture.faults.length = 0;
  };

  test('batches of at most the max batch size, vectors in input order by `index`, the published request shape', async () => {
    fresh();
    const texts = Array.from({ length: 2 * EMBEDDER_MAX_BATCH + 5 }, (_, i) => `memory number ${i}`);
    const embedder = createEmbedder({ url: fixture.url, model: 'all-minilm', ...fast });
    const vectors = await embedder.embedMany(texts);
    assert.deepEqual(
      vectors,
      texts.map((t) => hashedEmbedding(t, 384)),
    );
    assert.deepEqual(
      fixture.requests.map((r) => (r.body as { input: string[] }).input.length),
      [EMBEDDER_MAX_BATCH, EMBEDDER_MAX_BATCH, 5],
    );
    assert.deepEqual(fixture.requests[0], {
      method: 'POST',
      path: '/v1/embeddings',
      authorization: undefined,
      body: { model: 'all-minilm', input: texts.slice(0, EMBEDDER_MAX_BATCH), encoding_format: 'float' },
    });
    assert.deepEqual(await embedder.embedMany([]), []);
    assert.equal(fixture.requests.length, 3, 'nothing to embed sends nothing');
    assert.deepEqual(await embedder.embed('one'), hashedEmbedding('one', 384));
  });

  test('a full endpoint URL is used as is; a base URL gets /embeddings', async () => {
    fresh();
    await createEmbedder({ url: `${fixture.url}/embeddings`, model: 'all-minilm', ...fast }).embed('x');
    await createEmbedder({ url: `${fixture.url}/`, model: 'all-minilm', ...fast }).embed('x');
    assert.deepEqual(
      fixture.requests.map((r) => r.path),
      ['/v1/embeddings', '/v1/embeddings'],
    );
  });

  test('429 waits what Retry-After says, 5xx and dropped connections back off, then the answer comes', async () => {
    fresh();
    fixture.faults.push({ status: 429, retryAfter: '1' }, { status: 503 }, { drop: true });
    const retries: { attempt: number; delayMs: number; reason: string }[] = [];
    const embedder = createEmbedder({
      url: fixture.url,
      model: 'all-minilm',
      ...fast,
      onRetry: (r) => retries.push(r),
    });
    assert.deepEqual(await embedder.embed('hello'), hashedEmbedding('hello', 384));
    assert.equal(fixture.requests.length, 4);
    assert.deepEqual(
      retries.map((r) => r.attempt),
      [1, 2, 3],
    );
    assert.equal(defined(retries[0], 'retries[0]').delayMs, 1000, 'Retry-After: 1 is honoured');
    assert.match(defined(retries[0], 'retries[0]').reason, /HTTP 429: Rate limit reached/);
    assert.ok(
      defined(retries[1], 'retries[1]').delayMs <= 2 && defined(retries[2], 'retries[2]').delayMs <= 4,
      'exponential backoff from backoffMs',
    );
    assert.match(defined(retries[2], 'retries[2]').reason, /cannot be reached/);
  });

  test('a silent endpoint times out per attempt and is retried', async () => {
    fresh();
    fixture.faults.push({ silent: true });
    const embedder = createEmbedder({ url: fixture.url, model: 'all-minilm', backoffMs: 1, timeoutMs: 300 });
    assert.deepEqual(await embedder.embed('hello'), hashedEmbedding('hello', 384));
    assert.equal(fixture.requests.length, 2);
  });

  test('retries are bounded: the last failure is embedder_unavailable with the upstream status', async () => {
    fresh();
    fixture.faults.push(...Array.from({ length: 10 }, () => ({ status: 500 })));
    const embedder = createEmbedder({ url: fixture.url, model: 'all-minilm', ...fast, maxAttempts: 3 });
    const error = await unavailable(embedder.embed('x'), /HTTP 500.*after 3 attempts/);
    assert.equal(error.meta.upstream_status, 500);
    assert.equal(fixture.requests.length, 3);
  });

  test('a Retry-After longer than we wait fails at once', async () => {
    fresh();
    fixture.faults.push({ status: 429, retryAfter: '3600' });
    const embedder = createEmbedder({ url: fixture.url, model: 'all-minilm', ...fast });
    await unavailable(embedder.embed('x'), /Retry-After 3600 s/);
    assert.equal(fixture.requests.length, 1);
  });

  test('4xx is not retried: unknown model answers with the upstream message', async () => {
    fresh();
    const embedder = createEmbedder({ url: fixture.url, model: 'no-such-model', ...fast });
    const error = await unavailable(embedder.embed('x'), /HTTP 404: The model `no-such-model` does not exist/);
    assert.equal(error.meta.upstream_status, 404);
    assert.equal(fixture.requests.length, 1);
  });

  const garbage: [string, string, RegExp][] = [
    ['not JSON', 'Internal <b>oops</b>', /no data list/],
    ['no data', '{"object":"list"}', /no data list/],
    ['too few', JSON.stringify({ data: [] }), /0 embeddings for 1 inputs/],
    ['a string', JSON.stringify({ data: [{ index: 0, embedding: 'AAAA' }] }), /not a list/],
    ['a null value', JSON.stringify({ data: [{ index: 0, embedding: [0.1, null] }] }), /not a finite number/],
    ['an index out of range', JSON.stringify({ data: [{ index: 4, embedding: [0.1] }] }), /bad or repeated index/],
  ];
  for (const [name, body, pattern] of garbage)
    test(`garbage (${name}) is embedder_unavailable, not retried`, async () => {
      fresh();
      fixture.faults.push({ garbage: body });
      await unavailable(createEmbedder({ url: fixture.url, model: 'all-minilm', ...fast }).embed('x'), pattern);
      assert.equal(fixture.requests.length, 1);
    });

  test('an endpoint that is down is embedder_unavailable after bounded attempts', async () => {
    const down = await startEmbedder();
    const url = down.url;
    await down.close();
    const embedder = createEmbedder({ url, model: 'm', ...fast, maxAttempts: 2 });
    await unavailable(
      embedder.embed('x'),
      /^the embedder at http:\/\/127\.0\.0\.1:\d+\/… cannot be reached \(connection refused\) \(after 2 attempts\)\. Ways out: check the embeddings server at /,
    );
  });

  test('a connection failure without an error code says why in words, never "(TypeError)"', async () => {
    // Port 1 is on fetch's list of bad ports: fetch fails before connecting, its cause has no code.
    const embedder = createEmbedder({ url: 'http://127.0.0.1:1/v1', model: 'm', ...fast, maxAttempts: 1 });
    await unavailable(
      embedder.embed('x'),
      /^the embedder at http:\/\/127\.0\.0\.1:1\/… cannot be reached \(bad port\)/,
    );
  });

  test('the dimension is found by one probe, cached; a failed probe is tried again', async () => {
    fresh();
    fixture.faults.push({ status: 400 });
    const embedder = createEmbedder({ url: fixture.url, model: 'nomic-embed-text', ...fast });
    await unavailable(embedder.dimension());
    assert.equal(await embedder.dimension(), 768);
    assert.equal(await embedder.dimension(), 768);
    assert.equal(fixture.requests.length, 2);
  });
});

describe('embedder credentials', () => {
  const key = 'sk-test-0123456789secret';
  let fixture: EmbedderFixture;
  before(async () => {
    fixture = await startEmbedder({
      authorizations: [`Bearer ${key}`, `Basic ${Buffer.from('ollama:p@ss:word').toString('base64')}`],
    });
  });
  after(() => fixture.close());

  test('credentials in the URL go out as Basic auth (fetch refuses them in the URL)', async () => {
    const port = new URL(fixture.url).port;
    const embedder = createEmbedder({ url: `http://ollama:p%40ss%3Aword@127.0.0.1:${port}/v1`, model: 'm' });
    assert.deepEqual(await embedder.embed('cat'), [1, 0, 0, 0]);
    const wrong = createEmbedder({ url: `http://ollama:wrong-pw@127.0.0.1:${port}/v1`, model: 'm' });
    const error = await unavailable(wrong.embed('cat'), /HTTP 401/);
    assert.doesNotMatch(JSON.stringify({ message: error.message, meta: error.meta }), /wrong-pw|ollama:/);
  });

  test('ARKIVECTOR_EMBEDDER_KEY goes out as a bearer key and never appears in an error', async () => {
    assert.deepEqual(
      await createEmbedder({ url: fixture.url, model: 'm', apiKey: key }).embed('fern'),
      [0, 0.1, 1, 0.2],
    );
    await unavailable(createEmbedder({ url: fixture.url, model: 'm' }).embed('x'), /HTTP 401: Incorrect API key/);
    // OpenAI echoes (part of) the key it refused: the client scrubs it.
    fixture.faults.push({
      status: 401,
      body: JSON.stringify({
        error: { message: `Incorrect API key provided: ${key}.`, type: 'invalid_request_error' },
      }),
    });
    const error = await unavailable(createEmbedder({ url: fixture.url, model: 'm', apiKey: key }).embed('x'));
    assert.ok(!error.message.includes(key), error.message);
    assert.match(error.message, /Incorrect API key provided: \*\*\*/);
  });
});

describe('embedder_unavailable over REST', () => {
  let chain: Chain;
  before(async () => {
    chain = await startChain();
  });
  after(() => chain.close());

  test('a text search on a node whose embedder is down answers 502 embedder_unavailable', async () => {
    const down = await startEmbedder();
    const url = down.url;
    await down.close();
    const node = await chain.node({ ctx: { embedder: createEmbedder({ url, model: 'm', maxAttempts: 1 }) } });
    const answer = await call(`${node.url}/v1/collections/notes/search`, {
      method: 'POST',
      json: { text: 'cats', mode: 'semantic', k: 1 },
    });
    assertProblem(answer, 502, 'embedder_unavailable');
    assert.match(answer.body.detail, /^the embedder at http:\/\/127\.0\.0\.1:\d+\/… cannot be reached/);
  });
});

describe('embedder batching (property)', () => {
  test('any texts, any batch size: one vector per text, in input order, in ceil(n / batch) requests', async () => {
    const fixture = await startEmbedder({ models: { m: (t) => hashedEmbedding(t, 8) }, reverse: true });
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.string({ minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 30 }),
          fc.integer({ min: 1, max: 8 }),
          async (texts, maxBatch) => {
            fixture.requests.length = 0;
            const vectors = await createEmbedder({ url: fixture.url, model: 'm', maxBatch }).embedMany(texts);
            assert.deepEqual(
              vectors,
              texts.map((t) => hashedEmbedding(t, 8)),
            );
            assert.equal(fixture.requests.length, Math.ceil(texts.length / maxBatch));
          },
        ),
        { numRuns: 40 },
      );
    } finally {
      await fixture.close();
    }
  });
});
