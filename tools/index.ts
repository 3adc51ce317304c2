// MCP surface of arkivector: the server builder, transports and text renderers.
export { buildServer, INSTRUCTIONS, SERVER_NAME, SERVER_VERSION, type BuildServerDeps } from './server.ts';
export { serveStdio } from './stdio.ts';
export { renderCollections } from './listCollections.ts';
export { renderSearch } from './search.ts';
export { renderGet } from './get.ts';
export { renderCount } from './count.ts';
export { renderUpsert } from './upsert.ts';
export { renderDelete } from './delete.ts';
