//! The deployment files say what the code does: the Dockerfile runs the command the README
//! documents, every `VODPACK_*` variable they set is a real setting, the Compose stack is
//! wired to itself, the Kubernetes manifests probe the real endpoints and wait out the real
//! drain deadline, the ConfigMap's TOML is accepted by the real config loader, and CI runs
//! the README's test command and builds the image.
//!
//! These checks read the files as text (plus TOML through the crate's own `toml`). Parsing
//! the YAML as YAML needs a parser crate; `deploy/yaml.rs` holds those checks, to be
//! enabled with the dev-dependency it names.

#[path = "deploy/support.rs"]
mod support;
// Every YAML file parsed, and the manifests' structure checked.
#[path = "deploy/yaml.rs"]
mod yaml;

use std::collections::BTreeSet;

use support::{drain_deadline_secs, read, repo, Dockerfile};
use vodpack::config::{SettingsArgs, SETTINGS};

/// Variables that are not settings but are allowed in these files: the config file's
/// variable (a flag of `serve`, outside `SETTINGS`), the test suite's switch, and the
/// image's build argument naming the commit (read at compile time).
const OTHER_VARIABLES: [&str; 3] = ["VODPACK_CONFIG", "VODPACK_REQUIRE_TOOLS", "VODPACK_COMMIT"];

/// The `VODPACK_*` names mentioned in `text`.
fn vodpack_variables(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("VODPACK_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(tail.len());
        // `VODPACK_*` in prose names the family, not a variable.
        if end > "VODPACK_".len() {
            names.insert(tail[..end].to_owned());
        }
        rest = &tail[end..];
    }
    names
}

/// The value after `key:` on the first line of `text` holding it (quotes removed).
fn yaml_scalar<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|line| {
        let (k, v) = line.trim().trim_start_matches("- ").split_once(':')?;
        (k.trim() == key).then(|| v.trim().trim_matches('"'))
    })
}

/// The port of an address such as `0.0.0.0:8080`.
fn port_of(addr: &str) -> u16 {
    addr.rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {addr}"))
}

/// The port the image listens on, from its `VODPACK_LISTEN`.
fn image_port(image: &Dockerfile) -> u16 {
    port_of(
        &image
            .env_value("VODPACK_LISTEN")
            .expect("VODPACK_LISTEN in the Dockerfile"),
    )
}

/// The crate manifest.
fn manifest() -> toml::Table {
    toml::from_str(&read("Cargo.toml")).expect("Cargo.toml")
}

/// Given the Dockerfile, then the image runs `vodpack serve` (the binary Cargo.toml builds,
/// as the README documents it), built with `cargo build --release --locked` on the
/// toolchain of `rust-version`, as a numeric non-root user, exposing the port it listens
/// on, with a health check on /healthz.
#[test]
fn the_image_runs_vodpack_serve_as_documented() {
    let image = Dockerfile::load();
    let manifest = manifest();
    let bins = manifest["bin"].as_array().expect("[[bin]]");
    let bin = bins[0]["name"].as_str().expect("bin name");
    let command = image.command();
    assert_eq!(command.len(), 2, "{command:?}");
    assert!(
        command[0] == bin || command[0].ends_with(&format!("/{bin}")),
        "the image runs {}, Cargo.toml builds {bin}",
        command[0]
    );
    assert_eq!(command[1], "serve");

    assert!(image.stages.len() >= 2, "a multi-stage build");
    let builders = &image.stages[..image.stages.len() - 1];
    assert!(
        builders
            .iter()
            .flatten()
            .any(|i| i.keyword == "RUN" && i.args.contains("cargo build --release --locked")),
        "a build stage runs cargo build --release --locked"
    );
    let copies_binary = image
        .runtime_args("COPY")
        .iter()
        .any(|a| a.starts_with("--from=") && a.contains(&command[0]));
    assert!(
        copies_binary,
        "the runtime stage copies {} from the builder",
        command[0]
    );

    let rust_version = manifest["package"]["rust-version"]
        .as_str()
        .expect("rust-version");
    assert_eq!(
        image.arg_default("RUST_VERSION").as_deref(),
        Some(rust_version),
        "the builder's toolchain is Cargo.toml's rust-version"
    );

    let user = image.runtime_args("USER");
    let user = user.last().expect("a USER in the runtime stage");
    let uid: u32 = user
        .split(':')
        .next()
        .and_then(|u| u.parse().ok())
        .unwrap_or_else(|| {
            panic!("USER {user} is not numeric (Kubernetes' runAsNonRoot needs a number)")
        });
    assert_ne!(uid, 0, "the image runs as root");

    assert_eq!(image.exposed_ports(), vec![image_port(&image)]);
    let health = image.healthcheck().expect("a HEALTHCHECK").join(" ");
    assert!(health.contains("/healthz"), "{health}");

    // The README shows these commands and values.
    let readme = read("README.md");
    for documented in [
        "docker build -t vodpack .".to_owned(),
        format!("-p {0}:{0}", image_port(&image)),
        format!("{bin} serve"),
        image.env_value("VODPACK_LISTEN").expect("listen"),
        image.env_value("VODPACK_ROOT").expect("root"),
        uid.to_string(),
        "docker compose -f deploy/compose.yaml up".to_owned(),
        "kubectl apply -f deploy/kubernetes/".to_owned(),
    ] {
        assert!(
            readme.contains(&documented),
            "README.md does not show `{documented}`"
        );
    }
}

/// Given the Dockerfile, then its build argument `VODPACK_COMMIT` reaches the compiler in
/// the build stage (declared there too: a global `ARG` is not seen inside a stage
/// otherwise), the code compiles it into `vod_build_info`, and the runtime stage labels the
/// image with it; the README shows how to pass it.
#[test]
fn the_image_s_build_info_names_the_commit_it_was_built_from() {
    let image = Dockerfile::load();
    assert_eq!(
        image.arg_default("VODPACK_COMMIT").as_deref(),
        Some("unknown"),
        "a global ARG VODPACK_COMMIT, unknown when not given"
    );
    let declares = |stage: &[support::Instruction]| {
        (stage.iter()).any(|i| i.keyword == "ARG" && i.args.starts_with("VODPACK_COMMIT"))
    };
    let (runtime, builders) = image.stages.split_last().expect("stages");
    let builder = (builders.iter())
        .find(|stage| {
            (stage.iter()).any(|i| i.keyword == "RUN" && i.args.contains("cargo build --release"))
        })
        .expect("a build stage");
    assert!(
        declares(builder),
        "the build stage declares ARG VODPACK_COMMIT"
    );
    let build = (builder.iter())
        .find(|i| i.keyword == "RUN" && i.args.contains("cargo build --release"))
        .expect("the cargo build");
    let at = build.args.find("cargo build").unwrap_or(0);
    assert!(
        build.args[..at].contains("VODPACK_COMMIT"),
        "cargo build runs with VODPACK_COMMIT set: {}",
        build.args
    );
    assert!(
        declares(runtime),
        "the runtime stage declares ARG VODPACK_COMMIT"
    );
    assert!(
        (runtime.iter()).any(|i| i.keyword == "LABEL"
            && i.args.contains("org.opencontainers.image.revision")
            && i.args.contains("VODPACK_COMMIT")),
        "the image's revision label is the commit"
    );
    let metrics = read("src/telemetry/metrics.rs");
    assert!(
        metrics.contains("option_env!(\"VODPACK_COMMIT\")"),
        "vod_build_info reads VODPACK_COMMIT at compile time"
    );
    assert!(
        read("README.md").contains("--build-arg VODPACK_COMMIT="),
        "the README shows the build argument"
    );
}

/// Given every file that configures vodpack by variables, then each `VODPACK_*` name is
/// a setting of `SETTINGS` (or the config file's variable), so none is silently ignored.
#[test]
fn every_vodpack_variable_in_the_deployment_files_is_a_setting() {
    let known: BTreeSet<&str> = SETTINGS
        .iter()
        .map(|(_, var, _, _)| *var)
        .chain(OTHER_VARIABLES)
        .collect();
    let mut files = vec![
        repo().join("Dockerfile"),
        repo().join("README.md"),
        repo().join("docs/operations.md"),
    ];
    files.extend(support::files_under(
        "deploy",
        &[".yaml", ".yml", ".sh", ".md"],
    ));
    files.extend(support::files_under(
        ".github/workflows",
        &[".yml", ".yaml"],
    ));
    let mut seen = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read");
        for name in vodpack_variables(&text) {
            seen += 1;
            assert!(
                known.contains(name.as_str()),
                "{} sets {name}, which is not a setting (src/config/reference.rs SETTINGS)",
                file.display()
            );
        }
    }
    assert!(seen > 5, "the scan found almost nothing: {seen}");
    // The image's defaults are settings the binary reads.
    for (name, _) in Dockerfile::load().env() {
        assert!(
            known.contains(name.as_str()),
            "Dockerfile ENV {name} is not a setting"
        );
    }
}

/// Given .dockerignore, then the build context still holds every file Cargo needs to build
/// the binary: the manifest, the lock file and every target's source folder.
#[test]
fn the_build_context_keeps_what_cargo_needs() {
    let manifest = manifest();
    let mut needed: BTreeSet<String> = ["Cargo.toml", "Cargo.lock"].map(str::to_owned).into();
    let mut target_path = |path: &str| {
        needed.insert(path.split('/').next().expect("a path").to_owned());
    };
    if let Some(path) = manifest
        .get("lib")
        .and_then(|l| l.get("path"))
        .and_then(|p| p.as_str())
    {
        target_path(path);
    }
    for kind in ["bin", "bench"] {
        for target in manifest
            .get(kind)
            .and_then(|t| t.as_array())
            .into_iter()
            .flatten()
        {
            match target.get("path").and_then(|p| p.as_str()) {
                Some(path) => target_path(path),
                None if kind == "bench" => target_path("benches"),
                None => target_path("src"),
            }
        }
    }
    let ignore = read(".dockerignore");
    let patterns: Vec<&str> = ignore
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(
        patterns.first(),
        Some(&"*"),
        "an allow-list .dockerignore starts with *"
    );
    let allowed: BTreeSet<&str> = patterns
        .iter()
        .filter_map(|p| p.strip_prefix('!'))
        .map(|p| p.trim_end_matches('/'))
        .collect();
    for path in &needed {
        assert!(
            allowed.contains(path.as_str()),
            ".dockerignore leaves out {path}"
        );
    }
}

/// Given deploy/compose.yaml, then every file it mounts exists, vodpack reads the bucket
/// and prefix the seed service fills, sends traces to the collector's OTLP/HTTP port, and
/// Prometheus scrapes the port vodpack listens on.
#[test]
fn the_compose_stack_is_wired_to_itself() {
    let compose = read("deploy/compose.yaml");
    let deploy = repo().join("deploy");
    let mut mounts = 0;
    for line in compose.lines() {
        let Some(item) = line.trim().strip_prefix("- ") else {
            continue;
        };
        if item.starts_with("./") || item.starts_with("../") {
            let host = item.split(':').next().expect("a host path");
            assert!(
                deploy.join(host).exists(),
                "compose mounts {host}, which does not exist"
            );
            mounts += 1;
        }
    }
    assert!(
        mounts >= 4,
        "compose mounts its configs and the fixtures: {mounts}"
    );
    assert!(compose.contains("context: ..") && compose.contains("dockerfile: Dockerfile"));

    let source = yaml_scalar(&compose, "VODPACK_SOURCE").expect("VODPACK_SOURCE");
    let (bucket, prefix) = source
        .strip_prefix("s3://")
        .and_then(|s| s.split_once('/'))
        .expect("s3://bucket/prefix");
    assert_eq!(yaml_scalar(&compose, "S3_BUCKET"), Some(bucket));
    assert_eq!(yaml_scalar(&compose, "S3_PREFIX"), Some(prefix));
    let seed = read("deploy/seed-bucket.sh");
    assert!(
        seed.contains("$S3_BUCKET/$S3_PREFIX/"),
        "the seed script fills the prefix"
    );
    assert_eq!(
        yaml_scalar(&compose, "VODPACK_SOURCE_ALLOW_HTTP"),
        Some("true")
    );
    assert!(yaml_scalar(&compose, "VODPACK_S3_ENDPOINT")
        .is_some_and(|e| e.starts_with("http://minio:")));
    for aws in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"] {
        assert!(
            yaml_scalar(&compose, aws).is_some(),
            "compose sets no {aws}"
        );
    }

    let otlp = yaml_scalar(&compose, "OTEL_EXPORTER_OTLP_ENDPOINT").expect("an OTLP endpoint");
    assert_eq!(otlp, "http://otel-collector:4318");
    let collector = read("deploy/otel-collector.yaml");
    assert!(
        collector.contains("endpoint: 0.0.0.0:4318"),
        "the collector takes OTLP/HTTP on 4318"
    );
    assert!(
        collector.contains("endpoint: jaeger:4317"),
        "the collector sends to Jaeger"
    );

    let image = Dockerfile::load();
    let prometheus = read("deploy/prometheus.yml");
    for replica in ["vodpack-1", "vodpack-2", "vodpack-3"] {
        let target = format!("{replica}:{}", image_port(&image));
        assert!(prometheus.contains(&target), "Prometheus scrapes {target}");
    }
    assert!(compose.contains(&format!("\"{0}:{0}\"", image_port(&image))));
    // vodpack drains for up to drain-timeout-ms on SIGTERM; compose must wait longer.
    let grace = yaml_scalar(&compose, "stop_grace_period").expect("a stop_grace_period");
    let grace: u64 = grace.trim_end_matches('s').parse().expect("seconds");
    assert!(grace > drain_deadline_secs(), "stop_grace_period {grace}s");
}

/// The text after the first line containing `marker`, up to the next line indented as
/// little as that one (the block under a YAML key).
fn yaml_block<'a>(text: &'a str, marker: &str) -> Vec<&'a str> {
    let mut lines = text.lines().skip_while(|l| !l.contains(marker));
    let first = lines.next().unwrap_or_else(|| panic!("{marker} not found"));
    let indent = first.len() - first.trim_start().len();
    lines
        .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() > indent)
        .collect()
}

/// Given the replicas' StatefulSet, then readiness probes /readyz and liveness /healthz on the port
/// the image listens on, the grace period outlasts the preStop sleep plus the drain
/// deadline, and the pod runs as the image's non-root user on a read-only filesystem.
#[test]
fn the_deployment_probes_and_stops_the_way_vodpack_drains() {
    let deployment = read("deploy/kubernetes/statefulset.yaml");
    let image = Dockerfile::load();
    let probe_path = |probe: &str| {
        yaml_block(&deployment, probe)
            .iter()
            .find_map(|l| l.trim().strip_prefix("path:").map(str::trim))
            .unwrap_or_else(|| panic!("{probe} has no httpGet path"))
            .to_owned()
    };
    assert_eq!(probe_path("readinessProbe:"), "/readyz");
    assert_eq!(probe_path("livenessProbe:"), "/healthz");
    let port: u16 = yaml_scalar(&deployment, "containerPort")
        .and_then(|p| p.parse().ok())
        .expect("containerPort");
    assert_eq!(port, image_port(&image));

    let grace: u64 = yaml_scalar(&deployment, "terminationGracePeriodSeconds")
        .and_then(|g| g.parse().ok())
        .expect("terminationGracePeriodSeconds");
    let pre_stop = yaml_block(&deployment, "preStop:").join("\n");
    let sleep: u64 = pre_stop
        .split("[\"sleep\", \"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .and_then(|s| s.parse().ok())
        .expect("a preStop sleep");
    let drain = drain_deadline_secs();
    assert!(
        grace > sleep + drain,
        "terminationGracePeriodSeconds {grace} does not outlast preStop {sleep} s + drain {drain} s"
    );

    let uid = image
        .runtime_args("USER")
        .last()
        .and_then(|u| u.split(':').next())
        .map(str::to_owned);
    assert_eq!(
        yaml_scalar(&deployment, "runAsUser").map(str::to_owned),
        uid
    );
    for (key, value) in [
        ("runAsNonRoot", "true"),
        ("readOnlyRootFilesystem", "true"),
        ("allowPrivilegeEscalation", "false"),
    ] {
        assert_eq!(yaml_scalar(&deployment, key), Some(value), "{key}");
    }
    // The config file the Deployment names is the ConfigMap's key, where it is mounted.
    let config = deployment
        .lines()
        .skip_while(|l| !l.contains("name: VODPACK_CONFIG"))
        .nth(1)
        .and_then(|l| l.trim().strip_prefix("value:"))
        .map(str::trim)
        .expect("VODPACK_CONFIG's value");
    let mount = yaml_scalar(&deployment, "mountPath").expect("a config mount");
    assert_eq!(config, format!("{mount}/vodpack.toml"));
    assert!(read("deploy/kubernetes/configmap.yaml").contains("vodpack.toml: |"));
}

/// Given the ConfigMap, then its `vodpack.toml` is accepted by vodpack's own loader (no
/// unknown key, every value in range), uses only settings' names, and sets none of the
/// keys the image's variables would override.
#[test]
fn the_configmap_toml_is_a_valid_settings_file() {
    let configmap = read("deploy/kubernetes/configmap.yaml");
    let block = yaml_block(&configmap, "vodpack.toml: |");
    let indent = block
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .expect("a non-empty TOML block");
    let toml_text: String = block
        .iter()
        .map(|l| format!("{}\n", l.get(indent..).unwrap_or("")))
        .collect();

    let table: toml::Table = toml::from_str(&toml_text).expect("the ConfigMap's TOML parses");
    let names: BTreeSet<&str> = SETTINGS.iter().map(|(name, _, _, _)| *name).collect();
    let image = Dockerfile::load();
    let overridden: Vec<&str> = SETTINGS
        .iter()
        .filter(|(_, var, _, _)| image.env_value(var).is_some())
        .map(|(name, _, _, _)| *name)
        .collect();
    for key in table.keys() {
        assert!(names.contains(key.as_str()), "{key} is not a setting");
        assert!(
            !overridden.contains(&key.as_str()),
            "{key} is set by the image's ENV, which wins over the file"
        );
    }

    let dir = std::env::temp_dir().join(format!("vodpack-configmap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("vodpack.toml");
    std::fs::write(&path, &toml_text).expect("write");
    let resolved = SettingsArgs {
        config: Some(path),
        ..Default::default()
    }
    .resolve();
    let _ = std::fs::remove_dir_all(&dir);
    let settings = resolved.expect("vodpack accepts the ConfigMap's settings");
    assert_eq!(
        settings.source.as_deref(),
        table.get("source").and_then(|s| s.as_str()),
        "the file's source is read"
    );
}

/// Given the Service, the autoscaler and the disruption budget, then they all select the
/// replicas' pods (or name their StatefulSet), and the Service targets the named port.
#[test]
fn the_kubernetes_objects_point_at_the_replicas() {
    let label = "app.kubernetes.io/name: vodpack";
    let deployment = read("deploy/kubernetes/statefulset.yaml");
    assert!(yaml_block(&deployment, "matchLabels:")
        .iter()
        .any(|l| l.trim() == label));
    assert_eq!(yaml_scalar(&deployment, "name"), Some("vodpack"));
    let service = read("deploy/kubernetes/service.yaml");
    assert!(yaml_block(&service, "selector:")
        .iter()
        .any(|l| l.trim() == label));
    assert_eq!(yaml_scalar(&service, "targetPort"), Some("http"));
    assert!(
        deployment.contains("- name: http\n"),
        "the container port is named http"
    );
    let pdb = read("deploy/kubernetes/pdb.yaml");
    assert!(yaml_block(&pdb, "matchLabels:")
        .iter()
        .any(|l| l.trim() == label));
    let hpa = read("deploy/kubernetes/hpa.yaml");
    let target = yaml_block(&hpa, "scaleTargetRef:").join("\n");
    assert!(
        target.contains("kind: StatefulSet") && target.contains("name: vodpack"),
        "{target}"
    );
    for (file, kind) in [
        ("configmap.yaml", "ConfigMap"),
        ("statefulset.yaml", "StatefulSet"),
        ("service-headless.yaml", "Service"),
        ("service.yaml", "Service"),
        ("hpa.yaml", "HorizontalPodAutoscaler"),
        ("pdb.yaml", "PodDisruptionBudget"),
    ] {
        let text = read(&format!("deploy/kubernetes/{file}"));
        assert_eq!(yaml_scalar(&text, "kind"), Some(kind), "{file}");
    }
}

/// Given the workflows, then CI checks formatting, runs clippy with warnings denied and the
/// README's test command with ffmpeg required, and builds the image; the benchmarks
/// workflow runs `make bench-enforce` on demand, a target the Makefile has.
#[test]
fn ci_runs_what_the_readme_promises() {
    let readme = read("README.md");
    let test_command = readme
        .lines()
        .skip_while(|l| !l.starts_with("Run the whole test suite"))
        .find_map(|l| l.strip_prefix("    "))
        .expect("the README's test command")
        .trim()
        .to_owned();
    // `make test` sets the machine up (tools/setup-test-machine.sh), then runs the cargo
    // command of the Makefile's `test` target: that command is what CI must run.
    let test_command = match test_command.as_str() {
        "make test" => (read("Makefile").split("\ntest:").nth(1))
            .and_then(|target| {
                (target.lines().skip(1))
                    .take_while(|l| l.starts_with('\t'))
                    .map(str::trim)
                    .find(|l| l.starts_with("cargo test"))
                    .map(str::to_owned)
            })
            .expect("the Makefile's test target runs cargo test"),
        other => other.to_owned(),
    };
    assert!(test_command.starts_with("cargo test"), "{test_command}");
    assert!(
        read("Makefile").contains("\ntest: setup")
            && read(".ci/run").contains("bash tools/setup-test-machine.sh"),
        "make test and CI set the machine up with the same script"
    );

    let ci = read(".github/workflows/ci.yml");
    for step in [
        "cargo fmt --all -- --check",
        "cargo clippy --all-targets",
        "-D warnings",
        test_command.as_str(),
        "VODPACK_REQUIRE_TOOLS: \"1\"",
        "install -y -qq ffmpeg",
        "docker build",
        "docker compose -f deploy/compose.yaml up",
        "bash deploy/lint.sh",
    ] {
        assert!(ci.contains(step), "ci.yml does not run `{step}`");
    }
    let rust_version = manifest()["package"]["rust-version"]
        .as_str()
        .expect("rust-version")
        .to_owned();
    let bench = read(".github/workflows/benchmarks.yml");
    for workflow in [&ci, &bench] {
        assert!(
            workflow.contains(&format!("container: rust:{rust_version}-bookworm")),
            "a workflow's toolchain is not rust-version {rust_version}"
        );
    }
    assert!(bench.contains("workflow_dispatch:"));
    assert!(bench.contains("make bench-enforce"));
    assert!(
        bench.contains("install -y -qq ffmpeg"),
        "the long asset needs ffmpeg"
    );
    assert!(
        read("Makefile").contains("\nbench-enforce:"),
        "the Makefile has bench-enforce"
    );
    let lint = read("deploy/lint.sh");
    for linter in ["yamllint", "hadolint", "shellcheck", "actionlint"] {
        assert!(
            lint.contains(linter),
            "deploy/lint.sh does not run {linter}"
        );
    }
}

/// Given every YAML file of the deployment and CI, then none indents with a tab (which YAML
/// forbids). Full parsing is in `deploy/yaml.rs`.
#[test]
fn yaml_files_indent_with_spaces() {
    let mut files = support::files_under("deploy", &[".yaml", ".yml"]);
    files.extend(support::files_under(
        ".github/workflows",
        &[".yml", ".yaml"],
    ));
    assert!(files.len() >= 10, "{files:?}");
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read");
        assert!(!text.contains('\t'), "{} has a tab", file.display());
    }
}
