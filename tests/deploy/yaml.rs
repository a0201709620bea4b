//! The deployment and CI files parsed as YAML, and the objects in them checked against
//! each other: every file parses; the Kubernetes objects select the Deployment's pods and
//! name its ports; the Compose services depend on services that exist and use pinned
//! images; the Collector's pipelines use components it defines; the workflows have
//! triggers and jobs.
//!
//! Needs the dev-dependency `serde_norway = "0.9"` (the maintained fork of `serde_yaml`,
//! same API; `serde_yaml = "0.9"` works too, by changing the `use` below). Enabled from
//! `tests/deploy_files.rs` with `#[path = "deploy/yaml.rs"] mod yaml;`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_norway as yaml_crate;
use yaml_crate::{Mapping, Value};

use crate::support::{drain_deadline_secs, files_under};

/// Every document of the YAML file at `path`.
fn documents(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("read");
    yaml_crate::Deserializer::from_str(&text)
        .map(|doc| {
            Value::deserialize(doc)
                .unwrap_or_else(|e| panic!("{} is not valid YAML: {e}", path.display()))
        })
        .collect()
}

/// The single document of a file under the repository root.
fn document(relative: &str) -> Value {
    let docs = documents(&crate::support::repo().join(relative));
    assert_eq!(docs.len(), 1, "{relative} holds {} documents", docs.len());
    docs.into_iter().next().expect("one document")
}

fn yaml_files() -> Vec<PathBuf> {
    let mut files = files_under("deploy", &[".yaml", ".yml"]);
    files.extend(files_under(".github/workflows", &[".yml", ".yaml"]));
    files
}

/// A mapping's string keys.
fn keys(value: &Value) -> BTreeSet<String> {
    value
        .as_mapping()
        .map(|m| {
            m.keys()
                .filter_map(|k| k.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether every pair of `selector` is in `labels`.
fn selects(selector: &Value, labels: &Value) -> bool {
    let (Some(selector), Some(labels)) = (selector.as_mapping(), labels.as_mapping()) else {
        return false;
    };
    !selector.is_empty() && selector.iter().all(|(k, v)| labels.get(k) == Some(v))
}

/// Given every YAML file of deploy/ and .github/workflows/, then each parses, holds at
/// least one document, and no document is empty.
#[test]
fn every_yaml_file_parses() {
    let files = yaml_files();
    assert!(files.len() >= 10, "{files:?}");
    for file in files {
        let docs = documents(&file);
        assert!(!docs.is_empty(), "{} is empty", file.display());
        for doc in docs {
            assert!(
                doc.as_mapping().is_some_and(|m| !m.is_empty()),
                "{} has a document that is not a mapping",
                file.display()
            );
        }
    }
}

/// The Kubernetes objects of deploy/kubernetes/, by kind (the patch file, which is no
/// object, left out).
fn kubernetes_objects() -> Vec<Value> {
    files_under("deploy/kubernetes", &[".yaml", ".yml"])
        .iter()
        .filter(|p| !p.ends_with("controller-patch.yaml"))
        .flat_map(|p| documents(p))
        .collect()
}

fn object<'a>(objects: &'a [Value], kind: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"].as_str() == Some(kind))
        .unwrap_or_else(|| panic!("no {kind} in deploy/kubernetes"))
}

/// The object of `kind` named `name` (the replicas' objects share their kinds with the
/// front's).
fn named<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"].as_str() == Some(kind) && o["metadata"]["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("no {kind} {name} in deploy/kubernetes"))
}

/// Given the Kubernetes manifests, then every object has an apiVersion, a kind and a name;
/// the Services (the replicas' and the headless one the front reads), the
/// PodDisruptionBudget and the autoscaler find the StatefulSet's pods, which the headless
/// Service governs; the
/// Service and the Ingress name ports that exist; the probes hit /readyz and /healthz on
/// the container's port; the grace period outlasts preStop plus the drain deadline; the
/// ConfigMap is mounted where VODPACK_CONFIG points.
#[test]
fn kubernetes_objects_fit_together() {
    let objects = kubernetes_objects();
    for o in &objects {
        assert!(o["apiVersion"].as_str().is_some(), "no apiVersion: {o:?}");
        assert!(o["metadata"]["name"].as_str().is_some(), "no name: {o:?}");
    }
    let deployment = named(&objects, "StatefulSet", "vodpack");
    let name = deployment["metadata"]["name"].as_str().expect("name");
    let headless = named(&objects, "Service", "vodpack-headless");
    assert_eq!(headless["spec"]["clusterIP"].as_str(), Some("None"));
    assert_eq!(
        deployment["spec"]["serviceName"].as_str(),
        headless["metadata"]["name"].as_str()
    );
    let pod = &deployment["spec"]["template"];
    let labels = &pod["metadata"]["labels"];
    assert!(selects(
        &deployment["spec"]["selector"]["matchLabels"],
        labels
    ));

    let service = named(&objects, "Service", "vodpack");
    for service in [service, headless] {
        assert!(
            selects(&service["spec"]["selector"], labels),
            "the Service selects no pod"
        );
    }
    let pdb = named(&objects, "PodDisruptionBudget", "vodpack");
    assert!(selects(&pdb["spec"]["selector"]["matchLabels"], labels));
    let hpa = object(&objects, "HorizontalPodAutoscaler");
    assert_eq!(
        hpa["spec"]["scaleTargetRef"]["kind"].as_str(),
        Some("StatefulSet")
    );
    assert_eq!(hpa["spec"]["scaleTargetRef"]["name"].as_str(), Some(name));
    let (min, max) = (
        hpa["spec"]["minReplicas"].as_u64().expect("minReplicas"),
        hpa["spec"]["maxReplicas"].as_u64().expect("maxReplicas"),
    );
    assert!(min >= 2 && min <= max, "replicas {min}..{max}");

    let containers = pod["spec"]["containers"].as_sequence().expect("containers");
    assert_eq!(containers.len(), 1);
    let container = &containers[0];
    let ports: Vec<(&str, u64)> = container["ports"]
        .as_sequence()
        .expect("ports")
        .iter()
        .map(|p| {
            (
                p["name"].as_str().expect("port name"),
                p["containerPort"].as_u64().expect("containerPort"),
            )
        })
        .collect();
    let port_names: BTreeSet<&str> = ports.iter().map(|(n, _)| *n).collect();
    for service_port in service["spec"]["ports"]
        .as_sequence()
        .expect("service ports")
    {
        let target = service_port["targetPort"]
            .as_str()
            .expect("a named targetPort");
        assert!(port_names.contains(target), "Service targets port {target}");
    }
    for (probe, path) in [("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")] {
        let get = &container[probe]["httpGet"];
        assert_eq!(get["path"].as_str(), Some(path), "{probe}");
        let port = get["port"].as_str().expect("a named probe port");
        assert!(port_names.contains(port), "{probe} probes port {port}");
    }

    let grace = pod["spec"]["terminationGracePeriodSeconds"]
        .as_u64()
        .expect("grace period");
    let pre_stop = container["lifecycle"]["preStop"]["exec"]["command"]
        .as_sequence()
        .expect("a preStop command");
    assert_eq!(pre_stop[0].as_str(), Some("sleep"));
    let sleep: u64 = pre_stop[1]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("seconds");
    assert!(grace > sleep + drain_deadline_secs(), "grace {grace} s");

    let pod_security = &pod["spec"]["securityContext"];
    assert_eq!(pod_security["runAsNonRoot"].as_bool(), Some(true));
    assert!(pod_security["runAsUser"].as_u64().is_some_and(|u| u != 0));
    let security = &container["securityContext"];
    assert_eq!(security["readOnlyRootFilesystem"].as_bool(), Some(true));
    assert_eq!(security["allowPrivilegeEscalation"].as_bool(), Some(false));

    let configmap = named(&objects, "ConfigMap", "vodpack-config");
    let configmap_name = configmap["metadata"]["name"].as_str().expect("name");
    let volume = pod["spec"]["volumes"]
        .as_sequence()
        .expect("volumes")
        .iter()
        .find(|v| v["configMap"]["name"].as_str() == Some(configmap_name))
        .expect("the ConfigMap as a volume");
    let mount = container["volumeMounts"]
        .as_sequence()
        .expect("volumeMounts")
        .iter()
        .find(|m| m["name"] == volume["name"])
        .expect("the ConfigMap volume mounted");
    let config = container["env"]
        .as_sequence()
        .expect("env")
        .iter()
        .find(|e| e["name"].as_str() == Some("VODPACK_CONFIG"))
        .and_then(|e| e["value"].as_str())
        .expect("VODPACK_CONFIG");
    let (folder, file) = config.rsplit_once('/').expect("a path");
    assert_eq!(mount["mountPath"].as_str(), Some(folder));
    assert!(
        keys(&configmap["data"]).contains(file),
        "the ConfigMap has no {file}"
    );

    let ingress = object(&objects, "Ingress");
    for rule in ingress["spec"]["rules"].as_sequence().expect("rules") {
        for path in rule["http"]["paths"].as_sequence().expect("paths") {
            let backend = &path["backend"]["service"];
            assert_eq!(backend["name"], service["metadata"]["name"]);
            let port = backend["port"]["name"].as_str().expect("a named port");
            assert!(
                service["spec"]["ports"]
                    .as_sequence()
                    .expect("ports")
                    .iter()
                    .any(|p| p["name"].as_str() == Some(port)),
                "the Ingress names Service port {port}"
            );
        }
    }
}

/// Given deploy/compose.yaml, then it has the services the README names, every
/// `depends_on` names one of them, and every image but vodpack's own is pinned to a
/// version (no `latest`).
#[test]
fn compose_services_fit_together() {
    let compose = document("deploy/compose.yaml");
    let services = compose["services"].as_mapping().expect("services");
    let names = keys(&compose["services"]);
    for wanted in [
        "vodpack-1",
        "vodpack-2",
        "vodpack-3",
        "front",
        "minio",
        "minio-seed",
        "otel-collector",
        "jaeger",
        "prometheus",
    ] {
        assert!(names.contains(wanted), "no {wanted} service");
    }
    for (name, service) in services {
        let name = name.as_str().expect("a service name");
        let depends = &service["depends_on"];
        let dependencies: Vec<String> = match depends {
            Value::Sequence(list) => list
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            Value::Mapping(map) => map
                .keys()
                .filter_map(|k| k.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        };
        for dependency in dependencies {
            assert!(
                names.contains(&dependency),
                "{name} depends on missing {dependency}"
            );
        }
        if let Some(image) = service["image"].as_str() {
            let tag = image.rsplit_once(':').map(|(_, t)| t).unwrap_or("latest");
            assert!(
                name.starts_with("vodpack-") || (tag != "latest" && !tag.contains('/')),
                "{name} uses an unpinned image {image}"
            );
        }
    }
    for replica in ["vodpack-1", "vodpack-2", "vodpack-3"] {
        let service = &compose["services"][replica];
        assert_eq!(
            service["build"]["context"].as_str(),
            Some(".."),
            "{replica}"
        );
        let environment = keys(&service["environment"]);
        for variable in [
            "VODPACK_SOURCE",
            "VODPACK_S3_ENDPOINT",
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "VODPACK_INDEX_CACHE_DIR",
            "VODPACK_INDEX_CACHE_PREFIX",
        ] {
            assert!(
                environment.contains(variable),
                "{replica} gets no {variable}"
            );
        }
    }
    // The front names the three replicas, and mounts the front tier of deploy/front/.
    let replicas = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/front/vodpack-replicas.conf"),
    )
    .expect("the replica list");
    for replica in ["vodpack-1", "vodpack-2", "vodpack-3"] {
        assert!(
            replicas.contains(&format!("server {replica}:")),
            "{replica} not listed"
        );
    }
    let mounts: Vec<&str> = (compose["services"]["front"]["volumes"].as_sequence())
        .expect("front volumes")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for file in [
        "./front/vodpack-front.conf:",
        "./front/vodpack-replicas.conf:",
    ] {
        assert!(
            mounts.iter().any(|m| m.starts_with(file)),
            "front mounts no {file}"
        );
    }
}

/// Given the Collector and Prometheus configs, then every pipeline uses receivers and
/// exporters the Collector defines, and Prometheus loads the rules file at the path
/// Compose mounts it to.
#[test]
fn collector_and_prometheus_configs_fit_together() {
    let collector = document("deploy/otel-collector.yaml");
    let pipelines = collector["service"]["pipelines"]
        .as_mapping()
        .expect("pipelines");
    assert!(!pipelines.is_empty());
    for (_, pipeline) in pipelines {
        for (section, list) in [
            ("receivers", &pipeline["receivers"]),
            ("exporters", &pipeline["exporters"]),
        ] {
            for component in list.as_sequence().expect("a list") {
                let component = component.as_str().expect("a name");
                assert!(
                    keys(&collector[section]).contains(component),
                    "the pipeline uses undefined {section} {component}"
                );
            }
        }
    }

    let prometheus = document("deploy/prometheus.yml");
    let compose = document("deploy/compose.yaml");
    let volumes: Vec<&str> = compose["services"]["prometheus"]["volumes"]
        .as_sequence()
        .expect("volumes")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for rules in prometheus["rule_files"].as_sequence().expect("rule_files") {
        let rules = rules.as_str().expect("a path");
        assert!(
            volumes.iter().any(|v| v.split(':').nth(1) == Some(rules)),
            "Prometheus loads {rules}, which compose does not mount"
        );
    }
    let groups = document("deploy/prometheus-rules.yml");
    let rules = groups["groups"][0]["rules"].as_sequence().expect("rules");
    for rule in rules {
        assert!(
            rule["alert"].as_str().is_some() && rule["expr"].as_str().is_some(),
            "{rule:?}"
        );
    }
}

/// Given the workflows, then each has a trigger and jobs that run on a runner with steps;
/// the benchmarks run on demand only.
#[test]
fn workflows_have_triggers_and_jobs() {
    for file in files_under(".github/workflows", &[".yml", ".yaml"]) {
        let workflow = documents(&file).remove(0);
        let on = &workflow["on"];
        assert!(
            !matches!(on, Value::Null),
            "{} has no trigger",
            file.display()
        );
        let jobs: &Mapping = workflow["jobs"].as_mapping().expect("jobs");
        for (name, job) in jobs {
            assert!(job["runs-on"].as_str().is_some(), "{name:?} has no runner");
            assert!(
                job["steps"].as_sequence().is_some_and(|s| !s.is_empty()),
                "{name:?} has no steps"
            );
        }
    }
    let benchmarks = document(".github/workflows/benchmarks.yml");
    assert_eq!(
        keys(&benchmarks["on"]),
        BTreeSet::from(["workflow_dispatch".to_owned()])
    );
}
