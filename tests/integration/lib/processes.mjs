// What the tests look up in /proc about the processes a daemon leaves behind.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

// Live processes whose real uid is `uid`.
export function processesOf(uid) {
    const found = [];
    for (const pid of readdirSync('/proc').filter(name => /^\d+$/.test(name))) {
        try {
            if (Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) === uid)
                found.push(pid);
        } catch { /* gone meanwhile */ }
    }
    return found;
}

// The pids of the daemon's cmcp-browser workers: its children, or (a root daemon's, under
// cmcp-jail) its children's.
export function browserWorkers(daemonPid) {
    const children = (parent, name) => {
        try {
            return execFileSync('pgrep', ['-P', String(parent), '-x', name], { encoding: 'utf8' })
                .split('\n').filter(Boolean).map(Number);
        } catch {
            return [];
        }
    };
    // A worker that ended stays a zombie until its jail has seen its pid namespace empty.
    const alive = pid => {
        try {
            return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
        } catch {
            return false;
        }
    };
    return [...children(daemonPid, 'cmcp-browser'), ...children(daemonPid, 'cmcp-jail').flatMap(jail => children(jail, 'cmcp-browser'))]
        .filter(alive);
}
