// Start-up tells the truth about the resources the tools need: a daemon whose helper programs
// are missing, whose spill directory, audit log and admin socket cannot be made, and (as root)
// whose temporary directory the browser worker cannot pass through still serves, says so with one warning line for each at start, and /health answers "degraded" with
// each resource, the problem, the fix and the tools that cannot work. A daemon with everything
// in place answers "ok" with an empty list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { cmcpdPath, startDaemon } from './lib/daemon.mjs';

async function health(daemon) {
    const response = await fetch(`${daemon.base}/health`, { signal: AbortSignal.timeout(5000) });
    assert.equal(response.status, 200);
    return response.json();
}

test('a daemon with every resource in place is ok with nothing degraded', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'cmcp-degraded-'));
    const daemon = await startDaemon({
        fixtures: false,
        settings: { SANDBOX_ROOT: join(scratch, 'sandbox'), AUDIT_LOG: join(scratch, 'audit.jsonl') },
    });
    try {
        const body = await health(daemon);
        assert.equal(body.status, 'ok', JSON.stringify(body));
        assert.deepEqual(body.degraded, []);
        assert.doesNotMatch(daemon.stderr(), /degraded:/);
    } finally {
        await daemon.stop();
        rmSync(scratch, { recursive: true, force: true });
    }
});

test('unusable resources are named at start and in /health, and the daemon still serves', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'cmcp-degraded-'));
    // cmcpd alone in a directory: no cmcp-jail, cmcp-html or cmcp-browser beside it.
    const alone = join(scratch, 'bin');
    const blocker = join(scratch, 'a-file');
    writeFileSync(blocker, 'not a directory\n');
    const sandbox = join(scratch, 'sandbox');
    const previous = process.env.CMCPD;
    const previousTmp = process.env.TMPDIR;
    let daemon;
    try {
        mkdirSync(alone);
        copyFileSync(cmcpdPath(), join(alone, 'cmcpd'));
        chmodSync(join(alone, 'cmcpd'), 0o755);
        mkdirSync(sandbox);
        writeFileSync(join(sandbox, 'spill'), 'where the spill directory should be\n');
        process.env.CMCPD = join(alone, 'cmcpd');
        // As root, a temporary directory the browser worker's uid cannot pass through.
        const closedTmp = join(scratch, 'tmp');
        mkdirSync(closedTmp, { mode: 0o700 });
        process.env.TMPDIR = closedTmp;
        daemon = await startDaemon({
            fixtures: false,
            settings: {
                SANDBOX_ROOT: sandbox, AUDIT_LOG: join(blocker, 'audit.jsonl'), AUDIT_REQUIRED: 'false',
                ADMIN_SOCKET: join(blocker, 'admin.sock'),
            },
        });
        const body = await health(daemon);
        assert.equal(body.status, 'degraded', JSON.stringify(body));
        assert.equal(typeof body.sessions, 'number');
        const byResource = Object.fromEntries(body.degraded.map(d => [d.resource.split(' ')[0], d]));
        const root = process.getuid() === 0;
        assert.deepEqual(Object.keys(byResource).sort(),
            ['admin', 'audit', ...(root ? ['browser'] : []), 'cmcp-browser', 'cmcp-html', 'cmcp-jail', 'spill'],
            JSON.stringify(body.degraded));
        if (root) {
            assert.equal(byResource.browser.resource, `browser home in ${join(scratch, 'tmp')}`);
            assert.match(byResource.browser.problem, / is mode 0700 /);
            assert.deepEqual(byResource.browser.tools, ['web_browse']);
        }
        assert.equal(byResource['cmcp-jail'].resource, `cmcp-jail ${join(alone, 'jail', 'cmcp-jail')}`);
        assert.deepEqual(byResource['cmcp-jail'].tools, ['system_run_command', 'system_run_python']);
        assert.deepEqual(byResource['cmcp-html'].tools, ['web_scrape']);
        assert.deepEqual(byResource['cmcp-browser'].tools, ['web_browse']);
        assert.equal(byResource.spill.resource, `spill directory ${join(sandbox, 'spill')}`);
        assert.ok(byResource.spill.tools.includes('job_output'));
        assert.equal(byResource.audit.resource, `audit log ${join(blocker, 'audit.jsonl')}`);
        assert.equal(byResource.admin.resource, `admin socket ${join(blocker, 'admin.sock')}`);
        for (const d of body.degraded) {
            assert.ok(d.problem.length > 0 && d.fix.length > 0, JSON.stringify(d));
            // One warning line at start for each, naming the resource and the fix.
            const lines = daemon.stderr().split('\n').filter(line => line.includes(`degraded: ${d.resource}:`));
            assert.equal(lines.length, 1, `${d.resource}:\n${daemon.stderrTail()}`);
            assert.ok(lines[0].includes(`fix: ${d.fix}`), lines[0]);
        }
    } finally {
        process.env.CMCPD = previous;
        if (previousTmp === undefined)
            delete process.env.TMPDIR;
        else
            process.env.TMPDIR = previousTmp;
        await daemon?.stop();
        rmSync(scratch, { recursive: true, force: true });
    }
});
