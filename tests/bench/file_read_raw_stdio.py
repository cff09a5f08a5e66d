#!/usr/bin/env python3
"""file_read of one 1 KB file over stdio with a minimal client (raw JSON lines, no SDK), so that
the figure is the daemon's round trip rather than the client's parsing and validation.

    python3 tests/bench/file_read_raw_stdio.py build/server/cmcpd [calls]

Prints the median and p90 round trip in microseconds. The daemon runs in a private scratch
directory with its own workspace and no audit log.
"""
import json, os, subprocess, sys, tempfile, time

cmcpd = os.path.abspath(sys.argv[1])
calls = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
scratch = tempfile.mkdtemp(prefix='cmcp-raw-')
os.makedirs(f'{scratch}/workspace')
with open(f'{scratch}/workspace/f.txt', 'w') as f:
    f.write(('x' * 79 + '\n') * 13)
env = dict(os.environ, SANDBOX_ROOT=scratch, SANDBOX_INSECURE='1', SANDBOX_REQUIRE='',
           LOG_LEVEL='error', AUDIT_LOG='', ADMIN_SOCKET='off')
daemon = subprocess.Popen([cmcpd, '--stdio'], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          env=env, cwd=scratch)

def rpc(message):
    daemon.stdin.write((json.dumps(message) + '\n').encode())
    daemon.stdin.flush()
    return json.loads(daemon.stdout.readline()) if 'id' in message else None

rpc({'jsonrpc': '2.0', 'id': 0, 'method': 'initialize',
     'params': {'protocolVersion': '2025-06-18', 'capabilities': {},
                'clientInfo': {'name': 'raw-bench', 'version': '1'}}})
rpc({'jsonrpc': '2.0', 'method': 'notifications/initialized'})
times = []
for i in range(calls):
    start = time.perf_counter()
    reply = rpc({'jsonrpc': '2.0', 'id': i + 1, 'method': 'tools/call',
                 'params': {'name': 'file_read', 'arguments': {'path': 'f.txt'}}})
    times.append(time.perf_counter() - start)
    if 'result' not in reply or reply['result'].get('isError'):
        sys.exit(f'call {i + 1} failed: {reply}')
daemon.stdin.close()
daemon.wait()
times.sort()
print(f'file_read 1 KB over stdio, {calls} calls: median {times[len(times) // 2] * 1e6:.1f} µs, '
      f'p90 {times[int(len(times) * 0.9)] * 1e6:.1f} µs')
