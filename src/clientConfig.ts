// What the client commands (`collections`, `search`, `put`, `ingest`, `verify`, …) read from the
// environment, each a twin of a flag that wins over it. A leaf module: the client commands start without
// loading the node's configuration.
import { HTTP_DEFAULT } from './httpDefault.ts';

/** The gateway a client command talks to without --url or ARKIVECTOR_URL. */
export const DEFAULT_GATEWAY_URL = `http://${HTTP_DEFAULT}`;

export interface ClientEnv {
  /** ARKIVECTOR_URL, else DEFAULT_GATEWAY_URL. */
  url: string;
  /** ARKIVECTOR_TOKEN: the bearer token (never echoed). */
  token?: string;
  /** ARKIVECTOR_RPC: the chain `verify` and `search --verify` check answers against. */
  rpc?: string;
}

/** An empty variable counts as unset. */
export function clientEnv(env: NodeJS.ProcessEnv): ClientEnv {
  return {
    url: env.ARKIVECTOR_URL || DEFAULT_GATEWAY_URL,
    token: env.ARKIVECTOR_TOKEN || undefined,
    rpc: env.ARKIVECTOR_RPC || undefined,
  };
}
