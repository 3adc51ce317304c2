// JSON-RPC renderings of the devnet's blocks, transactions, receipts and logs, in the shapes geth returns
// (quantities as 0x hex, addresses and hashes lowercase).
import { numberToHex, zeroAddress, zeroHash, type Hex } from 'viem';
import { BASE_FEE_PER_GAS, BLOCK_GAS_LIMIT, type ChainBlock, type ChainLog, type ChainTx } from './transactions.ts';

const EMPTY_UNCLES_HASH = '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347';
const EMPTY_ROOT = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';
const TX_TYPES: Record<ChainTx['type'], Hex> = { legacy: '0x0', eip2930: '0x1', eip1559: '0x2', deposit: '0x7e' };
const hex = (value: bigint | number): Hex => numberToHex(value);

export function formatLog(log: ChainLog, removed = false) {
  return {
    address: log.address,
    topics: log.topics,
    data: log.data,
    blockNumber: hex(log.blockNumber),
    blockHash: log.blockHash,
    transactionHash: log.transactionHash,
    transactionIndex: hex(log.transactionIndex),
    logIndex: hex(log.logIndex),
    removed,
  };
}

export function formatTransaction(tx: ChainTx, block: ChainBlock, index: number) {
  const out: Record<string, unknown> = {
    hash: tx.hash,
    type: TX_TYPES[tx.type],
    nonce: hex(tx.nonce),
    blockHash: block.hash,
    blockNumber: hex(block.number),
    transactionIndex: hex(index),
    from: tx.from,
    to: tx.to,
    value: hex(tx.value),
    gas: hex(tx.gas),
    input: tx.input,
  };
  if (tx.type === 'deposit') {
    Object.assign(out, {
      gasPrice: '0x0',
      sourceHash: tx.hash,
      mint: '0x0',
      isSystemTx: false,
      depositReceiptVersion: '0x1',
      v: '0x0',
      r: '0x0',
      s: '0x0',
    });
    return out;
  }
  if (tx.chainId !== undefined) out.chainId = hex(tx.chainId);
  if (tx.type === 'eip1559') {
    out.maxFeePerGas = hex(tx.maxFeePerGas ?? 0n);
    out.maxPriorityFeePerGas = hex(tx.maxPriorityFeePerGas ?? 0n);
    out.gasPrice = hex(tx.maxFeePerGas ?? 0n);
  } else {
    out.gasPrice = hex(tx.gasPrice ?? 0n);
  }
  if (tx.type !== 'legacy') {
    out.accessList = tx.accessList ?? [];
    out.yParity = hex(tx.yParity ?? 0);
  }
  out.v = hex(tx.v ?? BigInt(tx.yParity ?? 0));
  out.r = tx.r;
  out.s = tx.s;
  return out;
}

export function formatReceipt(block: ChainBlock, index: number) {
  const tx = block.transactions[index];
  const receipt = block.receipts[index];
  if (!tx || !receipt) throw new Error(`devnet block ${block.number} has no transaction ${index}`);
  return {
    transactionHash: tx.hash,
    transactionIndex: hex(index),
    blockHash: block.hash,
    blockNumber: hex(block.number),
    from: tx.from,
    to: tx.to,
    cumulativeGasUsed: hex(receipt.cumulativeGasUsed),
    gasUsed: hex(receipt.gasUsed),
    effectiveGasPrice: hex(receipt.effectiveGasPrice),
    contractAddress: null,
    logs: receipt.logs.map((log) => formatLog(log)),
    logsBloom: receipt.logsBloom,
    status: receipt.status ? '0x1' : '0x0',
    type: TX_TYPES[tx.type],
  };
}

export function formatBlock(block: ChainBlock, fullTransactions: boolean) {
  return {
    number: hex(block.number),
    hash: block.hash,
    parentHash: block.parentHash,
    nonce: '0x0000000000000000',
    mixHash: zeroHash,
    sha3Uncles: EMPTY_UNCLES_HASH,
    logsBloom: block.logsBloom,
    transactionsRoot: block.transactions.length ? block.hash : EMPTY_ROOT,
    stateRoot: zeroHash,
    receiptsRoot: block.receipts.length ? block.hash : EMPTY_ROOT,
    miner: zeroAddress,
    difficulty: '0x0',
    totalDifficulty: '0x0',
    extraData: '0x',
    size: hex(1000 + block.transactions.reduce((n, tx) => n + Math.ceil((tx.input.length - 2) / 2), 0)),
    gasLimit: hex(BLOCK_GAS_LIMIT),
    gasUsed: hex(block.gasUsed),
    timestamp: hex(block.timestamp),
    baseFeePerGas: hex(BASE_FEE_PER_GAS),
    withdrawals: [],
    withdrawalsRoot: EMPTY_ROOT,
    uncles: [],
    transactions: fullTransactions
      ? block.transactions.map((tx, i) => formatTransaction(tx, block, i))
      : block.transactions.map((tx) => tx.hash),
  };
}
