// The README promises the indexer shares repeated strings only up to INTERNED_STRINGS_MAX distinct ones, so
// hostile names cannot grow the table without bound. Node's test runner gives each file its own process,
// so filling the module's table here touches no other suite.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { INTERNED_STRINGS_MAX, intern, internedCount } from '../../indexer/trackedEntities.ts';

test('interning: past INTERNED_STRINGS_MAX distinct strings the table stops growing and strings pass through', () => {
  const before = internedCount();
  assert.ok(before < INTERNED_STRINGS_MAX);
  // A string over 256 characters is never kept, even with room.
  assert.equal(intern('x'.repeat(300)), 'x'.repeat(300));
  assert.equal(internedCount(), before);
  for (let i = 0; i < INTERNED_STRINGS_MAX + 1000; i++) assert.equal(intern(`hostile-name-${i}`), `hostile-name-${i}`);
  assert.equal(internedCount(), INTERNED_STRINGS_MAX);
});
