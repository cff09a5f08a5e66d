// What a daemon holds, read from /proc, and the check every fault test ends with: no zombie or
// stray process, no descriptor growth, memory back near its baseline. One piece of code, so
// every fault test measures leaks the same way.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

import { eventually } from './daemon.mjs';

// Every live process as {pid, ppid, state, comm, uid}; the comm is in parentheses and may hold
// spaces.
function allProcesses() {
    const found = [];
    for (const name of readdirSync('/proc').filter(entry => /^\d+$/.test(entry))) {
        try {
            const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
            const close = stat.lastIndexOf(')');
            const [state, ppid] = stat.slice(close + 2).split(' ');
            const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${name}/status`, 'utf8'))[1]);
            found.push({ pid: Number(name), ppid: Number(ppid), state, comm: stat.slice(stat.indexOf('(') + 1, close), uid });
        } catch { /* gone meanwhile */ }
    }
    return found;
}

// The uids call templates run as (jail/template.h): a template process keeps its
// monitor's command line (cmcp-jail --serve-template) under a pool uid of its own, which its
// cells share; they live as long as the daemon and are made as calls need them, so they are not
// what a fault leaks. A call never runs as one of them.
function isTemplate(pid) {
    try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('--serve-template');
    } catch {
        return false; // gone meanwhile
    }
}

// The template processes among `processes` (the monitor, root, keeps the same command line).
function templatesOf(processes) {
    return processes.filter(p => p.uid !== 0 && isTemplate(p.pid));
}

function templateUids(templates) {
    return new Set(templates.map(p => p.uid));
}

// The calls armed ahead in idle cells (jail/template.h): a cell (a child of a template)
// forks its next call before the call comes, already under the pool uid leased for it. An
// armed call is its cell's only child and has none of its own; a cell with more children holds
// what an earlier call left, which its end should have killed, and those count as leaks.
function armedCalls(processes, templates) {
    const templatePids = new Set(templates.map(p => p.pid));
    const cells = new Set(processes.filter(p => templatePids.has(p.ppid)).map(p => p.pid));
    const armed = new Set();
    for (const cell of cells) {
        const children = processes.filter(p => p.ppid === cell);
        if (children.length === 1 && !processes.some(p => p.ppid === children[0].pid))
            armed.add(children[0].pid);
    }
    return armed;
}

// The daemon's children, grandchildren and so on; with `withoutTemplates`, not the templates'
// processes (nor theirs).
export function descendantsOf(pid, { withoutTemplates = false } = {}) {
    let processes = allProcesses();
    if (withoutTemplates) {
        const skipped = templateUids(templatesOf(processes));
        processes = processes.filter(p => !skipped.has(p.uid));
    }
    const result = [];
    let parents = new Set([pid]);
    while (parents.size > 0) {
        const next = processes.filter(p => parents.has(p.ppid));
        result.push(...next);
        parents = new Set(next.map(p => p.pid));
    }
    return result;
}

export function descriptorsOf(pid) {
    return readdirSync(`/proc/${pid}/fd`).map(fd => {
        try { return readlinkSync(`/proc/${pid}/fd/${fd}`); } catch { return '(closed)'; }
    });
}

export function rssKbOf(pid) {
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
}

// Processes running as any uid of [uidBase, uidBase + uidCount): the jail's job identities; not
// the templates', nor the calls armed ahead in their idle cells.
export function jailProcesses(uidBase, uidCount) {
    const processes = allProcesses();
    const templates = templatesOf(processes);
    const uids = templateUids(templates);
    const armed = armedCalls(processes, templates);
    return processes
        .filter(p => p.uid >= uidBase && p.uid < uidBase + uidCount && !uids.has(p.uid) && !armed.has(p.pid))
        .map(p => String(p.pid));
}

export function isZombie(pid) {
    try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
    } catch {
        return true; // gone
    }
}

// Jail processes that still run. A job's process whose cmcp-jail died (killed, or gone with its
// daemon) dies too (PR_SET_PDEATHSIG) and is re-parented to init, which reaps it: on this
// machine's init that takes up to about a second, during which it is a zombie that is no longer
// the daemon's to reap.
export function liveJailProcesses(uidBase, uidCount) {
    return jailProcesses(uidBase, uidCount).filter(pid => !isZombie(pid));
}

// A picture of what the daemon holds; `uidBase`/`uidCount` name its jail's uid pool.
export function resourcesOf(pid, { uidBase, uidCount = 0 } = {}) {
    const descendants = descendantsOf(pid, { withoutTemplates: true });
    return {
        descriptors: descriptorsOf(pid),
        rssKb: rssKbOf(pid),
        descendants,
        zombies: descendants.filter(p => p.state === 'Z'),
        jail: uidBase === undefined ? [] : jailProcesses(uidBase, uidCount),
    };
}

const listed = list => list.map(p => `${p.pid} ${p.comm} (${p.state})`).join(', ');

// The bounds, and why:
// - descriptors: the baseline is taken after a warm-up (every tool used once, a session open),
//   so lazily opened files are in it. Node's fetch keeps idle keep-alive connections to the
//   daemon for up to 4 s, each a daemon socket: the check waits (up to 6 s) for them to close,
//   and the slack of 2 covers a client of the test that is still connected (its session's GET
//   stream and a keep-alive POST connection). Measured after the fault tests: +0 or +1.
// - memory: glibc keeps freed heap (the daemon keeps up to 32 MiB of it for large calls, see
//   server/main.cpp, and trims it 2 s after a session closes), so VmRSS does not return to the
//   byte. Measured after the fault tests: +0.1 MB (jobs, browser) and +1 MB (the disk test,
//   whose warm-up writes a file as large as its test's). 8 MiB is well above that and below
//   what the disk test showed of a real leak (call arguments kept by the admin channel:
//   +12.6 MB, fixed in CallDescription.cpp).
//   A sanitizer build (build-asan) holds freed memory in ASan's quarantine (256 MB by default)
//   on purpose, so there the memory bound is not checked; descriptors and processes still are.
export const DESCRIPTOR_SLACK = 2;
export const RSS_SLACK_KB = 8 * 1024;
export const sanitizerBuild = /asan/.test(process.env.CMCPD ?? '');
const rssBoundKb = sanitizerBuild ? Infinity : RSS_SLACK_KB;

// Waits (bounded) until the daemon is back near `baseline`, then asserts it, naming what leaked.
// Processes under the daemon may be replaced (a restarted browser worker and its Chromium
// processes) but not grow in number.
export async function assertNoLeaks(pid, baseline, { uidBase, uidCount = 0, timeoutMs = 6000 } = {}) {
    const allowedChildren = baseline.descendants.length;
    const settled = current => current.zombies.length === 0 && current.jail.length === 0
        && current.descendants.length <= allowedChildren
        && current.descriptors.length <= baseline.descriptors.length + DESCRIPTOR_SLACK
        && current.rssKb <= baseline.rssKb + rssBoundKb;
    let current;
    await eventually(() => settled(current = resourcesOf(pid, { uidBase, uidCount })), { timeoutMs, intervalMs: 50 });
    assert.deepEqual(listed(current.zombies), '', 'zombie processes under the daemon');
    assert.deepEqual(current.jail, [], `processes still running as jail uids ${uidBase}..${uidBase + uidCount - 1}`);
    assert.ok(current.descendants.length <= allowedChildren,
              `stray processes under the daemon: ${listed(current.descendants)} (expected at most ${allowedChildren})`);
    const grown = current.descriptors.length - baseline.descriptors.length;
    assert.ok(grown <= DESCRIPTOR_SLACK,
              `descriptors grew by ${grown}: ${baseline.descriptors.length} → ${current.descriptors.length}\n`
              + `new: ${current.descriptors.filter(fd => !baseline.descriptors.includes(fd)).join(', ')}`);
    const rssGrowth = current.rssKb - baseline.rssKb;
    assert.ok(rssGrowth <= rssBoundKb, `VmRSS grew by ${rssGrowth} kB (${baseline.rssKb} → ${current.rssKb} kB)`);
    return { descriptors: [baseline.descriptors.length, current.descriptors.length], rssKb: [baseline.rssKb, current.rssKb] };
}
