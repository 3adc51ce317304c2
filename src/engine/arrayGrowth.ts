// How the store's per-slot and per-label arrays grow (label maps, attribute columns, posting positions
// and bags, the occupied flags). Typed arrays cannot grow in place, so each growth copies; a factor of
// ×1.25 leaves at most a fifth of an array unused (doubling left up to half, a third on average: about
// 15 bytes a vector of the whole store's typed arrays at 100k) for four copies of the final size over
// an array's life instead of two, which is memcpy work far below the inserts that fill the slots.

/** Growth factor of the store's arrays. */
export const ARRAY_GROWTH = 1.25;
/** The smallest length a grown array takes. */
const ARRAY_MIN = 64;

/**
 * The length an array of `length` entries grows to so that it holds at least `min`.
 * @returns at least `min`, and at least ×ARRAY_GROWTH the current length
 */
export function grownLength(length: number, min: number): number {
  return Math.max(min, Math.ceil(length * ARRAY_GROWTH), ARRAY_MIN);
}
