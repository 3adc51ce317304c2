// Long engine work (staging a block, rebuilding a graph) runs in slices so reads keep answering.

/** Work between two yields to the event loop while applying a block or rebuilding. */
export const SLICE_MS = 8;

export const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
