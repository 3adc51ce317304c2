// Size limits of a filter, declared once: the `where` parser and the JSON `filter` compiler enforce them
// while they read (before any recursion past the limit), so hostile nesting answers invalid_filter instead
// of overflowing the stack.

/** Nested groups allowed: parentheses and `!(…)` in `where`; `and` / `or` / `not` levels in `filter`. */
export const FILTER_DEPTH_MAX = 32;
/** Conditions (comparisons, `IN`, globs) allowed in one `where`, and in one `filter`. */
export const FILTER_TERMS_MAX = 256;
/**
 * Values allowed in all `IN (…)` lists of one `where` together, and in all `in` arrays of one `filter`:
 * each value is a key to look up and a posting to merge, so a JSON body of 400,000 values cost ~0.3 s.
 */
export const FILTER_IN_VALUES_MAX = 1024;
