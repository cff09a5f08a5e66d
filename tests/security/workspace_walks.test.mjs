// Root's walks of a tree a job writes, attacked through tool calls only. workspace_diff compares a
// checkpoint with the live workspace while a job owns that workspace: the job swaps a FIFO in for
// a file the walk listed as regular (an open by name would wait for a writer, with the event loop
// that every client shares), builds a chain of directories 15,000 deep (a recursive walk overflows
// the daemon's stack, and holds a descriptor per level), or simply has a hundred large modified
// files (seconds of reading). Whatever the tree, the diff ends, says what it left out, and every
// other client's calls are answered meanwhile. And an integer argument beyond what a JSON number
// holds exactly (size_mb 1e308, which converted to a negative quota that read as "no quota") is
// refused before it reaches any conversion. Needs root, btrfs and loop devices; exits 77 otherwise.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';

import { withDiagnostics, within } from '../integration/lib/daemon.mjs';
import { quotaSession, skipWithoutQuota, startQuotaDaemon } from '../integration/lib/quota.mjs';

skipWithoutQuota();

// A background job that, for each of `rounds`, puts a regular z.txt in place, says "armed N",
// waits with inotify until someone opens a file in a/ (the diff's walk, which reaches z.txt only
// after a/), then renames a FIFO over z.txt and says "swapped N": the walk listed z.txt as a
// regular file, and an open of that name by root would now wait for a writer.
const SWAPPER = rounds => [
    'import ctypes, os, select, time',
    'for i in range(300):',
    '    with open(f"a/f{i}", "a") as f: f.write("changed\\n")',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'watch = libc.inotify_init1(os.O_NONBLOCK)',
    'assert watch >= 0 and libc.inotify_add_watch(watch, b"a", 0x20) >= 0, ctypes.get_errno()',
    `for r in range(${rounds}):`,
    '    with open(".file", "w") as f: f.write(f"new {r}\\n")',
    '    os.rename(".file", "z.txt")',
    '    try:',
    '        while os.read(watch, 65536): pass',
    '    except BlockingIOError: pass',
    '    print(f"armed {r}", flush=True)',
    '    select.select([watch], [], [])',
    '    os.mkfifo(".fifo")',
    '    os.rename(".fifo", "z.txt")',
    '    print(f"swapped {r}", flush=True)',
    '    time.sleep(1)',
].join('\n');

describe('workspace walks over a hostile tree', () => {
    let daemon;
    let sandbox;
    let s;
    let other;

    before(async () => {
        ({ daemon, sandbox } = await startQuotaDaemon({
            quotaMb: 400,
            settings: { SANDBOX_WORKSPACE_NAMED_MAX_MB: 512, JOB_TIMEOUT_MAX: 120 },
        }));
        s = await quotaSession(daemon, 'attacker');
        other = await quotaSession(daemon, 'bystander');
    });
    after(async () => {
        await s?.close();
        await other?.close();
        await daemon?.stop();
        if (sandbox)
            rmSync(sandbox, { recursive: true, force: true });
    });

    // Another client's ping, which must be answered within `ms` however busy the diff is.
    const bystanderPings = ms => within(ms, other.client.ping(), "the other client's ping");

    async function newWorkspace(name) {
        await s.ok('workspace_create', { name });
        await s.ok('workspace_open', { workspace: name });
    }

    test('a FIFO swapped in for a file under the walk blocks neither the diff nor the daemon', () => withDiagnostics(daemon, async () => {
        await newWorkspace('fifo');
        await s.ok('system_run_python', {
            code: 'import os\nos.makedirs("a")\nfor i in range(300):\n    open(f"a/f{i}", "w").write("line\\n" * 3000)\nopen("z.txt", "w").write("old\\n")',
        });
        const { checkpoint_id: checkpoint } = await s.ok('workspace_checkpoint', {});
        const rounds = 4;
        const job = await s.ok('system_run_python', { code: SWAPPER(rounds), background: true, timeout: 60 });
        const outputShows = async (pattern, what) => {
            for (let i = 0; i < 200; ++i) {
                const output = await s.ok('job_output', { job_id: job.job_id });
                if (pattern.test(output.output ?? ''))
                    return;
                if (!output.running)
                    throw new Error(`the swapping job ended before ${what}: ${JSON.stringify(output)}`);
                await new Promise(resolve => setTimeout(resolve, 50));
            }
            throw new Error(`the swapping job never said ${what}`);
        };
        for (let round = 0; round < rounds; ++round) {
            await outputShows(new RegExp(`armed ${round}\\b`), `armed ${round}`);
            const diff = s.ok('workspace_diff', { checkpoint_id: checkpoint });
            await within(15_000, outputShows(new RegExp(`swapped ${round}\\b`), `swapped ${round}`), `the swap of round ${round}`);
            await bystanderPings(3000);
            const result = await within(30_000, diff, `diff ${round}`);
            assert.ok(result.changes.some(change => change.path === 'a/f7' && change.change === 'modified'), JSON.stringify(result).slice(0, 500));
            assert.ok(result.changes.some(change => change.path === 'z.txt'), JSON.stringify(result.changes.slice(-3)));
        }
        await s.ok('job_kill', { job_id: job.job_id });
    }));

    test('a chain 15,000 directories deep is walked to the depth bound, with no descriptor a level', () => withDiagnostics(daemon, async () => {
        await newWorkspace('chain');
        const { checkpoint_id: checkpoint } = await s.ok('workspace_checkpoint', {});
        await s.ok('system_run_python', { code: 'import os\nfor _ in range(15000):\n    os.mkdir("d")\n    os.chdir("d")\nprint("made")' });
        const descriptors = () => readdirSync(`/proc/${daemon.pid}/fd`).length;
        const before = descriptors();
        const result = await within(60_000, s.ok('workspace_diff', { checkpoint_id: checkpoint }), 'the deep diff');
        assert.equal(result.truncated, true);
        assert.match(result.truncated_because, /more than 256 levels deep/);
        assert.equal(result.changes.length, 257);
        await bystanderPings(3000);
        assert.ok(descriptors() <= before + 4, `the daemon holds ${descriptors()} descriptors, ${before} before the diff`);
    }));

    test("a diff of a hundred large modified files holds no other client's call", () => withDiagnostics(daemon, async () => {
        await newWorkspace('large');
        const make = 'import os\nos.makedirs("big")\nfor i in range(100):\n    open(f"big/f{i}", "w").write(("%07d\\n" % i) * 32768)';
        await s.ok('system_run_python', { code: make });
        const { checkpoint_id: checkpoint } = await s.ok('workspace_checkpoint', {});
        // Every 20th line changed: each file's diff is a long search for the shortest edit.
        await s.ok('system_run_python', { code: 'for i in range(100):\n    open(f"big/f{i}", "w").write("".join(("%07d\\n" % i) if j % 20 else "changed\\n" for j in range(32768)))' });
        let diffDone = false;
        const diff = s.ok('workspace_diff', { checkpoint_id: checkpoint }).then(result => { diffDone = true; return result; });
        // The diff takes seconds here; a ping waiting for it would take most of them.
        await new Promise(resolve => setTimeout(resolve, 200));
        await bystanderPings(1500);
        const pingedWhileDiffing = !diffDone;
        const result = await within(60_000, diff, 'the large diff');
        assert.equal(result.changes.length, 100);
        assert.ok(pingedWhileDiffing, 'the ping was answered only after the diff: the diff held the event loop');
    }));

    test('an integer argument beyond 2^53 is refused by name, and every workspace keeps a quota', () => withDiagnostics(daemon, async () => {
        for (const size of [1e308, 1e19, -1e19, 9007199254740994]) {
            const result = await s.call('workspace_create', { name: `huge${String(size).replace(/[^0-9a-z]/gi, '')}`, size_mb: size });
            assert.equal(result.isError, true, `size_mb ${size} was accepted: ${JSON.stringify(result.structuredContent)}`);
            assert.match(result.content[0].text, /size_mb.*(integer from -2\^53 to 2\^53|at least 1)/s);
        }
        const fork = await s.call('workspace_fork', { name: 'forked', checkpoint_id: `cp_${'0'.repeat(32)}`, size_mb: 1e308 });
        assert.equal(fork.isError, true);
        assert.match(fork.content[0].text, /size_mb.*integer from -2\^53 to 2\^53/s);
        const listed = await s.ok('workspace_list', {});
        for (const workspace of listed.workspaces)
            assert.ok(workspace.quota_mb > 0, `${workspace.name} has no quota: ${JSON.stringify(workspace)}`);
    }));
});
