// Panes as MCP resources through the official TypeScript MCP client: the
// pane is listed, its screen read, and a subscription to it brings a
// notifications/resources/updated when the pane prints; over stdio and
// over streamable HTTP (where the notification comes on the session's
// standalone stream).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { REQUEST_TIMEOUT_MS, TEST_TIMEOUT_MS, poll, start } from '../lib/termpilot.js';

const options = { timeout: REQUEST_TIMEOUT_MS };

for (const transport of ['stdio', 'http']) {
    test(`${transport}: a pane is listed, read and subscribed to as a resource`, { timeout: TEST_TIMEOUT_MS }, async (t) => {
        const tp = await start(t, { transport });
        const updated = [];
        tp.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
            updated.push(notification.params.uri);
        });
        const pane = await tp.shell('resources');
        const uri = `termpilot://pane/${pane}/screen`;

        const { resources } = await tp.client.listResources(undefined, options);
        const listed = resources.find((resource) => resource.uri === uri);
        assert.ok(listed, JSON.stringify(resources));
        assert.equal(listed.mimeType, 'text/plain');
        const { resourceTemplates } = await tp.client.listResourceTemplates(undefined, options);
        assert.ok(
            resourceTemplates.some((template) => template.uriTemplate === 'termpilot://pane/{id}/screen.png'),
            JSON.stringify(resourceTemplates),
        );

        await tp.client.subscribeResource({ uri }, options);
        await tp.ok('send_keys', { pane, text: 'echo TS-$((6*7))' });
        await poll(10_000, 'a resources/updated notification', () => updated.includes(uri));
        const text = await poll(10_000, 'the output in the screen resource', async () => {
            const read = await tp.client.readResource({ uri }, options);
            assert.equal(read.contents.length, 1);
            assert.equal(read.contents[0].uri, uri);
            return read.contents[0].text.includes('TS-42') ? read.contents[0].text : null;
        });
        assert.match(text, /^TS-42$/m);
        await tp.client.unsubscribeResource({ uri }, options);
        assert.deepEqual(tp.errors, [], 'the SDK reported errors');
    });
}
