// container/compose.yaml: it parses, publishes the port on 127.0.0.1 only, and runs the daemon
// with the options container/README.md measured (the shipped seccomp profile, /proc unmasked, no
// capability, no_new_privs, explicit rlimits), never with the ones it rules out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const yamlModule = join(here, 'node_modules/yaml/dist/index.js');

test('compose.yaml', { skip: !existsSync(yamlModule) && 'tests/deploy/node_modules is missing: ./bin/cmcp deps installs it' }, async () => {
    const { parse } = await import(yamlModule);
    const compose = parse(readFileSync(join(here, '../../container/compose.yaml'), 'utf8'));
    const service = compose.services.cmcpd;
    assert.deepEqual(service.ports, ['127.0.0.1:8000:8000']);
    assert.ok(service.security_opt.includes('seccomp=./seccomp.json'));
    assert.ok(existsSync(join(here, '../../container/seccomp.json')));
    assert.ok(service.security_opt.includes('unmask=/proc/*'));
    assert.ok(service.security_opt.includes('no-new-privileges'));
    assert.deepEqual(service.cap_drop, ['ALL']);
    assert.ok(service.ulimits.nofile.hard && service.ulimits.nproc.hard);
    for (const ruledOut of ['seccomp=unconfined', 'apparmor=unconfined'])
        assert.ok(!service.security_opt.includes(ruledOut), ruledOut);
    assert.ok(!service.privileged && !(service.cap_add ?? []).length);
    assert.equal(service.build.dockerfile, 'container/Containerfile');
    for (const volume of ['config', 'data', 'logs', 'sandbox'])
        assert.ok(service.volumes.some(v => v.endsWith(`:/app/volume/${volume}`) || v.includes(`:/app/volume/${volume}:`)), volume);
});
