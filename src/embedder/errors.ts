// The one failure of every embedder, local or behind an endpoint: it cannot answer now (the service's
// `embedder_unavailable`). Declared beside the embedders so they need nothing from the service.
import { ArkivectorError } from '../errors.ts';

export class EmbedderUnavailableError extends ArkivectorError {
  override name = 'EmbedderUnavailableError';
  /**
   * `upstream_status`: the embedder's HTTP status, when it answered at all; `cause` and `ways_out`: why, in
   * one word, and every way out (an embeddings server's failure; the local model's say them in its state).
   */
  constructor(message: string, meta: { upstream_status?: number; cause?: string; ways_out?: string } = {}) {
    super('embedder_unavailable', message, { meta });
  }
}
