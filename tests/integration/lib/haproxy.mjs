// HAProxy in front of several daemons, configured from the shipped Kubernetes ingress
// (container/k8s/ingress.yaml): its backend snippet verbatim, and its haproxy.org annotations
// translated the way the HAProxy Kubernetes Ingress Controller translates them. An annotation
// this file does not know fails the test, so the ingress and the tested configuration cannot
// drift apart.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { parse } from '../../clients/node_modules/yaml/dist/index.js';

const ingressFile = join(dirname(fileURLToPath(import.meta.url)), '../../../container/k8s/ingress.yaml');
const haproxyBinary = ['/usr/sbin/haproxy', '/usr/bin/haproxy', '/usr/local/sbin/haproxy'].find(path => existsSync(path));
const pdeathsigWrapper = ['/usr/bin/setpriv', '/bin/setpriv'].find(path => existsSync(path));

export function haproxyMissing() {
    return haproxyBinary ? null : 'haproxy is not installed (./bin/cmcp deps installs it)';
}

// The ingress's annotations as HAProxy directives: {frontend: [...], backend: [...], server: '...'}.
export function ingressDirectives(ingress = parse(readFileSync(ingressFile, 'utf8'))) {
    const frontend = [];
    const backend = [];
    const serverOptions = [];
    let check = false;
    let checkInterval;
    for (const [name, value] of Object.entries(ingress.metadata.annotations ?? {})) {
        if (!name.startsWith('haproxy.org/'))
            continue;
        switch (name.slice('haproxy.org/'.length)) {
        case 'backend-config-snippet':
            backend.push(...value.split('\n').map(line => line.trim()).filter(Boolean));
            break;
        case 'timeout-server':
            backend.push(`timeout server ${value}`);
            break;
        case 'timeout-client':
            frontend.push(`timeout client ${value}`);
            break;
        case 'check':
            check = value === 'true' || value === 'enabled';
            break;
        case 'check-interval':
            checkInterval = value;
            break;
        default:
            throw new Error(`${ingressFile}: the annotation ${name} has no translation in ${fileURLToPath(import.meta.url)}`);
        }
    }
    if (check)
        serverOptions.push('check', ...(checkInterval ? [`inter ${checkInterval}`] : []));
    return { frontend, backend, serverOptions };
}

// A loopback port nobody listens on right now (HAProxy needs a fixed one).
async function freePort() {
    const server = createServer();
    await new Promise(resolve => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address();
    await new Promise(resolve => server.close(resolve));
    return port;
}

function configuration({ port, servers, statsSocket, directives }) {
    // The controller's defaults for what the ingress does not set: HTTP mode, round robin.
    return [
        'global',
        `    stats socket ${statsSocket} level admin`,
        '    log stderr format raw local0 info',
        'defaults',
        '    mode http',
        '    log global',
        '    option httplog',
        '    timeout connect 5s',
        '    timeout client 60s',
        '    timeout server 60s',
        'frontend mcp',
        `    bind 127.0.0.1:${port}`,
        ...directives.frontend.map(line => `    ${line}`),
        '    default_backend cmcpd',
        'backend cmcpd',
        '    balance roundrobin',
        ...directives.backend.map(line => `    ${line}`),
        ...servers.map(({ name, port: serverPort }) =>
            `    server ${name} 127.0.0.1:${serverPort} ${directives.serverOptions.join(' ')}`),
        '',
    ].join('\n');
}

// One command on HAProxy's stats socket; resolves with its answer.
function statsCommand(socketPath, command) {
    return new Promise((resolve, reject) => {
        const socket = connect(socketPath);
        let answer = '';
        socket.setEncoding('utf8');
        socket.setTimeout(3000, () => socket.destroy(new Error(`stats socket: no answer to ${command}`)));
        socket.on('connect', () => socket.write(`${command}\n`));
        socket.on('data', chunk => { answer += chunk; });
        socket.on('end', () => resolve(answer));
        socket.on('error', reject);
    });
}

// Starts HAProxy on a loopback port in front of `servers` ([{name, port}]); resolves once every
// server is UP (the health checks passed).
export async function startHaproxy(servers, { timeoutMs = 10_000 } = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'cmcp-haproxy-'));
    const statsSocket = join(dir, 'stats.sock');
    const port = await freePort();
    const configFile = join(dir, 'haproxy.cfg');
    writeFileSync(configFile, configuration({ port, servers, statsSocket, directives: ingressDirectives() }));

    const argv = ['-db', '-f', configFile];
    const [command, args] = pdeathsigWrapper
        ? [pdeathsigWrapper, ['--pdeathsig', 'KILL', '--', haproxyBinary, ...argv]]
        : [haproxyBinary, argv];
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', chunk => { stderr += chunk; });
    let exited = null;
    const gone = new Promise(resolve => child.on('exit', (code, signal) => { exited = { code, signal }; resolve(exited); }));
    process.on('exit', () => { try { child.kill('SIGKILL'); } catch { /* gone */ } });

    // {name: 'UP' | 'DOWN' | ...} from `show stat` (CSV: pxname, svname, ..., status is field 17).
    const serverStates = async () => {
        const csv = await statsCommand(statsSocket, 'show stat');
        const states = {};
        for (const line of csv.split('\n')) {
            const fields = line.split(',');
            if (fields[0] === 'cmcpd' && fields[1] !== 'BACKEND' && fields[1] !== 'FRONTEND')
                states[fields[1]] = fields[17];
        }
        return states;
    };

    const proxy = {
        port,
        url: `http://127.0.0.1:${port}/mcp`,
        configText: () => readFileSync(configFile, 'utf8'),
        stderr: () => stderr,
        serverStates,
        // Resolves once `name`'s state matches `pattern` (e.g. /^DOWN/), or rejects after `ms`.
        async waitForState(name, pattern, ms = timeoutMs) {
            const deadline = Date.now() + ms;
            let states = {};
            while (Date.now() < deadline) {
                if (exited)
                    throw new Error(`haproxy exited (${JSON.stringify(exited)}):\n${stderr}`);
                states = await serverStates().catch(() => ({}));
                if (pattern.test(states[name] ?? ''))
                    return states;
                await new Promise(resolve => setTimeout(resolve, 50));
            }
            throw new Error(`haproxy: server ${name} not ${pattern} within ${ms} ms (${JSON.stringify(states)})\n${stderr}`);
        },
        async stop() {
            if (!exited) {
                child.kill('SIGTERM');
                const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
                await gone;
                clearTimeout(timer);
            }
            rmSync(dir, { recursive: true, force: true });
        },
    };
    try {
        for (const { name } of servers)
            await proxy.waitForState(name, /^UP/);
    } catch (error) {
        await proxy.stop();
        throw error;
    }
    return proxy;
}
