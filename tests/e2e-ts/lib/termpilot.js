// Starts the real `termpilot serve` binary against a private tmux server and
// connects the official TypeScript MCP client to it, over stdio or over
// streamable HTTP. Every test gets its own tmux socket (tp-ts-<pid>-<n>),
// killed along with its socket file when the test ends.

import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export const BIN = process.env.TERMPILOT_BIN;

// Bounds on every wait: one request, the server's start-up, one poll loop.
export const REQUEST_TIMEOUT_MS = 10_000;
export const STARTUP_TIMEOUT_MS = 10_000;
export const TEST_TIMEOUT_MS = 45_000;

// Panes get a predictable shell: tmux's default-shell follows SHELL. Panes that
// need a prompt run `sh -i` with this PS1 and no rc file (ENV empty).
export const PROMPT = 'tp-prompt$ ';
export const SHELL_PANE = { command: 'sh -i', env: { PS1: PROMPT, ENV: '' } };

export const PANE_RE = /^%\d+$/;

// The secret the server is given; it must never come back in a result.
export const SECRET_NAME = 'ts_secret';
export const SECRET_VALUE = 'hunter2-ts-secret';

// Every tool termpilot has, all enabled with `--toolsets all`.
export const ALL_TOOLS = [
    'list_sessions',
    'list_panes',
    'capture_pane',
    'capture_since',
    'read_output',
    'export_recording',
    'wait_for_text',
    'wait_for_idle',
    'wait_for_channel',
    'signal_channel',
    'run_command',
    'wait_for_command',
    'type_secret',
    'send_keys',
    'paste_text',
    'send_keys_batch',
    'run_batch',
    'create_session',
    'create_window',
    'split_pane',
    'kill_session',
    'kill_window',
    'kill_pane',
];

// What the SDK and ajv print (e.g. `unknown format "uint32" ignored in schema`)
// goes to console.warn and console.error. While a client is connected, those
// are recorded on it instead of printed; tests assert on the record.
let sink = null;
for (const level of ['warn', 'error']) {
    const original = console[level].bind(console);
    console[level] = (...args) => {
        if (sink) {
            sink.push(`console.${level}: ${args.map(String).join(' ')}`);
        } else {
            original(...args);
        }
    };
}

let counter = 0;

function checkBinary() {
    if (!BIN) {
        throw new Error('TERMPILOT_BIN is not set: point it at a built termpilot binary');
    }
    try {
        accessSync(BIN, constants.X_OK);
    } catch {
        throw new Error(`TERMPILOT_BIN=${BIN} is not an executable file (build it first)`);
    }
}

// The server's environment: a known shell and locale, the tmux socket
// directory of this run, and nothing else of the caller's.
function serverEnv() {
    const env = { SHELL: '/bin/sh', TERM: 'xterm-256color', LANG: 'C.UTF-8', TP_TS_SECRET: SECRET_VALUE };
    for (const name of ['PATH', 'HOME', 'USER', 'LOGNAME', 'TMUX_TMPDIR']) {
        if (process.env[name] !== undefined) {
            env[name] = process.env[name];
        }
    }
    return env;
}

// Kills the tmux server on this socket name only, then removes the socket
// file tmux leaves behind.
function killTmux(socket) {
    spawnSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore', timeout: 5_000 });
    const dir = path.join(process.env.TMUX_TMPDIR || tmpdir(), `tmux-${process.getuid()}`);
    try {
        unlinkSync(path.join(dir, socket));
    } catch {
        // Already gone, or never made.
    }
}

// Resolves `promise`, or rejects after `ms` with a message naming `what`.
export function within(ms, what, promise) {
    let timer;
    const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function textOf(result) {
    return (result.content ?? [])
        .filter((block) => block.type === 'text')
        .map((block) => block.text)
        .join('\n');
}

// A connected client with checked call helpers. `logged` holds what the SDK
// printed and `errors` what it reported through onerror, while connected.
class Session {
    constructor(client, transportName) {
        this.client = client;
        this.transport = transportName;
        this.tools = new Map();
        this.called = new Set();
        this.logged = [];
        this.errors = [];
        // HTTP only: the requests the transport made.
        this.requests = [];
    }

    async listTools() {
        const { tools } = await this.client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
        this.tools = new Map(tools.map((tool) => [tool.name, tool]));
        return tools;
    }

    // Calls a tool; the SDK validates structuredContent against the tool's
    // outputSchema (with ajv) and throws when it does not match.
    async call(name, args = {}, options = {}) {
        this.called.add(name);
        return this.client.callTool({ name, arguments: args }, undefined, {
            timeout: REQUEST_TIMEOUT_MS,
            ...options,
        });
    }

    // Calls a tool that must succeed; returns its structuredContent.
    async ok(name, args = {}, options = {}) {
        const result = await this.call(name, args, options);
        if (result.isError) {
            throw new Error(`${name}(${JSON.stringify(args)}) failed: ${textOf(result)}`);
        }
        if (!result.structuredContent) {
            throw new Error(`${name} returned no structuredContent: ${JSON.stringify(result)}`);
        }
        return result.structuredContent;
    }

    // Calls a tool that must fail as a tool error (isError), not a protocol
    // error; returns the message.
    async err(name, args = {}) {
        const result = await this.call(name, args);
        const message = textOf(result);
        if (result.isError !== true) {
            throw new Error(
                `${name}(${JSON.stringify(args)}) should fail, got ${JSON.stringify(result.structuredContent)}`,
            );
        }
        if (!message.trim()) {
            throw new Error(`${name} failed without a message`);
        }
        return message;
    }

    // Creates a session running `sh -i` with a known prompt and waits for it.
    async shell(name) {
        const created = await this.ok('create_session', { name, ...SHELL_PANE });
        const prompt = await this.ok('wait_for_text', {
            pane: created.pane,
            pattern: PROMPT.trimEnd(),
            include_screen: true,
            timeout_s: 10,
        });
        if (prompt.outcome !== 'matched') {
            throw new Error(`no prompt in ${created.pane}: ${JSON.stringify(prompt)}`);
        }
        return created.pane;
    }
}

// Starts termpilot for test `t` and returns a connected Session; everything
// is stopped when the test ends. `transport` is "stdio" or "http"; `capabilities`
// are the client's (none by default).
export async function start(t, { transport, toolsets = 'all', capabilities = {} }) {
    checkBinary();
    const socket = `tp-ts-${process.pid}-${counter++}`;
    const stderr = [];
    const cleanups = [() => killTmux(socket)];
    t.after(async () => {
        sink = null;
        for (const cleanup of cleanups.reverse()) {
            await cleanup();
        }
    });
    // Shown with a failure: what the server logged (its last lines).
    t.after(() => {
        if (t.passed === false && stderr.join('').trim()) {
            t.diagnostic(`termpilot stderr (${socket}):`);
            for (const line of stderr.join('').trimEnd().split('\n').slice(-40)) {
                t.diagnostic(`  ${line}`);
            }
        }
    });

    const client = new Client({ name: 'termpilot-e2e-ts', version: '1.0.0' }, { capabilities });
    const session = new Session(client, transport);
    client.onerror = (error) => session.errors.push(String(error?.stack ?? error));
    sink = session.logged;

    // One configured secret, typed by type_secret in the every-tool test.
    const args = ['serve', '-L', socket, '--toolsets', toolsets, '--secret', `${SECRET_NAME}=env:TP_TS_SECRET`];
    let clientTransport;
    if (transport === 'stdio') {
        clientTransport = new StdioClientTransport({ command: BIN, args, env: serverEnv(), stderr: 'pipe' });
        clientTransport.stderr?.on('data', (chunk) => stderr.push(chunk.toString()));
    } else if (transport === 'http') {
        const token = `e2e-ts-token-${process.pid}-${counter}`;
        const url = await startHttp([...args, '--http', '127.0.0.1:0', '--http-token', token], stderr, cleanups);
        clientTransport = httpTransport(url, token, session.requests);
        session.url = url;
        session.token = token;
    } else {
        throw new Error(`unknown transport ${transport}`);
    }
    cleanups.push(() => within(5_000, 'closing the client', client.close()).catch(() => {}));
    await within(STARTUP_TIMEOUT_MS, `connecting over ${transport}`, client.connect(clientTransport));
    await session.listTools();
    return session;
}

// A streamable HTTP client transport sending `token`; when `requests` is
// given, each HTTP request it makes is recorded there: its method, the
// Last-Event-ID it resumes from, its response, and the SSE event ids the
// response carried (read from a copy of the stream as it arrives).
function httpTransport(url, token, requests) {
    const recording = async (input, init) => {
        const lastEventId = new Headers(init?.headers).get('last-event-id');
        const record = { method: init?.method ?? 'GET', lastEventId, response: null, eventIds: [] };
        requests?.push(record);
        const response = await fetch(input, init);
        record.response = response;
        if (!requests || !response.body || !response.headers.get('content-type')?.includes('text/event-stream')) {
            return response;
        }
        const [forClient, forRecord] = response.body.tee();
        readEventIds(forRecord, record.eventIds).catch(() => {});
        return new Response(forClient, { status: response.status, statusText: response.statusText, headers: response.headers });
    };
    return new StreamableHTTPClientTransport(new URL(url), {
        fetch: recording,
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
}

// Appends the `id:` of each SSE event of `stream` to `ids`.
async function readEventIds(stream, ids) {
    const decoder = new TextDecoder();
    let pending = '';
    for await (const chunk of stream) {
        pending += decoder.decode(chunk, { stream: true });
        const lines = pending.split('\n');
        pending = lines.pop();
        for (const line of lines) {
            if (line.startsWith('id:')) {
                ids.push(line.slice(3).trim());
            }
        }
    }
}

// Connects one more client to the HTTP server of `tp` with `token`; it is
// closed when test `t` ends.
export async function connectHttp(t, tp, token) {
    const client = new Client({ name: 'termpilot-e2e-ts-second', version: '1.0.0' });
    t.after(() => within(5_000, 'closing the second client', client.close()).catch(() => {}));
    await within(STARTUP_TIMEOUT_MS, 'connecting a second client', client.connect(httpTransport(tp.url, token)));
    return client;
}

// Starts `termpilot serve --http` and returns the URL it announces on stderr.
async function startHttp(args, stderr, cleanups) {
    const child = spawn(BIN, args, { env: serverEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    cleanups.push(async () => {
        if (child.exitCode === null && child.signalCode === null) {
            child.kill('SIGTERM');
            const stopped = await within(5_000, 'termpilot to stop', exited).then(
                () => true,
                () => false,
            );
            if (!stopped) {
                child.kill('SIGKILL');
                await within(5_000, 'termpilot to die', exited).catch(() => {});
            }
        }
    });
    const announced = new Promise((resolve, reject) => {
        let seen = '';
        child.stderr.on('data', (chunk) => {
            const text = chunk.toString();
            stderr.push(text);
            seen += text;
            // The whole line: stderr may come in pieces that split the address.
            const found = /serving MCP at (http:\/\/\S+)\r?\n/.exec(seen);
            if (found) {
                resolve(found[1]);
            }
        });
        child.once('exit', (code, signal) =>
            reject(new Error(`termpilot serve --http exited (${code ?? signal}) before serving: ${seen}`)),
        );
        child.once('error', reject);
    });
    return within(STARTUP_TIMEOUT_MS, 'termpilot serve --http to announce its address', announced);
}

// Calls `check` until it returns something truthy; fails after `ms`.
export async function poll(ms, what, check, intervalMs = 50) {
    const deadline = Date.now() + ms;
    let last;
    while (Date.now() < deadline) {
        last = await check();
        if (last) {
            return last;
        }
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
    throw new Error(`timed out after ${ms} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
}
