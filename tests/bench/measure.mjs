// What the Node benchmark scripts share for measuring a server process.
import { readdirSync, readFileSync } from 'node:fs';

// CPU time of every thread of a process, in nanoseconds (schedstat): the server's own share of
// each round trip, apart from the client's.
export function cpuNs(pid) {
    let total = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
        try {
            total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
        } catch {
            // the thread ended meanwhile
        }
    }
    return total;
}

// `promise`, or a rejection naming `what` after `ms` milliseconds.
export function withTimeout(promise, ms, what) {
    let timer;
    return Promise.race([
        promise.finally(() => clearTimeout(timer)),
        new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms); }),
    ]);
}
