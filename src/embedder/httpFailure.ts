// What a failed call to an embeddings server says: its cause (a stable word, as the local model's), and every
// way out, naming the server by its redacted URL only. The same shape as local/failure.ts, so /v1/status,
// the problem answer and the console read both alike.
import { EmbedderUnavailableError } from './errors.ts';

/**
 * Why the server could not embed: `refused` (nothing listens), `unreachable` (no route, no such host, the
 * connection dropped), `timeout` (no answer in time), `http_status` (it answered an error status),
 * `bad_answer` (not an embeddings answer), `wrong_dimension` (vectors of another width than before).
 */
export type EndpointFailureCause =
  | 'refused'
  | 'unreachable'
  | 'timeout'
  | 'http_status'
  | 'bad_answer'
  | 'wrong_dimension';

/** What to check on the server for an error status it answered. */
function statusHint(status: number | undefined, model: string): string {
  if (status === 401 || status === 403)
    return 'it refused the credentials: check ARKIVECTOR_EMBEDDER_KEY, or the user and password in the URL';
  if (status === 404)
    return `it does not serve the model or the path: check that --embedder-model ${model} is loaded there (Ollama: ollama pull ${model}) and that the URL ends in /v1`;
  if (status === 429) return 'it is rate limiting this node: wait, or raise its limit';
  if (status !== undefined && status >= 500) return 'it failed inside: see its log';
  return `it refused the request (HTTP ${status}): see its log`;
}

/** What to check on the server, by cause. */
function serverHint(cause: EndpointFailureCause, model: string, status?: number): string {
  switch (cause) {
    case 'refused':
      return 'nothing accepts connections there: start the server, or correct the host and port in --embedder';
    case 'unreachable':
      return 'it cannot be reached from this machine: check the host name, the network and any firewall';
    case 'timeout':
      return 'it gave no answer in time: check that it is not stuck or overloaded (a model still loading answers late)';
    case 'http_status':
      return statusHint(status, model);
    case 'bad_answer':
      return 'what it answered is not an OpenAI-compatible embeddings answer: check that the URL is its /v1 (POST /embeddings)';
    case 'wrong_dimension':
      return `it answered vectors of another width than before: check that ${model} is one model there and was not swapped`;
  }
}

/** Every way to text while the server fails: fix it, run a model in this process, or search by keyword. */
export function endpointWaysOut(safeUrl: string, model: string, cause: EndpointFailureCause, status?: number): string {
  return `Ways out: check the embeddings server at ${safeUrl} (${serverHint(cause, model, status)}); --embedder local (the default model, run in this process) or --embedder local:MODEL or local:PATH instead of the server; mode "keyword" (BM25 over documents), which needs no embedder and works now.`;
}

/** A failed call to the server: `reason` is the failure in words (it names the redacted URL), then the ways out. */
export class EndpointFailure extends EmbedderUnavailableError {
  readonly reason: string;
  readonly failure: EndpointFailureCause;
  readonly waysOut: string;
  constructor(reason: string, failure: EndpointFailureCause, waysOut: string, upstreamStatus?: number) {
    super(`${reason}. ${waysOut}`, {
      cause: failure,
      ways_out: waysOut,
      ...(upstreamStatus !== undefined ? { upstream_status: upstreamStatus } : {}),
    });
    this.reason = reason;
    this.failure = failure;
    this.waysOut = waysOut;
  }
}
