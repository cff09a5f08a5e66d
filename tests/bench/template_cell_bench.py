#!/usr/bin/env python3
"""A template's cell without the daemon: cmcp-jail --serve-template is started by hand with a
command policy, one cell is asked for, and `echo hi` is handed to it N times, each call armed
with its uid ahead (as the daemon does) or not (--arm-ms 0: the arm and the call come together).
Prints the round trip (the call handed over to its end reported) and the CPU time of each call
as the cell's cgroup counts it, medians and p90. What it leaves out is the daemon's part and the
client's. See jail/template.h and jail/protocol/CellProtocol.h.

    sudo tests/bench/template_cell_bench.py --jail build/server/jail/cmcp-jail [--n 300]
        [--command 'echo hi'] [--arm-ms 20] [--uids 150000:32]

Runs as root (the template maps the uid pool). Its socket and workspace are in a scratch
directory under /tmp, removed afterwards; the cell's bash is the one the daemon's command jobs
run, with the same zygote line as server/managers/BashManager.cpp's templateJob().
"""
import argparse
import array
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

ZYGOTE = 'umask 002; enable -f /proc/self/fd/3 cmcp_zygote && cmcp_zygote'
LAYERS = ['identity', 'rlimits', 'cgroup', 'namespaces', 'landlock', 'seccomp']


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--jail', default='build/server/jail/cmcp-jail')
    parser.add_argument('--n', type=int, default=300)
    parser.add_argument('--command', default='echo hi')
    parser.add_argument('--arm-ms', type=float, default=20.0,
                        help='how long before each call its uid is given (0: with the call)')
    parser.add_argument('--uids', default='150000:32')
    options = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit('run as root: the template maps the uid pool')
    first, count = (int(v) for v in options.uids.split(':'))
    scratch = tempfile.mkdtemp(prefix='cmcp-cell-bench-')
    os.chmod(scratch, 0o755)
    workspace = os.path.join(scratch, 'workspace')
    os.mkdir(workspace)
    os.chmod(workspace, 0o777)
    path = os.path.join(scratch, 'template.sock')
    policy = {
        'uid': first + 1, 'gid': first, 'workspace': workspace,
        'env': {'PATH': '/usr/bin:/bin', 'LANG': 'C.UTF-8', 'HOME': '/workspace'},
        'layers': LAYERS, 'namespaces': {}, 'seccomp': {},
        'cgroup': {'memory_bytes': 256 << 20, 'pids': 64},
        'landlock': {'read': ['/usr', '/etc', '/dev', '/proc'],
                     'execute': ['/usr/bin', '/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2'],
                     'write': ['/tmp', '/dev/shm']},
    }
    policy_read, policy_write = os.pipe()
    os.write(policy_write, json.dumps(policy).encode())
    os.close(policy_write)
    stdin_read, stdin_write = os.pipe()
    monitor = subprocess.Popen(
        [options.jail, '--policy-fd', str(policy_read), '--serve-template', path,
         '--template-uids', f'{first}:{count}', '--', 'bash', '--norc', '--noprofile', '-c', ZYGOTE],
        pass_fds=[policy_read], stdin=stdin_read)
    os.close(policy_read)
    os.close(stdin_read)
    try:
        deadline = time.monotonic() + 30
        while not os.path.exists(path):
            if time.monotonic() > deadline or monitor.poll() is not None:
                sys.exit('the template did not start')
            time.sleep(0.02)
        control = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        control.connect(path)
        control.send(struct.pack('=c3xI', b'n', 0))
        cell = None
        while cell is None:
            message, ancillary, _, _ = control.recvmsg(8192, socket.CMSG_SPACE(4))
            if message[:1] == b'e':
                sys.exit('no cell: ' + message[8:].decode(errors='replace'))
            for level, kind, data in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    cell = socket.socket(fileno=array.array('i', data[:4])[0])
        times, cpus = [], []
        uid = first + 2
        for _ in range(options.n):
            cell.send(struct.pack('=c3xI', b'a', uid))
            if options.arm_ms > 0:
                time.sleep(options.arm_ms / 1000)
            out_read, out_write = os.pipe()
            err_read, err_write = os.pipe()
            payload = options.command.encode()
            start = time.perf_counter()
            cell.sendmsg([struct.pack('=cBHII', b'r', 0, 0, uid, len(payload)) + payload],
                         [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [out_write, err_write]))])
            os.close(out_write)
            os.close(err_write)
            while True:
                message = cell.recv(70000)
                if message[:1] == b'x':
                    break
                if message[:1] == b'f':
                    sys.exit('the call was refused: ' + message[8:].decode(errors='replace'))
            times.append((time.perf_counter() - start) * 1000)
            # CallEnd: kind, killed, oomKilled, hasPeakMemory, status, reserved, cpu, peak, pids.
            cpus.append(struct.unpack('@cBBBiIQQQ', message)[6] / 1e6)
            os.close(out_read)
            os.close(err_read)
        times.sort()
        cpus.sort()
        print(f'{options.n} calls of {options.command!r}, uid given {options.arm_ms} ms ahead: '
              f'round trip median {times[len(times) // 2]:.2f} ms, p90 {times[int(len(times) * 0.9)]:.2f} ms; '
              f'CPU per call (the cell\'s cgroup) median {cpus[len(cpus) // 2]:.2f} ms')
    finally:
        os.close(stdin_write)
        try:
            monitor.wait(timeout=10)
        except subprocess.TimeoutExpired:
            monitor.kill()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == '__main__':
    main()
