// The devnet keeps a transaction's signed bytes only and reads its calldata from them when asked
// (calldataOf): for every signed type and calldata length, including the RLP length-prefix boundaries and
// uppercase hex from the wire, it answers what viem's parseTransaction answers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { bytesToHex, parseTransaction, serializeTransaction, type Hex } from 'viem';
import { calldataOf } from '../../src/devnet/transactions.ts';

const signature = {
  r: '0x1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c5b6a7988' as Hex,
  s: '0x0a0b0c0d0e0f10111213141516171819202122232425262728293031323334' as Hex,
  yParity: 1,
};
const to = '0x00000000000000000000000000000061726b6976' as const;

function signed(type: 'legacy' | 'eip2930' | 'eip1559', data: Uint8Array, nonce: number): Hex {
  const common = { to, nonce, gas: 1_000_000n, value: BigInt(nonce) * 7n, data: bytesToHex(data) };
  if (type === 'legacy')
    return serializeTransaction({ ...common, type, chainId: 1337, gasPrice: 3n }, { ...signature, v: 2709n });
  if (type === 'eip2930') return serializeTransaction({ ...common, type, chainId: 1337, gasPrice: 3n }, signature);
  return serializeTransaction(
    { ...common, type, chainId: 1337, maxFeePerGas: 5n, maxPriorityFeePerGas: 2n },
    signature,
  );
}

test('calldataOf reads the calldata parseTransaction reads, for every type and length', () => {
  const lengths = fc.oneof(fc.constantFrom(0, 1, 55, 56, 255, 256, 65_535, 65_536), fc.integer({ min: 0, max: 4_000 }));
  fc.assert(
    fc.property(
      fc.constantFrom('legacy' as const, 'eip2930' as const, 'eip1559' as const),
      lengths.chain((n) => fc.uint8Array({ minLength: n, maxLength: n })),
      fc.integer({ min: 0, max: 2 ** 40 }),
      fc.boolean(),
      (type, data, nonce, upper) => {
        const raw = signed(type, data, nonce);
        const wire = (upper ? `0x${raw.slice(2).toUpperCase()}` : raw) as Hex;
        assert.equal(calldataOf(wire, type), parseTransaction(raw).data ?? '0x');
      },
    ),
    { numRuns: 200 },
  );
});
