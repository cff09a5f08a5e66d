// An installed cmcpd (under CMCP_INSTALLED_PREFIX, from `cmake --install` or unpacked .deb
// packages) runs from its own tree alone: it reads the installed default layer, finds the
// installed cmcp-jail, cmcp-html and cmcp-browser, runs a jailed call, and with templates on
// serves a call from a template whose monitor is the installed jail with its zygote library.
// Nothing of the build tree is beside it, so a helper it did not find in the installed layout
// is a helper it did not find at all. Templates need root (CI runs as root); without it that
// test skips, saying so.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from '../integration/lib/sdk.mjs';
import { eventually, startDaemon, withDiagnostics } from '../integration/lib/daemon.mjs';

const prefix = process.env.CMCP_INSTALLED_PREFIX;
if (!prefix)
    throw new Error('set CMCP_INSTALLED_PREFIX to the installed tree (<root>/usr)');
const cmcpd = join(prefix, 'bin', 'cmcpd');
// The settings file a package's postinst wrote, which the systemd unit passes (--config).
const config = process.env.CMCP_INSTALLED_CONFIG;
const helpers = join(prefix, 'libexec', 'container-mcp');
const needsRoot = process.getuid() === 0 ? {} : { skip: 'needs root: templates map the uid pool (CI runs as root)' };

// The executables of this daemon's children and grandchildren (the jails and their monitors).
function descendantExecutables(pid) {
    const parents = new Map();
    for (const name of readdirSync('/proc').filter(entry => /^\d+$/.test(entry))) {
        try {
            const ppid = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${name}/status`, 'utf8'))[1]);
            parents.set(Number(name), ppid);
        } catch { /* gone meanwhile */ }
    }
    const below = new Set([pid]);
    for (let grew = true; grew;) {
        grew = false;
        for (const [child, parent] of parents)
            if (below.has(parent) && !below.has(child)) {
                below.add(child);
                grew = true;
            }
    }
    below.delete(pid);
    return [...below].flatMap(child => {
        try { return [readlinkSync(`/proc/${child}/exe`)]; } catch { return []; }
    });
}

describe(`the installed daemon ${cmcpd}`, () => {
    let sandbox;
    let daemon;
    let client;

    const health = async () => (await (await fetch(`${daemon.base}/health`)).json());
    const templates = async () => {
        const body = await health();
        return body.call_templates ?? body.status?.call_templates;
    };
    const command = async (text) => {
        const result = await client.callTool({ name: 'system_run_command', arguments: { command: text } },
                                             undefined, { timeout: 60_000 });
        assert.ok(!result.isError, `system_run_command failed: ${JSON.stringify(result.content)}`);
        return result.structuredContent;
    };

    before(async () => {
        assert.ok(existsSync(cmcpd), `${cmcpd} is not installed`);
        sandbox = mkdtempSync(join(tmpdir(), 'cmcp-installed-'));
        chmodSync(sandbox, 0o755);
        daemon = await startDaemon({
            program: cmcpd,
            fixtures: false,
            args: config ? ['--config', config] : [],
            settings: {
                SANDBOX_ROOT: sandbox, ADMIN_SOCKET: join(sandbox, 'admin.sock'),
                JOB_CALL_TEMPLATES: process.getuid() === 0,
                BASH_ALLOWED_COMMANDS: 'echo,cat', BASH_TIMEOUT_DEFAULT: 10, BASH_TIMEOUT_MAX: 10,
            },
        });
        client = new Client({ name: 'package-test', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
    });

    after(async () => {
        await client?.close();
        await daemon?.stop();
        rmSync(sandbox, { recursive: true, force: true });
    });

    test('reads the installed default layer', () => {
        const printed = execFileSync(cmcpd, ['--print-config'], { cwd: sandbox, encoding: 'utf8' });
        assert.ok(printed.includes(join(prefix, 'share', 'container-mcp', 'default.env')),
                  `--print-config names no installed default.env:\n${printed}`);
    });

    test('finds every helper program it starts', () => withDiagnostics(daemon, async () => {
        const text = JSON.stringify(await health());
        for (const helper of ['cmcp-jail', 'cmcp-html', 'cmcp-browser'])
            assert.ok(!text.includes(helper), `/health reports a problem with ${helper}: ${text}`);
        assert.doesNotMatch(daemon.stderr(), /cmcp-(jail|html|browser) \S+: (no such file|not an executable)/);
    }));

    test('runs a jailed call with the installed jail', () => withDiagnostics(daemon, async () => {
        const result = await command('echo installed');
        assert.equal(result.stdout, 'installed\n');
        assert.equal(result.exit_code, 0);
        const outside = descendantExecutables(daemon.pid).filter(exe => exe.endsWith('/cmcp-jail') && !exe.startsWith(helpers));
        assert.deepEqual(outside, [], 'a jail was started from outside the installed tree');
    }));

    test('serves a call from a template made with the installed zygote library', needsRoot, () => withDiagnostics(daemon, async () => {
        const running = await eventually(async () => (await templates())?.command?.state === 'running',
                                         { timeoutMs: 15_000 });
        assert.ok(running, `the command template never ran: ${JSON.stringify(await templates())}`);
        const monitors = descendantExecutables(daemon.pid).filter(exe => exe.endsWith('/cmcp-jail'));
        assert.ok(monitors.length > 0 && monitors.every(exe => exe === join(helpers, 'cmcp-jail')),
                  `the template monitors are not the installed jail: ${monitors}`);
        // The warm jobs kept waiting may have been built before the template listened.
        for (let i = 0; i < 3; ++i)
            await command('echo warm-up');
        const before = (await templates()).command.calls ?? 0;
        assert.equal((await command('echo from-template')).stdout, 'from-template\n');
        assert.equal((await templates()).command.calls, before + 1, 'the call did not fork from the template');
    }));
});
