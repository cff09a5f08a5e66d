// A job's network (PYTHON_NETWORK=true) is a network namespace of its own whose one way out is
// the daemon's egress gate, an HTTP proxy at HTTP_PROXY: nothing else leaves it. A target server
// on the host's loopback stands for everything a job must not reach directly (the host's
// services, the daemon's own /mcp); with JOB_NETWORK_ALLOW_PRIVATE and the target allow-listed it
// stands for an allowed public site. Every refusal the call met is in its sandbox_refusals.
// Jobs switch to host uids, so this needs root (CI runs as root); without it the suite skips.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from '../integration/lib/sdk.mjs';
import { eventually, startDaemon, withDiagnostics } from '../integration/lib/daemon.mjs';

const needsRoot = process.getuid() === 0 ? {} : { skip: 'needs root: jobs switch to host uids of the pool (CI runs as root)' };

// Python run in the job: each probe's outcome as "ok:..." or "err:<exception>".
const probes = (targetPort, daemonPort) => `
import os, socket
def attempt(f):
    try:
        return 'ok:' + str(f())
    except Exception as e:
        return 'err:' + type(e).__name__ + ':' + str(e)
def connect(host, port):
    socket.create_connection((host, port), timeout=3).close()
    return 'connected'
def proxy(request):
    s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
    s.sendall(request)
    data = b''
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    return data.decode('latin1')
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b'x', ('8.8.8.8', 53))
    return 'sent'
_ = {
    'proxy_env': os.environ.get('HTTP_PROXY'),
    'direct_target': attempt(lambda: connect('127.0.0.1', ${targetPort})),
    'direct_daemon': attempt(lambda: connect('127.0.0.1', ${daemonPort})),
    'udp': attempt(udp),
    'raw': attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)),
    'connect_private': attempt(lambda: proxy(b'CONNECT 10.0.0.5:22 HTTP/1.1\\r\\nHost: 10.0.0.5:22\\r\\n\\r\\n')),
    'connect_hex': attempt(lambda: proxy(b'CONNECT 0x7f000001:${targetPort} HTTP/1.1\\r\\n\\r\\n')),
    'connect_localhost': attempt(lambda: proxy(b'CONNECT localhost:${daemonPort} HTTP/1.1\\r\\n\\r\\n')),
    'connect_nul': attempt(lambda: proxy(b'CONNECT exa\\x00mple.com:443 HTTP/1.1\\r\\n\\r\\n')),
    'get_daemon': attempt(lambda: proxy(b'GET http://127.0.0.1:${daemonPort}/mcp HTTP/1.1\\r\\n\\r\\n')),
    'control': attempt(lambda: proxy(b'CONNECT exa\\x01mple.com:443 HTTP/1.1\\r\\n\\r\\n')),
    # Loopback in the other notations: each must be refused, none may reach the target.
    'notations': [attempt(lambda: proxy(b'CONNECT ' + host + b':${targetPort} HTTP/1.1\\r\\n\\r\\n'))
                  for host in [b'[::1]', b'127.1', b'0177.0.0.1', b'2130706433', b'[::ffff:127.0.0.1]', b'0.0.0.0']],
}
`;

describe('job networks through the egress gate', needsRoot, () => {
    let target;
    let targetPort;
    const received = [];

    before(async () => {
        // A raw TCP server: what reaches it is recorded as bytes, and it answers "hello".
        target = net.createServer(socket => {
            let bytes = '';
            socket.on('data', chunk => {
                bytes += chunk.toString('latin1');
                if (bytes.includes('\r\n\r\n')) {
                    received.push(bytes);
                    socket.end('hello from the target\n');
                }
            });
            socket.on('error', () => {});
        });
        await new Promise(resolve => target.listen(0, '127.0.0.1', resolve));
        targetPort = target.address().port;
    });

    after(async () => { await new Promise(resolve => target.close(resolve)); });

    async function withDaemon(settings, body) {
        const scratch = mkdtempSync(join(tmpdir(), 'cmcp-job-network-'));
        const auditLog = join(scratch, 'audit.jsonl');
        const daemon = await startDaemon({ fixtures: false, settings: { PYTHON_NETWORK: 'true', AUDIT_LOG: auditLog, ...settings } })
            .catch(error => { rmSync(scratch, { recursive: true, force: true }); throw error; });
        daemon.auditLines = () => readFileSync(auditLog, 'utf8').split('\n').filter(Boolean).map(line => JSON.parse(line));
        const client = new Client({ name: 'job-network', version: '1.0.0' });
        try {
            await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
            await withDiagnostics(daemon, () => body(async (code, extra = {}) => {
                const result = await client.callTool({ name: 'system_run_python', arguments: { code, ...extra } }, undefined, { timeout: 60_000 });
                assert.ok(!result.isError, JSON.stringify(result.structuredContent ?? result.content));
                return result.structuredContent;
            }, daemon));
        } finally {
            await client.close().catch(() => {});
            await daemon.stop();
            rmSync(scratch, { recursive: true, force: true });
        }
    }

    test('nothing leaves but through the gate, and the gate refuses every non-public target', { timeout: 60_000 }, () => withDaemon(
        { JOB_NETWORK_ALLOWED_DOMAINS: `localhost,127.0.0.1,0x7f000001` },
        async (run, daemon) => {
            received.length = 0;
            const out = await run(probes(targetPort, daemon.port));
            const r = out.result;
            assert.equal(r.proxy_env, 'http://127.0.0.1:3128');
            // Own network namespace: the host's loopback (its services, the daemon) is not there.
            assert.match(r.direct_target, /^err:ConnectionRefusedError/);
            assert.match(r.direct_daemon, /^err:ConnectionRefusedError/);
            assert.match(r.udp, /^err:OSError:.*(unreachable|Network)/);
            assert.match(r.raw, /^err:PermissionError/);
            // Through the gate, even allow-listed: a non-public address in any notation, and a
            // name that resolves to one, are refused with the rule named.
            assert.match(r.connect_private, /^ok:HTTP\/1\.1 403 [^]*refused \(JOB_NETWORK_ALLOWED_DOMAINS\)/);
            assert.match(r.connect_hex, /^ok:HTTP\/1\.1 403 [^]*refused \(JOB_NETWORK_ALLOW_PRIVATE\): 127\.0\.0\.1 is a non-public address/);
            assert.match(r.connect_localhost, /^ok:HTTP\/1\.1 403 [^]*refused \(JOB_NETWORK_ALLOW_PRIVATE\): localhost resolves to (127\.0\.0\.1|::1)/);
            assert.match(r.connect_nul, /^ok:HTTP\/1\.1 403 [^]*refused \(URL\)/);
            assert.match(r.get_daemon, /^ok:HTTP\/1\.1 403 [^]*JOB_NETWORK_ALLOW_PRIVATE/);
            assert.match(r.control, /^ok:HTTP\/1\.1 403 [^]*refused \(URL\)/);
            for (const answer of r.notations)
                assert.match(answer, /^ok:HTTP\/1\.1 403 [^]*refused \(JOB_NETWORK_(ALLOWED_DOMAINS|ALLOW_PRIVATE)\)/);
            assert.deepEqual(received, [], 'nothing reached the target');
            // The call says what the sandbox refused it, by rule and target.
            const refusals = out.sandbox_refusals;
            assert.ok(Array.isArray(refusals), JSON.stringify(out));
            const egress = refusals.filter(x => x.layer === 'egress');
            assert.ok(egress.some(x => x.target === '10.0.0.5:22' && x.rule === 'JOB_NETWORK_ALLOWED_DOMAINS'
                && /^the sandbox refused a connection to 10\.0\.0\.5:22: /.test(x.message)), JSON.stringify(egress));
            assert.ok(egress.some(x => x.target === `localhost:${daemon.port}` && x.rule === 'JOB_NETWORK_ALLOW_PRIVATE'), JSON.stringify(egress));
            assert.match(out.message, /the sandbox refused a connection to 10\.0\.0\.5:22/);
            // And so does the call's audit record.
            assert.ok(await eventually(() => daemon.auditLines().some(record => JSON.stringify(record).includes(
                '{"layer":"egress","rule":"JOB_NETWORK_ALLOWED_DOMAINS","target":"10.0.0.5:22"}'))), 'the audit record lists the refusal');
        }));

    test('with the default allow-list (empty) nothing is allowed', { timeout: 60_000 }, () => withDaemon({},
        async run => {
            const out = await run(`
import urllib.request
try:
    urllib.request.urlopen('http://example.com/', timeout=10)
    _ = 'fetched'
except Exception as e:
    _ = str(e)
`);
            assert.match(out.result, /403/);
            assert.deepEqual(out.sandbox_refusals.map(x => [x.rule, x.target]), [['JOB_NETWORK_ALLOWED_DOMAINS', 'http://example.com/']]);
        }));

    test('an allowed target is reached, and a CONNECT inside the tunnel is only bytes to it', { timeout: 60_000 }, () => withDaemon(
        { JOB_NETWORK_ALLOWED_DOMAINS: `127.0.0.1:${targetPort}`, JOB_NETWORK_ALLOW_PRIVATE: 'true' },
        async run => {
            received.length = 0;
            const out = await run(`
import socket
s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
s.sendall(b'CONNECT 127.0.0.1:${targetPort} HTTP/1.1\\r\\n\\r\\n')
head = b''
while b'\\r\\n\\r\\n' not in head:
    head += s.recv(1)
s.sendall(b'CONNECT 10.0.0.5:22 HTTP/1.1\\r\\n\\r\\n')
rest = b''
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    rest += chunk
_ = [head.decode(), rest.decode()]
`);
            assert.match(out.result[0], /^HTTP\/1\.1 200 /);
            assert.equal(out.result[1], 'hello from the target\n');
            assert.deepEqual(received, ['CONNECT 10.0.0.5:22 HTTP/1.1\r\n\r\n']);
            assert.equal(out.sandbox_refusals, undefined);
        }));

    // A tunnel's far end that records every byte it gets, per connection, and hangs up once a
    // TLS record has come (it speaks no TLS: the client's handshake then fails, as it would
    // against a refused tunnel, and only what reached it tells the two apart).
    async function withRawTarget(body) {
        const got = [];
        const server = net.createServer(socket => {
            let bytes = Buffer.alloc(0);
            socket.on('data', chunk => {
                bytes = Buffer.concat([bytes, chunk]);
                if (bytes.length >= 5)
                    socket.destroy();
            });
            socket.on('close', () => { if (bytes.length > 0) got.push(bytes.toString('latin1')); });
            socket.on('error', () => {});
        });
        await new Promise(resolve => server.listen(0, '127.0.0.1', resolve));
        try {
            return await body(server.address().port, got);
        } finally {
            await new Promise(resolve => server.close(resolve));
        }
    }

    test("a tunnel's TLS server name must be the host it was granted for (no fronting)", { timeout: 60_000 }, () => withRawTarget(
        (rawPort, got) => withDaemon(
            { JOB_NETWORK_ALLOWED_DOMAINS: `127.0.0.1:${rawPort},localhost:${rawPort}`, JOB_NETWORK_ALLOW_PRIVATE: 'true' },
            async run => {
                const out = await run(`
import socket, ssl
def tls_through_tunnel(target, name):
    s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
    s.sendall(b'CONNECT ' + target + b' HTTP/1.1\\r\\n\\r\\n')
    head = b''
    while b'\\r\\n\\r\\n' not in head:
        head += s.recv(1)
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        context.wrap_socket(s, server_hostname=name)
        outcome = 'handshake done'
    except Exception as e:
        outcome = type(e).__name__
    return head.split(b'\\r\\n')[0].decode() + ' / ' + outcome
_ = {
    'fronted': tls_through_tunnel(b'localhost:${rawPort}', 'evil.example'),
    'name_on_address': tls_through_tunnel(b'127.0.0.1:${rawPort}', 'evil.example'),
    'matching': tls_through_tunnel(b'localhost:${rawPort}', 'localhost'),
}
`);
                const r = out.result;
                assert.ok(r, JSON.stringify(out));
                // Each tunnel was granted (200); the fronted ones were closed under the client.
                for (const key of ['fronted', 'name_on_address', 'matching'])
                    assert.match(r[key], /^HTTP\/1\.1 200 Connection Established \/ (SSL|Connection|OSError)/, `${key}: ${r[key]}`);
                // Only the hello that names its tunnel's host reached the target.
                const names = got.map(bytes => ['evil.example', 'localhost'].find(name => bytes.includes(name)) ?? 'no name');
                assert.deepEqual(names, ['localhost'], 'the hellos that reached the target');
                assert.equal(got[0].charCodeAt(0), 0x16, 'a TLS handshake record');
                assert.ok(got[0].includes('localhost') && !got.some(bytes => bytes.includes('evil.example')));
                const egress = (out.sandbox_refusals ?? []).filter(x => x.layer === 'egress');
                assert.deepEqual(egress.map(x => [x.rule, x.target]), [
                    ['tls_server_name', `localhost:${rawPort}`],
                    ['tls_server_name', `127.0.0.1:${rawPort}`],
                ], JSON.stringify(out.sandbox_refusals));
                assert.match(egress[0].message, /the tunnel was granted for localhost, but its TLS ClientHello names 'evil\.example'/);
                assert.match(egress[1].message, /granted for the address 127\.0\.0\.1, but its TLS ClientHello names 'evil\.example'/);
            })));

    test('a tunnel nothing moves on is closed after EGRESS_IDLE_SECONDS', { timeout: 60_000 }, () => withRawTarget(
        rawPort => withDaemon(
            { JOB_NETWORK_ALLOWED_DOMAINS: `127.0.0.1:${rawPort}`, JOB_NETWORK_ALLOW_PRIVATE: 'true', EGRESS_IDLE_SECONDS: '1' },
            async run => {
                const out = await run(`
import socket, time
s = socket.create_connection(('127.0.0.1', 3128), timeout=20)
s.sendall(b'CONNECT 127.0.0.1:${rawPort} HTTP/1.1\\r\\n\\r\\n')
head = b''
while b'\\r\\n\\r\\n' not in head:
    head += s.recv(1)
start = time.monotonic()
rest = s.recv(100)
_ = [head.split(b'\\r\\n')[0].decode(), rest.decode(), round(time.monotonic() - start, 2)]
`);
                const [status, rest, seconds] = out.result;
                assert.match(status, /^HTTP\/1\.1 200 /);
                assert.equal(rest, '', 'the gate closed the tunnel');
                assert.ok(seconds >= 0.9 && seconds < 10, `closed after ${seconds} s`);
            })));

    test('a job stopped by its memory or time limit is told so', { timeout: 60_000 }, () => withDaemon({ PYTHON_MEMORY_LIMIT: 64 },
        async run => {
            const memory = await run(`data = b'x' * (256 << 20)\n_ = len(data)`);
            assert.equal(memory.oom_killed, true, JSON.stringify(memory));
            assert.deepEqual(memory.sandbox_refusals.map(x => [x.layer, x.rule]), [['memory', 'memory_bytes']]);
            assert.match(memory.sandbox_refusals[0].message, /memory limit \(64 MiB\) was reached/);
            const time = await run(`import time\ntime.sleep(30)`, { timeout: 1 });
            assert.equal(time.timed_out, true);
            assert.deepEqual(time.sandbox_refusals.map(x => [x.layer, x.rule]), [['time', 'timeout']]);
        }));

    // The pids controller must be writable for the daemon to give jobs a pids cgroup.
    const pidsWritable = (() => {
        for (const root of ['/sys/fs/cgroup/pids', '/sys/fs/cgroup']) {
            const probe = `${root}/cmcp-pids-probe-${process.pid}`;
            try {
                if (root === '/sys/fs/cgroup' && !readFileSync(`${root}/cgroup.controllers`, 'utf8').split(/\s+/).includes('pids'))
                    continue;
                mkdirSync(probe);
                rmdirSync(probe);
                return true;
            } catch { /* not this one */ }
        }
        return false;
    })();
    test('a job over its pids limit is told so', { timeout: 60_000, skip: pidsWritable ? false : 'no writable pids cgroup controller here: the job has RLIMIT_NPROC only, which the kernel does not count' },
        () => withDaemon({}, async run => {
            const out = await run(`
import os, time
failed = 0
for i in range(400):
    try:
        pid = os.fork()
    except OSError:
        failed += 1
        break
    if pid == 0:
        time.sleep(3)
        os._exit(0)
_ = failed
`);
            assert.equal(out.result, 1);
            assert.ok(out.sandbox_refusals.some(x => x.layer === 'pids' && /process limit/.test(x.message)), JSON.stringify(out.sandbox_refusals));
        }));
});
