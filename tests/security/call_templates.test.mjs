// Calls forked from a template (JOB_CALL_TEMPLATES, jail/template.h) attack the template,
// the cell they were forked from and each other: each call must have a host uid, a cgroup, a
// /tmp and a view of processes of its own, see nothing of the template, its cell, a sibling
// call or the call before it, and reach none of them by signal, ptrace or /proc/<pid>/mem. /health must show the calls served by the template, so that none of this
// passes on cold starts. Jobs switch to host uids, so this needs root (CI runs as root);
// without it the suite skips, saying so.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from '../integration/lib/sdk.mjs';
import { eventually, startDaemon, withDiagnostics } from '../integration/lib/daemon.mjs';
import { processesOf } from '../integration/lib/processes.mjs';

const needsRoot = process.getuid() === 0 ? {} : { skip: 'needs root: jobs switch to host uids of the pool (CI runs as root)' };
const UID_BASE = 120800;
const UID_COUNT = 32;

// The processes of this daemon's templates with cmcp-jail --serve-template's command line: the
// monitors (host root, children of the daemon) and the templates inside the jails (a pool uid,
// children of a monitor). Their cells run bash or python3 (they exec it once).
function templateProcesses() {
    const found = [];
    for (const pid of readdirSync('/proc').filter(name => /^\d+$/.test(name))) {
        try {
            const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
            if (!cmdline.includes('--serve-template') || !cmdline.includes(`${UID_BASE}:${UID_COUNT}`))
                continue;
            const status = readFileSync(`/proc/${pid}/status`, 'utf8');
            const uid = Number(/^Uid:\s+(\d+)/m.exec(status)[1]);
            const ppid = Number(/^PPid:\s+(\d+)/m.exec(status)[1]);
            const socket = cmdline[cmdline.indexOf('--serve-template') + 1];
            found.push({ pid: Number(pid), ppid, uid, socket, kind: /\/command-\d+\.sock$/.test(socket) ? 'command' : 'python' });
        } catch { /* gone meanwhile */ }
    }
    return found;
}

// The monitors and the templates themselves, which live as long as their template.
function templateCores(daemonPid) {
    const all = templateProcesses();
    const monitors = all.filter(p => p.ppid === daemonPid);
    const templates = all.filter(p => p.uid !== 0 && monitors.some(m => m.pid === p.ppid));
    return { monitors, templates };
}

describe('calls forked from a template', needsRoot, () => {
    let sandbox;
    let daemon;
    let client;

    const call = async (name, args) => {
        const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
        assert.ok(!result.isError, `${name} failed to run: ${JSON.stringify(result.content)}`);
        return result.structuredContent;
    };
    const command = (text, extra = {}) => call('system_run_command', { command: text, ...extra });
    const python = (code, extra = {}) => call('system_run_python', { code, ...extra });
    const health = async () => (await (await fetch(`${daemon.base}/health`)).json());
    const templates = async () => {
        const body = await health();
        return body.call_templates ?? body.status?.call_templates;
    };
    const served = async kind => (await templates())?.[kind]?.calls ?? 0;
    // A forked call mounts its own /tmp over the template's: two /tmp mounts in its
    // mountinfo, where a cold job has one. The mark that it did not fall back to a cold start.
    const tmpMounts = mountinfo => mountinfo.split('\n').filter(line => line.split(' ')[4] === '/tmp').length;
    const forked = async () => tmpMounts((await command('cat /proc/self/mountinfo')).stdout) === 2;
    const running = async kind => (await eventually(async () => (await templates())?.[kind]?.state === 'running',
                                                    { timeoutMs: 10_000 }));

    before(async () => {
        sandbox = mkdtempSync(join(tmpdir(), 'cmcp-templates-'));
        chmodSync(sandbox, 0o755);
        daemon = await startDaemon({
            fixtures: false,
            settings: {
                SANDBOX_ROOT: sandbox, SANDBOX_UID_BASE: UID_BASE, SANDBOX_UID_COUNT: UID_COUNT,
                JOB_CALL_TEMPLATES: true, PYTHON_MEMORY_LIMIT: 64, ADMIN_SOCKET: join(sandbox, 'admin.sock'),
                BASH_ALLOWED_COMMANDS: 'echo,cat,ls,sleep,kill,test,[,id,stat,env,touch,wc',
                BASH_TIMEOUT_DEFAULT: 10, BASH_TIMEOUT_MAX: 10, PYTHON_TIMEOUT_DEFAULT: 10, PYTHON_TIMEOUT_MAX: 10,
            },
        });
        client = new Client({ name: 'templates-test', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
        assert.ok(await running('command'), `the command template never ran: ${JSON.stringify(await templates())}`);
        assert.ok(await running('python'), `the python template never ran: ${JSON.stringify(await templates())}`);
        // The jobs kept waiting (BASH_WARM_JOBS, PYTHON_WARM_JOBS) are forks of the templates,
        // but those started before a template listened were built cold: used up here.
        for (let i = 0; i < 2; ++i) {
            await command('echo warm-up');
            await python('pass');
        }
    });

    after(async () => {
        await client?.close();
        await daemon?.stop();
        rmSync(sandbox, { recursive: true, force: true });
    });

    test('/health shows both templates, and calls are served by them', () => withDiagnostics(daemon, async () => {
        const before = await served('command');
        const hi = await command('echo hi');
        assert.equal(hi.stdout, 'hi\n');
        assert.equal(hi.exit_code, 0);
        assert.equal(await served('command'), before + 1, 'the call did not fork from the template');
        assert.ok(await forked(), 'the call fell back to a cold start');
        const beforePython = await served('python');
        assert.equal((await python('print(1)')).output, '1\n');
        assert.equal(await served('python'), beforePython + 1);
        // A call with a working directory starts cold, and works.
        await python("import os\nos.makedirs('sub', exist_ok=True)");
        const cold = await command('cat /proc/self/mountinfo', { working_dir: 'sub' });
        assert.equal(tmpMounts(cold.stdout), 1, 'a call with a working_dir forked from the template');
    }));

    test('each call is uid 1000 inside, a pool uid of its own outside, not the template\'s', () => withDiagnostics(daemon, async () => {
        const template = templateProcesses().filter(p => p.uid !== 0);
        assert.ok(template.length >= 2, `the templates run as pool uids: ${JSON.stringify(templateProcesses())}`);
        const script = "id -u; cat /proc/self/uid_map; sleep 1";
        const [a, b] = await Promise.all([command(script), command(script)]);
        const hostUid = out => Number(out.split('\n')[1].trim().split(/\s+/)[1]);
        for (const out of [a.stdout, b.stdout]) {
            assert.equal(out.split('\n')[0], '1000');
            // Exactly one uid mapped: no other uid of the pool can be reached from inside.
            assert.equal(out.split('\n').filter(line => /^\s*\d+\s+\d+\s+\d+\s*$/.test(line)).length, 1, out);
            assert.match(out, /^\s*1000\s+\d+\s+1\s*$/m, out);
        }
        assert.notEqual(hostUid(a.stdout), hostUid(b.stdout), 'two calls at once share a host uid');
        for (const uid of [hostUid(a.stdout), hostUid(b.stdout)]) {
            assert.ok(uid >= UID_BASE && uid < UID_BASE + UID_COUNT, `uid ${uid} is not of the pool`);
            assert.ok(!template.some(p => p.uid === uid), `a call runs as a template's uid ${uid}`);
        }
    }));

    test('a call sees only its own processes, and a fresh /tmp, /dev/shm and environment', () => withDiagnostics(daemon, async () => {
        const leftovers = await command('echo secret > /tmp/left; echo secret > /dev/shm/left; LEFT=1; ls /tmp');
        assert.equal(leftovers.stdout, 'left\n');
        const next = await command('ls -A /tmp /dev/shm; env; ls /proc/self/fd | wc -l; ls -d /proc/[0-9]* | wc -l');
        assert.doesNotMatch(next.stdout, /left|LEFT|CMCP_COMMAND/, next.stdout);
        // The shell and `ls`/`wc` of the pipeline are all that runs in this call's pid namespace.
        const lines = next.stdout.trim().split('\n');
        const processes = Number(lines.at(-1));
        assert.ok(processes <= 4, `the call sees ${processes} processes: ${next.stdout}`);
        // 0, 1, 2 and the directory ls reads.
        assert.ok(Number(lines.at(-2)) <= 4, `descriptors left open: ${next.stdout}`);
        const pid1 = await command('cat /proc/1/cmdline');
        assert.doesNotMatch(pid1.stdout, /serve-template|cmcp-jail/, 'pid 1 of the call is the template');
    }));

    test('a call cannot signal, ptrace or read the template', () => withDiagnostics(daemon, async () => {
        const { monitors, templates: inside } = templateCores(daemon.pid);
        const targets = [...monitors, ...inside];
        assert.ok(monitors.length === 2 && inside.length === 2, JSON.stringify(templateProcesses()));
        const pids = targets.map(t => t.pid);
        // Host pids mean nothing in the call's pid namespace; inside, the call probes every pid
        // it can name, including 1 and the numbers the template would have in its own namespace.
        const attack = [
            'import ctypes, os, signal',
            'libc = ctypes.CDLL(None, use_errno=True)',
            `pids = ${JSON.stringify(pids)} + list(range(1, 64))`,
            'me = os.getpid()',
            'for pid in pids:',
            '    if pid == me: continue',
            '    try:',
            '        os.kill(pid, 0); print("signal", pid)',
            '    except OSError: pass',
            '    if libc.ptrace(16, pid, 0, 0) == 0: print("ptrace", pid)',  // PTRACE_ATTACH
            '    try:',
            '        with open(f"/proc/{pid}/mem", "rb") as f: f.read(1); print("mem", pid)',
            '    except OSError: pass',
            'print("done")',
        ].join('\n');
        const result = await python(attack);
        assert.equal(result.output, 'done\n', `a call reached another process: ${result.output}${result.error}`);
        for (const { pid } of targets)
            assert.ok(readFileSync(`/proc/${pid}/status`, 'utf8'), `template process ${pid} is gone`);
        // And the template still serves calls.
        const before = await served('python');
        assert.equal((await python('print(2)')).output, '2\n');
        assert.equal(await served('python'), before + 1);
    }));

    test('a call cannot serve as its cell: the zygote library refuses it, with nothing to serve', () => withDiagnostics(daemon, async () => {
        // The library is mapped in every call (a fork of its cell): reached by its name, its
        // serve function must refuse (a call is no cell), and the call holds no socket to serve.
        const result = await python([
            'import ctypes, os',
            'library = ctypes.CDLL("libcmcp-zygote.so")',
            'serve = library.cmcp_cell_serve',
            'serve.restype = ctypes.c_long',
            'payload = ctypes.c_void_p()',
            'print("serve", serve(ctypes.byref(payload)))',
            'print("fds", sorted(int(fd) for fd in os.listdir("/proc/self/fd")))',
        ].join('\n'));
        assert.match(result.output, /^serve -1$/m, `${result.output}${result.error}`);
        // 0, 1, 2, the result channel (3) and the directory being listed.
        assert.match(result.output, /^fds \[0, 1, 2, 3, \d+\]$/m, result.output);
        assert.match(result.error ?? '', /not a template's cell/);
        const before = await served('python');
        assert.equal((await python('print(3)')).output, '3\n');
        assert.equal(await served('python'), before + 1);
    }));

    test('a call cannot see, signal or outlive-kill a sibling call', () => withDiagnostics(daemon, async () => {
        // The sibling's sleep has an argument no other process has, to be found by.
        const sibling = command('sleep 2.345; echo sibling-alive-marker');
        await new Promise(resolve => setTimeout(resolve, 500));
        const attack = await python([
            'import os, signal',
            'seen = [p for p in os.listdir("/proc") if p.isdigit()]',
            'found = []',
            'for p in seen:',
            '    try:',
            '        if b"2.345" in open(f"/proc/{p}/cmdline", "rb").read(): found.append(p)',
            '    except OSError: pass',
            'print("found", found)',
            'try:',
            '    os.kill(-1, signal.SIGKILL)',
            'except OSError as e:',
            '    print("kill -1:", e.errno)',
        ].join('\n'));
        assert.match(attack.output, /^found \[\]$/m, attack.output);
        const survived = await sibling;
        assert.equal(survived.stdout, 'sibling-alive-marker\n', JSON.stringify(survived));
    }));

    test('the time limit kills the whole tree, in the call\'s own cgroup, with its accounting', () => withDiagnostics(daemon, async () => {
        const started = Date.now();
        const result = await command('(sleep 30 &) ; sleep 30 & cat /proc/self/uid_map; cat /proc/self/cgroup; sleep 30', { timeout: 1 });
        assert.equal(result.timed_out, true, JSON.stringify(result));
        assert.ok(Date.now() - started < 8000);
        const uid = Number(result.stdout.trim().split('\n')[0].trim().split(/\s+/)[1]);
        // Its own cgroup namespace: the call sees its cgroup as the root.
        assert.match(result.stdout, /^0::\/$/m, result.stdout);
        assert.ok(await eventually(() => processesOf(uid).length === 0, { timeoutMs: 3000 }),
                  `processes of uid ${uid} outlived the call`);
        const busy = await python('x = 0\nfor i in range(3_000_000): x += i\nprint(x > 0)');
        assert.equal(busy.output, 'True\n');
        assert.ok(busy.cpu_ms > 0, `no CPU time accounted: ${JSON.stringify(busy)}`);
        const big = await python("b = bytearray(200 * 1024 * 1024)\nprint('allocated')");
        assert.ok(big.oom_killed || /MemoryError/.test(big.error ?? ''), JSON.stringify(big));
        // No cell's cgroup holds a process of the killed call any more.
        assert.ok(await eventually(() => {
            for (const root of ['/sys/fs/cgroup/cmcp', '/sys/fs/cgroup/unified/cmcp', '/sys/fs/cgroup/memory/cmcp']) {
                try {
                    for (const name of readdirSync(root).filter(name => /^cell-/.test(name)))
                        if (processesInCgroup(join(root, name)).some(pid => uidOf(pid) === uid))
                            return false;
                } catch { /* no such hierarchy */ }
            }
            return true;
        }, { timeoutMs: 3000 }), `a cgroup still holds processes of uid ${uid}`);
    }));

    test('a call that ends on its own takes every process it left running with it', () => withDiagnostics(daemon, async () => {
        // No kill follows such a call when its cgroup lists nothing: its processes must go with
        // the init of its pid namespace, detached or not, before its result comes.
        const before = await served('command');
        const started = Date.now();
        const result = await command('(sleep 30 &) ; sleep 30 & cat /proc/self/uid_map; echo ended');
        assert.equal(result.timed_out, false, JSON.stringify(result));
        assert.equal(result.exit_code, 0, JSON.stringify(result));
        assert.match(result.stdout, /ended\n$/, result.stdout);
        assert.ok(Date.now() - started < 8000, 'the call waited for the processes it left');
        assert.ok(await served('command') > before, 'the call was not forked from the template');
        const uid = Number(result.stdout.trim().split('\n')[0].trim().split(/\s+/)[1]);
        assert.ok(await eventually(() => processesOf(uid).length === 0, { timeoutMs: 3000 }),
                  `processes of uid ${uid} outlived the call`);
    }));

    test('a call finds nothing the call before it left in the same cell', () => withDiagnostics(daemon, async () => {
        // The calls of one cell follow each other in its pid namespace: plant, then look, until
        // the two ran in the same cell (the warmest idle cell takes the next call).
        const plant = () => python([
            'import ctypes, os, socket',
            'print(os.readlink("/proc/self/ns/pid"))',
            'print(open("/proc/self/uid_map").read().split()[1])',
            'os.makedirs("/tmp/locked/deep")',
            'open("/tmp/locked/deep/secret", "w").write("secret")',
            'os.chmod("/tmp/locked/deep", 0)',
            'os.chmod("/tmp/locked", 0)',
            'os.symlink("/workspace", "/tmp/link-to-workspace")',
            'os.mkfifo("/tmp/fifo")',
            'open("/dev/shm/secret", "w").write("secret")',
            'libc = ctypes.CDLL(None, use_errno=True)',
            'print(libc.shmget(0x5eed, 4096, 0o1666) >= 0)', // IPC_CREAT | 0666
            'if os.fork() == 0:',
            '    os.setsid()',
            '    if os.fork() == 0:',
            '        s = socket.socket(socket.AF_UNIX)',
            '        s.bind("\\0cmcp-left-behind")',
            '        s.listen()',
            '        import time',
            '        time.sleep(60)',
            '    os._exit(0)',
        ].join('\n'));
        const look = () => python([
            'import os, socket',
            'print(os.readlink("/proc/self/ns/pid"))',
            'print(sorted(os.listdir("/tmp")), sorted(os.listdir("/dev/shm")))',
            'print(len(open("/proc/sysvipc/shm").read().splitlines()) - 1)',
            's = socket.socket(socket.AF_UNIX)',
            'try:',
            '    s.connect("\\0cmcp-left-behind"); print("connected")',
            'except OSError:',
            '    print("refused")',
        ].join('\n'));
        let before, after;
        for (let attempt = 0; attempt < 5; ++attempt) {
            before = await plant();
            after = await look();
            if (before.output.split('\n')[0] === after.output.split('\n')[0])
                break;
        }
        const [cellBefore, uidBefore, shmMade] = before.output.split('\n');
        assert.equal(shmMade, 'True', `the planting call made no SysV segment: ${JSON.stringify(before)}`);
        const [cellAfter, scratch, segments, abstract] = after.output.split('\n');
        assert.equal(cellAfter, cellBefore, `no two calls ran in the same cell: ${before.output} / ${after.output}`);
        assert.equal(scratch, '[] []', `/tmp or /dev/shm kept what the call before left: ${after.output}`);
        assert.equal(segments, '0', `a SysV segment of the call before is visible: ${after.output}`);
        assert.equal(abstract, 'refused', after.output);
        assert.ok(await eventually(() => processesOf(Number(uidBefore)).length === 0, { timeoutMs: 3000 }),
                  `processes of the planting call (uid ${uidBefore}) outlived it`);
    }));

    test('a live change of the allowed commands retires the template, and its calls in flight finish', () => withDiagnostics(daemon, async () => {
        const old = (await templates()).command.socket;
        const inFlight = command('sleep 2; echo finished-under-the-old-template');
        await new Promise(resolve => setTimeout(resolve, 500));
        await setSetting(join(sandbox, 'admin.sock'), 'BASH_ALLOWED_COMMANDS', 'echo,cat,ls,sleep,test,[,id,stat,env,touch,wc,date');
        assert.ok(await running('command'));
        const now = (await templates()).command;
        assert.notEqual(now.socket, old, 'the template was not replaced');
        // The new jail has date linked and lets it execute; the old one had no date at all.
        const dated = await command('date +%Y');
        assert.match(dated.stdout, /^\d{4}\n$/, JSON.stringify(dated));
        assert.ok(await forked(), 'the call after the change did not fork from the new template');
        assert.equal((await inFlight).stdout, 'finished-under-the-old-template\n');
        assert.ok(await eventually(() => !templateProcesses().some(p => p.socket.endsWith(`/${old}`)), { timeoutMs: 5000 }),
                  'the retired template is still running');
    }));

    test('a dead template is replaced, and the call meanwhile starts cold', () => withDiagnostics(daemon, async () => {
        const monitor = templateCores(daemon.pid).monitors.find(p => p.kind === 'command');
        assert.ok(monitor, JSON.stringify(templateProcesses()));
        process.kill(monitor.pid, 'SIGKILL');
        await eventually(async () => (await templates())?.command?.state === 'stopped', { timeoutMs: 3000 });
        // A SIGKILLed jail cannot remove its cgroup: the daemon does.
        assert.ok(await eventually(() => cgroupsNamed(`job-${monitor.pid}`).length === 0, { timeoutMs: 3000 }),
                  `the killed template's cgroups are left: ${cgroupsNamed(`job-${monitor.pid}`)}`);
        // The job kept waiting, a fork of that template, died with it: the daemon learns so
        // from its own report, a moment later.
        await new Promise(resolve => setTimeout(resolve, 500));
        // Answered, not hung, though no template runs.
        const meanwhile = await command('echo meanwhile');
        assert.equal(meanwhile.stdout, 'meanwhile\n');
        // Replaced (not more often than every few seconds).
        assert.ok(await eventually(async () => {
            await command('echo');
            const status = (await templates())?.command;
            return status?.state === 'running' && status.starts >= 2;
        }, { timeoutMs: 15_000, intervalMs: 500 }), JSON.stringify(await templates()));
        const before = await served('command');
        assert.equal((await command('echo again')).stdout, 'again\n');
        assert.equal(await served('command'), before + 1);
        // The new template arms its calls ahead; one that comes before they are ready starts cold.
        assert.ok(await eventually(forked, { timeoutMs: 5000, intervalMs: 200 }), 'no call forked from the new template');
    }));
});

// One setSetting request on the admin channel (common/AdminProtocol.h: JSON lines, a hello each
// way first); resolves with its reply, rejects with its error.
function setSetting(socketPath, name, value) {
    return new Promise((resolve, reject) => {
        const socket = createConnection(socketPath);
        const timer = setTimeout(() => { socket.destroy(); reject(new Error('no reply from the admin channel')); }, 10_000);
        let pending = '';
        socket.on('error', reject);
        socket.on('connect', () => {
            socket.write(JSON.stringify({ type: 'hello', version: 1, program: 'call-templates-test', programVersion: '1' }) + '\n');
            socket.write(JSON.stringify({ type: 'request', id: 1, method: 'setSetting', params: { name, value } }) + '\n');
        });
        socket.on('data', chunk => {
            pending += chunk;
            for (let nl; (nl = pending.indexOf('\n')) >= 0;) {
                const message = JSON.parse(pending.slice(0, nl));
                pending = pending.slice(nl + 1);
                if (message.id !== 1)
                    continue;
                clearTimeout(timer);
                socket.end();
                if (message.type === 'reply' && message.result?.appliedLive)
                    resolve(message.result);
                else
                    reject(new Error(`setSetting ${name}: ${JSON.stringify(message)}`));
            }
        });
    });
}

// The cmcp/NAME cgroups of every hierarchy.
function cgroupsNamed(name) {
    return readdirSync('/sys/fs/cgroup').map(h => join('/sys/fs/cgroup', h)).concat('/sys/fs/cgroup')
        .map(hierarchy => join(hierarchy, 'cmcp', name)).filter(dir => existsSync(dir));
}

function processesInCgroup(dir) {
    try {
        return readFileSync(join(dir, 'cgroup.procs'), 'utf8').trim().split('\n').filter(Boolean).map(Number);
    } catch {
        return [];
    }
}

function uidOf(pid) {
    try {
        return Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
    } catch {
        return -1; // gone meanwhile
    }
}
