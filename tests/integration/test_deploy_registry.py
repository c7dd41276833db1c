"""deploy/ against the service registry (registry/services.def, through
`seoctl services`): every service has its Kubernetes manifest, image,
Compose service and addresses, on its registry port, and deploy/ names no
service the registry lacks. The manifests stay hand-written (each service
has its own volumes, probes and dependencies); this test keeps them from
drifting."""

import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, test  # noqa: E402

DEPLOY = os.path.join(h.SOURCE_DIR, "deploy")


def read(*parts):
    path = os.path.join(DEPLOY, *parts)
    check(os.path.exists(path), "missing", os.path.relpath(path, h.SOURCE_DIR))
    with open(path) as f:
        return f.read()


def has(text, pattern, what):
    check(re.search(pattern, text, re.M) is not None, what, pattern)


@test
def kubernetes_has_every_service():
    kust = read("k8s", "kustomization.yaml")
    config = read("k8s", "configmap.yaml")
    for s in h.REGISTRY:
        p, port, env = s["process"], s["port"], s["addr_env"]
        m = read("k8s", p + ".yaml")
        has(m, r"^  name: %s$" % p, p + " Service and Deployment")
        has(m, r"^      port: %d$" % port, p + " Service port")
        has(m, r"containerPort: %d$" % port, p + " container port")
        has(m, r"image: seo-%s$" % p, p + " image")
        has(m, r'- name: %s\n\s+value: "0\.0\.0\.0:%d"' % (env, port), p + " listen address")
        has(m, r"grpc:\n\s+port: %d$" % port, p + " gRPC probe")
        has(kust, r"^  - %s\.yaml$" % p, "kustomization resource " + p)
        has(kust, r"^  - name: seo-%s$" % p, "kustomization image " + p)
        has(config, r'^  %s: "%s:%d"$' % (env, p, port), "configmap " + env)


def number(text, pattern, what):
    m = re.search(pattern, text, re.M)
    check(m is not None, what, pattern)
    return int(m.group(1))


@test
def kubernetes_waits_out_the_drain():
    """Each pod's grace period covers its preStop sleep, the drain limit
    and the gateway's refund flush, so SIGKILL never cuts a drain short."""
    drain_s = number(read("k8s", "configmap.yaml"), r'^  SEO_DRAIN_MS: "(\d+)"$',
                     "configmap SEO_DRAIN_MS") / 1000
    with open(os.path.join(h.SOURCE_DIR, "gateway", "include", "gw.h")) as f:
        flush_s = number(f.read(), r"^#define GW_FLUSH_MS (\d+)$", "GW_FLUSH_MS") / 1000
    for p in ["gateway"] + [s["process"] for s in h.REGISTRY]:
        m = read("k8s", p + ".yaml")
        grace = number(m, r"^      terminationGracePeriodSeconds: (\d+)$", p + " grace period")
        sleep = number(m, r'^            preStop:\n\s+exec:\n\s+command: \["sleep", "(\d+)"\]$',
                       p + " preStop sleep")
        check(sleep > 0, p + " preStop sleep", sleep)
        check(grace > sleep + drain_s + flush_s,
              "%s: grace period %d s within preStop %d s + drain %g s + flush %g s"
              % (p, grace, sleep, drain_s, flush_s))


@test
def docker_has_every_service():
    compose = read("docker", "compose.yaml")
    for s in h.REGISTRY:
        p, port, env = s["process"], s["port"], s["addr_env"]
        d = read("docker", "Dockerfile." + p)
        has(d, r"--target %s " % p, p + " build target")
        has(d, r"^ENV %s=0\.0\.0\.0:%d$" % (env, port), p + " listen address")
        has(d, r"^EXPOSE %d$" % port, p + " port")
        has(d, r'^ENTRYPOINT \["/usr/local/bin/%s"\]$' % p, p + " entry point")
        has(compose, r"^    %s: %s:%d$" % (env, p, port), "compose address " + env)
        has(compose, r"^  %s:\n(    .*\n)*?    build: .*Dockerfile\.%s\}" % (p, p),
            "compose service " + p)
        has(compose, r'%s: "0\.0\.0\.0:%d"' % (env, port), "compose listen " + p)
        has(compose, r"^    depends_on: \[.*\b%s\b.*\]$" % p, "gateway depends on " + p)


@test
def deploy_names_no_other_service():
    known = {s["process"] for s in h.REGISTRY}
    envs = {s["addr_env"] for s in h.REGISTRY} | {"SEO_HTTP_ADDR"}
    files = (glob.glob(os.path.join(DEPLOY, "k8s", "svc-*.yaml")) +
             glob.glob(os.path.join(DEPLOY, "docker", "Dockerfile.svc-*")))
    for path in files:
        name = re.sub(r"^Dockerfile\.|\.yaml$", "", os.path.basename(path))
        check(name in known, "not in the registry", path)
    for text in (read("k8s", "configmap.yaml"), read("docker", "compose.yaml")):
        for var in re.findall(r"\b(SEO_[A-Z0-9_]+_ADDR)\b", text):
            check(var in envs, "address of no registry service", var)


def network_policy(manifest, process):
    """The pods the NetworkPolicy of `process` lets in, and its ports."""
    for doc in manifest.split("\n---\n"):
        if re.search(r"^kind: NetworkPolicy$", doc, re.M) and \
                re.search(r"^  name: %s$" % process, doc, re.M):
            spec = doc.split("\nspec:\n", 1)[1]
            target, ingress = spec.split("  ingress:\n", 1)
            check(re.search(r"app\.kubernetes\.io/name: %s$" % process, target, re.M),
                  process + " policy selects its pods")
            check('policyTypes: ["Ingress"]' in target, process + " policy on ingress")
            return (set(re.findall(r"app\.kubernetes\.io/name: (\S+)$", ingress, re.M)),
                    {int(p) for p in re.findall(r"- port: (\d+)$", ingress, re.M)})
    check(False, "no NetworkPolicy in deploy/k8s/%s.yaml" % process)


@test
def only_the_allowed_callers_reach_a_service():
    callers = {s["process"]: {"gateway"} for s in h.REGISTRY}
    for s in h.REGISTRY:
        for to in s["calls"]:
            callers[to].add(s["process"])
    for s in h.REGISTRY:
        p = s["process"]
        pods, ports = network_policy(read("k8s", p + ".yaml"), p)
        check(pods == callers[p], p + " callers", sorted(pods), sorted(callers[p]))
        check(ports == {s["port"]}, p + " port", ports)


@test
def only_the_owners_of_tables_reach_postgres():
    pods, ports = network_policy(read("k8s", "postgres.yaml"), "postgres")
    check(pods == {"svc-account", "svc-realtime", "seoctl"}, "postgres callers", sorted(pods))
    check(ports == {5432}, "postgres port", ports)


@test
def the_internal_token_reaches_every_process():
    has(read("k8s", "secret.yaml"), r'^  SEO_INTERNAL_TOKEN: "[^"]{16,}"$', "k8s Secret")
    has(read("k8s", "secret.yaml"), r'^  SEO_METRICS_TOKEN: "', "k8s Secret")
    has(read("k8s", "gateway.yaml"), r"secretRef:\n\s+name: seo-secrets", "gateway")
    for s in h.REGISTRY:
        has(read("k8s", s["process"] + ".yaml"), r"secretRef:\n\s+name: seo-secrets",
            s["process"] + " reads seo-secrets")
    has(read("docker", "compose.yaml"), r"^    SEO_INTERNAL_TOKEN: \$\{SEO_INTERNAL_TOKEN:\?",
        "compose requires it")


@test
def deploy_doc_lists_every_service():
    with open(os.path.join(h.SOURCE_DIR, "docs", "deploy.md")) as f:
        doc = f.read()
    for s in h.REGISTRY:
        has(doc, r"^\| `%s` \| gRPC, `%s` \(%d\)" % (s["process"], s["addr_env"], s["port"]),
            "docs/deploy.md component row " + s["process"])
        has(doc, r"^\| `%s` \| `127\.0\.0\.1:%d` \|" % (s["addr_env"], s["port"]),
            "docs/deploy.md variable row " + s["addr_env"])


if __name__ == "__main__":
    sys.exit(h.run())
