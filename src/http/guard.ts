// The access check and the rate limit every guarded route goes through, also the fast search path: an
// address over its failed authentications is refused before its token is even compared, and each refused
// token counts against the address it came from.
import type { Context } from 'hono';
import { AccessError, accessRequest, authorize, type AccessPolicy, type Grant, type Scope } from './auth.ts';
import { clientAddress } from './params.ts';
import { createAuthFailureLimiter, createRateLimiter } from './rateLimit.ts';
import type { Ctx } from './types.ts';

export interface Guard {
  /** Authorizes a Hono request for `scope`. @throws AccessError */
  request(c: Context, scope: Scope): Grant;
  /** Authorizes a request from its headers and peer address. @throws AccessError */
  headers(header: (name: string) => string | undefined, address: string, scope: Scope): Grant;
  /** Takes one request from the caller's bucket. @throws RateLimitedError */
  take(grant: Grant, address: string): void;
}

/**
 * @param access the node's access policy
 * @param rateLimitPerMinute requests per minute per caller; 0: no limit
 */
export function createGuard(access: AccessPolicy, rateLimitPerMinute: number): Guard {
  const limiter = createRateLimiter(rateLimitPerMinute);
  const authFailures = createAuthFailureLimiter();
  const headers: Guard['headers'] = (header, address, scope) => {
    const request = accessRequest(header);
    const presented = request.authorization != null && access.tokens.length > 0;
    if (presented) authFailures.check(address);
    try {
      return authorize(access, request, scope);
    } catch (error) {
      if (presented && error instanceof AccessError && error.code === 'unauthorized') authFailures.fail(address);
      throw error;
    }
  };
  return {
    headers,
    request: (c, scope) => headers((name) => c.req.header(name), clientAddress(c as Ctx), scope),
    // Tokens by name, anonymous and local callers by address.
    take: ({ principal }, address) =>
      limiter.take(principal === 'anonymous' || principal === 'local' ? `ip:${address}` : `token:${principal}`),
  };
}
