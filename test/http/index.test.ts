// The public surface of src/http/ is chosen by hand: adding or removing an export must change this list.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as http from '../../src/http/index.ts';

test('src/http exports', () => {
  assert.deepEqual(Object.keys(http).sort(), [
    'AccessError',
    'assertSafeExposure',
    'authorize',
    'createHttpApp',
    'createMetrics',
    'docsMount',
    'hashSecret',
    'isLoopbackHost',
    'loadAccessPolicy',
    'parseTokensEnv',
    'parseTokensFile',
    'serveHttp',
  ]);
});
