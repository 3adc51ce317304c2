// MCP surface of arkivector: the server builder, the tool table, transports and text renderers.
export { buildServer, instructionsFor, SERVER_NAME, SERVER_VERSION, type BuildServerDeps } from './server.ts';
export { defineTool, type ToolCallExtra, type ToolDefinition } from './defineTool.ts';
export { TOOLS } from './table.ts';
export { serveStdio } from './stdio.ts';
export { renderCollections } from './listCollections.ts';
export { renderSearch } from './search.ts';
export { renderGet } from './get.ts';
export { renderCount } from './count.ts';
export { renderUpsert } from './upsert.ts';
export { renderDelete } from './delete.ts';
export { renderCreateCollection } from './createCollection.ts';
export { renderListEntities } from './listEntities.ts';
