// The tests, written once and registered for each transport by the files in
// test/. Each test starts its own termpilot and tmux server.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { ALL_TOOLS, PANE_RE, PROMPT, SECRET_NAME, SECRET_VALUE, SHELL_PANE, TEST_TIMEOUT_MS, poll, start, within } from './termpilot.js';

// The first progress notification of a wait comes after a second.
const PROGRESS_BOUND_MS = 5_000;
// How long a cancelled wait would last if the server ignored the cancellation.
export const CANCELLED_WAIT_S = 3;

function sorted(values) {
    return [...values].sort();
}

// Calls every tool at least once, each with a result checked by the SDK
// against the tool's outputSchema and by these assertions.
async function everyTool(tp) {
    assert.deepEqual(sorted(tp.tools.keys()), sorted(ALL_TOOLS));
    for (const tool of tp.tools.values()) {
        assert.equal(tool.inputSchema?.type, 'object', `${tool.name} inputSchema`);
        assert.equal(tool.outputSchema?.type, 'object', `${tool.name} outputSchema`);
    }
    const { sessions } = await tp.ok('list_sessions');
    assert.ok(Array.isArray(sessions), JSON.stringify(sessions));

    // A shell pane with a known prompt.
    const created = await tp.ok('create_session', { name: 'ts', width: 120, height: 40, ...SHELL_PANE });
    assert.match(created.pane, PANE_RE);
    assert.equal(created.session_name, 'ts');
    const pane = created.pane;
    const prompt = await tp.ok('wait_for_text', { pane, pattern: PROMPT.trimEnd(), include_screen: true, timeout_s: 10 });
    assert.equal(prompt.outcome, 'matched', JSON.stringify(prompt));
    assert.ok((await tp.ok('list_sessions')).sessions.some((s) => s.name === 'ts'));

    await typeAndRead(tp, pane);
    await runCommands(tp, pane);
    await typeASecret(tp, pane);
    await runBatches(tp, pane);
    await signalAChannel(tp);
    await layOutAndKill(tp, created);

    assert.deepEqual(sorted(tp.called), sorted(ALL_TOOLS), 'not every tool was called');
    assert.deepEqual(tp.errors, [], 'the SDK reported errors');
}

// send_keys, wait_for_text from its cursor, wait_for_idle, capture_pane,
// paste_text, and capture_since from the capture's cursor.
async function typeAndRead(tp, pane) {
    const sent = await tp.ok('send_keys', { pane, text: 'echo one-$((1+1))' });
    const one = await tp.ok('wait_for_text', { pane, pattern: 'one-2', since: sent.cursor, timeout_s: 10 });
    assert.equal(one.outcome, 'matched', JSON.stringify(one));
    assert.equal(one.line, 'one-2');
    const idle = await tp.ok('wait_for_idle', { pane, quiet_ms: 200, timeout_s: 10 });
    assert.equal(idle.outcome, 'idle', JSON.stringify(idle));
    const screen = await tp.ok('capture_pane', { pane });
    assert.ok(screen.text.split('\n').includes('one-2'), screen.text);

    await tp.ok('paste_text', { pane, text: 'echo pasted-$((2+3))', enter: true });
    const pasted = await tp.ok('wait_for_text', { pane, pattern: 'pasted-5', since: screen.cursor, timeout_s: 10 });
    assert.equal(pasted.outcome, 'matched', JSON.stringify(pasted));
    const since = await tp.ok('capture_since', { pane, cursor: screen.cursor });
    assert.ok(since.text.split('\n').includes('pasted-5'), since.text);
    assert.ok(!since.text.includes('one-2'), since.text);
}

// run_command: a quick command, a long output cut and read back with
// read_output, a slow one picked up with wait_for_command after its timeout.
async function runCommands(tp, pane) {
    const ran = await tp.ok('run_command', { pane, command: 'echo $((6*7))', timeout_s: 10 });
    assert.equal(ran.exit_code, 0, JSON.stringify(ran));
    assert.equal(ran.output, '42');

    const long = await tp.ok('run_command', { pane, command: 'seq 1 3000', max_tokens: 100, timeout_s: 10 });
    assert.equal(long.truncated, true, JSON.stringify(long));
    assert.equal(long.total_lines, 3000);
    assert.ok(long.output_id, JSON.stringify(long));
    const found = await tp.ok('read_output', { output_id: long.output_id, grep: '^2999$' });
    assert.equal(found.matching_lines, 1, JSON.stringify(found));
    assert.match(found.text, /2999$/);

    const slow = await tp.ok('run_command', { pane, command: 'sleep 1; echo late-$((1+2))', timeout_s: 0.2 });
    assert.equal(slow.timed_out, true, JSON.stringify(slow));
    assert.ok(slow.command_id, JSON.stringify(slow));
    const late = await tp.ok('wait_for_command', { command_id: slow.command_id, timeout_s: 10 });
    assert.equal(late.exit_code, 0, JSON.stringify(late));
    assert.equal(late.output, 'late-3');
}

// run_command stops at a hidden prompt with awaiting_input; type_secret types
// the configured secret, which no result shows, nor export_recording's file.
async function typeASecret(tp, pane) {
    const asked = await tp.ok('run_command', {
        pane,
        command: "printf 'Password: '; stty -echo; read pw; stty echo; echo; echo got-${#pw}",
        timeout_s: 10,
    });
    assert.equal(asked.awaiting_input, true, JSON.stringify(asked));
    assert.equal(asked.secret, true, JSON.stringify(asked));
    assert.ok(asked.command_id, JSON.stringify(asked));
    const typed = await tp.ok('type_secret', { pane, name: SECRET_NAME });
    assert.ok(!JSON.stringify(typed).includes(SECRET_VALUE), JSON.stringify(typed));
    const done = await tp.ok('wait_for_command', { command_id: asked.command_id, timeout_s: 10 });
    assert.equal(done.exit_code, 0, JSON.stringify(done));
    assert.equal(done.output.split('\n').at(-1), `got-${SECRET_VALUE.length}`, JSON.stringify(done));
    assert.ok(!JSON.stringify(done).includes(SECRET_VALUE), JSON.stringify(done));

    // The pane's recording: asciicast v3, the call that typed the secret
    // marked, the secret by its name only.
    const recording = await tp.ok('export_recording', { pane });
    const cast = readFileSync(recording.path, 'utf8');
    assert.ok(!cast.includes(SECRET_VALUE), recording.path);
    const [header, ...events] = cast.trimEnd().split('\n').map((line) => JSON.parse(line));
    assert.equal(header.version, 3, JSON.stringify(header));
    assert.ok(events.some(([, code, data]) => code === 'm' && data.startsWith('type_secret ')), cast);
    assert.ok(events.some(([, code, data]) => code === 'i' && data.startsWith(`[secret ${SECRET_NAME}]`)), cast);
    assert.ok(events.some(([, code, data]) => code === 'o' && data.includes(`got-${SECRET_VALUE.length}`)), cast);
}

async function runBatches(tp, pane) {
    const batch = await tp.ok('send_keys_batch', { operations: [{ pane, text: 'echo batch-$((4+4))' }] });
    assert.equal(batch.succeeded, 1, JSON.stringify(batch));
    const batched = await tp.ok('wait_for_text', { pane, pattern: 'batch-8', since: batch.results[0].cursor, timeout_s: 10 });
    assert.equal(batched.outcome, 'matched', JSON.stringify(batched));

    const steps = await tp.ok('run_batch', {
        steps: [
            { op: 'send_keys', pane, text: 'echo step-$((3*3))' },
            { op: 'wait_for_text', pane, pattern: 'step-9', since: '$prev', timeout_s: 10 },
        ],
    });
    assert.equal(steps.succeeded, 2, JSON.stringify(steps));
    assert.equal(steps.steps[1].result.outcome, 'matched', JSON.stringify(steps));
}

// wait_for_channel, under way when signal_channel signals it.
async function signalAChannel(tp) {
    const channel = `ts-channel-${process.pid}`;
    const waiting = tp.ok('wait_for_channel', { channel, timeout_s: 10 });
    const signalled = await tp.ok('signal_channel', { channel });
    assert.equal(signalled.outcome, 'sent', JSON.stringify(signalled));
    const woken = await waiting;
    assert.equal(woken.outcome, 'signalled', JSON.stringify(woken));
}

// A window and a split in the session of `created`, listed, then the kill
// tools on them and on a second session.
async function layOutAndKill(tp, created) {
    const { pane } = created;
    const window = await tp.ok('create_window', { session: created.session, name: 'second' });
    assert.match(window.pane, PANE_RE);
    const split = await tp.ok('split_pane', { pane, direction: 'below' });
    assert.match(split.pane, PANE_RE);
    const listed = (await tp.ok('list_panes', { session: created.session })).panes.map((p) => p.id);
    assert.deepEqual(sorted(listed), sorted([pane, window.pane, split.pane]));

    const killedPane = await tp.ok('kill_pane', { pane: split.pane });
    assert.deepEqual(killedPane.panes, [split.pane]);
    const killedWindow = await tp.ok('kill_window', { window: window.window });
    assert.deepEqual(killedWindow.windows, [window.window]);
    const doomed = await tp.ok('create_session', { name: 'doomed' });
    const killedSession = await tp.ok('kill_session', { session: 'doomed' });
    assert.equal(killedSession.session, doomed.session, JSON.stringify(killedSession));

    const left = (await tp.ok('list_panes', {})).panes.map((p) => p.id);
    assert.ok(left.includes(pane), JSON.stringify(left));
    assert.ok(![split.pane, window.pane, doomed.pane].some((id) => left.includes(id)), JSON.stringify(left));
    const names = (await tp.ok('list_sessions')).sessions.map((s) => s.name);
    assert.ok(names.includes(created.session_name) && !names.includes('doomed'), JSON.stringify(names));
}

// Progress notifications of a call that takes a moment: at least one, one
// total, values strictly increasing, none above the total.
function checkProgress(progress, what) {
    assert.ok(progress.length >= 1, `${what}: no progress notification`);
    const totals = new Set(progress.map((p) => p.total));
    assert.equal(totals.size, 1, `${what}: totals changed: ${JSON.stringify(progress)}`);
    for (let i = 1; i < progress.length; i++) {
        assert.ok(progress[i].progress > progress[i - 1].progress, `${what}: progress did not increase: ${JSON.stringify(progress)}`);
    }
    const [total] = totals;
    if (total !== undefined) {
        assert.ok(progress.every((p) => p.progress <= total), `${what}: progress above its total: ${JSON.stringify(progress)}`);
    }
}

async function progress(tp) {
    const pane = await tp.shell('progress');

    // A wait whose text comes after a second and a half: the server reports
    // progress every second meanwhile.
    const waitProgress = [];
    const sent = await tp.ok('send_keys', { pane, text: 'sleep 1.5; echo slow-$((5+5))' });
    const waited = await tp.ok(
        'wait_for_text',
        { pane, pattern: 'slow-10', since: sent.cursor, timeout_s: 10 },
        { onprogress: (p) => waitProgress.push(p) },
    );
    assert.equal(waited.outcome, 'matched', JSON.stringify(waited));
    checkProgress(waitProgress, 'wait_for_text');

    const runProgress = [];
    const ran = await tp.ok(
        'run_command',
        { pane, command: 'sleep 1.5; echo ran-$((5+6))', timeout_s: 10 },
        { onprogress: (p) => runProgress.push(p) },
    );
    assert.equal(ran.output, 'ran-11', JSON.stringify(ran));
    checkProgress(runProgress, 'run_command');

    // A batch counts its operations: the last notification is the total.
    const batchProgress = [];
    const operations = Array.from({ length: 5 }, (_, i) => ({ pane, text: `echo op-${i}` }));
    const batch = await tp.ok('send_keys_batch', { operations }, { onprogress: (p) => batchProgress.push(p) });
    assert.equal(batch.succeeded, 5, JSON.stringify(batch));
    // The last notification may trail the result by a moment.
    await poll(2_000, 'the batch progress to reach 5', () => batchProgress.at(-1)?.progress === 5);
    checkProgress(batchProgress, 'send_keys_batch');
    assert.equal(batchProgress.at(-1).total, 5, JSON.stringify(batchProgress));
    assert.deepEqual(tp.errors, [], 'the SDK reported errors');
}

// run_batch counts its steps: one total (the number of steps), values rising,
// the last equal to the total, even while a slow step waits.
async function batchProgress(tp) {
    const pane = await tp.shell('batch-progress');
    const stepProgress = [];
    const steps = await tp.ok(
        'run_batch',
        {
            steps: [
                { op: 'send_keys', pane, text: 'sleep 1.5; echo step-$((6+6))' },
                { op: 'wait_for_text', pane, pattern: 'step-12', since: '$prev', timeout_s: 10 },
            ],
        },
        { onprogress: (p) => stepProgress.push(p) },
    );
    assert.equal(steps.succeeded, 2, JSON.stringify(steps));
    await poll(2_000, 'the run_batch progress to reach 2', () => stepProgress.at(-1)?.progress === 2);
    checkProgress(stepProgress, 'run_batch');
    assert.equal(stepProgress.at(-1).total, 2, JSON.stringify(stepProgress));
    assert.deepEqual(tp.errors, [], 'the SDK reported errors');
}

// Starts a wait for text that never comes, lasting `seconds`, and aborts it
// after its first progress notification, when it is surely under way on the
// server. Returns when the call has rejected (before the wait could have
// ended on its own), with the time it started.
export async function cancelAWait(tp, pane, seconds) {
    const controller = new AbortController();
    let underway;
    const progressed = new Promise((resolve) => {
        underway = resolve;
    });
    const started = Date.now();
    const waiting = tp.call(
        'wait_for_text',
        { pane, pattern: 'never-printed', timeout_s: seconds },
        { signal: controller.signal, onprogress: () => underway() },
    );
    waiting.catch(() => {});
    await within(PROGRESS_BOUND_MS, 'the wait to report progress', progressed);
    controller.abort(new Error('stopped by the test'));
    const left = Math.max(0, started + seconds * 1000 - Date.now());
    await assert.rejects(within(left, 'the aborted call to reject before the wait ends', waiting), /stopped by the test/);
    return started;
}

async function cancellation(tp) {
    const pane = await tp.shell('cancel');
    const started = await cancelAWait(tp, pane, CANCELLED_WAIT_S);

    // The server goes on: the same pane answers, a new wait matches.
    const ran = await tp.ok('run_command', { pane, command: 'echo after-$((2*21))', timeout_s: 10 });
    assert.equal(ran.output, 'after-42', JSON.stringify(ran));
    const sent = await tp.ok('send_keys', { pane, text: 'echo again-$((1+1))' });
    const again = await tp.ok('wait_for_text', { pane, pattern: 'again-2', since: sent.cursor, timeout_s: 10 });
    assert.equal(again.outcome, 'matched', JSON.stringify(again));

    // Past the moment the cancelled wait would have timed out: a server that
    // had gone on waiting would have answered it by now, and the SDK reports
    // an answer to a request it no longer knows through onerror.
    const rest = started + CANCELLED_WAIT_S * 1000 + 500 - Date.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, rest)));
    assert.ok((await tp.ok('list_sessions')).sessions.some((s) => s.name === 'cancel'));
    const answers = tp.errors.filter((error) => error.includes('unknown message ID'));
    assert.deepEqual(answers, [], 'the cancelled call was answered');
}

// Arguments off the input schema, and targets that do not exist, come back
// as tool results with isError (the model can read and fix them), not as
// protocol errors.
async function validation(tp) {
    const pane = await tp.shell('invalid');
    const cases = [
        ['capture_pane', { pane, max_tokens: 5 }, /max_tokens/],
        ['capture_pane', { pane, height: '30' }, /height/],
        ['send_keys', { text: 'echo no pane' }, /pane/],
        ['split_pane', { pane, direction: 'diagonal' }, /direction/],
        ['wait_for_text', { pane, pattern: 5, timeout_s: 1 }, /pattern/],
        ['run_batch', { steps: [] }, /steps/],
        ['run_command', { pane, command: 'true', timeout_s: 'soon' }, /timeout_s/],
        ['capture_pane', { pane: '%9999' }, /%9999/],
        ['read_output', { output_id: 'o999' }, /o999/],
    ];
    for (const [name, args, mentions] of cases) {
        const message = await tp.err(name, args);
        assert.match(message, mentions, `${name}(${JSON.stringify(args)}): ${message}`);
    }
    // Nothing was typed into the pane by the refused calls, and it still works.
    const ran = await tp.ok('run_command', { pane, command: 'echo fine', timeout_s: 10 });
    assert.equal(ran.output, 'fine', JSON.stringify(ran));
    assert.deepEqual(tp.errors, [], 'the SDK reported errors');
}

// The SDK compiles every outputSchema with ajv at listTools; ajv prints a
// warning for each schema keyword it does not know (such as a non-standard
// `format`). None may appear, during the listing or the calls.
async function noWarnings(tp) {
    const pane = await tp.shell('quiet');
    await tp.ok('list_sessions');
    await tp.ok('list_panes', {});
    await tp.ok('capture_pane', { pane });
    await tp.ok('run_command', { pane, command: 'echo quiet', timeout_s: 10 });
    await tp.ok('wait_for_idle', { pane, quiet_ms: 100, timeout_s: 10 });
    const logged = tp.logged;
    assert.equal(logged.length, 0, `the SDK logged ${logged.length} line(s), e.g.:\n${logged.slice(0, 5).join('\n')}`);
    assert.deepEqual(tp.errors, [], 'the SDK reported errors');
}

const SCENARIOS = [
    ['every tool is called once at least, each result valid against its output schema', everyTool],
    ['progress notifications of a slow wait_for_text, run_command and send_keys_batch', progress],
    ['run_batch progress with a slow step: one total, rising to it', batchProgress],
    ['an aborted wait_for_text rejects at once and the server keeps working', cancellation],
    ['invalid arguments come back as isError results', validation],
    ['the SDK and ajv log no warnings over listTools and calls', noWarnings],
];

// Registers every test for one transport.
export function registerAll(transport) {
    for (const [name, body] of SCENARIOS) {
        test(`${transport}: ${name}`, { timeout: TEST_TIMEOUT_MS }, async (t) => {
            const tp = await start(t, { transport });
            await body(tp);
        });
    }
}
