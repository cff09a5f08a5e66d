// cmcpd's start-up check of SANDBOX_REQUIRE against the machine's sandbox layers: a misspelt
// layer and a missing one stop it with one line; SANDBOX_INSECURE=1 lets it run, loudly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, rmSync } from 'node:fs';

import { cleanEnv, cmcpdPath, scratchDir, settingArgs } from './lib/daemon.mjs';

const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find(path => existsSync(path));

// cmcpd --stdio with stdin at end of file: it starts, finds no session, and exits 0. It runs
// in a working directory of its own (the owner's, nobody's when it runs as nobody), so that
// the relative defaults (SANDBOX_ROOT, the audit log, the admin socket) land there and nowhere
// an earlier run could have prepared.
function runDaemon(settings, { asNobody = false } = {}) {
    const args = ['--stdio', ...settingArgs(settings)];
    const nobody = asNobody && process.getuid() === 0;
    const [command, commandArgs] = nobody
        ? [setpriv, ['--reuid=65534', '--regid=65534', '--clear-groups', '--', cmcpdPath(), ...args]]
        : [cmcpdPath(), args];
    const cwd = scratchDir();
    try {
        if (nobody)
            chownSync(cwd, 65534, 65534);
        const result = spawnSync(command, commandArgs, { cwd, env: cleanEnv(), input: '', timeout: 20_000, encoding: 'utf8' });
        assert.equal(result.error, undefined, `cannot run ${command}: ${result.error}`);
        return result;
    } finally {
        rmSync(cwd, { recursive: true, force: true });
    }
}

test('an unknown layer name in SANDBOX_REQUIRE stops start-up, SANDBOX_INSECURE or not', () => {
    for (const insecure of ['false', 'true']) {
        const result = runDaemon({ SANDBOX_REQUIRE: 'identity,seccom', SANDBOX_INSECURE: insecure });
        assert.equal(result.status, 2, result.stderr);
        const errors = result.stderr.split('\n').filter(line => line.startsWith('cmcpd:'));
        assert.deepEqual(errors, [
            'cmcpd: SANDBOX_REQUIRE="identity,seccom": unknown layer "seccom" (known: identity, rlimits, '
            + 'cgroup, userns, namespaces, openat2, landlock, seccomp, apparmor, quota, templates, idmap)',
        ]);
    }
});

// Without root no per-job cgroup can be created (the cgroup trees belong to root): as root the
// daemon is run as nobody to get there. (Identity is no longer the example: without root the
// jail still maps the daemon's own uid into each job's user namespace.)
test('a required layer the machine lacks stops start-up with the reason', { skip: process.getuid() === 0 && !setpriv && 'needs setpriv to run cmcpd without root' }, () => {
    const result = runDaemon({ SANDBOX_REQUIRE: 'rlimits,cgroup' }, { asNobody: true });
    assert.equal(result.status, 1, result.stderr);
    const errors = result.stderr.split('\n').filter(line => line.startsWith('cmcpd:'));
    assert.equal(errors.length, 1, result.stderr);
    assert.match(errors[0], /^cmcpd: SANDBOX_REQUIRE names layers this machine cannot apply: cgroup \([^)]*\)\); remove them from SANDBOX_REQUIRE, or set SANDBOX_INSECURE=1 to run with weaker isolation$/);
    assert.doesNotMatch(result.stderr, /stdin closed/); // it never got as far as serving
});

test('SANDBOX_INSECURE=1 starts anyway and says so as a warning', { skip: process.getuid() === 0 && !setpriv && 'needs setpriv to run cmcpd without root' }, () => {
    const result = runDaemon({ SANDBOX_REQUIRE: 'cgroup', SANDBOX_INSECURE: 'true' }, { asNobody: true });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stderr, /warning +\[cmcp\] sandbox: SANDBOX_INSECURE=1: running without required layers: cgroup \(/);
    assert.match(result.stderr, /stdin closed/);
});

test('with nothing missing the daemon starts and names what it requires', () => {
    const result = runDaemon({ SANDBOX_REQUIRE: 'rlimits' });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stderr, /sandbox: jobs run as uids 100000\.\.100999, gid 100000; required layers: rlimits/);
    assert.doesNotMatch(result.stderr, /SANDBOX_INSECURE/);
});
