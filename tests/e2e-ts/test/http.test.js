// termpilot over streamable HTTP with a bearer token, through the official
// TypeScript MCP client.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { registerAll } from '../lib/scenarios.js';
import { REQUEST_TIMEOUT_MS, TEST_TIMEOUT_MS, connectHttp, start } from '../lib/termpilot.js';

registerAll('http');

test('http: a wrong token is refused; a second client sees the first one\'s panes', { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const tp = await start(t, { transport: 'http' });
    const pane = await tp.shell('shared');

    await assert.rejects(connectHttp(t, tp, `${tp.token}-wrong`), (error) => {
        assert.equal(error.code, 401, String(error));
        assert.match(String(error), /bearer token/);
        return true;
    });

    const other = await connectHttp(t, tp, tp.token);
    const { tools } = await other.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
    assert.equal(tools.length, tp.tools.size);
    const listed = await other.callTool({ name: 'list_panes', arguments: {} }, undefined, { timeout: REQUEST_TIMEOUT_MS });
    assert.ok(!listed.isError, JSON.stringify(listed));
    assert.ok(listed.structuredContent.panes.some((p) => p.id === pane), JSON.stringify(listed.structuredContent));
});
