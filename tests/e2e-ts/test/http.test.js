// termpilot over streamable HTTP with a bearer token, through the official
// TypeScript MCP client.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { CANCELLED_WAIT_S, cancelAWait, registerAll } from '../lib/scenarios.js';
import { REQUEST_TIMEOUT_MS, TEST_TIMEOUT_MS, connectHttp, poll, start } from '../lib/termpilot.js';

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

// A cancelled call's POST stream ends without an answer. When the server
// gave its events ids, the SDK resumes that stream (after the server's SSE
// retry delay) with a GET naming the last event it received. The server may
// replay what came after that event, never the event itself: the SDK would
// see a progress notification it has already handled.
test('http: the stream resumed after a cancelled call repeats no event', { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const tp = await start(t, { transport: 'http' });
    const pane = await tp.shell('resume');
    const before = tp.requests.length;
    await cancelAWait(tp, pane, CANCELLED_WAIT_S);
    const cancelled = tp.requests[before];
    assert.equal(cancelled?.method, 'POST', 'the cancelled call was not the next request');
    if (cancelled.eventIds.length === 0) {
        t.skip('the server gives its SSE events no ids: there is no stream to resume');
        return;
    }
    const resumed = await poll(10_000, 'the SDK to resume the stream', () =>
        tp.requests.find((request) => request.method === 'GET' && request.lastEventId),
    );
    assert.equal(resumed.lastEventId, cancelled.eventIds.at(-1));
    // A round trip after the replay, and a moment for the SDK to read it.
    await poll(REQUEST_TIMEOUT_MS, 'the resumed stream to answer', () => resumed.response);
    await tp.ok('list_sessions');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const replayed = resumed.eventIds.filter((id) => cancelled.eventIds.includes(id));
    assert.deepEqual(replayed, [], `resumed from ${resumed.lastEventId}, the server sent these events again`);
    assert.deepEqual(tp.errors, [], 'the SDK reported errors after resuming');
});
