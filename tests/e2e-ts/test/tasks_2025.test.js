// Long calls as MCP tasks the way protocol 2025-11-25 has them (`task` in
// the params of tools/call, tasks/get, tasks/result, tasks/cancel), through
// the official SDK client's experimental tasks support
// (client.experimental.tasks), which speaks that version.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { REQUEST_TIMEOUT_MS, TEST_TIMEOUT_MS, start } from '../lib/termpilot.js';

const RELATED = 'io.modelcontextprotocol/related-task';
const CAPABILITIES = { elicitation: { form: {} }, tasks: { list: {}, cancel: {} } };
const WAITING_TOOLS = ['run_command', 'wait_for_command', 'wait_for_text', 'wait_for_idle', 'wait_for_channel', 'run_batch'];

// The messages of a task-augmented call, to its end.
async function streamed(tp, name, args) {
    const messages = [];
    const stream = tp.client.experimental.tasks.callToolStream({ name, arguments: args }, undefined, {
        task: {},
        timeout: REQUEST_TIMEOUT_MS,
    });
    for await (const message of stream) {
        messages.push(message);
    }
    return messages;
}

test('tasks 2025-11-25: the tools that wait run as tasks, polled to their result', { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const tp = await start(t, { transport: 'stdio', capabilities: CAPABILITIES });
    const call = tp.client.getServerCapabilities()?.tasks?.requests?.tools?.call;
    assert.deepEqual(call, {}, JSON.stringify(tp.client.getServerCapabilities()));
    for (const name of WAITING_TOOLS) {
        assert.equal(tp.tools.get(name).execution?.taskSupport, 'optional', name);
    }
    const pane = await tp.shell('polled');
    const command = 'for i in 1 2 3; do echo tick-$i; sleep 1; done; echo done-$((6*7))';
    const messages = await streamed(tp, 'run_command', { pane, command, timeout_s: 60 });
    assert.equal(messages[0].type, 'taskCreated', JSON.stringify(messages[0]));
    const working = messages.filter((m) => m.type === 'taskStatus' && m.task.status === 'working');
    assert.ok(working.some((m) => /working for \d+ s; last line: tick-/.test(m.task.statusMessage ?? '')), JSON.stringify(working));
    const last = messages.at(-1);
    assert.equal(last.type, 'result', JSON.stringify(last));
    assert.equal(last.result.structuredContent.exit_code, 0, JSON.stringify(last.result));
    assert.match(last.result.structuredContent.output, /done-42/);
    assert.equal(last.result._meta?.[RELATED]?.taskId, messages[0].task.taskId);
});

test('tasks 2025-11-25: a prompt inside a task is asked through tasks/result over HTTP', { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const tp = await start(t, { transport: 'http', capabilities: CAPABILITIES });
    const asked = [];
    tp.client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params);
        return { action: 'accept', content: { answer: 'world' } };
    });
    const pane = await tp.shell('prompt');
    const command = "printf 'Your name? '; read name; echo hello-$name-done";
    const messages = await streamed(tp, 'run_command', { pane, command, timeout_s: 60 });
    const statuses = messages.filter((m) => m.type === 'taskStatus').map((m) => m.task.status);
    assert.ok(statuses.includes('input_required'), JSON.stringify(statuses));
    assert.equal(asked.length, 1, JSON.stringify(asked));
    assert.match(asked[0].message, /Your name\?/);
    assert.equal(asked[0]._meta?.[RELATED]?.taskId, messages[0].task.taskId);
    const last = messages.at(-1);
    assert.equal(last.type, 'result', JSON.stringify(last));
    assert.match(last.result.structuredContent.output, /hello-world-done/);
});

test('tasks 2025-11-25: cancel interrupts the command and answers with the cancelled task', { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const tp = await start(t, { transport: 'stdio', capabilities: CAPABILITIES });
    const pane = await tp.shell('cancel');
    const tasks = tp.client.experimental.tasks;
    const stream = tasks.callToolStream({ name: 'run_command', arguments: { pane, command: 'sleep 600', timeout_s: 900 } }, undefined, {
        task: {},
        timeout: REQUEST_TIMEOUT_MS,
    });
    const created = (await stream.next()).value;
    assert.equal(created.type, 'taskCreated', JSON.stringify(created));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const cancelled = await tasks.cancelTask(created.task.taskId, { timeout: TEST_TIMEOUT_MS / 2 });
    assert.equal(cancelled.status, 'cancelled', JSON.stringify(cancelled));
    assert.match(cancelled.statusMessage ?? '', /pressed C-c and the command stopped/, JSON.stringify(cancelled));
    await stream.return();
    const { tasks: listed } = await tasks.listTasks(undefined, { timeout: REQUEST_TIMEOUT_MS });
    assert.deepEqual(listed.filter((task) => task.taskId === created.task.taskId).map((task) => task.status), ['cancelled']);
    const after = await tp.ok('run_command', { pane, command: 'echo back', timeout_s: 10 });
    assert.equal(after.exit_code, 0, JSON.stringify(after));
});
