// A gateway that lies on purpose is refuted every time, with the right evidence, by verifyAnswer and by
// `arkivector verify`: it drops the best result, swaps a document, invents an entity, inflates as_of_block,
// answers from another chain, reorders, includes an expired entity, ignores the filter, alters a distance,
// a count or a listing. Each lie is caught by the check named for it, so removing any check fails a test.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { runClientCommand } from '../../src/commands/index.ts';
import { verifyAnswer, type VerifyReport } from '../../src/verify/index.ts';
import { createEntityAs } from '../helpers/generations.ts';
import { startLyingGateway, type Lie, type LyingGateway } from '../helpers/lyingGateway.ts';
import { vectorArgs } from '../helpers/writes.ts';
import { call, NOTES, startChain, type Chain, type Node } from '../http/fixture.ts';

type Body = Record<string, unknown>;
type Result = Record<string, unknown>;
const results = (body: Body) => body.results as Result[];

const SEARCH = { vector: [1, 0, 0, 0], k: 3, include_document: true };
const FILTERED = { ...SEARCH, where: "topic = 'plants' || topic = 'misc'" };

function assertRefuted(report: VerifyReport, check: string, evidence: RegExp) {
  assert.equal(report.verdict, 'refuted', JSON.stringify(report.checks, null, 1));
  const refuted = report.checks.filter((c) => c.verdict === 'refuted' && c.check === check);
  assert.ok(
    refuted.some((c) => evidence.test(c.evidence ?? '')),
    `${check} refuted with ${evidence}: ${JSON.stringify(report.checks, null, 1)}`,
  );
}

describe('verify: a lying gateway is refuted, with the evidence', () => {
  let chain: Chain;
  let other: Chain;
  let node: Node;
  let liar: LyingGateway;
  /** A search result of an entity that expired since, as an honest node once showed it. */
  let expired: Result;

  before(async () => {
    [chain, other] = await Promise.all([startChain({ protocol: 'dbchain' }), startChain({ protocol: 'dbchain' })]);
    node = await chain.node();
    const ghost = { id: 'ghost', vector: [1, 0.01, 0, 0], document: 'Gone soon.', attributes: { topic: 'pets' } };
    // 6 s of the DB-chain's 2 s blocks: live for three blocks (the devnet mines only on transactions).
    await createEntityAs(chain.devnet, 0, vectorArgs('notes', ghost, NOTES, 6), NOTES);
    const alive = await call(`${node.url}/v1/collections/notes/search`, {
      method: 'POST',
      json: { ...SEARCH, min_block: chain.devnet.headNumber },
    });
    expired = results(alive.body).find((r) => r.id === 'ghost') as Result;
    assert.ok(expired, JSON.stringify(alive.body));
    for (const id of ['owl', 'ivy', 'moss'])
      await createEntityAs(
        chain.devnet,
        0,
        vectorArgs('notes', { id, vector: [0, 1, 0.5, 0], attributes: { topic: 'plants', stars: 2 } }, NOTES),
        NOTES,
      );
    liar = await startLyingGateway(node.url);
  });
  after(async () => {
    await liar.close();
    await Promise.all([chain.close(), other.close()]);
  });

  /** Asks the liar (at the chain's head) and verifies what it said against the chain's RPC. */
  async function lied(lie: Lie, path = 'search', request: Body = SEARCH) {
    liar.lie = lie;
    const min = { min_block: chain.devnet.headNumber };
    const answer =
      path === 'entities'
        ? await call(`${liar.url}/v1/collections/notes/entities?limit=3&min_block=${min.min_block}`)
        : await call(`${liar.url}/v1/collections/notes/${path}`, { method: 'POST', json: { ...request, ...min } });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const report = await verifyAnswer({ rpc: chain.devnet.url, collection: 'notes', request, answer: answer.body });
    return { answer: answer.body as Body, report };
  }

  test('an honest answer through the same proxy verifies (no lie)', async () => {
    const { report } = await lied({ name: 'none' }, 'search', FILTERED);
    assert.equal(report.verdict, 'verified', JSON.stringify(report.checks, null, 1));
  });

  test('drops the best result', async () => {
    const { report } = await lied({ name: 'drop best', answer: (b) => ({ ...b, results: results(b).slice(1) }) });
    assertRefuted(report, 'completeness', /the answer has 2/);
  });

  test('swaps a document', async () => {
    const swap = (b: Body) => ({ ...b, results: results(b).map((r, i) => (i ? r : { ...r, document: 'Forged.' })) });
    const { report } = await lied({ name: 'swap document', answer: swap });
    assertRefuted(report, 'entity', /document: the answer says "Forged\."/);
  });

  test('invents an entity', async () => {
    const invented = {
      key: `0x${'ab'.repeat(32)}`,
      id: 'unicorn',
      distance: 0,
      score: 1,
      expires_at_block: 10 ** 9,
      attributes: {},
      document: 'Never written.',
    };
    const { report } = await lied({
      name: 'invent',
      answer: (b) => ({ ...b, results: [invented, ...results(b).slice(0, -1)] }),
    });
    assertRefuted(report, 'entity', /no live vector of notes has id "unicorn"/);
  });

  test('inflates as_of_block', async () => {
    const { report } = await lied({
      name: 'inflate block',
      answer: (b) => ({ ...b, as_of_block: (b.as_of_block as number) + 1000 }),
    });
    assertRefuted(report, 'block', /does not exist on this chain \(its head is \d+\)/);
  });

  test('answers from another chain', async () => {
    const elsewhere = await other.node();
    // That node never reached this chain's head: the liar drops min_block rather than wait.
    const { report } = await lied({
      name: 'another chain',
      upstream: elsewhere.url,
      request: ({ min_block: _, ...rest }) => rest,
    });
    assertRefuted(report, 'block', /another chain, or a fork/);
    assertRefuted(report, 'entity', /no live vector of notes/);
  });

  test('reorders the results', async () => {
    const swap = (b: Body) => {
      const [first, second, ...rest] = results(b);
      return { ...b, results: [second, first, ...rest] };
    };
    const { report } = await lied({ name: 'reorder', answer: swap });
    assertRefuted(report, 'order', /result 2 \(cat\).*comes after result 1 \(ghost|dog\)/);
  });

  test('includes an expired entity', async () => {
    const { report } = await lied({
      name: 'expired',
      answer: (b) => ({ ...b, results: [expired, ...results(b).slice(0, -1)] }),
    });
    assertRefuted(report, 'entity', /no live vector of notes has id "ghost"/);
  });

  test('ignores the filter', async () => {
    const { report } = await lied(
      { name: 'ignore filter', request: ({ where: _, ...rest }) => rest },
      'search',
      FILTERED,
    );
    assertRefuted(report, 'filter', /does not pass the filter/);
  });

  test('alters a distance, keeping the order', async () => {
    // Halfway between its neighbours' distances: still in order.
    const shift = (b: Body) => {
      const [first, second, ...rest] = results(b) as [Result, Result];
      const between = ((first.distance as number) + (second.distance as number)) / 2;
      return { ...b, results: [first, { ...second, distance: between }, ...rest] };
    };
    const { report } = await lied({ name: 'distance', answer: shift });
    assertRefuted(report, 'distance', /result 2|the chain's vector gives/);
    assert.ok(
      report.checks.some((c) => c.check === 'distance' && c.subject === 'result 2 (dog)' && c.verdict === 'refuted'),
    );
  });

  test('miscounts, and misstates, trims or reorders a listing', async () => {
    const count = await lied({ name: 'count', answer: (b) => ({ ...b, count: (b.count as number) + 1 }) }, 'count', {
      where: "topic = 'plants'",
    });
    assertRefuted(count.report, 'count', /4 entities pass the filter .* the answer says 5/);
    const total = await lied({ name: 'total', answer: (b) => ({ ...b, total: 2 }) }, 'entities', { limit: 3 });
    assertRefuted(total.report, 'total', /answer's total is 2/);
    const skip = (b: Body) => ({ ...b, entities: (b.entities as Result[]).slice(1) });
    const page = await lied({ name: 'skip', answer: skip }, 'entities', { limit: 3 });
    assertRefuted(page.report, 'completeness', /position 1 of the chain's listing/);
    const reverse = (b: Body) => ({ ...b, entities: [...(b.entities as Result[])].reverse() });
    const reversed = await lied({ name: 'reverse', answer: reverse }, 'entities', { limit: 3 });
    assertRefuted(reversed.report, 'order', /entity 2 .* is out of newest-first order/);
  });

  test('arkivector verify: exit 0 verified, 1 refuted, 3 unverifiable, 2 usage; --json prints the verdicts', async () => {
    liar.lie = undefined;
    const honest = await call(`${node.url}/v1/collections/notes/search`, { method: 'POST', json: FILTERED });
    const dir = await mkdtemp(join(tmpdir(), 'arkivector-verify-'));
    const requestFile = join(dir, 'request.json');
    await writeFile(requestFile, JSON.stringify(FILTERED));
    const args = ['--rpc', chain.devnet.url, '--collection', 'notes', '--request', requestFile, '--answer', '-'];
    // The installed command once, the rest in this process through the same entry.
    const ok = await runBin(['verify', ...args], JSON.stringify(honest.body));
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /^verified: search answer of notes at block \d+/);
    const bad = await runHere([...args, '--json'], { ...honest.body, results: results(honest.body).slice(1) });
    assert.equal(bad.code, 1, bad.stdout + bad.stderr);
    assertRefuted(JSON.parse(bad.stdout) as VerifyReport, 'completeness', /the answer has 2/);
    const { as_of_block_hash: _, ...unhashed } = honest.body as Body;
    const unsure = await runHere(args, unhashed);
    assert.equal(unsure.code, 3, unsure.stdout + unsure.stderr);
    assert.match(unsure.stdout, /unverifiable +block: the answer names no as_of_block_hash/);
    const usage = await runHere(['--collection', 'notes', '--answer', '-'], {});
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--rpc URL is required/);
    await rm(dir, { recursive: true, force: true });
  });

  test('arkivector search --verify: checks what it prints (0 from the honest node, 1 from the liar)', async () => {
    const args = ['notes', '--vector', '1,0,0,0', '-k', '2', '--verify', '--rpc', chain.devnet.url];
    const honest = await runHere([...args, '--url', node.url], {}, 'search');
    assert.equal(honest.code, 0, honest.stdout + honest.stderr);
    assert.match(honest.stdout, /^notes at block \d+ .*\n {2}1\. /);
    assert.match(honest.stdout, /\nverified: search answer of notes at block \d+/);
    liar.lie = {
      name: 'swap document',
      answer: (b) => ({ ...b, results: results(b).map((r) => ({ ...r, document: 'Forged.' })) }),
    };
    const lying = await runHere([...args, '--url', liar.url, '--json'], {}, 'search');
    assert.equal(lying.code, 1, lying.stdout + lying.stderr);
    const printed = JSON.parse(lying.stdout) as { results: unknown[]; verification: VerifyReport };
    assert.equal(printed.results.length, 2);
    assertRefuted(printed.verification, 'entity', /document: the answer says "Forged\."/);
    const usage = await runHere(['notes', '--vector', '1,0,0,0', '--verify', '--url', node.url], {}, 'search');
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--verify needs --rpc URL/);
  });
});

/** `arkivector verify ARGS` (or another command) in this process, `answer` on its standard input. */
async function runHere(args: string[], answer: unknown, command = 'verify') {
  let stdout = '';
  let stderr = '';
  const sink = (write: (s: string) => void) => new Writable({ write: (c, _e, done) => done(void write(String(c))) });
  const code = await runClientCommand(command, args, {
    stdout: sink((s) => (stdout += s)),
    stderr: sink((s) => (stderr += s)),
    stdin: Readable.from([JSON.stringify(answer)]),
    env: {},
  });
  return { code, stdout, stderr };
}

function runBin(args: string[], stdin: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/arkivector.js', ...args]);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}
