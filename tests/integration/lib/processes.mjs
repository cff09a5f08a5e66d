// What the tests look up in /proc about the processes a daemon leaves behind.
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
