// The EVM half of every writer, whatever the protocol: signs transactions to one contract address with a
// local key, sends them in order with a nonce this module owns, and follows receipts. Requests go through
// the node's one RpcTransport (retries, rate limits, credentials, redaction), handed to viem as a custom
// transport, so reads and writes share one stack.
//
// Every send of one signer goes through one ordered queue: concurrent sends that handed out nonces locally
// (viem's nonce manager) lost batches to "nonce too high/low" as soon as one send failed. Here a nonce is
// only spent when the node accepted the transaction, and any failure re-reads the pending nonce from the
// chain, so a refused send never poisons the next and a gap left by a crash heals.
import { createPublicClient, createWalletClient, custom, defineChain, keccak256, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { RpcUnavailableError, createHttpTransport, type RpcTransport } from './transport.ts';
import { ChainUnreachableError, TransactionRefusedError, type ReceiptLog, type TransactionOutcome } from './writer.ts';

/** Attempts per request of a writer that builds its own transport (no shared one given). */
const OWN_TRANSPORT_ATTEMPTS = 3;

/** What every driver's ChainWriter is built from. */
export interface WriterOptions {
  /** The node's RPC; used to build a transport when `transport` is not given (credentials become Basic auth). */
  rpcUrl: string;
  chainId: number;
  /** The signer key (never logged). */
  privateKey: Hex;
  /** The node's one transport, shared with the ChainSource (retries, rate limits, redaction). */
  transport?: RpcTransport;
}

/** A writer's transport (the node's, or one of its own) and its ordered sender to `to`. */
export function createWriterSender(
  options: WriterOptions,
  to: Address,
  explainRevert?: RevertExplainer,
): { transport: RpcTransport; sender: TransactionSender } {
  const transport = options.transport ?? createHttpTransport({ url: options.rpcUrl, attempts: OWN_TRANSPORT_ATTEMPTS });
  const sender = createTransactionSender({
    transport,
    chainId: options.chainId,
    privateKey: options.privateKey,
    to,
    ...(explainRevert ? { explainRevert } : {}),
  });
  return { transport, sender };
}

/** Sends retried with a freshly read nonce when the node refuses one for its nonce. */
export const NONCE_RETRIES = 3;
/** Causes followed when classifying an error (viem wraps ours a few levels deep). */
const CAUSE_DEPTH_MAX = 8;
const RECEIPT_POLL_MS = 250;

export interface TransactionSender {
  readonly address: Address;
  balance(): Promise<bigint>;
  /**
   * Sends in call order, one at a time. `build` runs at the job's turn, after every earlier send was
   * accepted or refused, so it sees their effects (a throw or rejection fails only this job).
   * @returns the hash and whatever `data` built alongside the calldata
   */
  send<T>(build: () => { data: Hex; extra: T } | Promise<{ data: Hex; extra: T }>): Promise<{ hash: Hex; extra: T }>;
  /** The outcome, with the receipt's logs when it succeeded (a driver reads what the chain decided from them). */
  waitForReceipt(hash: Hex, timeoutMs: number): Promise<TransactionOutcome & { logs?: ReceiptLog[] }>;
}

/** Names the custom error in revert data, for a protocol whose reverts carry one (the DB-chain). */
export type RevertExplainer = (data: Hex) => string | undefined;

/** Revert data somewhere down the cause chain (our transport's RpcResponseError, viem's RawContractError). */
function revertData(error: unknown): Hex | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < CAUSE_DEPTH_MAX && current instanceof Error; depth++) {
    const data = (current as { data?: unknown }).data;
    const hex = typeof data === 'string' ? data : (data as { data?: unknown } | undefined)?.data;
    if (typeof hex === 'string' && /^0x[0-9a-fA-F]{8,}$/.test(hex)) return hex as Hex;
    current = current.cause;
  }
  return undefined;
}

/** The node's message without viem's multi-line decoration (request bodies, versions). */
function nodeReason(error: unknown, explain?: RevertExplainer): string {
  const data = explain && revertData(error);
  const named = data && explain?.(data);
  if (named) return `execution reverted: ${named}`;
  const e = error as { details?: string; shortMessage?: string; message?: string; cause?: unknown };
  const details = e.details ?? (e.cause as { details?: string } | undefined)?.details;
  const reason = details ?? e.shortMessage ?? e.message ?? String(error);
  return reason.split('\n', 1)[0] ?? reason;
}

/** Whether the transport gave up reaching the RPC somewhere down the cause chain. */
function unreachable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < CAUSE_DEPTH_MAX && current instanceof Error; depth++) {
    if (current instanceof RpcUnavailableError) return true;
    current = current.cause;
  }
  return false;
}

/**
 * @param privateKey the signer key (never logged)
 * @param to every transaction goes to this address (the protocol's entity processor)
 */
export function createTransactionSender(options: {
  transport: RpcTransport;
  chainId: number;
  privateKey: Hex;
  to: Address;
  /** Turns revert data into the error it names (refusals and receipt replays); absent: the node's message. */
  explainRevert?: RevertExplainer;
}): TransactionSender {
  const { transport, to } = options;
  const chain = defineChain({
    id: options.chainId,
    name: 'arkiv',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    // viem wants a URL; every request goes through `transport` below, never to this one.
    rpcUrls: { default: { http: ['http://127.0.0.1/'] } },
  });
  const account = privateKeyToAccount(options.privateKey);
  // The RpcTransport already retries what is worth retrying: viem must not multiply the attempts.
  const viemTransport = custom(
    { request: ({ method, params }) => transport.request(method, (params as unknown[] | undefined) ?? []) },
    { retryCount: 0 },
  );
  const wallet = createWalletClient({ chain, transport: viemTransport, account });
  const reader = createPublicClient({ chain, transport: viemTransport, pollingInterval: RECEIPT_POLL_MS });
  let queue: Promise<unknown> = Promise.resolve();
  /** The next nonce to use; undefined = read the pending nonce from the chain first. */
  let nonce: number | undefined;
  /** Whether the node holds the transaction (pending or mined); an error asking counts as no. */
  async function nodeHas(hash: Hex): Promise<boolean> {
    return reader.getTransaction({ hash }).then(
      () => true,
      () => false,
    );
  }
  async function sendInOrder(data: Hex): Promise<Hex> {
    for (let attempt = 0; ; attempt++) {
      try {
        // Nothing is sent before the node answered the nonce: any failure reading it (no answer, a
        // timeout, or an error answer such as a provider's "request timed out") is an outage, never a
        // refusal of a transaction that never left.
        nonce ??= await reader.getTransactionCount({ address: account.address, blockTag: 'pending' }).catch(() => {
          throw new ChainUnreachableError('the RPC cannot be reached to read the nonce');
        });
        // The gas estimate may be a real refusal (the node dry-runs the storage operations): kept as is.
        const request = await wallet.prepareTransactionRequest({ to, data, value: 0n, nonce });
        const signed = await wallet.signTransaction(request);
        // Signed here, so the hash is known before the send: a send whose answer was lost (a timeout or a
        // 5xx after the node took it) is retried by the transport with the same bytes, and the node then
        // answers "already known", or "nonce too low" once it is mined. That is this transaction, sent.
        // When the transport gave up altogether, the node may still have taken it: ask by hash (bounded
        // by the transport's own retries), and only an unknown hash is an outage.
        const hash = keccak256(signed);
        try {
          await wallet.sendRawTransaction({ serializedTransaction: signed });
        } catch (error) {
          if (!(await nodeHas(hash))) throw error;
        }
        nonce++;
        return hash;
      } catch (error) {
        if (error instanceof ChainUnreachableError) throw error;
        // Whether the node took the nonce is unknown (a timeout may follow acceptance): ask it next time.
        nonce = undefined;
        if (unreachable(error)) throw new ChainUnreachableError('the RPC cannot be reached to send the transaction');
        const reason = nodeReason(error, options.explainRevert);
        if (/nonce/i.test(reason) && attempt < NONCE_RETRIES) continue;
        throw new TransactionRefusedError(reason);
      }
    }
  }
  return {
    address: account.address.toLowerCase() as Address,
    balance: () => reader.getBalance({ address: account.address }),
    send(build) {
      const job = queue.then(async () => {
        const { data, extra } = await build();
        return { hash: await sendInOrder(data), extra };
      });
      // The queue continues whatever this job's outcome; the caller sees the outcome.
      queue = job.then(
        () => undefined,
        () => undefined,
      );
      return job;
    },
    async waitForReceipt(hash, timeoutMs) {
      const receipt = await reader.waitForTransactionReceipt({
        hash,
        timeout: timeoutMs,
        pollingInterval: RECEIPT_POLL_MS,
      });
      if (receipt.status === 'success')
        return {
          blockNumber: Number(receipt.blockNumber),
          status: 'success',
          logs: receipt.logs.map((log) => ({ address: log.address, topics: [...log.topics], data: log.data })),
        };
      let reason: string | undefined;
      const tx = await reader.getTransaction({ hash });
      await reader
        .call({ account: tx.from, to, data: tx.input })
        .catch((error) => (reason = nodeReason(error, options.explainRevert)));
      return { blockNumber: Number(receipt.blockNumber), status: 'reverted', reason };
    },
  };
}
