// The node: `arkivector serve`'s assembly of chain, indexer, service and transports, its log and its banner.
export { startGateway } from './assemble.ts';
export { connectionBanner } from './banner.ts';
export { seedDemo, DEMO_DOCS, DEMO_NOTES, DEMO_NOTE_ENTITIES, demoDocs } from './demo.ts';
export { createLogger, prettyLine } from './logger.ts';
export type { Gateway } from './types.ts';
