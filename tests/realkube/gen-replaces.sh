#!/usr/bin/env bash
# Pin k8s.io/kubernetes and every one of its staging modules in a go.mod
# (./go.mod, or DIR/go.mod: e.g. v1.36/ for the second version realkube.sh
# builds with --kubernetes 1.36).
#
# k8s.io/kubernetes requires its staging modules (k8s.io/api, k8s.io/apiserver,
# ...) at v0.0.0 and replaces them with ./staging/src/k8s.io/<name> folders that
# a consumer of the module does not get. A consumer therefore has to replace
# each of them with the published v0.<minor>.<patch> tag. The list is read from
# the downloaded go.mod of k8s.io/kubernetes itself, so a new Kubernetes version
# that adds or drops a staging module is picked up without editing this script.
#
# Usage: gen-replaces.sh [KUBERNETES_VERSION [DIR]]
#   (default: the version in DIR/go.mod; DIR defaults to this script's folder)
# Runs `go mod tidy` at the end.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
if [[ -n "${2:-}" ]]; then
  cd "$2"
fi

version="${1:-}"
if [[ -z "$version" && -f go.mod ]]; then
  version="$(sed -n 's/^[[:space:]]*\(require[[:space:]]\{1,\}\)\{0,1\}k8s\.io\/kubernetes[[:space:]]\{1,\}\(v[^[:space:]]*\).*/\2/p' go.mod | head -n 1)"
fi
if [[ -z "$version" ]]; then
  echo "gen-replaces.sh: give the Kubernetes version, e.g. v1.35.4" >&2
  exit 2
fi
if [[ ! "$version" =~ ^v1\.([0-9]+)\.([0-9]+)$ ]]; then
  echo "gen-replaces.sh: '$version' is not a v1.MINOR.PATCH release tag" >&2
  exit 2
fi
staging_version="v0.${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"

gomod="$(go mod download -json "k8s.io/kubernetes@${version}" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
if [[ ! -f "$gomod" ]]; then
  echo "gen-replaces.sh: could not download the go.mod of k8s.io/kubernetes@${version}" >&2
  exit 1
fi

mapfile -t staging < <(sed -n 's/^[[:space:]]*\(k8s\.io\/[^[:space:]]*\)[[:space:]]*=>[[:space:]]*\.\/staging\/src\/.*/\1/p' "$gomod" | sort -u)
if [[ ${#staging[@]} -eq 0 ]]; then
  echo "gen-replaces.sh: no staging replace lines found in $gomod" >&2
  exit 1
fi

# Drop replaces of staging modules that this version no longer has; the
# others are rewritten in place, so a second run changes nothing.
for old in $(go mod edit -json | sed -n '/"Replace"/,$ s/^[[:space:]]*"Path": "\(k8s\.io\/[^"]*\)",\{0,1\}$/\1/p' | sort -u); do
  keep=false
  for mod in "${staging[@]}"; do [[ "$mod" == "$old" ]] && keep=true; done
  $keep || go mod edit -dropreplace="$old"
done
go mod edit -require="k8s.io/kubernetes@${version}"
for mod in "${staging[@]}"; do
  go mod edit -replace="${mod}=${mod}@${staging_version}"
done
# The command we build: a tool directive keeps `go mod tidy` from dropping
# the requirements it needs.
go mod edit -tool=k8s.io/kubernetes/cmd/kube-apiserver
go mod tidy
echo "gen-replaces.sh: k8s.io/kubernetes ${version}; ${#staging[@]} staging modules pinned to ${staging_version}"
