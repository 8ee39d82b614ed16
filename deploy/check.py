#!/usr/bin/env python3
"""Validates every deploy file against what its real consumer checks.

- k8s/: `kubectl kustomize` renders both overlays; core kinds validate against
  strict Kubernetes schemas (kubernetes-validate); Strimzi and KEDA objects
  against their CRDs' OpenAPI schemas (unknown fields rejected, as
  `kubectl --validate=strict` does) including the CRDs' CEL rules; then
  cross-checks (ScaledObject targets, replicas vs partitions, PDBs that exist
  and never block a drain, NetworkPolicies, pod security, secrets, grace
  periods, prod replication, Redis as a StatefulSet with AOF on a
  PersistentVolumeClaim and REDIS_URL from a Secret; Qdrant as a StatefulSet
  whose storage is a retained claim, writable where it writes under a
  read-only root, probed on its HTTP health endpoints, with a client Service
  on its gRPC port that QDRANT_URL names for the indexer and the model agents,
  reachable from exactly those four through the NetworkPolicies). The prod
  overlay is also rendered with the `managed-redis` component (no in-cluster
  Redis) and with the `managed-qdrant` component (no in-cluster Qdrant,
  QDRANT_URL from a Secret, egress to it allowed).
- deploy/docker-compose.yml: `docker-compose config -q` and the compose-spec
  schema; Redis keeps an AOF on a named volume; Qdrant keeps its storage on a
  named volume, and the indexer and model agents get its gRPC QDRANT_URL, wait
  for it to be healthy and have an embedding model.
- deploy/Dockerfile: the runtime image carries the embedding model the build
  stage installed, where its QUORUM_EMBED_MODEL_DIR says.
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
#: The in-cluster Qdrant (the hybrid index's server): workload and client Service.
QDRANT = "quorum-qdrant"
#: The binaries that use the index (the first container's command): the
#: indexer fills it, the model agents search it. agent-static never does.
QDRANT_CLIENTS = ("indexer", "agent-reviewer", "agent-security", "agent-tests")
#: The clients speak gRPC; HTTP (the REST API and the health endpoints) is 6333.
QDRANT_GRPC_PORT = 6334
QDRANT_HTTP_PORT = 6333
#: Qdrant v1.15's health endpoints (served without an API key).
QDRANT_HEALTH_PATHS = ("/healthz", "/livez", "/readyz")
#: The official image's working dir, against which Qdrant's default paths
#: (./storage, ./snapshots, .qdrant-initialized) resolve.
QDRANT_WORKDIR = "/qdrant"
#: (overlay, components) rendered and checked. With `managed-redis` the
#: in-cluster Redis must be gone and REDIS_URL's Secret must be external;
#: with `managed-qdrant` the in-cluster Qdrant must be gone and QDRANT_URL
#: must not name it.
VARIANTS = (("dev", ()), ("prod", ()), ("prod", ("managed-redis",)), ("prod", ("managed-qdrant",)))


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
    """A label selector (matchLabels and matchExpressions) against labels."""
    if selector is None:
        return False
    if not all(labels.get(k) == v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e["key"], e["operator"], e.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
    return True


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


# --- network reachability (NetworkPolicy semantics, as far as these manifests use them)

def policy_types(policy: dict) -> list:
    spec = policy["spec"]
    return spec.get("policyTypes") or (["Ingress"] + (["Egress"] if "egress" in spec else []))


def port_allowed(rule_ports, number: int, name=None) -> bool:
    """Whether a rule's `ports` (none: every port) admit TCP `number` (or its name)."""
    if not rule_ports:
        return True
    for p in rule_ports:
        if p.get("protocol", "TCP") != "TCP":
            continue
        port = p.get("port")
        if port is None or port == number or (name is not None and port == name):
            return True
        if isinstance(port, int) and p.get("endPort") and port <= number <= p["endPort"]:
            return True
    return False


def peer_selects(peer: dict, labels: dict, namespace: str) -> bool:
    """Whether a from/to peer selects a pod with `labels` in `namespace`
    (ipBlocks never select pods here: pod IPs are not known from manifests)."""
    if "ipBlock" in peer:
        return False
    ns = peer.get("namespaceSelector")
    if ns is not None and not selects(ns, {"kubernetes.io/metadata.name": namespace}):
        return False
    ps = peer.get("podSelector")
    return ps is None or selects(ps, labels)


def egress_allows(policies, src: dict, namespace: str, port: int, port_name=None, dst=None) -> bool:
    """Whether some egress rule of a policy selecting pods labelled `src` lets
    them open `port`: to pods labelled `dst` (in-cluster), or, with dst None, to
    an address outside the cluster (an ipBlock, or any destination)."""
    for p in policies:
        if "Egress" not in policy_types(p) or not selects(p["spec"].get("podSelector"), src):
            continue
        for rule in p["spec"].get("egress") or []:
            if not port_allowed(rule.get("ports"), port, port_name):
                continue
            peers = rule.get("to") or []
            if not peers:
                return True
            for peer in peers:
                if dst is None and "ipBlock" in peer:
                    return True
                if dst is not None and peer_selects(peer, dst, namespace):
                    return True
    return False


def ingress_rules(policies, dst: dict):
    """(policy, rule) for every ingress rule of a policy selecting pods labelled `dst`."""
    for p in policies:
        if "Ingress" in policy_types(p) and selects(p["spec"].get("podSelector"), dst):
            for rule in p["spec"].get("ingress") or []:
                yield p, rule


def ingress_allows(policies, dst: dict, src: dict, namespace: str, port: int, port_name=None) -> bool:
    return any(
        port_allowed(rule.get("ports"), port, port_name)
        and (not rule.get("from") or any(peer_selects(peer, src, namespace) for peer in rule["from"]))
        for _, rule in ingress_rules(policies, dst)
    )


# --- Qdrant ------------------------------------------------------------------

def container_env(container: dict, configmaps: dict) -> dict:
    """name -> {"value": str} or {"secret": (name, key), "optional": bool} as the
    kubelet builds the environment: envFrom first, env over it."""
    out = {}
    for src in container.get("envFrom", []):
        prefix = src.get("prefix", "")
        if "configMapRef" in src:
            for k, v in configmaps.get(src["configMapRef"]["name"], {}).get("data", {}).items():
                out[prefix + k] = {"value": str(v)}
    for e in container.get("env", []):
        if "value" in e:
            out[e["name"]] = {"value": str(e["value"])}
            continue
        vf = e.get("valueFrom", {})
        if "configMapKeyRef" in vf:
            ref = vf["configMapKeyRef"]
            v = configmaps.get(ref["name"], {}).get("data", {}).get(ref["key"])
            if v is not None:
                out[e["name"]] = {"value": str(v)}
        elif "secretKeyRef" in vf:
            ref = vf["secretKeyRef"]
            out[e["name"]] = {"secret": (ref["name"], ref["key"]), "optional": bool(ref.get("optional"))}
        else:
            out[e["name"]] = {"value": ""}
    return out


def mount_for(container: dict, path: str):
    """The volumeMount under which `path` lies (the deepest), or None."""
    best = None
    for m in container.get("volumeMounts", []):
        mp = m["mountPath"].rstrip("/") or "/"
        if path == mp or path.startswith(mp.rstrip("/") + "/"):
            if best is None or len(mp) > len(best["mountPath"].rstrip("/")):
                best = m
    return best


def container_port(container: dict, port) -> int:
    """A probe's or Service's target port (a number or a container port's name) as a number."""
    if isinstance(port, int):
        return port
    for p in container.get("ports", []):
        if p.get("name") == port:
            return p["containerPort"]
    return -1


def command_of(workload: dict) -> str:
    return (workload["spec"]["template"]["spec"]["containers"][0].get("command") or [""])[0]


def check_qdrant(by_kind: dict, workloads: dict, errors: list, where: str, managed: bool):
    """The hybrid index survives a restart and only its users reach it: Qdrant
    is a StatefulSet whose storage is a retained volumeClaimTemplate, every
    other path it writes is a writable volume (the root filesystem is
    read-only), its probes hit its HTTP health endpoints; the indexer and the
    model agents get a QDRANT_URL on its client Service's gRPC port, their
    egress reaches it and its ingress admits them and nobody else. With a
    managed Qdrant (the component) none of it is rendered, QDRANT_URL does not
    name it, and the four may reach port 6334 outside the cluster."""
    namespace = next((d["metadata"].get("namespace") for ds in by_kind.values() for d in ds if d["metadata"].get("namespace")), "default")
    policies = by_kind.get("NetworkPolicy", [])
    configmaps = {cm["metadata"]["name"]: cm for cm in by_kind.get("ConfigMap", [])}
    services = {s["metadata"]["name"]: s for s in by_kind.get("Service", [])}
    clients = {k: w for k, w in workloads.items() if k[0] == "Deployment" and command_of(w) in QDRANT_CLIENTS}
    for cmd in QDRANT_CLIENTS:
        if not any(command_of(w) == cmd for w in clients.values()):
            errors.append(f"{where}: no Deployment runs `{cmd}`")
    qdrant = {k: w for k, w in workloads.items() if k[1] == QDRANT}
    if managed:
        for kind, name in qdrant:
            errors.append(f"{where}: {kind}/{name} is rendered although Qdrant is managed")
        for name in services:
            if name.startswith(QDRANT):
                errors.append(f"{where}: Service/{name} is rendered although Qdrant is managed")
    elif not qdrant:
        errors.append(f"{where}: no Qdrant workload named {QDRANT}")
    qdrant_labels, grpc_port = None, QDRANT_GRPC_PORT
    for (kind, name), w in ({} if managed else qdrant).items():
        label = f"{where}: {kind}/{name}"
        if kind != "StatefulSet":
            errors.append(
                f"{label}: Qdrant must be a StatefulSet with a volumeClaimTemplate"
                " (a restart would lose the index: every repository re-embedded)"
            )
        pod = w["spec"]["template"]["spec"]
        qdrant_labels = w["spec"]["template"]["metadata"].get("labels", {})
        c = next((c for c in pod["containers"] if c["name"] == "qdrant"), pod["containers"][0])
        env = container_env(c, configmaps)
        workdir = c.get("workingDir", QDRANT_WORKDIR)
        def path(var, default):
            return os.path.normpath(os.path.join(workdir, env.get(var, {}).get("value") or default))
        storage = path("QDRANT__STORAGE__STORAGE_PATH", "./storage")
        snapshots = path("QDRANT__STORAGE__SNAPSHOTS_PATH", "./snapshots")
        init_dir = os.path.dirname(path("QDRANT_INIT_FILE_PATH", ".qdrant-initialized"))
        grpc_port = int(env.get("QDRANT__SERVICE__GRPC_PORT", {}).get("value") or QDRANT_GRPC_PORT)
        http_port = int(env.get("QDRANT__SERVICE__HTTP_PORT", {}).get("value") or QDRANT_HTTP_PORT)
        claims = {t["metadata"]["name"] for t in w["spec"].get("volumeClaimTemplates", [])}
        m = mount_for(c, storage)
        if m is None or m["name"] not in claims:
            errors.append(f"{label}: no volumeClaimTemplate is mounted at Qdrant's storage {storage}")
        retention = w["spec"].get("persistentVolumeClaimRetentionPolicy", {})
        for when in ("whenDeleted", "whenScaled"):
            if kind == "StatefulSet" and retention.get(when, "Retain") != "Retain":
                errors.append(f"{label}: persistentVolumeClaimRetentionPolicy.{when} must be Retain (the claim holds the index)")
        if c.get("securityContext", {}).get("readOnlyRootFilesystem"):
            for what, d in (("storage", storage), ("snapshots", snapshots), ("init file's", init_dir)):
                m = mount_for(c, d)
                if m is None or m.get("readOnly"):
                    errors.append(
                        f"{label}: Qdrant writes its {what} dir {d}, which is on the read-only root filesystem"
                        " (mount a writable volume there)"
                    )
        for probe in ("readinessProbe", "livenessProbe"):
            pr = c.get(probe)
            if not pr:
                errors.append(f"{label}: no {probe}")
                continue
            hg = pr.get("httpGet")
            if hg is None:
                if probe == "readinessProbe":
                    errors.append(f"{label}: readinessProbe must be an httpGet of /readyz (ready means every shard loaded)")
                continue
            port = container_port(c, hg.get("port"))
            if port != http_port:
                errors.append(f"{label}: {probe} httpGet on port {hg.get('port')} ({port}); Qdrant serves HTTP on {http_port}")
            want = ("/readyz",) if probe == "readinessProbe" else QDRANT_HEALTH_PATHS
            if hg.get("path") not in want:
                errors.append(f"{label}: {probe} path {hg.get('path')} is not one of {', '.join(want)}")
        mine = {n: s for n, s in services.items() if selects({"matchLabels": s["spec"].get("selector", {})}, qdrant_labels)}
        if kind == "StatefulSet":
            gov = mine.get(w["spec"].get("serviceName"))
            if gov is None or gov["spec"].get("clusterIP") != "None":
                errors.append(f"{label}: serviceName {w['spec'].get('serviceName')} is not a headless Service selecting its pods")
        client = mine.get(QDRANT)
        if client is None or client["spec"].get("clusterIP") == "None":
            errors.append(f"{where}: no client Service {QDRANT} (with a cluster IP) selects the Qdrant pods")
        elif not any(container_port(c, p.get("targetPort", p["port"])) == grpc_port for p in client["spec"].get("ports", [])):
            errors.append(f"{where}: Service/{QDRANT} does not expose Qdrant's gRPC port {grpc_port}")
        # Ingress: exactly the clients.
        for pol, rule in ingress_rules(policies, qdrant_labels):
            for peer in rule.get("from") or [{"ipBlock": "(no `from`: anyone)"}]:
                # The clients are the namespace's own pods: a bare podSelector.
                if "ipBlock" in peer or "namespaceSelector" in peer:
                    errors.append(f"{where}: NetworkPolicy/{pol['metadata']['name']} admits traffic to Qdrant from outside the fleet's pods")
            for (okind, oname), other in workloads.items():
                if (okind, oname) in clients or oname == QDRANT:
                    continue
                olabels = other["spec"]["template"]["metadata"].get("labels", {})
                if not rule.get("from") or any(peer_selects(peer, olabels, namespace) for peer in rule["from"]):
                    errors.append(
                        f"{where}: NetworkPolicy/{pol['metadata']['name']} admits {okind}/{oname} to Qdrant;"
                        " only the indexer and the model agents use it"
                    )
    for (kind, name), d in sorted(clients.items()):
        label = f"{where}: {kind}/{name}"
        c = d["spec"]["template"]["spec"]["containers"][0]
        labels = d["spec"]["template"]["metadata"].get("labels", {})
        url = container_env(c, configmaps).get("QDRANT_URL")
        if url is None:
            without = "keeps an index of its own that no agent sees" if command_of(d) == "indexer" else "has no search_code / search_docs"
            errors.append(f"{label} gets no QDRANT_URL: it {without}")
        elif "secret" in url:
            if url["optional"]:
                errors.append(f"{label}: QDRANT_URL from Secret {url['secret'][0]} must not be optional")
        else:
            u = urlsplit(url["value"])
            host = (u.hostname or "").split(".")[0]
            if managed and host.startswith(QDRANT):
                errors.append(f"{label}: QDRANT_URL {url['value']} names the in-cluster Qdrant, which is managed here")
            elif not managed:
                svc = services.get(host)
                if svc is None:
                    errors.append(f"{label}: QDRANT_URL {url['value']} names no Service")
                elif u.port is None or u.scheme not in ("http", "https"):
                    errors.append(f"{label}: QDRANT_URL {url['value']} needs http(s):// and the gRPC port {grpc_port}")
                else:
                    sp = next((p for p in svc["spec"].get("ports", []) if p["port"] == u.port), None)
                    q = next(iter(qdrant.values()), None)
                    qc = q["spec"]["template"]["spec"]["containers"][0] if q else {}
                    target = container_port(qc, sp.get("targetPort", sp["port"])) if sp else None
                    if sp is None:
                        errors.append(f"{label}: QDRANT_URL {url['value']}: Service/{host} has no port {u.port}")
                    elif q is not None and target != grpc_port:
                        errors.append(
                            f"{label}: QDRANT_URL {url['value']} reaches Qdrant's port {target};"
                            f" the client speaks gRPC, on {grpc_port}"
                        )
        if managed:
            if not egress_allows(policies, labels, namespace, QDRANT_GRPC_PORT):
                errors.append(f"{label}: no egress NetworkPolicy lets it reach the managed Qdrant on {QDRANT_GRPC_PORT}")
        elif qdrant_labels is not None:
            if not egress_allows(policies, labels, namespace, grpc_port, "grpc", qdrant_labels):
                errors.append(f"{label}: no egress NetworkPolicy lets it reach Qdrant on {grpc_port}")
            if not ingress_allows(policies, qdrant_labels, labels, namespace, grpc_port, "grpc"):
                errors.append(f"{label}: Qdrant's NetworkPolicies do not admit it on {grpc_port}")


def cross_check(docs, errors, where, prod, managed_redis=False, managed_qdrant=False):
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
    check_qdrant(by_kind, workloads, errors, where, managed_qdrant)
    check_mcp(by_kind, deployments, errors, where)
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


def check_mcp(by_kind: dict, deployments: dict, errors: list, where: str):
    """`quorum mcp --http` off loopback: a bearer token from a Secret (the
    binary refuses to start without one), and every name of the Service in
    front of it accepted by the SDK's Host guard (else every request through
    the Service is refused)."""
    for name, dep in deployments.items():
        container = dep["spec"]["template"]["spec"]["containers"][0]
        argv = container.get("command", []) + container.get("args", [])
        if argv[:2] != ["quorum", "mcp"]:
            continue
        token = next((e for e in container.get("env", []) if e["name"] == "QUORUM_MCP_TOKEN"), None)
        ref = (token or {}).get("valueFrom", {}).get("secretKeyRef")
        if not ref or ref.get("optional"):
            errors.append(f"{where}: Deployment/{name}: QUORUM_MCP_TOKEN must come from a Secret (not optional)")
        hosts = set()
        for a in argv:
            if a.startswith("--allowed-host="):
                hosts |= set(a.split("=", 1)[1].split(","))
        labels = dep["spec"]["template"]["metadata"].get("labels", {})
        namespace = dep["metadata"].get("namespace", "default")
        for svc in by_kind.get("Service", []):
            if not svc["spec"].get("selector") or not selects({"matchLabels": svc["spec"]["selector"]}, labels):
                continue
            n = svc["metadata"]["name"]
            for host in (n, f"{n}.{namespace}", f"{n}.{namespace}.svc", f"{n}.{namespace}.svc.cluster.local"):
                if host not in hosts:
                    errors.append(f"{where}: Deployment/{name}: --allowed-host lacks {host} (Service/{n})")


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
            cross_check(
                docs, errors, where, prod=overlay == "prod",
                managed_redis="managed-redis" in components, managed_qdrant="managed-qdrant" in components,
            )
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
    named = set(((doc.get("volumes") if isinstance(doc, dict) else None) or {}).keys())

    def named_volume_at(svc: dict, path: str) -> bool:
        for v in svc.get("volumes") or []:
            if isinstance(v, str):
                source, _, rest = v.partition(":")
                target = rest.split(":")[0]
            else:
                source, target = v.get("source"), v.get("target")
            if source in named and str(target).rstrip("/") == path:
                return True
        return False

    redis = services.get("redis")
    if not isinstance(redis, dict):
        errors.append("deploy/docker-compose.yml: no redis service")
    else:
        cmd = redis.get("command", [])
        _, settings = redis_argv_settings(shlex.split(cmd) if isinstance(cmd, str) else cmd)
        if settings.get("appendonly", "no").lower() != "yes":
            errors.append("deploy/docker-compose.yml: service redis: AOF is off; run it with --appendonly yes")
        data_dir = (settings.get("dir") or REDIS_DEFAULT_DIR).rstrip("/")
        if not named_volume_at(redis, data_dir):
            errors.append(f"deploy/docker-compose.yml: service redis: no named volume at its data dir {data_dir}")
    check_compose_qdrant(root, services, named_volume_at, errors)


def compose_env(svc: dict) -> dict:
    env = svc.get("environment") or {}
    if isinstance(env, list):
        env = dict(e.split("=", 1) if "=" in e else (e, None) for e in env)
    return {k: (None if v is None else str(v)) for k, v in env.items()}


def check_compose_qdrant(root: Path, services: dict, named_volume_at, errors: list):
    """Qdrant keeps its storage on a named volume; the indexer and the model
    agents get its gRPC address, wait for it to be healthy, and have an
    embedding model (the one in the image, where the Dockerfile puts it)."""
    where = "deploy/docker-compose.yml"
    qdrant = next((n for n, s in services.items() if str(s.get("image", "")).startswith("qdrant/qdrant")), None)
    if qdrant is None:
        errors.append(f"{where}: no qdrant service (image qdrant/qdrant)")
    else:
        storage = f"{QDRANT_WORKDIR}/storage"
        if not named_volume_at(services[qdrant], storage):
            errors.append(f"{where}: service {qdrant}: no named volume at its storage {storage}")
    image_model = image_model_dir(root)
    for name, svc in services.items():
        cmd = svc.get("command") or [""]
        cmd = (shlex.split(cmd) if isinstance(cmd, str) else cmd) or [""]
        if cmd[0] not in QDRANT_CLIENTS:
            continue
        env = compose_env(svc)
        url = env.get("QDRANT_URL")
        if not url:
            errors.append(f"{where}: service {name} gets no QDRANT_URL")
        else:
            u = urlsplit(url)
            if qdrant is not None and (u.hostname != qdrant or u.port != QDRANT_GRPC_PORT):
                errors.append(f"{where}: service {name}: QDRANT_URL {url} is not {qdrant}'s gRPC port {QDRANT_GRPC_PORT}")
        deps = svc.get("depends_on") or {}
        if qdrant is not None and (not isinstance(deps, dict) or (deps.get(qdrant) or {}).get("condition") != "service_healthy"):
            errors.append(f"{where}: service {name} does not wait for {qdrant} (depends_on condition: service_healthy)")
        model = env.get("QUORUM_EMBED_MODEL_DIR")
        if not env.get("QUORUM_EMBED_URL"):
            if not model:
                errors.append(f"{where}: service {name}: no embedding model (QUORUM_EMBED_MODEL_DIR or QUORUM_EMBED_URL): search is off")
            elif image_model is not None and model.rstrip("/") != image_model:
                errors.append(f"{where}: service {name}: QUORUM_EMBED_MODEL_DIR {model} is not where the image has the model ({image_model})")


def dockerfile_stages(text: str) -> list:
    """[(stage name or None, [(instruction, arguments)])], continuation lines joined."""
    stages, lines = [], text.replace("\\\n", " ").splitlines()
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        instr, _, args = line.partition(" ")
        instr = instr.upper()
        if instr == "FROM":
            parts = args.split()
            stages.append((parts[2] if len(parts) > 2 and parts[1].upper() == "AS" else None, []))
        elif stages:
            stages[-1][1].append((instr, args.strip()))
    return stages


def image_model_dir(root: Path):
    """QUORUM_EMBED_MODEL_DIR as the runtime image sets it, or None."""
    stages = dockerfile_stages((root / "deploy" / "Dockerfile").read_text())
    value = None
    for instr, args in stages[-1][1] if stages else []:
        if instr == "ENV":
            for tok in shlex.split(args):
                if tok.startswith("QUORUM_EMBED_MODEL_DIR="):
                    value = tok.split("=", 1)[1]
            if args.startswith("QUORUM_EMBED_MODEL_DIR "):
                value = args.split(None, 1)[1].strip()
    return value.rstrip("/") if value else None


def check_dockerfile(root: Path, errors: list):
    """The runtime image carries the embedding model: its QUORUM_EMBED_MODEL_DIR
    is a COPY --from a build stage that ran install-embedding-model.sh into the
    copied directory (without it the indexer and agents run without search)."""
    where = "deploy/Dockerfile"
    stages = dockerfile_stages((root / "deploy" / "Dockerfile").read_text())
    model = image_model_dir(root)
    if model is None:
        errors.append(f"{where}: the runtime image sets no QUORUM_EMBED_MODEL_DIR (hybrid search would be off)")
        return
    installed = {}
    for name, instrs in stages[:-1]:
        for instr, args in instrs:
            if instr == "RUN" and "install-embedding-model.sh" in args:
                after = args.split("install-embedding-model.sh", 1)[1].split("&&")[0].split()
                if after:
                    installed.setdefault(name, set()).add(after[0].rstrip("/"))
    copied = False
    for instr, args in stages[-1][1]:
        if instr != "COPY":
            continue
        toks = shlex.split(args)
        src_stage = next((t.split("=", 1)[1] for t in toks if t.startswith("--from=")), None)
        paths = [t for t in toks if not t.startswith("--")]
        if src_stage is None or len(paths) != 2:
            continue
        src, dest = (p.rstrip("/") for p in paths)
        if dest == model and src in installed.get(src_stage, set()):
            copied = True
    if not copied:
        errors.append(
            f"{where}: QUORUM_EMBED_MODEL_DIR {model} is not a COPY --from a build stage"
            " that installed the model there (install-embedding-model.sh DIR)"
        )


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
    check_dockerfile(a.root, errors)
    check_grafana(a.root, a.schemas, errors)
    check_prometheus(a.root, errors)
    if not a.skip_checkov:
        check_checkov(a.root, errors)
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} problem(s)", file=sys.stderr)
        return 1
    print("deploy files valid: k8s (dev, prod, prod+managed-redis, prod+managed-qdrant), compose, Dockerfile, grafana, prometheus" + ("" if a.skip_checkov else ", checkov"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
