// The public surfaces of src/chain/ (the seams and the default driver) and src/chain/v1/ (the wire, for
// the devnet and raw-transaction tests) are chosen by hand: adding or removing an export must change
// these lists. Also: the v1 driver renders the indexer's selectors into arkiv_query's language.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as chain from '../../src/chain/index.ts';
import * as v1 from '../../src/chain/v1/index.ts';

test('src/chain exports', () => {
  assert.deepEqual(Object.keys(chain).sort(), [
    'ChainDataError',
    'ChainUnreachableError',
    'EntityNotLiveError',
    'HEAD_SAMPLES_MAX',
    'HeadClock',
    'MAX_BATCH_OPERATIONS',
    'PERMANENT_BTL',
    'RPC_ANSWER_MAX_BYTES',
    'RpcAnswerTooLargeError',
    'RpcResponseError',
    'RpcUnavailableError',
    'TransactionRefusedError',
    'V1_UNTIL_DELETED_BTL',
    'batchSize',
    'budgetedTransport',
    'countCalls',
    'createArkivV1Source',
    'createArkivV1Writer',
    'createCallBudget',
    'createDbChainSource',
    'createDbChainWriter',
    'createHttpTransport',
    'dbChainQuery',
    'detectProtocol',
    'emptyBatch',
    'observeHeads',
    'redactUrl',
    'watchHeads',
  ]);
});

test('src/chain/v1 exports', () => {
  assert.deepEqual(Object.keys(v1).sort(), [
    'ARKIV_ADDRESS',
    'ARKIV_TOPICS',
    'QUERY_PAGE_LIMIT',
    'SYSTEM_TX_FROM',
    'SYSTEM_TX_TO',
    'StorageTxDecodeError',
    'arkivEventAbi',
    'decodeStorageTransaction',
    'emptyStorageOps',
    'encodeStorageTransaction',
    'encodeStorageTransactionOffThread',
    'entityKey',
    'v1Query',
    'validateStorageOps',
  ]);
});

test('v1 driver: a selector becomes an arkiv_query conjunction; an empty list of values matches nothing', () => {
  assert.equal(
    v1.v1Query({ strings: { arkivector_type: 'vector', arkivector_collection: ['a', 'b "c"'] } }),
    'arkivector_type = "vector" && arkivector_collection IN ("a" "b \\"c\\"")',
  );
  assert.equal(v1.v1Query({ strings: { arkivector_type: 'collection', arkivector_collection: [] } }), undefined);
  assert.throws(() => v1.v1Query({ strings: { 'not a name': 'x' } }), RangeError);
});

test('a batch holds at most MAX_BATCH_OPERATIONS operations, the v1 node cap the delete planner splits by', () => {
  const batch = chain.emptyBatch();
  batch.deletes.push('0x01', '0x02');
  batch.extends.push({ entityKey: '0x03', numberOfBlocks: 1n });
  assert.equal(chain.batchSize(batch), 3);
  assert.equal(chain.MAX_BATCH_OPERATIONS, 1000);
});
