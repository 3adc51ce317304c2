// The gateway's default HTTP address, in a module of its own so the shell client can read it without
// loading the node's configuration.
export const HTTP_DEFAULT = '127.0.0.1:8787';
