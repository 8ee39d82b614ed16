"""Every check in deploy/check.py fails on a deliberately broken copy.

Each test copies k8s/ and deploy/ to a temporary root, breaks one thing, runs
the checker that owns it and asserts the problem is reported by name; the
untouched copy must pass, so a check that cannot fail would show up here.
"""

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SCHEMAS = ROOT / "deploy" / "schemas"
sys.path.insert(0, str(HERE.parent))

import check  # noqa: E402


@pytest.fixture
def root(tmp_path):
    for d in ("k8s", "deploy"):
        shutil.copytree(ROOT / d, tmp_path / d)
    (tmp_path / "crates/quorum-events/src").mkdir(parents=True)
    shutil.copy(ROOT / "crates/quorum-events/src/topics.rs", tmp_path / "crates/quorum-events/src/topics.rs")
    return tmp_path


def edit(path: Path, old: str, new: str, count: int = 1):
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, count))


def k8s_errors(root):
    errors = []
    check.check_k8s(root, SCHEMAS, errors)
    return errors


def assert_reported(errors, pattern):
    assert any(re.search(pattern, e) for e in errors), "\n".join(errors) or "no errors"


def test_the_untouched_copy_passes(root):
    errors = []
    check.check_k8s(root, SCHEMAS, errors)
    check.check_compose(root, SCHEMAS, errors)
    check.check_dockerfile(root, errors)
    check.check_grafana(root, SCHEMAS, errors)
    check.check_prometheus(root, errors)
    assert errors == []


def test_kustomize_render_failure(root):
    edit(root / "k8s/base/kustomization.yaml", "  - hpa.yaml", "  - missing.yaml")
    assert_reported(k8s_errors(root), r"kubectl kustomize .*dev")


def test_core_kinds_are_strict(root):
    edit(root / "k8s/base/deployments.yaml", "  revisionHistoryLimit: 3", "  revisionHistoryLimit: 3\n  surpriseField: true")
    assert_reported(k8s_errors(root), r"Deployment/quorum-gateway.*surpriseField")


def test_crd_schema_rejects_unknown_fields_and_wrong_types(root):
    edit(root / "k8s/base/kafka.yaml", "    version: 4.1.0", "    version: 4.1.0\n    bogus: 1")
    edit(root / "k8s/base/topics.yaml", "  partitions: 6", '  partitions: "six"')
    errors = k8s_errors(root)
    assert_reported(errors, r"Kafka/quorum: spec.kafka: .*bogus")
    assert_reported(errors, r"KafkaTopic/pr.review.requested: spec.partitions: 'six' is not of type 'integer'")


def test_crd_cel_rules_are_evaluated(root):
    edit(root / "k8s/base/scaledobjects.yaml", "  minReplicaCount: 1", "  minReplicaCount: 7")
    assert_reported(k8s_errors(root), r"ScaledObject/quorum-agent-static.spec: minReplicaCount must be less than or equal to maxReplicaCount")


def test_topics_match_the_kafka_contract(root):
    f = root / "crates/quorum-events/src/topics.rs"
    f.write_text(f.read_text().replace('Topic::Dlq => "review.dlq"', 'Topic::Dlq => "review.dead"'))
    errors = k8s_errors(root)
    assert_reported(errors, r"topic review.dead of the Kafka contract has no KafkaTopic")
    assert_reported(errors, r"KafkaTopic review.dlq is not in the Kafka contract")


def test_max_replicas_must_equal_partitions(root):
    edit(root / "k8s/base/scaledobjects.yaml", "  maxReplicaCount: 6", "  maxReplicaCount: 4")
    assert_reported(k8s_errors(root), r"ScaledObject/quorum-agent-static maxReplicaCount 4 != 6 partitions")


def test_scaled_object_must_target_a_deployment_running_its_group(root):
    edit(root / "k8s/base/scaledobjects.yaml", "    name: quorum-agent-tests", "    name: quorum-agent-nope")
    edit(root / "k8s/base/scaledobjects.yaml", "consumerGroup: agent-reviewer", "consumerGroup: agent-static")
    errors = k8s_errors(root)
    assert_reported(errors, r"ScaledObject/quorum-agent-tests targets missing Deployment quorum-agent-nope")
    assert_reported(errors, r"ScaledObject/quorum-agent-reviewer watches group agent-static")


def test_every_deployment_needs_a_pdb_and_a_network_policy(root):
    pdbs = root / "k8s/base/pdbs.yaml"
    pdbs.write_text(pdbs.read_text().replace("name: quorum-critic", "name: quorum-critic-x").replace(
        "app.kubernetes.io/name: quorum-critic\n", "app.kubernetes.io/name: quorum-nobody\n"))
    nps = root / "k8s/base/networkpolicies.yaml"
    nps.write_text(nps.read_text().replace("      app.kubernetes.io/name: quorum-indexer\n", "      app.kubernetes.io/name: quorum-nobody\n"))
    errors = k8s_errors(root)
    assert_reported(errors, r"Deployment/quorum-critic has no PodDisruptionBudget")
    assert_reported(errors, r"Deployment/quorum-indexer is not covered by a NetworkPolicy")


def test_default_deny_is_required(root):
    edit(root / "k8s/base/networkpolicies.yaml", '  policyTypes: ["Ingress", "Egress"]\n---', '  policyTypes: ["Ingress"]\n---')
    assert_reported(k8s_errors(root), r"no default-deny NetworkPolicy")


def test_pod_security(root):
    deps = root / "k8s/base/deployments.yaml"
    deps.write_text(deps.read_text().replace("readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false", 1)
                    .replace('drop: ["ALL"]', 'drop: ["NET_RAW"]', 1)
                    .replace("type: RuntimeDefault", "type: Unconfined", 1))
    errors = k8s_errors(root)
    assert_reported(errors, r"Deployment/quorum-gateway/gateway: readOnlyRootFilesystem must be true")
    assert_reported(errors, r"Deployment/quorum-gateway/gateway: capabilities must drop ALL")
    assert_reported(errors, r"Deployment/quorum-gateway: pod seccompProfile must be RuntimeDefault")


def test_secrets_are_referenced_never_inlined(root):
    edit(root / "k8s/base/deployments.yaml", "            - name: HTTP_ADDR\n", "            - name: OPENAI_API_KEY\n              value: sk-live\n            - name: HTTP_ADDR\n")
    (root / "k8s/base/secret.yaml").write_text("apiVersion: v1\nkind: Secret\nmetadata:\n  name: leaked\nstringData:\n  token: x\n")
    edit(root / "k8s/base/kustomization.yaml", "  - hpa.yaml", "  - hpa.yaml\n  - secret.yaml")
    errors = k8s_errors(root)
    assert_reported(errors, r"OPENAI_API_KEY is inlined")
    assert_reported(errors, r"Secret/leaked is inlined")


def test_agents_get_a_grace_period_that_lets_a_review_finish(root):
    edit(root / "k8s/base/deployments.yaml", "terminationGracePeriodSeconds: 330", "terminationGracePeriodSeconds: 30")
    assert_reported(k8s_errors(root), r"Deployment/quorum-agent-static: terminationGracePeriodSeconds 30 < 300")


def redis_as_a_deployment(root, *, aof="yes"):
    """The Redis of before: a Deployment whose data dir is an emptyDir."""
    f = root / "k8s/base/redis.yaml"
    docs = list(yaml.safe_load_all(f.read_text()))
    sts = docs[0]
    assert sts["kind"] == "StatefulSet"
    spec = sts["spec"]
    for k in ("serviceName", "updateStrategy", "persistentVolumeClaimRetentionPolicy", "volumeClaimTemplates"):
        del spec[k]
    spec["strategy"] = {"type": "Recreate"}
    spec["template"]["spec"]["volumes"] = [{"name": "data", "emptyDir": {"sizeLimit": "1Gi"}}]
    sts["kind"] = "Deployment"
    args = spec["template"]["spec"]["containers"][0]["args"]
    args[args.index("--appendonly") + 1] = aof
    f.write_text(yaml.safe_dump_all(docs, sort_keys=False))


def test_redis_as_a_deployment_without_persistence_fails(root):
    redis_as_a_deployment(root, aof="no")
    errors = k8s_errors(root)
    for overlay in ("dev", "prod"):
        assert_reported(errors, rf"overlays/{overlay}: Deployment/quorum-redis: Redis must be a StatefulSet with a volumeClaimTemplate")
        assert_reported(errors, rf"overlays/{overlay}: Deployment/quorum-redis: no volumeClaimTemplate is mounted at Redis's data dir /data")
        assert_reported(errors, rf"overlays/{overlay}: Deployment/quorum-redis: AOF is off \(appendonly no\)")


def test_redis_statefulset_needs_aof_on_a_claim_at_its_data_dir(root):
    f = root / "k8s/base/redis.yaml"
    edit(f, '            - --appendonly\n            - "yes"', '            - --appendonly\n            - "no"')
    edit(f, "            - --appendfsync\n            - everysec", "            - --appendfsync\n            - \"no\"")
    edit(f, "            - --dir\n            - /data", "            - --dir\n            - /var/lib/redis")
    errors = k8s_errors(root)
    assert_reported(errors, r"dev: StatefulSet/quorum-redis: AOF is off \(appendonly no\)")
    assert_reported(errors, r"dev: StatefulSet/quorum-redis: appendfsync no leaves the AOF unsynced")
    assert_reported(errors, r"dev: StatefulSet/quorum-redis: no volumeClaimTemplate is mounted at Redis's data dir /var/lib/redis")
    assert not any("must be a StatefulSet" in e for e in errors)


def test_redis_aof_may_come_from_a_mounted_config_file(root):
    """appendonly in a redis.conf from a ConfigMap counts; a missing one does not."""
    f = root / "k8s/base/redis.yaml"
    docs = list(yaml.safe_load_all(f.read_text()))
    pod = docs[0]["spec"]["template"]["spec"]
    c = pod["containers"][0]
    c["args"] = ["/etc/redis/redis.conf"]
    c["volumeMounts"].append({"name": "conf", "mountPath": "/etc/redis", "readOnly": True})
    pod["volumes"] = [{"name": "conf", "configMap": {"name": "quorum-redis-conf"}}]
    conf = "dir /data\nappendonly {aof}\nappendfsync everysec\nsave \"\"\n"
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "quorum-redis-conf"}, "data": {"redis.conf": conf.format(aof="yes")}}
    f.write_text(yaml.safe_dump_all(docs + [cm], sort_keys=False))
    assert k8s_errors(root) == []
    cm["data"]["redis.conf"] = conf.format(aof="no")
    f.write_text(yaml.safe_dump_all(docs + [cm], sort_keys=False))
    assert_reported(k8s_errors(root), r"dev: StatefulSet/quorum-redis: AOF is off \(appendonly no\)")


def test_redis_keeps_its_client_and_headless_services(root):
    f = root / "k8s/base/redis.yaml"
    edit(f, "  clusterIP: None\n", "")
    edit(f, "metadata:\n  name: quorum-redis\nspec:\n  selector:", "metadata:\n  name: redis\nspec:\n  selector:")
    errors = k8s_errors(root)
    assert_reported(errors, r"dev: StatefulSet/quorum-redis: serviceName quorum-redis-headless is not a headless Service")
    assert_reported(errors, r"dev: no client Service quorum-redis")
    assert_reported(errors, r"dev: Secret/quorum-redis redis-url redis://quorum-redis:6379 does not name a Service port")


def test_redis_url_comes_from_a_secret(root):
    edit(root / "k8s/base/configmap.yaml", "  QUORUM_REDIS_PREFIX:", "  REDIS_URL: redis://quorum-redis:6379\n  QUORUM_REDIS_PREFIX:")
    deps = root / "k8s/base/deployments.yaml"
    text = deps.read_text()
    ref = "            - name: REDIS_URL\n              valueFrom:\n                secretKeyRef:\n                  name: quorum-redis\n                  key: redis-url\n"
    assert text.count(ref) == 9
    text = text.replace(ref, "            - name: REDIS_URL\n              value: redis://quorum-redis:6379\n", 1)
    deps.write_text(text.replace(ref, "", 1))
    errors = k8s_errors(root)
    assert_reported(errors, r"dev: ConfigMap/quorum-config: REDIS_URL belongs in Secret quorum-redis")
    assert_reported(errors, r"dev: Deployment/quorum-gateway: REDIS_URL must come from Secret quorum-redis key redis-url")
    assert_reported(errors, r"dev: Deployment/quorum-agent-static gets no REDIS_URL")


def test_only_a_credential_free_redis_url_may_be_generated(root):
    edit(root / "k8s/base/kustomization.yaml", "redis-url=redis://quorum-redis:6379", "redis-url=redis://:hunter2@quorum-redis:6379")
    assert_reported(k8s_errors(root), r"dev: Secret/quorum-redis is inlined in the manifests")


def test_managed_redis_component_drops_the_in_cluster_redis(root):
    f = root / "k8s/components/managed-redis/kustomization.yaml"
    text = f.read_text()
    # Keep the StatefulSet and the generated Secret: both patches go.
    for kind in ("StatefulSet", "Secret"):
        text = re.sub(rf"  - target:\n      kind: {kind}\n      name: quorum-redis\n    patch: \|-\n(      .*\n)+?(?=  - target:|\Z)", "", text)
    f.write_text(text)
    errors = k8s_errors(root)
    assert_reported(errors, r"prod\+components/managed-redis: StatefulSet/quorum-redis is rendered although Redis is managed")
    assert_reported(errors, r"prod\+components/managed-redis: Secret/quorum-redis is rendered although Redis is managed")
    assert_reported(errors, r"prod\+components/managed-redis: Secret/quorum-redis is inlined")
    assert not any(e.startswith(("k8s/overlays/dev:", "k8s/overlays/prod:")) for e in errors), errors


def qdrant_docs(root):
    f = root / "k8s/base/qdrant.yaml"
    docs = list(yaml.safe_load_all(f.read_text()))
    assert docs[0]["kind"] == "StatefulSet"
    return f, docs


def test_qdrant_as_a_deployment_without_a_claim_fails(root):
    """Qdrant as a Deployment whose storage is an emptyDir: the index is lost on every restart."""
    f, docs = qdrant_docs(root)
    sts = docs[0]
    spec = sts["spec"]
    for k in ("serviceName", "updateStrategy", "persistentVolumeClaimRetentionPolicy", "volumeClaimTemplates"):
        del spec[k]
    spec["strategy"] = {"type": "Recreate"}
    spec["template"]["spec"]["volumes"].append({"name": "storage", "emptyDir": {"sizeLimit": "10Gi"}})
    sts["kind"] = "Deployment"
    f.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    errors = k8s_errors(root)
    for overlay in ("dev", "prod"):
        assert_reported(errors, rf"overlays/{overlay}: Deployment/quorum-qdrant: Qdrant must be a StatefulSet with a volumeClaimTemplate")
        assert_reported(errors, rf"overlays/{overlay}: Deployment/quorum-qdrant: no volumeClaimTemplate is mounted at Qdrant's storage /qdrant/storage")


def test_qdrant_statefulset_keeps_its_claim_writes_only_to_volumes_and_is_probed_on_http(root):
    f, docs = qdrant_docs(root)
    spec = docs[0]["spec"]
    spec["persistentVolumeClaimRetentionPolicy"]["whenDeleted"] = "Delete"
    c = spec["template"]["spec"]["containers"][0]
    # The claim at the wrong place, and no volume for the init file any more.
    c["volumeMounts"] = [m for m in c["volumeMounts"] if m["name"] != "init"]
    next(m for m in c["volumeMounts"] if m["name"] == "storage")["mountPath"] = "/var/lib/qdrant"
    c["readinessProbe"]["httpGet"]["path"] = "/healthz"
    c["livenessProbe"]["httpGet"]["port"] = "grpc"
    f.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    errors = k8s_errors(root)
    assert_reported(errors, r"dev: StatefulSet/quorum-qdrant: persistentVolumeClaimRetentionPolicy.whenDeleted must be Retain")
    assert_reported(errors, r"dev: StatefulSet/quorum-qdrant: no volumeClaimTemplate is mounted at Qdrant's storage /qdrant/storage")
    assert_reported(errors, r"dev: StatefulSet/quorum-qdrant: Qdrant writes its storage dir /qdrant/storage, which is on the read-only root")
    assert_reported(errors, r"dev: StatefulSet/quorum-qdrant: Qdrant writes its init file's dir /qdrant/init, which is on the read-only root")
    assert_reported(errors, r"dev: StatefulSet/quorum-qdrant: readinessProbe path /healthz is not one of /readyz")
    assert_reported(errors, r"dev: StatefulSet/quorum-qdrant: livenessProbe httpGet on port grpc \(6334\); Qdrant serves HTTP on 6333")
    assert not any("must be a StatefulSet" in e for e in errors)


def test_qdrant_default_init_file_is_on_the_read_only_root(root):
    """Without QDRANT_INIT_FILE_PATH Qdrant writes /qdrant/.qdrant-initialized."""
    edit(root / "k8s/base/qdrant.yaml", "            - name: QDRANT_INIT_FILE_PATH\n              value: /qdrant/init/.qdrant-initialized\n", "")
    assert_reported(k8s_errors(root), r"dev: StatefulSet/quorum-qdrant: Qdrant writes its init file's dir /qdrant, which is on the read-only root")


def test_qdrant_keeps_its_client_and_headless_services(root):
    f, docs = qdrant_docs(root)
    client, headless = docs[1], docs[2]
    assert (client["metadata"]["name"], headless["metadata"]["name"]) == ("quorum-qdrant", "quorum-qdrant-headless")
    client["spec"]["ports"] = [p for p in client["spec"]["ports"] if p["name"] != "grpc"]
    del headless["spec"]["clusterIP"]
    f.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    errors = k8s_errors(root)
    assert_reported(errors, r"dev: StatefulSet/quorum-qdrant: serviceName quorum-qdrant-headless is not a headless Service")
    assert_reported(errors, r"dev: Service/quorum-qdrant does not expose Qdrant's gRPC port 6334")
    # QDRANT_URL's port 6334 is gone from the Service too.
    assert_reported(errors, r"dev: Deployment/quorum-indexer: QDRANT_URL http://quorum-qdrant:6334: Service/quorum-qdrant has no port 6334")


def test_qdrant_url_reaches_the_grpc_port_of_every_client(root):
    edit(root / "k8s/base/configmap.yaml", "  QDRANT_URL: http://quorum-qdrant:6334", "  QDRANT_URL: http://quorum-qdrant:6333")
    errors = k8s_errors(root)
    for d in ("indexer", "agent-reviewer", "agent-security", "agent-tests"):
        assert_reported(errors, rf"dev: Deployment/quorum-{d}: QDRANT_URL http://quorum-qdrant:6333 reaches Qdrant's port 6333; the client speaks gRPC, on 6334")
    assert not any("agent-static" in e for e in errors), errors


def test_qdrant_url_is_required(root):
    edit(root / "k8s/base/configmap.yaml", "  QDRANT_URL: http://quorum-qdrant:6334\n", "")
    errors = k8s_errors(root)
    assert_reported(errors, r"dev: Deployment/quorum-indexer gets no QDRANT_URL: it keeps an index of its own that no agent sees")
    assert_reported(errors, r"dev: Deployment/quorum-agent-tests gets no QDRANT_URL: it has no search_code / search_docs")


def test_qdrant_is_reachable_from_the_model_agents_and_the_indexer_only(root):
    nps = root / "k8s/base/networkpolicies.yaml"
    parts = nps.read_text().split("\n---\n")
    rule = "    # The hybrid index (gRPC).\n    - to:\n        - podSelector:\n            matchLabels:\n              app.kubernetes.io/name: quorum-qdrant\n      ports:\n        - port: 6334\n          protocol: TCP\n"
    i = next(i for i, d in enumerate(parts) if "  name: quorum-agent-security\n" in d)
    assert rule in parts[i]
    parts[i] = parts[i].replace(rule, "")
    # agent-static let in, and the indexer left out.
    i = next(i for i, d in enumerate(parts) if "  name: quorum-qdrant\n" in d)
    parts[i] = parts[i].replace("app.kubernetes.io/name: quorum-indexer\n", "app.kubernetes.io/name: quorum-agent-static\n")
    nps.write_text("\n---\n".join(parts))
    errors = k8s_errors(root)
    assert_reported(errors, r"dev: Deployment/quorum-agent-security: no egress NetworkPolicy lets it reach Qdrant on 6334")
    assert_reported(errors, r"dev: Deployment/quorum-indexer: Qdrant's NetworkPolicies do not admit it on 6334")
    assert_reported(errors, r"dev: NetworkPolicy/quorum-qdrant admits Deployment/quorum-agent-static to Qdrant")
    assert not any("agent-reviewer" in e or "agent-tests" in e for e in errors), errors


def test_qdrant_ingress_from_outside_the_namespace_is_refused(root):
    edit(root / "k8s/base/networkpolicies.yaml",
         "        - podSelector:\n            matchLabels:\n              app.kubernetes.io/name: quorum-agent-tests\n      ports:\n        - port: 6334",
         "        - podSelector:\n            matchLabels:\n              app.kubernetes.io/name: quorum-agent-tests\n        - ipBlock:\n            cidr: 10.0.0.0/8\n      ports:\n        - port: 6334")
    assert_reported(k8s_errors(root), r"dev: NetworkPolicy/quorum-qdrant admits traffic to Qdrant from outside the fleet's pods")


def test_managed_qdrant_component_drops_the_in_cluster_qdrant(root):
    f = root / "k8s/components/managed-qdrant/kustomization.yaml"
    text = f.read_text()
    # Keep the StatefulSet and the ConfigMap's in-cluster URL; no egress allow.
    for kind, name in (("StatefulSet", "quorum-qdrant"), ("ConfigMap", "quorum-config")):
        text, n = re.subn(rf"  - target:\n      kind: {kind}\n      name: {name}\n    patch: \|-\n(      .*\n)+?(?=  - target:|\Z)", "", text)
        assert n == 1, kind
    text, n = re.subn(r"  - target:\n      kind: Deployment\n.*\Z", "", text, flags=re.S)
    assert n == 1
    text = text.replace("resources:\n  - allow-managed-qdrant.yaml\n", "")
    f.write_text(text)
    errors = k8s_errors(root)
    where = r"prod\+components/managed-qdrant"
    assert_reported(errors, rf"{where}: StatefulSet/quorum-qdrant is rendered although Qdrant is managed")
    assert_reported(errors, rf"{where}: Deployment/quorum-indexer: QDRANT_URL http://quorum-qdrant:6334 names the in-cluster Qdrant")
    assert_reported(errors, rf"{where}: Deployment/quorum-agent-reviewer: no egress NetworkPolicy lets it reach the managed Qdrant on 6334")
    assert not any(e.startswith(("k8s/overlays/dev:", "k8s/overlays/prod:")) for e in errors), errors


def test_managed_qdrant_url_comes_from_a_required_secret(root):
    edit(root / "k8s/components/managed-qdrant/kustomization.yaml", "              key: qdrant-url\n", "              key: qdrant-url\n              optional: true\n")
    assert_reported(k8s_errors(root), r"prod\+components/managed-qdrant: Deployment/quorum-agent-tests: QDRANT_URL from Secret quorum-qdrant must not be optional")


def test_mcp_needs_a_secret_token_and_accepts_its_service_names(root):
    mcp = root / "k8s/base/mcp.yaml"
    edit(mcp, "quorum-mcp,quorum-mcp.quorum,", "quorum-mcp,")
    edit(mcp, "                  key: mcp-token\n", "                  key: mcp-token\n                  optional: true\n")
    errors = k8s_errors(root)
    assert_reported(errors, r"quorum-mcp: --allowed-host lacks quorum-mcp\.quorum \(Service/quorum-mcp\)")
    assert_reported(errors, r"quorum-mcp: QUORUM_MCP_TOKEN must come from a Secret")


def test_pdbs_must_let_a_drain_through(root):
    pdbs = root / "k8s/base/pdbs.yaml"
    edit(pdbs, "  name: quorum-redis\nspec:\n  maxUnavailable: 1", "  name: quorum-redis\nspec:\n  maxUnavailable: 0")
    edit(pdbs, "  name: quorum-gateway\nspec:\n  maxUnavailable: 1", "  name: quorum-gateway\nspec:\n  minAvailable: 100%")
    edit(pdbs, "  name: quorum-critic\nspec:\n  maxUnavailable: 1", "  name: quorum-critic\nspec:\n  minAvailable: 1")
    errors = k8s_errors(root)
    assert_reported(errors, r"dev: PodDisruptionBudget/quorum-redis lets no pod of StatefulSet/quorum-redis \(1 replica\(s\)\) be evicted")
    # The gateway's HPA floor is 2 in prod: 100% of it still blocks.
    assert_reported(errors, r"prod: PodDisruptionBudget/quorum-gateway lets no pod of Deployment/quorum-gateway \(2 replica\(s\)\)")
    assert_reported(errors, r"dev: PodDisruptionBudget/quorum-critic lets no pod of Deployment/quorum-critic")


def test_prod_replication_and_tls(root):
    edit(root / "k8s/overlays/prod/kustomization.yaml", "        value: 3\n  - target:\n      kind: Kafka\n", "        value: 1\n  - target:\n      kind: Kafka\n")
    edit(root / "k8s/overlays/prod/kustomization.yaml", "        path: /spec/config/min.insync.replicas\n        value: 2", "        path: /spec/config/min.insync.replicas\n        value: 1")
    ing = root / "k8s/overlays/prod/ingress.yaml"
    ing.write_text(re.sub(r"  tls:\n    - hosts:\n        - quorum.example.com\n      secretName: quorum-gateway-tls\n", "", ing.read_text()))
    errors = k8s_errors(root)
    assert_reported(errors, r"prod: KafkaNodePool/dual-role needs 3 brokers")
    assert_reported(errors, r"prod: KafkaTopic review.dlq: min.insync.replicas must be 2")
    assert_reported(errors, r"prod: the gateway has no TLS Ingress")


def test_compose_is_parsed_and_schema_checked(root):
    edit(root / "deploy/docker-compose.yml", "  redis:\n    image: redis:7.4.2-alpine", "  redis:\n    imagee: redis:7.4.2-alpine")
    errors = []
    check.check_compose(root, SCHEMAS, errors)
    assert_reported(errors, r"docker-compose config")
    assert_reported(errors, r"services.redis: 'imagee' does not match any of the regexes")


def test_compose_services_need_health_checks(root):
    f = root / "deploy/docker-compose.yml"
    text = f.read_text()
    start = text.index("\n  redis:\n")
    end = text.index("\n\n", start + 1)
    f.write_text(text[:start] + "\n  redis:\n    image: redis:7.4.2-alpine" + text[end:])
    errors = []
    check.check_compose(root, SCHEMAS, errors)
    assert_reported(errors, r"service redis has no healthcheck")


def test_compose_redis_keeps_an_aof_on_a_named_volume(root):
    f = root / "deploy/docker-compose.yml"
    edit(f, '"--appendonly", "yes"', '"--appendonly", "no"')
    edit(f, "      - redis-data:/data\n", "      - /tmp/redis:/data\n")
    errors = []
    check.check_compose(root, SCHEMAS, errors)
    assert_reported(errors, r"service redis: AOF is off")
    assert_reported(errors, r"service redis: no named volume at its data dir /data")


def compose_errors(root):
    errors = []
    check.check_compose(root, SCHEMAS, errors)
    return errors


def test_compose_qdrant_clients_get_its_grpc_address_wait_for_it_and_have_a_model(root):
    f = root / "deploy/docker-compose.yml"
    edit(f, '  agent-tests:\n    <<: *quorum\n    command: ["agent-tests"]\n    depends_on: *search-deps\n',
         '  agent-tests:\n    <<: *quorum\n    command: ["agent-tests"]\n')
    edit(f, '  indexer:\n    <<: *quorum\n    command: ["indexer"]\n',
         '  indexer:\n    <<: *quorum\n    command: ["indexer"]\n    environment:\n      <<: *quorum-env\n      QDRANT_URL: http://qdrant:6333\n      QUORUM_EMBED_MODEL_DIR: /models\n')
    edit(f, "      - qdrant-data:/qdrant/storage\n", "      - /tmp/qdrant:/qdrant/storage\n")
    errors = compose_errors(root)
    assert_reported(errors, r"service agent-tests does not wait for qdrant \(depends_on condition: service_healthy\)")
    assert_reported(errors, r"service indexer: QDRANT_URL http://qdrant:6333 is not qdrant's gRPC port 6334")
    assert_reported(errors, r"service indexer: QUORUM_EMBED_MODEL_DIR /models is not where the image has the model \(/opt/quorum/models/all-MiniLM-L6-v2\)")
    assert_reported(errors, r"service qdrant: no named volume at its storage /qdrant/storage")
    assert not any("agent-reviewer" in e or "agent-static" in e for e in errors), errors


def test_compose_qdrant_url_and_model_are_required(root):
    f = root / "deploy/docker-compose.yml"
    edit(f, "    QDRANT_URL: http://qdrant:6334\n    QUORUM_EMBED_MODEL_DIR: /opt/quorum/models/all-MiniLM-L6-v2\n", "")
    errors = compose_errors(root)
    assert_reported(errors, r"service agent-reviewer gets no QDRANT_URL")
    assert_reported(errors, r"service indexer: no embedding model \(QUORUM_EMBED_MODEL_DIR or QUORUM_EMBED_URL\)")


def test_dockerfile_image_carries_the_embedding_model(root):
    f = root / "deploy/Dockerfile"
    edit(f, "COPY --from=build /opt/quorum/models/all-MiniLM-L6-v2 /opt/quorum/models/all-MiniLM-L6-v2\n", "")
    errors = []
    check.check_dockerfile(root, errors)
    assert_reported(errors, r"deploy/Dockerfile: QUORUM_EMBED_MODEL_DIR /opt/quorum/models/all-MiniLM-L6-v2 is not a COPY --from a build stage")
    edit(f, "ENV QUORUM_EMBED_MODEL_DIR=/opt/quorum/models/all-MiniLM-L6-v2\n", "")
    errors = []
    check.check_dockerfile(root, errors)
    assert_reported(errors, r"deploy/Dockerfile: the runtime image sets no QUORUM_EMBED_MODEL_DIR")


def test_dockerfile_model_must_be_installed_where_it_is_copied_from(root):
    edit(root / "deploy/Dockerfile", "install-embedding-model.sh /opt/quorum/models/all-MiniLM-L6-v2", "install-embedding-model.sh /tmp/model")
    errors = []
    check.check_dockerfile(root, errors)
    assert_reported(errors, r"is not a COPY --from a build stage that installed the model there")


def test_dashboard_schema_queries_and_datasource(root):
    f = root / "deploy/grafana/dashboards/quorum.json"
    d = json.loads(f.read_text())
    d["refreshh"] = "5s"
    panel = next(p for p in d["panels"] if p["type"] != "row")
    panel["datasource"] = {"type": "prometheus", "uid": "elsewhere"}
    panel["targets"][0]["expr"] = " "
    panel["targets"][0]["exemplar"] = "yes"
    f.write_text(json.dumps(d))
    errors = []
    check.check_grafana(root, SCHEMAS, errors)
    assert_reported(errors, r"Additional properties are not allowed \('refreshh'")
    assert_reported(errors, r"uses datasource elsewhere that is not provisioned")
    assert_reported(errors, r"has an empty query")
    assert_reported(errors, r"'yes' is not of type 'boolean'")


def test_prometheus_config_is_checked_by_promtool(root):
    edit(root / "deploy/prometheus/prometheus.yml", "  scrape_interval: 5s", "  scrape_interval: often")
    errors = []
    check.check_prometheus(root, errors)
    assert_reported(errors, r"promtool")


def test_checkov_failures_are_reported(root):
    edit(root / "k8s/base/deployments.yaml", "            privileged: false", "            privileged: true")
    edit(root / "deploy/Dockerfile", "USER 10001:10001\n", "")
    errors = []
    check.check_checkov(root, errors)
    assert_reported(errors, r"checkov k8s/: CKV_K8S_16")
    assert_reported(errors, r"checkov deploy/Dockerfile: CKV_DOCKER_3")
