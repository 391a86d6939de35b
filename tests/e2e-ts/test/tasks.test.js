// Long calls as MCP tasks (protocol 2026-07-28, extension
// io.modelcontextprotocol/tasks) through the official tasks client,
// @modelcontextprotocol/ext-tasks. The SDK client pinned here (1.x) does not
// speak 2026-07-28, so the tasks session runs over a small port of ours: one
// stateless HTTP POST per request, as 2026-07-28 has it.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { withTasks } from '@modelcontextprotocol/ext-tasks/client';

import { REQUEST_TIMEOUT_MS, TEST_TIMEOUT_MS, poll, start } from '../lib/termpilot.js';

const VERSION = '2026-07-28';
const CAPABILITIES = { extensions: { 'io.modelcontextprotocol/tasks': {} }, elicitation: { form: {} } };

// A session port over stateless HTTP with `token`: each request carries the
// protocol version, the client and its capabilities in `_meta`, as
// 2026-07-28 requests do, and the headers the server routes by.
function statelessPort(url, token) {
    let id = 0;
    return {
        endpointId: `termpilot-${url}`,
        taskCapabilities: { generation: 'v2', capabilities: {} },
        invalidated: false,
        async dispatch(request, options = {}) {
            const params = request.params ?? {};
            const meta = params._meta ?? {};
            const capabilities = meta['io.modelcontextprotocol/clientCapabilities'] ?? {};
            const framed = {
                jsonrpc: '2.0',
                id: ++id,
                method: request.method,
                params: {
                    ...params,
                    _meta: {
                        ...meta,
                        'io.modelcontextprotocol/protocolVersion': VERSION,
                        'io.modelcontextprotocol/clientInfo': { name: 'termpilot-e2e-ts-tasks', version: '1.0.0' },
                        'io.modelcontextprotocol/clientCapabilities': { ...CAPABILITIES, ...capabilities },
                    },
                },
            };
            const headers = {
                Authorization: `Bearer ${token}`,
                'Content-Type': 'application/json',
                Accept: 'application/json, text/event-stream',
                'MCP-Protocol-Version': VERSION,
                'Mcp-Method': request.method,
            };
            const name = params.name ?? params.taskId;
            if (name !== undefined) {
                headers['Mcp-Name'] = name;
            }
            const signal = options.signal ?? AbortSignal.timeout(REQUEST_TIMEOUT_MS);
            const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(framed), signal });
            const message = await messageOf(response);
            return 'error' in message ? { kind: 'error', error: message.error } : { kind: 'result', result: message.result };
        },
        onServerRequest: () => () => {},
        onNotification: () => () => {},
        onInvalidated: () => () => {},
    };
}

// The one JSON-RPC message of an answer, sent as JSON or as an event stream.
async function messageOf(response) {
    const text = await response.text();
    if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
        return JSON.parse(text);
    }
    const data = text.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim());
    const messages = data.filter(Boolean).map((d) => JSON.parse(d)).filter((m) => 'id' in m);
    assert.equal(messages.length, 1, text);
    return messages[0];
}

// A tasks session on the HTTP server of `tp`; `answer` answers the person's
// questions (elicitations) the tasks bring.
function tasksSession(tp, answer = async () => ({ action: 'decline' })) {
    return withTasks(statelessPort(tp.url, tp.token), {
        onInputRequest: async (request) => {
            assert.equal(request.kind, 'elicitation', JSON.stringify(request));
            return answer(request.params);
        },
    });
}

test('tasks: a long command runs as a task, polled to completion', { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const tp = await start(t, { transport: 'http' });
    const pane = await tp.shell('long');
    const session = tasksSession(tp);
    t.after(() => session.close());
    const command = 'for i in 1 2 3 4 5; do echo tick-$i; sleep 1; done; echo done-$((6*7))';
    const execution = await session.callTool('run_command', { pane, command, timeout_s: 60 });
    assert.equal(execution.kind, 'task', 'the server answered with a result, not a task');
    const seen = [];
    const { outcome } = await execution.settle({
        onEvent: (event) => {
            if (event.type === 'task') {
                seen.push(event.task);
            }
        },
    });
    assert.equal(outcome.status, 'completed', JSON.stringify(outcome));
    assert.equal(outcome.result.structuredContent.exit_code, 0, JSON.stringify(outcome.result));
    assert.match(outcome.result.structuredContent.output, /done-42/);
    const working = seen.filter((task) => task.status === 'working' && /working for \d+ s/.test(task.statusMessage ?? ''));
    assert.ok(working.length > 0, `no working status with its elapsed time: ${JSON.stringify(seen)}`);
});

test('tasks: a prompt inside a task asks the client, and the command goes on', { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const tp = await start(t, { transport: 'http' });
    const pane = await tp.shell('prompt');
    const questions = [];
    const session = tasksSession(tp, async (params) => {
        questions.push(params);
        return { action: 'accept', content: { answer: 'world' } };
    });
    t.after(() => session.close());
    const command = "printf 'Your name? '; read name; echo hello-$name-done";
    const execution = await session.callTool('run_command', { pane, command, timeout_s: 60 });
    assert.equal(execution.kind, 'task');
    const { outcome } = await execution.settle();
    assert.equal(outcome.status, 'completed', JSON.stringify(outcome));
    assert.equal(questions.length, 1, JSON.stringify(questions));
    assert.match(questions[0].message, /Your name\?/);
    assert.match(outcome.result.structuredContent.output, /hello-world-done/);
});

test('tasks: cancel interrupts the command with C-c', { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const tp = await start(t, { transport: 'http' });
    const pane = await tp.shell('cancel');
    const session = tasksSession(tp);
    t.after(() => session.close());
    const execution = await session.callTool('run_command', { pane, command: 'sleep 600', timeout_s: 900 });
    assert.equal(execution.kind, 'task');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await execution.cancel();
    const { outcome } = await execution.settle();
    assert.equal(outcome.status, 'cancelled', JSON.stringify(outcome));
    // The client reports the cancel at once; the server ends the task once
    // the command is back at its prompt.
    const task = session.task(execution.handle.taskId);
    const last = await poll(TEST_TIMEOUT_MS / 2, 'the task to end cancelled', async () => {
        const snapshot = await task.snapshot();
        return snapshot.status === 'working' ? null : snapshot;
    }, 200);
    assert.equal(last.status, 'cancelled', JSON.stringify(last));
    assert.match(last.statusMessage ?? '', /pressed C-c and the command stopped/, JSON.stringify(last));
    const after = await tp.ok('run_command', { pane, command: 'echo back', timeout_s: 10 });
    assert.equal(after.exit_code, 0, JSON.stringify(after));
});

test('tasks: a task is read from a second session with the same token', { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const tp = await start(t, { transport: 'http' });
    const pane = await tp.shell('reconnect');
    const first = tasksSession(tp);
    t.after(() => first.close());
    const execution = await first.callTool('run_command', { pane, command: 'sleep 2; echo over-http', timeout_s: 60 });
    assert.equal(execution.kind, 'task');
    // The first session hands the task over (as a client about to go away
    // would) and polls no more; a second one, with its own connections, takes
    // it up.
    let reference;
    await execution.handoff((saved) => {
        reference = saved;
    });
    const second = tasksSession(tp);
    t.after(() => second.close());
    const resumed = await second.resumeTask(reference);
    const { outcome } = await resumed.settle();
    assert.equal(outcome.status, 'completed', JSON.stringify(outcome));
    assert.match(outcome.result.structuredContent.output, /over-http/);
});
