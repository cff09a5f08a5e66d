// The Kubernetes manifests in container/k8s, checked against the Kubernetes OpenAPI schemas
// (npm kubernetes-models, whose validate() runs ajv on each object's schema), then for what the
// deployment needs from them: probes on /health, resource limits, selectors that match the pods,
// session affinity on Mcp-Session-Id at the ingress, and the routing of handles to their pod.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const modules = join(here, 'node_modules');
const k8sDir = join(here, '../../container/k8s');

if (!existsSync(join(modules, 'kubernetes-models'))) {
    test('kubernetes manifests', { skip: 'tests/deploy/node_modules is missing: ./bin/cmcp deps installs it' }, () => {});
} else {
    const { parseAllDocuments } = await import(join(modules, 'yaml/dist/index.js'));
    // apiVersion/kind -> the model module and class that validates it.
    const models = {
        'apps/v1/Deployment': ['apps/v1/Deployment.js', 'Deployment'],
        'v1/Service': ['v1/Service.js', 'Service'],
        'v1/Namespace': ['v1/Namespace.js', 'Namespace'],
        'networking.k8s.io/v1/Ingress': ['networking.k8s.io/v1/Ingress.js', 'Ingress'],
        'networking.k8s.io/v1/NetworkPolicy': ['networking.k8s.io/v1/NetworkPolicy.js', 'NetworkPolicy'],
    };
    const validate = async object => {
        const key = `${object.apiVersion}/${object.kind}`;
        assert.ok(models[key], `no schema for ${key}`);
        const [file, name] = models[key];
        const Model = (await import(join(modules, 'kubernetes-models', file)))[name];
        new Model(object).validate();
    };

    const objects = {};
    const files = readdirSync(k8sDir).filter(name => name.endsWith('.yaml'));
    for (const file of files) {
        for (const document of parseAllDocuments(readFileSync(join(k8sDir, file), 'utf8'))) {
            assert.deepEqual(document.errors, [], `${file}: YAML errors`);
            const object = document.toJS();
            objects[object.kind] = object;
        }
    }

    test('every manifest passes its Kubernetes schema', async () => {
        for (const object of Object.values(objects)) {
            if (object.kind === 'Kustomization')
                continue;
            await validate(object);
        }
    });

    test('the schema check rejects a broken manifest', async () => {
        const broken = structuredClone(objects.Deployment);
        broken.spec.replicas = 'two';
        await assert.rejects(validate(broken));
        const unknown = structuredClone(objects.Service);
        unknown.spec.ports[0].port = 'http';
        await assert.rejects(validate(unknown));
    });

    test('kustomization lists every manifest', () => {
        const listed = objects.Kustomization.resources;
        for (const file of files.filter(name => name !== 'kustomization.yaml'))
            assert.ok(listed.includes(file), `${file} is not in kustomization.yaml`);
    });

    test('the deployment probes /health and limits its resources', () => {
        const pod = objects.Deployment.spec.template;
        const [container] = pod.spec.containers;
        const allowedHosts = container.env.find(variable => variable.name === 'MCP_ALLOWED_HOSTS').value.split(',');
        for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
            assert.equal(container[probe]?.httpGet?.path, '/health', probe);
            // Without it the kubelet sends the pod's address, and cmcpd answers 403.
            const host = container[probe].httpGet.httpHeaders?.find(header => header.name.toLowerCase() === 'host')?.value;
            assert.ok(allowedHosts.includes(host), `${probe} sends Host ${host}, which MCP_ALLOWED_HOSTS does not admit`);
        }
        for (const resource of ['cpu', 'memory'])
            assert.ok(container.resources.limits[resource], `no ${resource} limit`);
        assert.equal(container.securityContext.allowPrivilegeEscalation, false);
        assert.deepEqual(container.securityContext.capabilities.drop, ['ALL']);
        assert.equal(pod.spec.securityContext.runAsNonRoot, true);
        assert.equal(pod.spec.securityContext.seccompProfile.type, 'Localhost');
    });

    test('the grace period covers the drain, and the liveness probe does not cut it short', () => {
        const pod = objects.Deployment.spec.template.spec;
        const [container] = pod.containers;
        const drain = Number(container.env.find(variable => variable.name === 'MCP_DRAIN_SECONDS')?.value);
        assert.ok(drain > 0, 'MCP_DRAIN_SECONDS is set on the container');
        const preStop = container.lifecycle?.preStop?.sleep?.seconds ?? 0;
        const margin = 5;
        assert.ok(pod.terminationGracePeriodSeconds >= preStop + drain + margin,
                  `terminationGracePeriodSeconds ${pod.terminationGracePeriodSeconds} < preStop ${preStop} + MCP_DRAIN_SECONDS ${drain} + ${margin}`);
        const liveness = container.livenessProbe;
        assert.ok(liveness.periodSeconds * (liveness.failureThreshold ?? 3) > drain,
                  'the liveness probe would restart a draining pod');
        assert.ok(container.readinessProbe.periodSeconds <= 5, 'a draining pod leaves the Service within 5 s');
    });

    test('service, network policy and deployment agree on pods and port', () => {
        const podLabels = objects.Deployment.spec.template.metadata.labels;
        const selects = selector => Object.entries(selector).every(([k, v]) => podLabels[k] === v);
        assert.ok(selects(objects.Service.spec.selector), 'the Service selects no pod of the Deployment');
        assert.ok(selects(objects.NetworkPolicy.spec.podSelector.matchLabels), 'the NetworkPolicy selects no pod');
        assert.ok(selects(objects.Deployment.spec.selector.matchLabels));
        const containerPort = objects.Deployment.spec.template.spec.containers[0].ports[0];
        assert.equal(objects.Service.spec.ports[0].targetPort, containerPort.name);
        assert.ok(objects.NetworkPolicy.spec.ingress[0].ports.some(p => p.port === containerPort.containerPort));
    });

    test('the ingress pins a session to its pod by Mcp-Session-Id', () => {
        const snippet = objects.Ingress.metadata.annotations['haproxy.org/backend-config-snippet'];
        assert.match(snippet, /stick store-response res\.hdr\(mcp-session-id\)/);
        assert.match(snippet, /stick match req\.hdr\(mcp-session-id\)/);
        // What a pod refuses while draining (503), cannot take (connection refused) or leaves
        // unanswered as it dies goes to another pod, unless it belongs to a session, which lives
        // in one pod.
        assert.match(snippet, /retry-on conn-failure empty-response 503/);
        assert.match(snippet, /option redispatch/);
        assert.match(snippet, /disable-l7-retry if \{ req\.hdr\(mcp-session-id\) -m found \}/);
        assert.equal(objects.Ingress.metadata.annotations['haproxy.org/check'], 'true');
        const [, checkedHost] = /http-check send meth GET uri \/health .*hdr Host (\S+)/.exec(snippet) ?? [];
        const allowedHosts = objects.Deployment.spec.template.spec.containers[0].env
            .find(variable => variable.name === 'MCP_ALLOWED_HOSTS').value.split(',');
        assert.ok(allowedHosts.includes(checkedHost), `the ingress checks /health with Host ${checkedHost}`);
        assert.equal(objects.Ingress.spec.ingressClassName, 'haproxy');
        const backend = objects.Ingress.spec.rules[0].http.paths[0].backend.service;
        assert.equal(backend.name, objects.Service.metadata.name);
    });

    test('each pod is named by MCP_REPLICA_ID, and the ingress routes a handle to the pod it names', () => {
        const replicaId = objects.Deployment.spec.template.spec.containers[0].env
            .find(variable => variable.name === 'MCP_REPLICA_ID');
        assert.deepEqual(replicaId?.valueFrom, { fieldRef: { fieldPath: 'metadata.name' } });
        const snippet = objects.Ingress.metadata.annotations['haproxy.org/backend-config-snippet'];
        assert.match(snippet, /stick store-response res\.hdr\(mcp-replica\)/);
        assert.match(snippet, /stick match req\.hdr\(mcp-param-handle\),field\(2,\.\)/);
        assert.match(snippet, /stick match req\.hdr\(mcp-name\),field\(2,\.\) if \{ req\.hdr\(mcp-method\) -m beg tasks\/ \}/);
    });
}
