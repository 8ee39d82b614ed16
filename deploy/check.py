#!/usr/bin/env python3
"""Validates every deploy file against what its real consumer checks.

- k8s/: `kubectl kustomize` renders both overlays; core kinds validate against
  strict Kubernetes schemas (kubernetes-validate); Strimzi and KEDA objects
  against their CRDs' OpenAPI schemas (unknown fields rejected, as
  `kubectl --validate=strict` does) including the CRDs' CEL rules; then
  cross-checks (ScaledObject targets, replicas vs partitions, PDBs that exist
  and never block a drain, NetworkPolicies, pod security, secrets, grace
  periods, prod replication, Redis as a StatefulSet with AOF on a
  PersistentVolumeClaim and REDIS_URL from a Secret). The prod overlay is also
  rendered with the `managed-redis` component (no in-cluster Redis).
- deploy/docker-compose.yml: `docker-compose config -q` and the compose-spec
  schema; Redis keeps an AOF on a named volume.
- deploy/grafana/: the dashboard against Grafana's dashboard schema, each query
  against the Prometheus query schema; the datasource it names is provisioned.
- deploy/prometheus/prometheus.yml: `promtool check config`.
- checkov over k8s/ and the Dockerfile: no failed check without a justified skip.

Usage: deploy/check.py [--root DIR] [--schemas DIR] [--skip-checkov]
Exit status 1 with one line per problem when anything fails.
"""

import argparse
import base64
import copy
import json
import math
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import jsonschema
import kubernetes_validate
import yaml

K8S_VERSION = "1.33"
AGENT_ROLES = ["static", "reviewer", "security", "tests"]
#: A review may take until the aggregator's deadline; agents must be allowed to finish it.
REVIEW_DEADLINE_S = 300
#: The in-cluster Redis: its workload and client Service share this name.
REDIS = "quorum-redis"
#: Where every service reads REDIS_URL from (Secret name, key).
REDIS_URL_SECRET = ("quorum-redis", "redis-url")
#: redis-server writes where it starts without `dir`: the official image's WORKDIR.
REDIS_DEFAULT_DIR = "/data"
#: (overlay, components) rendered and checked. With `managed-redis` the
#: in-cluster Redis must be gone and REDIS_URL's Secret must be external.
VARIANTS = (("dev", ()), ("prod", ()), ("prod", ("managed-redis",)))


def render(overlay: Path, components=()) -> list:
    """`kubectl kustomize` of an overlay; components are added through a
    throwaway kustomization in a temporary directory (paths relative to it)."""
    if not components:
        out = subprocess.run(["kubectl", "kustomize", str(overlay)], capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"kubectl kustomize {overlay}: {out.stderr.strip()}")
        return [d for d in yaml.safe_load_all(out.stdout) if d]
    with tempfile.TemporaryDirectory() as tmp:
        rel = lambda p: os.path.relpath(p, tmp)  # noqa: E731
        (Path(tmp) / "kustomization.yaml").write_text(yaml.safe_dump({
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "resources": [rel(overlay)],
            "components": [rel(c) for c in components],
        }))
        out = subprocess.run(["kubectl", "kustomize", tmp], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"kubectl kustomize {overlay} + {', '.join(map(str, components))}: {out.stderr.strip()}")
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def name_of(doc) -> str:
    return f"{doc.get('kind')}/{doc.get('metadata', {}).get('name')}"


# --- CRDs -----------------------------------------------------------------

def load_crds(schemas: Path) -> dict:
    """(group, version, kind) -> openAPIV3Schema."""
    crds = {}
    for f in sorted((schemas / "k8s-crds").glob("*.yaml")):
        for doc in yaml.safe_load_all(f.read_text()):
            if not doc or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            for v in spec["versions"]:
                crds[(spec["group"], v["name"], spec["names"]["kind"])] = v["schema"]["openAPIV3Schema"]
    return crds


def to_jsonschema(node):
    """OpenAPI v3 (structural, as CRDs use it) to JSON Schema, strict on unknown fields."""
    if not isinstance(node, dict):
        return node
    out = {}
    for k, v in node.items():
        if k == "properties":
            out[k] = {p: to_jsonschema(s) for p, s in v.items()}
        elif k in ("items", "additionalProperties") and isinstance(v, dict):
            out[k] = to_jsonschema(v)
        elif k in ("allOf", "anyOf", "oneOf"):
            out[k] = [to_jsonschema(s) for s in v]
        elif k == "not":
            out[k] = to_jsonschema(v)
        elif k.startswith("x-kubernetes-") or k == "nullable":
            continue
        else:
            out[k] = v
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    if (
        out.get("type") == "object"
        and "properties" in out
        and "additionalProperties" not in out
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


def cel_errors(schema, value, path, errors):
    """Evaluates every x-kubernetes-validations rule reachable in `value`."""
    import celpy

    if not isinstance(schema, dict) or value is None:
        return
    for rule in schema.get("x-kubernetes-validations", []):
        env = celpy.Environment()
        try:
            prog = env.program(env.compile(rule["rule"]))
            ok = prog.evaluate({"self": celpy.json_to_cel(value)})
        except Exception as e:  # a rule that cannot evaluate is a failure, not a pass
            errors.append(f"{path}: CEL rule `{rule['rule']}` did not evaluate: {e}")
            continue
        if not bool(ok):
            errors.append(f"{path}: {rule.get('message', rule['rule'])}")
    if isinstance(value, dict):
        for k, v in value.items():
            sub = schema.get("properties", {}).get(k)
            if sub is None and isinstance(schema.get("additionalProperties"), dict):
                sub = schema["additionalProperties"]
            cel_errors(sub, v, f"{path}.{k}", errors)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(value):
            cel_errors(schema["items"], v, f"{path}[{i}]", errors)


def validate_objects(docs, crds, errors, where):
    for doc in docs:
        api = doc.get("apiVersion", "")
        kind = doc.get("kind", "")
        group, _, version = api.rpartition("/")
        label = f"{where}: {name_of(doc)}"
        if (group, version, kind) in crds:
            raw = crds[(group, version, kind)]
            body = copy.deepcopy(doc)
            # metadata is validated by the API server's ObjectMeta, not the CRD.
            schema = to_jsonschema(raw)
            schema.setdefault("properties", {})["metadata"] = {"type": "object"}
            for e in jsonschema.Draft7Validator(schema).iter_errors(body):
                errors.append(f"{label}: {'.'.join(map(str, e.path)) or '<root>'}: {e.message[:300]}")
            cel_errors(raw, doc, label, errors)
        elif group.endswith("strimzi.io") or group == "keda.sh":
            errors.append(f"{label}: no CRD for {api} {kind} in the schemas")
        else:
            try:
                kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
            except kubernetes_validate.ValidationError as e:
                path = ".".join(map(str, e.path)) if hasattr(e, "path") else ""
                errors.append(f"{label}: {path}: {e.message if hasattr(e, 'message') else e}")
            except kubernetes_validate.SchemaNotFoundError as e:
                errors.append(f"{label}: no schema: {e}")


# --- cross-checks ---------------------------------------------------------

def selects(selector: dict, labels: dict) -> bool:
    """A label selector (matchLabels only, as these manifests use) against labels."""
    if selector is None:
        return False
    match = selector.get("matchLabels", {})
    if selector.get("matchExpressions"):
        return False
    return all(labels.get(k) == v for k, v in match.items())


def scaled(value, total: int) -> int:
    """An int-or-percent of a PDB against `total` pods, rounded up as the
    disruption controller does."""
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(value)


def min_replicas(kind: str, name: str, workload: dict, by_kind: dict) -> int:
    """The fewest pods the workload runs with (its HPA's or ScaledObject's floor), at least one."""
    n = workload["spec"].get("replicas", 1)
    for h in by_kind.get("HorizontalPodAutoscaler", []):
        ref = h["spec"]["scaleTargetRef"]
        if ref.get("kind") == kind and ref.get("name") == name:
            n = min(n, h["spec"].get("minReplicas", 1))
    for so in by_kind.get("ScaledObject", []):
        ref = so["spec"]["scaleTargetRef"]
        if ref.get("kind", "Deployment") == kind and ref.get("name") == name:
            n = min(n, so["spec"].get("minReplicaCount", 0))
    return max(n, 1)


def drain_allowance(pdb_spec: dict, pods: int) -> int:
    """How many of `pods` the PDB lets a drain evict at once."""
    if "maxUnavailable" in pdb_spec:
        return scaled(pdb_spec["maxUnavailable"], pods)
    if "minAvailable" in pdb_spec:
        return pods - scaled(pdb_spec["minAvailable"], pods)
    return pods


def redis_argv_settings(argv: list) -> tuple:
    """(config file or None, {setting: value}) from redis-server's argv: an
    optional config file first, then `--name value...` flags."""
    argv = [str(a) for a in argv]
    for i, tok in enumerate(argv):
        if tok.rsplit("/", 1)[-1] == "redis-server":
            argv = argv[i + 1:]
            break
    conf = None
    if argv and not argv[0].startswith("--"):
        conf, argv = argv[0], argv[1:]
    settings, name, values = {}, None, []
    for tok in argv:
        if tok.startswith("--"):
            if name is not None:
                settings[name] = " ".join(values)
            name, values = tok[2:].lower(), []
        else:
            values.append(tok)
    if name is not None:
        settings[name] = " ".join(values)
    return conf, settings


def parse_redis_conf(text: str) -> dict:
    settings = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, _, rest = line.partition(" ")
        settings[key.lower()] = " ".join(shlex.split(rest)) if rest.strip() else ""
    return settings


def redis_settings(pod: dict, container: dict, configmaps: dict, errors: list, label: str) -> dict:
    """Redis's settings as redis-server reads them: the config file (which must
    come from a mounted ConfigMap), then the flags over it."""
    conf, flags = redis_argv_settings(list(container.get("command", [])) + list(container.get("args", [])))
    settings = {}
    if conf is not None:
        text = None
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        for m in container.get("volumeMounts", []):
            cm = volumes.get(m["name"], {}).get("configMap")
            if not cm:
                continue
            if m.get("subPath") and m["mountPath"] == conf:
                key = m["subPath"]
            elif conf.startswith(m["mountPath"].rstrip("/") + "/"):
                key = conf[len(m["mountPath"].rstrip("/")) + 1:]
            else:
                continue
            for item in cm.get("items", []):
                if item.get("path") == key:
                    key = item["key"]
            text = configmaps.get(cm.get("name"), {}).get("data", {}).get(key)
        if text is None:
            errors.append(f"{label}: config file {conf} does not come from a mounted ConfigMap")
        else:
            settings.update(parse_redis_conf(text))
    settings.update(flags)
    return settings


def secret_value(secret: dict, key: str):
    if key in secret.get("stringData", {}):
        return str(secret["stringData"][key])
    if key in secret.get("data", {}):
        return base64.b64decode(secret["data"][key]).decode()
    return None


def check_redis(by_kind: dict, workloads: dict, errors: list, where: str, managed: bool):
    """The state store survives a restart: Redis is a StatefulSet whose data
    dir is a volumeClaimTemplate and whose AOF is on; clients find it through
    the client Service named in the default REDIS_URL. With a managed Redis
    (the component), none of it is rendered and the URL's Secret is external."""
    secret_name, secret_key = REDIS_URL_SECRET
    secrets = {s["metadata"]["name"]: s for s in by_kind.get("Secret", [])}
    redis = {k: w for k, w in workloads.items() if k[1] == REDIS}
    if managed:
        for kind, name in redis:
            errors.append(f"{where}: {kind}/{name} is rendered although Redis is managed")
        for s in by_kind.get("Service", []):
            if s["metadata"]["name"].startswith(REDIS):
                errors.append(f"{where}: Service/{s['metadata']['name']} is rendered although Redis is managed")
        if secret_name in secrets:
            errors.append(f"{where}: Secret/{secret_name} is rendered although Redis is managed (its URL comes from an out-of-band Secret)")
        return
    if not redis:
        errors.append(f"{where}: no Redis workload named {REDIS}")
        return
    for (kind, name), w in redis.items():
        label = f"{where}: {kind}/{name}"
        if kind != "StatefulSet":
            errors.append(
                f"{label}: Redis must be a StatefulSet with a volumeClaimTemplate"
                " (a restart would lose every run, pending join, lease and draft)"
            )
        pod = w["spec"]["template"]["spec"]
        c = next((c for c in pod["containers"] if c["name"] == "redis"), pod["containers"][0])
        configmaps = {cm["metadata"]["name"]: cm for cm in by_kind.get("ConfigMap", [])}
        s = redis_settings(pod, c, configmaps, errors, label)
        data_dir = s.get("dir") or REDIS_DEFAULT_DIR
        if not data_dir.startswith("/"):
            data_dir = os.path.normpath(os.path.join(c.get("workingDir", REDIS_DEFAULT_DIR), data_dir))
        data_dir = data_dir.rstrip("/") or "/"
        claims = {t["metadata"]["name"] for t in w["spec"].get("volumeClaimTemplates", [])}
        if not any(m["name"] in claims and (m["mountPath"].rstrip("/") or "/") == data_dir for m in c.get("volumeMounts", [])):
            errors.append(f"{label}: no volumeClaimTemplate is mounted at Redis's data dir {data_dir}")
        aof = s.get("appendonly", "no").lower()
        if aof != "yes":
            errors.append(f"{label}: AOF is off (appendonly {aof}); set appendonly yes")
        fsync = s.get("appendfsync", "everysec").lower()
        if fsync not in ("everysec", "always"):
            errors.append(f"{label}: appendfsync {fsync} leaves the AOF unsynced; use everysec")
        labels = w["spec"]["template"]["metadata"].get("labels", {})
        services = {
            svc["metadata"]["name"]: svc
            for svc in by_kind.get("Service", [])
            if selects({"matchLabels": svc["spec"].get("selector", {})}, labels)
        }
        if kind == "StatefulSet":
            gov = services.get(w["spec"].get("serviceName"))
            if gov is None or gov["spec"].get("clusterIP") != "None":
                errors.append(f"{label}: serviceName {w['spec'].get('serviceName')} is not a headless Service selecting its pods")
        client = services.get(REDIS)
        if client is None or client["spec"].get("clusterIP") == "None":
            errors.append(f"{where}: no client Service {REDIS} (with a cluster IP) selects the Redis pods")
    # The default URL names the client Service, on one of its ports.
    secret = secrets.get(secret_name)
    url = secret_value(secret, secret_key) if secret else None
    if url is None:
        errors.append(f"{where}: no Secret/{secret_name} with key {secret_key} for the in-cluster Redis")
    else:
        u = urlsplit(url)
        service = next((s for s in by_kind.get("Service", []) if s["metadata"]["name"] == u.hostname), None)
        if service is None or (u.port or 6379) not in [p["port"] for p in service["spec"].get("ports", [])]:
            errors.append(f"{where}: Secret/{secret_name} {secret_key} {url} does not name a Service port")


def cross_check(docs, errors, where, prod, managed_redis=False):
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    deployments = {d["metadata"]["name"]: d for d in by_kind.get("Deployment", [])}
    workloads = {(d["kind"], d["metadata"]["name"]): d for k in ("Deployment", "StatefulSet") for d in by_kind.get(k, [])}
    topics = {
        t["spec"].get("topicName", t["metadata"]["name"]): t for t in by_kind.get("KafkaTopic", [])
    }
    for so in by_kind.get("ScaledObject", []):
        n = so["metadata"]["name"]
        target = so["spec"]["scaleTargetRef"]["name"]
        if target not in deployments:
            errors.append(f"{where}: ScaledObject/{n} targets missing Deployment {target}")
            continue
        cmd = deployments[target]["spec"]["template"]["spec"]["containers"][0].get("command", [""])[0]
        for trig in so["spec"].get("triggers", []):
            if trig.get("type") != "kafka":
                continue
            md = trig["metadata"]
            topic = topics.get(md.get("topic"))
            if topic is None:
                errors.append(f"{where}: ScaledObject/{n} scales on unknown topic {md.get('topic')}")
            elif so["spec"].get("maxReplicaCount") != topic["spec"]["partitions"]:
                errors.append(
                    f"{where}: ScaledObject/{n} maxReplicaCount {so['spec'].get('maxReplicaCount')}"
                    f" != {topic['spec']['partitions']} partitions of {md.get('topic')}"
                )
            if md.get("consumerGroup") != cmd:
                errors.append(
                    f"{where}: ScaledObject/{n} watches group {md.get('consumerGroup')} but {target} runs `{cmd}`"
                )
    for role in AGENT_ROLES:
        if not any(so["spec"]["scaleTargetRef"]["name"] == f"quorum-agent-{role}" for so in by_kind.get("ScaledObject", [])):
            errors.append(f"{where}: agent-{role} has no ScaledObject")
    if not any(h["spec"]["scaleTargetRef"]["name"] == "quorum-gateway" for h in by_kind.get("HorizontalPodAutoscaler", [])):
        errors.append(f"{where}: the gateway has no HorizontalPodAutoscaler")
    policies = by_kind.get("NetworkPolicy", [])
    if not any(
        p["spec"].get("podSelector") == {}
        and set(p["spec"].get("policyTypes", [])) == {"Ingress", "Egress"}
        and not p["spec"].get("ingress")
        and not p["spec"].get("egress")
        for p in policies
    ):
        errors.append(f"{where}: no default-deny NetworkPolicy (empty podSelector, Ingress+Egress, no rules)")
    for (kind, name), dep in workloads.items():
        tpl = dep["spec"]["template"]
        labels = tpl["metadata"].get("labels", {})
        pdbs = [p for p in by_kind.get("PodDisruptionBudget", []) if selects(p["spec"].get("selector"), labels)]
        if not pdbs:
            errors.append(f"{where}: {kind}/{name} has no PodDisruptionBudget")
        pods = min_replicas(kind, name, dep, by_kind)
        for p in pdbs:
            if drain_allowance(p["spec"], pods) < 1:
                errors.append(
                    f"{where}: PodDisruptionBudget/{p['metadata']['name']} lets no pod of {kind}/{name}"
                    f" ({pods} replica(s)) be evicted: a node drain would hang"
                )
        # Covered: a policy of its own says who may reach it (broad egress
        # allows such as DNS or OTLP select every pod and do not count).
        if not any(
            p["spec"].get("podSelector")
            and selects(p["spec"]["podSelector"], labels)
            and "Ingress" in p["spec"].get("policyTypes", [])
            and p["spec"].get("ingress")
            for p in policies
        ):
            errors.append(f"{where}: {kind}/{name} is not covered by a NetworkPolicy (no ingress allow selects it)")
        pod = tpl["spec"]
        psc = pod.get("securityContext", {})
        if psc.get("runAsNonRoot") is not True:
            errors.append(f"{where}: {kind}/{name}: pod must set runAsNonRoot: true")
        if psc.get("seccompProfile", {}).get("type") != "RuntimeDefault":
            errors.append(f"{where}: {kind}/{name}: pod seccompProfile must be RuntimeDefault")
        for c in pod.get("containers", []) + pod.get("initContainers", []):
            sc = c.get("securityContext", {})
            if sc.get("readOnlyRootFilesystem") is not True:
                errors.append(f"{where}: {kind}/{name}/{c['name']}: readOnlyRootFilesystem must be true")
            if sc.get("allowPrivilegeEscalation") is not False:
                errors.append(f"{where}: {kind}/{name}/{c['name']}: allowPrivilegeEscalation must be false")
            if "ALL" not in sc.get("capabilities", {}).get("drop", []):
                errors.append(f"{where}: {kind}/{name}/{c['name']}: capabilities must drop ALL")
            for env in c.get("env", []):
                if env["name"] == "REDIS_URL" and kind == "Deployment":
                    ref = env.get("valueFrom", {}).get("secretKeyRef", {})
                    if (ref.get("name"), ref.get("key")) != REDIS_URL_SECRET or ref.get("optional"):
                        errors.append(
                            f"{where}: {kind}/{name}: REDIS_URL must come from Secret {REDIS_URL_SECRET[0]}"
                            f" key {REDIS_URL_SECRET[1]} (not optional): a managed Redis's URL carries its password"
                        )
                secretish = any(w in env["name"].upper() for w in ("SECRET", "TOKEN", "PASSWORD", "API_KEY"))
                if secretish and "value" in env:
                    errors.append(f"{where}: {kind}/{name}: {env['name']} is inlined; reference a Secret")
        if kind == "Deployment" and name != REDIS and not any(
            e["name"] == "REDIS_URL" for c in pod.get("containers", [])[:1] for e in c.get("env", [])
        ):
            errors.append(f"{where}: {kind}/{name} gets no REDIS_URL (from Secret {REDIS_URL_SECRET[0]})")
        grace = pod.get("terminationGracePeriodSeconds", 30)
        cmd = pod["containers"][0].get("command", [""])[0]
        if cmd.startswith("agent-") and grace < REVIEW_DEADLINE_S:
            errors.append(
                f"{where}: {kind}/{name}: terminationGracePeriodSeconds {grace} < {REVIEW_DEADLINE_S} (a review in hand must finish)"
            )
    for s in by_kind.get("Secret", []):
        # The one exception: the default REDIS_URL, the in-cluster Redis's
        # address, which carries no credential.
        keys = set(s.get("data", {})) | set(s.get("stringData", {}))
        if not managed_redis and s["metadata"]["name"] == REDIS_URL_SECRET[0] and keys == {REDIS_URL_SECRET[1]}:
            u = urlsplit(secret_value(s, REDIS_URL_SECRET[1]))
            if u.password is None and u.username is None:
                continue
        errors.append(f"{where}: Secret/{s['metadata']['name']} is inlined in the manifests; reference it instead")
    for cm in by_kind.get("ConfigMap", []):
        for k in cm.get("data", {}):
            if any(w in k.upper() for w in ("SECRET", "TOKEN", "PASSWORD")):
                errors.append(f"{where}: ConfigMap/{cm['metadata']['name']}: {k} looks like a secret")
            if k.upper() == "REDIS_URL":
                errors.append(f"{where}: ConfigMap/{cm['metadata']['name']}: REDIS_URL belongs in Secret {REDIS_URL_SECRET[0]}")
    check_redis(by_kind, workloads, errors, where, managed_redis)
    if prod:
        for pool in by_kind.get("KafkaNodePool", []):
            if pool["spec"].get("replicas", 0) < 3:
                errors.append(f"{where}: KafkaNodePool/{pool['metadata']['name']} needs 3 brokers in prod")
        for t, topic in topics.items():
            if topic["spec"].get("replicas") != 3:
                errors.append(f"{where}: KafkaTopic {t}: replicas must be 3 in prod")
            if int(topic["spec"].get("config", {}).get("min.insync.replicas", 0)) != 2:
                errors.append(f"{where}: KafkaTopic {t}: min.insync.replicas must be 2 in prod")
        ingresses = by_kind.get("Ingress", [])
        if not any(i["spec"].get("tls") for i in ingresses):
            errors.append(f"{where}: the gateway has no TLS Ingress in prod")
    for t, topic in topics.items():
        if topic["spec"].get("partitions") != 6:
            errors.append(f"{where}: KafkaTopic {t}: 6 partitions expected")


def contract_topics(root: Path) -> set:
    """Topic names as the Kafka contract crate defines them (the one place they live)."""
    import re

    src = (root / "crates" / "quorum-events" / "src" / "topics.rs").read_text()
    return set(re.findall(r'Topic::\w+ => "([a-z0-9.\-]+)"', src))


def check_k8s(root: Path, schemas: Path, errors: list):
    crds = load_crds(schemas)
    for overlay, components in VARIANTS:
        where = "+".join([f"k8s/overlays/{overlay}"] + [f"components/{c}" for c in components])
        try:
            docs = render(root / "k8s" / "overlays" / overlay, [root / "k8s" / "components" / c for c in components])
        except RuntimeError as e:
            errors.append(str(e))
            continue
        validate_objects(docs, crds, errors, where)
        try:
            cross_check(docs, errors, where, prod=overlay == "prod", managed_redis="managed-redis" in components)
        except (KeyError, TypeError, IndexError) as e:
            errors.append(f"{where}: malformed object for cross-checks: {e!r}")
        wanted = contract_topics(root)
        if wanted:
            have = {d["spec"].get("topicName", d["metadata"]["name"]) for d in docs if d.get("kind") == "KafkaTopic"}
            for t in sorted(wanted - have):
                errors.append(f"{where}: topic {t} of the Kafka contract has no KafkaTopic")
            for t in sorted(have - wanted):
                errors.append(f"{where}: KafkaTopic {t} is not in the Kafka contract")


# --- compose, grafana, prometheus, checkov ---------------------------------

def check_compose(root: Path, schemas: Path, errors: list):
    f = root / "deploy" / "docker-compose.yml"
    env = dict(os.environ, GITHUB_WEBHOOK_SECRET="check")
    out = subprocess.run(["docker-compose", "-f", str(f), "config", "-q"], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        errors.append(f"deploy/docker-compose.yml: docker-compose config: {out.stderr.strip()[-500:]}")
    doc = yaml.safe_load(f.read_text())
    schema = json.loads((schemas / "compose" / "compose-spec.json").read_text())
    for e in jsonschema.Draft7Validator(schema).iter_errors(doc):
        errors.append(f"deploy/docker-compose.yml: {'.'.join(map(str, e.path))}: {e.message[:300]}")
    services = doc.get("services", {}) if isinstance(doc, dict) else {}
    for name, svc in services.items():
        if "healthcheck" not in svc and not str(svc.get("image", "")).startswith("otel/"):
            errors.append(f"deploy/docker-compose.yml: service {name} has no healthcheck")
    redis = services.get("redis")
    if not isinstance(redis, dict):
        errors.append("deploy/docker-compose.yml: no redis service")
        return
    cmd = redis.get("command", [])
    _, settings = redis_argv_settings(shlex.split(cmd) if isinstance(cmd, str) else cmd)
    if settings.get("appendonly", "no").lower() != "yes":
        errors.append("deploy/docker-compose.yml: service redis: AOF is off; run it with --appendonly yes")
    data_dir = (settings.get("dir") or REDIS_DEFAULT_DIR).rstrip("/")
    named = set((doc.get("volumes") or {}).keys())
    mounted = False
    for v in redis.get("volumes", []):
        if isinstance(v, str):
            source, _, rest = v.partition(":")
            target = rest.split(":")[0]
        else:
            source, target = v.get("source"), v.get("target")
        mounted = mounted or (source in named and str(target).rstrip("/") == data_dir)
    if not mounted:
        errors.append(f"deploy/docker-compose.yml: service redis: no named volume at its data dir {data_dir}")


def dashboard_queries(dashboard: dict):
    """(panel title, expr) of every query, rows included."""
    out = []
    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                out.append((p.get("title", "?"), t.get("expr", "")))
            walk(p.get("panels", []))
    walk(dashboard.get("panels", []))
    return out


def check_grafana(root: Path, schemas: Path, errors: list):
    g = root / "deploy" / "grafana"
    dash_schema = json.loads((schemas / "grafana" / "dashboard.jsonschema.json").read_text())
    query_schema = json.loads((schemas / "grafana" / "prometheus.jsonschema.json").read_text())
    uids = set()
    for f in sorted((g / "provisioning" / "datasources").glob("*.yaml")):
        for ds in yaml.safe_load(f.read_text()).get("datasources", []):
            uids.add(ds.get("uid"))
    dashboards = sorted((g / "dashboards").glob("*.json"))
    if not dashboards:
        errors.append("deploy/grafana/dashboards: no dashboard")
    for f in dashboards:
        where = f"deploy/grafana/dashboards/{f.name}"
        try:
            d = json.loads(f.read_text())
        except json.JSONDecodeError as e:
            errors.append(f"{where}: not JSON: {e}")
            continue
        for e in jsonschema.Draft7Validator(dash_schema).iter_errors(d):
            errors.append(f"{where}: {'.'.join(map(str, e.path))}: {e.message[:300]}")
        def walk(panels):
            for p in panels:
                for t in p.get("targets", []):
                    for e in jsonschema.Draft7Validator(query_schema).iter_errors(t):
                        errors.append(f"{where}: panel `{p.get('title')}` query {t.get('refId')}: {e.message[:200]}")
                    if not t.get("expr", "").strip():
                        errors.append(f"{where}: panel `{p.get('title')}` has an empty query")
                ds = p.get("datasource")
                if ds and ds.get("uid") not in uids:
                    errors.append(f"{where}: panel `{p.get('title')}` uses datasource {ds.get('uid')} that is not provisioned")
                walk(p.get("panels", []))
        walk(d.get("panels", []))


def check_prometheus(root: Path, errors: list):
    f = root / "deploy" / "prometheus" / "prometheus.yml"
    out = subprocess.run(["promtool", "check", "config", str(f)], capture_output=True, text=True)
    if out.returncode != 0:
        errors.append(f"deploy/prometheus/prometheus.yml: promtool: {(out.stdout + out.stderr).strip()[:500]}")


def check_checkov(root: Path, errors: list):
    for args, what in (
        (["--framework", "kustomize", "-d", str(root / "k8s")], "k8s/"),
        (["--framework", "dockerfile", "-f", str(root / "deploy" / "Dockerfile")], "deploy/Dockerfile"),
    ):
        out = subprocess.run(
            ["checkov", "--quiet", "--compact", "--skip-download", "--output", "json", *args],
            capture_output=True,
            text=True,
        )
        try:
            reports = json.loads(out.stdout or "[]")
        except json.JSONDecodeError:
            errors.append(f"checkov {what}: unreadable output: {(out.stdout + out.stderr)[:500]}")
            continue
        if isinstance(reports, dict):
            reports = [reports]
        scanned = 0
        for r in reports:
            results = r.get("results", {})
            summary = r.get("summary", {})
            scanned += summary.get("passed", 0) + summary.get("failed", 0) + summary.get("skipped", 0)
            for c in results.get("failed_checks", []):
                errors.append(f"checkov {what}: {c['check_id']} {c.get('check_name')} in {c.get('resource')} ({c.get('file_path')})")
        if scanned == 0:
            errors.append(f"checkov {what}: nothing was scanned ({(out.stderr or '').strip()[:300]})")


def main() -> int:
    here = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=here)
    ap.add_argument("--schemas", type=Path, default=here / "deploy" / "schemas")
    ap.add_argument("--skip-checkov", action="store_true")
    a = ap.parse_args()
    errors = []
    check_k8s(a.root, a.schemas, errors)
    check_compose(a.root, a.schemas, errors)
    check_grafana(a.root, a.schemas, errors)
    check_prometheus(a.root, errors)
    if not a.skip_checkov:
        check_checkov(a.root, errors)
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} problem(s)", file=sys.stderr)
        return 1
    print("deploy files valid: k8s (dev, prod, prod+managed-redis), compose, grafana, prometheus" + ("" if a.skip_checkov else ", checkov"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
