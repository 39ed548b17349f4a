#!/usr/bin/env bash
# Make sure the system tools the local stack builds with are present: Java 17+ (Kafka),
# Maven (Kafka's jars), Go >= 1.21 (builds Weaviate; fetches the Go toolchain Weaviate asks
# for), cmake and a C++ compiler (llama.cpp), Debian's Chromium (the web console's
# browser tests drive it with Playwright: no browser download) and PostgreSQL's server
# (the mirror and its tests; Debian keeps initdb in /usr/lib/postgresql/<version>/bin,
# off PATH). Missing ones are installed with apt-get when
# that is possible (root on Debian/Ubuntu); otherwise this says what to install and fails.
set -euo pipefail

declare -A apt_pkg=(
  [java]=openjdk-17-jre-headless
  [mvn]=maven
  [go]=golang-go
  [cmake]=cmake
  [c++]=g++
  [make]=make
  [chromium]=chromium
  [initdb]=postgresql
)

has_postgres() {
  command -v initdb >/dev/null 2>&1 || compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}

missing=()
for tool in java mvn go cmake c++ make chromium; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
has_postgres || missing+=(initdb)

if ((${#missing[@]})); then
  pkgs=()
  for tool in "${missing[@]}"; do pkgs+=("${apt_pkg[$tool]}"); done
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "require-tools: installing ${pkgs[*]} with apt-get (missing: ${missing[*]})"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}"
  else
    echo "require-tools: missing ${missing[*]}; install them (Debian: apt-get install ${pkgs[*]})" >&2
    exit 1
  fi
fi

java_major=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1)
if [[ -z "$java_major" || "$java_major" -lt 17 ]]; then
  echo "require-tools: Kafka 4 needs Java 17 or newer; found '${java_major:-unknown}'" >&2
  exit 1
fi
go_minor=$(go env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
if [[ -z "$go_minor" || "$go_minor" -lt 21 ]]; then
  echo "require-tools: Weaviate needs Go 1.21 or newer to build (found $(go env GOVERSION))" >&2
  exit 1
fi
echo "require-tools: java $java_major, $(mvn -B -v 2>/dev/null | head -n1 | cut -d' ' -f1-3), $(go env GOVERSION), cmake $(cmake --version | head -n1 | cut -d' ' -f3)"
