// What a job learns of the host from its own mount table. /proc/self/mountinfo names, for each
// mount, the path of its root within its source file system (field 4) whatever namespace or
// detached clone the mount came from, so a workspace bound from a plain directory shows the
// host path of SANDBOX_ROOT. On the workspace volume (the default for a root daemon) each
// workspace is a subvolume of a file system of its own, and the job sees only its path within
// the volume (/workspace, /sessions/ws_…, /named/ws_…). Every job of the default configuration
// is checked (the shared, a session and a named workspace; a cold job, a Python job and a call
// forked from a template): no line names SANDBOX_ROOT, the daemon's build directory or its
// source tree. With plain directories (SANDBOX_WORKSPACE_QUOTA_MB=0) the workspace's own line is
// the one the kernel forces, and it names that workspace alone; no other mount (the minimal
// root, /usr, the /etc files, /dev, /proc, /tmp) names the daemon's tree. Needs root (jobs
// switch to pool uids); the volume part needs btrfs and loop devices and skips without them.
// The job's /proc/self/cgroup, another place a host path could show, reads "/" everywhere.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { cmcpdPath, startDaemon, withDiagnostics } from '../integration/lib/daemon.mjs';
import { quotaSession, quotaUnavailableReason } from '../integration/lib/quota.mjs';

const needsRoot = process.getuid() === 0 ? {} : { skip: 'needs root: jobs switch to host uids of the pool (CI runs as root)' };
const volumeReason = quotaUnavailableReason();
const needsVolume = process.getuid() !== 0 ? needsRoot : volumeReason ? { skip: volumeReason } : {};

const sourceTree = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

// The host paths no job may read in its mount table: SANDBOX_ROOT, the directory of the daemon's
// binary (the build tree) and the source tree.
const forbidden = sandbox => [sandbox, dirname(cmcpdPath()), sourceTree];

// Lines of a mountinfo that name one of `paths`, with the mount point (field 5) of each.
function linesNaming(mountinfo, paths) {
    return mountinfo.split('\n').filter(line => paths.some(path => line.includes(path)))
        .map(line => ({ line, mountPoint: line.split(' ')[4], root: line.split(' ')[3] }));
}

async function daemonWith(settings) {
    const sandbox = mkdtempSync(join(tmpdir(), 'cmcp-mountinfo-'));
    chmodSync(sandbox, 0o755);
    const daemon = await startDaemon({
        fixtures: false,
        settings: { SANDBOX_ROOT: sandbox, SANDBOX_WORKSPACE_VOLUME_GB: 2, BASH_TIMEOUT_DEFAULT: 30, PYTHON_TIMEOUT_DEFAULT: 30, ...settings },
    });
    const s = await quotaSession(daemon, 'mountinfo');
    return { sandbox, daemon, s };
}

async function stop(d) {
    await d?.s?.close();
    await d?.daemon?.stop();
    if (d?.sandbox)
        rmSync(d.sandbox, { recursive: true, force: true });
}

// The mount tables of the jobs a client can start in the daemon `d`, by what started them.
async function mountTables(d, { named }) {
    const tables = {};
    const command = async (label, args = {}) => {
        const job = await d.s.ok('system_run_command', { command: 'cat /proc/self/mountinfo', ...args });
        assert.equal(job.exit_code, 0, `${label}: ${JSON.stringify(job)}`);
        assert.match(job.stdout, / \/workspace /, `${label}: the job has a workspace mount`);
        tables[label] = job.stdout;
    };
    await command('command');
    await command('command with working_dir', { working_dir: '.' });
    const python = await d.s.ok('system_run_python', { code: 'print(open("/proc/self/mountinfo").read())' });
    tables.python = python.output;
    if (named) {
        await d.s.ok('workspace_create', { name: 'mounts' });
        await command('command in a named workspace', { workspace: 'mounts' });
    }
    return tables;
}

describe('a job\'s mount table', needsRoot, () => {
    describe('on the workspace volume (the default)', needsVolume, () => {
        for (const [label, settings] of [
            ['the shared workspace, a whole jail per call', {}],
            ['session workspaces, calls forked from templates', { SANDBOX_WORKSPACE: 'session', JOB_CALL_TEMPLATES: true }],
        ]) {
            test(`${label}: names neither SANDBOX_ROOT nor the daemon's build or source tree`, { timeout: 120_000 }, async () => {
                const d = await daemonWith(settings);
                try {
                    await withDiagnostics(d.daemon, async () => {
                        const tables = await mountTables(d, { named: true });
                        for (const [job, table] of Object.entries(tables))
                            assert.deepEqual(linesNaming(table, forbidden(d.sandbox)).map(x => x.line), [],
                                `the ${job}'s mountinfo names a host path of the daemon`);
                        // What it shows instead: the workspace's path within the volume.
                        assert.match(tables.command, /^\S+ \S+ \S+ \/(workspace|sessions\/ws_[0-9a-f]+) \/workspace .* - btrfs /m);
                        assert.match(tables['command in a named workspace'], /^\S+ \S+ \S+ \/named\/ws_[0-9a-f]+ \/workspace .* - btrfs /m);
                    });
                } finally {
                    await stop(d);
                }
            });
        }
    });

    // Not a mount, the same question: a cgroup namespace made before the monitor had placed the
    // job was rooted above the job's cgroup, and /proc/self/cgroup named it ("0::/cmcp/job-<pid>").
    test('and /proc/self/cgroup names no cgroup of the host, in every hierarchy', { timeout: 120_000 }, async () => {
        const d = await daemonWith({ SANDBOX_WORKSPACE_QUOTA_MB: 0, JOB_CALL_TEMPLATES: true });
        try {
            await withDiagnostics(d.daemon, async () => {
                const tables = {
                    command: (await d.s.ok('system_run_command', { command: 'cat /proc/self/cgroup' })).stdout,
                    'command with working_dir': (await d.s.ok('system_run_command', { command: 'cat /proc/self/cgroup', working_dir: '.' })).stdout,
                    python: (await d.s.ok('system_run_python', { code: 'print(open("/proc/self/cgroup").read(), end="")' })).output,
                };
                for (const [job, table] of Object.entries(tables)) {
                    const lines = table.trim().split('\n');
                    assert.ok(lines.some(line => /^\d+:[^:]*:/.test(line)), `${job}: ${table}`);
                    assert.deepEqual(lines.filter(line => !line.endsWith(':/')), [], `${job}'s cgroup namespace is not rooted at its own cgroup`);
                }
            });
        } finally {
            await stop(d);
        }
    });

    describe('with plain directories (SANDBOX_WORKSPACE_QUOTA_MB=0)', () => {
        test('only the workspace\'s own mount names a host path, and only its own', { timeout: 120_000 }, async () => {
            const d = await daemonWith({ SANDBOX_WORKSPACE_QUOTA_MB: 0, SANDBOX_WORKSPACE: 'session' });
            try {
                await withDiagnostics(d.daemon, async () => {
                    const tables = await mountTables(d, { named: true });
                    for (const [job, table] of Object.entries(tables)) {
                        const leaks = linesNaming(table, forbidden(d.sandbox));
                        assert.deepEqual(leaks.filter(x => x.mountPoint !== '/workspace').map(x => x.line), [],
                            `the ${job}'s mountinfo names a host path of the daemon outside its workspace's mount`);
                        // The kernel's path of the workspace within the host's file system: its own
                        // directory beneath SANDBOX_ROOT, nothing above or beside it.
                        for (const { root } of leaks) {
                            assert.ok(root.startsWith(`${d.sandbox}/`), `${job}: ${root}`);
                            assert.ok(statSync(root).isDirectory(), `${job}: ${root} is the workspace's directory`);
                            assert.match(root.slice(d.sandbox.length), /^\/(workspace|sessions\/ws_[0-9a-f]+|named\/ws_[0-9a-f]+)$/, job);
                        }
                    }
                });
            } finally {
                await stop(d);
            }
        });
    });
});
