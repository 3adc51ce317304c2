// Errors raised by the service operations (one class per code of the README's "Errors" they can raise).
import { ArkivectorError } from '../errors.ts';

export { EmbedderUnavailableError } from '../embedder/errors.ts';

export class CollectionNotFoundError extends ArkivectorError {
  override name = 'CollectionNotFoundError';
  constructor(collection: string) {
    super('collection_not_found', `no collection named ${JSON.stringify(collection)} on this node`, {
      meta: { collection },
    });
  }
}

export class EntityNotFoundError extends ArkivectorError {
  override name = 'EntityNotFoundError';
  constructor(collection: string, ref: string) {
    super('entity_not_found', `no live entity ${JSON.stringify(ref)} in collection ${collection}`, {
      meta: { collection, ref },
    });
  }
}

export class NotYetIndexedError extends ArkivectorError {
  override name = 'NotYetIndexedError';
  constructor(minBlock: number, asOfBlock: number | null, waitedMs: number) {
    super(
      'not_yet_indexed',
      `block ${minBlock} is not indexed yet (as_of_block ${asOfBlock ?? 'none'} after waiting ${waitedMs} ms)`,
      {
        meta: { min_block: minBlock, as_of_block: asOfBlock },
      },
    );
  }
}

/** Every way to give a node an embedder, for embedder_not_configured answers. */
export const CONFIGURE_EMBEDDER =
  'start the node without --embedder none (the default, --embedder local: a model run in the node, fetched once), with --embedder local:NAME or local:PATH (another model, or a model folder), or with --embedder URL --embedder-model NAME (an embeddings server such as Ollama)';

export class EmbedderNotConfiguredError extends ArkivectorError {
  override name = 'EmbedderNotConfiguredError';
  /** `message`: what needed the embedder and the way around it (default: a text search). */
  constructor(
    message = `text search needs an embedder, and this node has none: ${CONFIGURE_EMBEDDER}; meanwhile use mode "keyword" for BM25 over documents, or pass a vector`,
  ) {
    super('embedder_not_configured', message);
  }
}

export class EmbedderMismatchError extends ArkivectorError {
  override name = 'EmbedderMismatchError';
  constructor(collection: string, expected: string, configured: string) {
    super(
      'embedder_mismatch',
      `collection ${collection} was embedded with ${expected}, this node embeds with ${configured}`,
      {
        meta: { collection, expected, configured },
      },
    );
  }
}

export class ChainUnavailableError extends ArkivectorError {
  override name = 'ChainUnavailableError';
  constructor(message: string) {
    super('chain_unavailable', message);
  }
}

export class InvalidArgumentError extends ArkivectorError {
  override name = 'InvalidArgumentError';
  constructor(message: string, errors: { path: string; message: string }[] = []) {
    super('invalid_argument', message, { meta: errors.length ? { errors } : {} });
  }
}

export class SignerNotConfiguredError extends ArkivectorError {
  override name = 'SignerNotConfiguredError';
  constructor() {
    super('signer_not_configured', 'this node has no signer (set ARKIVECTOR_PRIVATE_KEY or --private-key-file)');
  }
}

export class ForbiddenError extends ArkivectorError {
  override name = 'ForbiddenError';
  constructor(message: string, meta: Record<string, unknown> = {}) {
    super('forbidden', message, { meta });
  }
}

export class ConflictError extends ArkivectorError {
  override name = 'ConflictError';
  constructor(message: string, meta: Record<string, unknown> = {}) {
    super('conflict', message, { meta });
  }
}

export class TxFailedError extends ArkivectorError {
  override name = 'TxFailedError';
  constructor(reason: string, txHash?: string) {
    super(
      'tx_failed',
      txHash ? `transaction ${txHash} failed: ${reason}` : `the chain refused the transaction: ${reason}`,
      {
        meta: { reason, ...(txHash ? { tx_hash: txHash } : {}) },
      },
    );
  }
}
