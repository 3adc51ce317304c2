// What the console's modules share: the node's facts, the latest status and its history, and which page
// render is current. One object, so every module reads and sets the same values.

/** How often the overview polls GET /v1/status, and how many samples the chart keeps (5 minutes). */
export const POLL_MS = 2000;
export const HISTORY_SAMPLES = 150;

export const state = {
  /** Node facts from /console/node.json (access, signer, install lines). */
  node: null,
  /** The latest GET /v1/status answer. */
  lastStatus: null,
  /** Counts page renders, so a slow answer for a page the user has left does not replace the newer page. */
  renderSeq: 0,
  /** The shown page's reaction to each new status (the search box follows the embedder); reset per page. */
  onStatus: null,
};

/** Status samples for the chart: {at, asOf, lag, applied}. */
export const history = [];
