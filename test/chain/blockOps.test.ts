// Block decoding's calldata step: hex turned into bytes by Buffer's native decoder must agree with viem
// on every hex string and refuse what viem refuses; a successful transaction whose calldata is not hex
// (a hostile or broken RPC) is an anomaly of its block, never a crash of the step.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { bytesToHex, hexToBytes } from 'viem';
import { calldataBytes, decodeBlock } from '../../src/chain/v1/blockOps.ts';
import { ARKIV_ADDRESS, StorageTxDecodeError } from '../../src/chain/v1/index.ts';

const viemBytes = (hex: string): Uint8Array | undefined => {
  try {
    return hexToBytes(hex as `0x${string}`);
  } catch {
    return undefined;
  }
};

describe('calldataBytes', () => {
  test('equals viem on any bytes, in lower and upper case', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.boolean(), (bytes, upper) => {
        const hex = bytesToHex(bytes);
        const input = upper ? `0x${hex.slice(2).toUpperCase()}` : hex;
        assert.deepEqual([...calldataBytes(input)], [...bytes]);
      }),
    );
  });

  test('refuses odd lengths, a missing 0x and any non-hex digit, wherever it is', () => {
    const hexChar = fc.constantFrom(...'0123456789abcdefABCDEF');
    const badChar = fc.constantFrom('g', 'z', ' ', 'x', '-', '\u00e9', '0x');
    fc.assert(
      fc.property(fc.array(hexChar, { maxLength: 40 }), badChar, fc.nat(), (digits, bad, at) => {
        const body = [...digits];
        body.splice(at % (body.length + 1), 0, bad);
        const input = `0x${body.join('')}`;
        // viem decides what is hex (the old decoder); where it refuses, we must too.
        if (viemBytes(input) === undefined)
          assert.throws(() => calldataBytes(input), StorageTxDecodeError, JSON.stringify(input));
      }),
    );
    assert.throws(() => calldataBytes('0xabc'), StorageTxDecodeError);
    assert.throws(() => calldataBytes('abcd'), StorageTxDecodeError);
  });
});

describe('decodeBlock', () => {
  test('a successful storage transaction with calldata that is not hex is an anomaly', () => {
    const { ops, anomalies } = decodeBlock({
      number: 5,
      hash: `0x${'11'.repeat(32)}`,
      parentHash: `0x${'22'.repeat(32)}`,
      timestamp: 0,
      transactions: [
        {
          hash: `0x${'33'.repeat(32)}`,
          index: 0,
          from: `0x${'44'.repeat(20)}`,
          to: ARKIV_ADDRESS,
          input: '0x1bzz',
          status: 1,
          logs: [],
        },
      ],
    });
    assert.deepEqual(ops, []);
    assert.equal(anomalies.length, 1);
    assert.match(anomalies[0] ?? '', /calldata does not decode \(calldata is not hex\)/);
  });
});
