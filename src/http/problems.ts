// How the HTTP surface answers an error: one problem+json body for every route, the challenge and
// Retry-After headers access and rate limits add, and a generic 500 for anything unexpected.
import { ArkivectorError, internalProblem, problemFor, toProblem, type Problem } from '../errors.ts';
import { AccessError } from './auth.ts';
import { RateLimitedError } from './rateLimit.ts';
import type { HttpLogger } from './types.ts';

const PROBLEM_TYPE = 'application/problem+json';

export function problemResponse(
  problem: Problem | Record<string, unknown>,
  status: number,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(problem), { status, headers: { 'content-type': PROBLEM_TYPE, ...headers } });
}

/**
 * Paths an OAuth-capable MCP client probes after a 401 (RFC 9728 protected-resource metadata, RFC 8414 /
 * OIDC authorization-server metadata, and the MCP spec's fallback endpoints at the server's origin). This
 * node takes static bearer tokens only: each answers 404 (no metadata: the client's OAuth discovery ends
 * there, and the 401's WWW-Authenticate names no `resource_metadata`), saying how to pass the token.
 */
const OAUTH_PATHS =
  /^\/(?:\.well-known\/(?:oauth-protected-resource|oauth-authorization-server|openid-configuration)(?:\/.*)?|register|authorize|token)$/;

/** The answer to a request no route takes: a problem with the same shape as every other error. */
export function notFoundResponse(method: string, path: string): Response {
  const message = OAUTH_PATHS.test(path)
    ? `no route ${method} ${path}: this node has no OAuth; it takes static bearer tokens, sent as "Authorization: Bearer <token>" (docs/access.md)`
    : `no route ${method} ${path}`;
  return problemResponse(toProblem(new ArkivectorError('not_found', message)), 404);
}

export type ErrorResponse = (error: unknown, method: string, route: string, gone: boolean) => Response;

/**
 * The answer to an error a route threw (the Hono routes' and the fast search path's).
 * @param logger where unexpected failures are logged in full
 */
export function errorRenderer(logger: HttpLogger): ErrorResponse {
  return (error, method, route, gone) => {
    const problem = problemFor(error);
    if (problem) {
      const headers: Record<string, string> = {};
      if (error instanceof AccessError && error.challenge) headers['www-authenticate'] = error.challenge;
      if (error instanceof RateLimitedError) headers['retry-after'] = String(error.retryAfterSeconds);
      return problemResponse(problem, problem.status, headers);
    }
    if (gone) {
      logger.info({ method, route, reason: String((error as Error)?.message) }, 'client disconnected');
      return problemResponse(internalProblem(), 500);
    }
    // Security: unknown errors are logged in full here and answered generically, so no stack, path or
    // configuration detail reaches the client.
    logger.error(
      { error: error instanceof Error ? (error.stack ?? error.message) : String(error), method, route },
      'request failed',
    );
    return problemResponse(internalProblem(), 500);
  };
}
