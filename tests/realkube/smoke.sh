#!/usr/bin/env bash
# smoke.sh: start realkube, check it with curl and kubectl, stop it.
#
# For CI: exits non-zero on the first failed check, and always stops every
# process it started (trap on EXIT). Prints "smoke: N passed, N failed" last.
#
# It runs an instance of its own (state in <repo>/.cache/realkube-smoke, secure
# port 16543, etcd 23890/23891, addresses 198.18.1.N), so it neither collides
# with nor stops an instance someone else started from the same checkout.
#
# Env: REALKUBE_SMOKE_APISERVERS (default 3); REALKUBE_SMOKE_LOOPBACK=1 runs
# the API servers on 127.0.0.N instead of 198.18.1.N/32 added to lo (which
# needs root: CI runs as root); REALKUBE_SMOKE_NO_KUBECTL=1 leaves kubectl out
# (otherwise a missing kubectl fails the run).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rk="$here/realkube.sh"
export REALKUBE_CACHE="$here/../../.cache/realkube-smoke"
n="${REALKUBE_SMOKE_APISERVERS:-3}"
start_args=(--apiservers "$n" --port 16543 --etcd-port 23890)
[[ "${REALKUBE_SMOKE_LOOPBACK:-}" == 1 ]] || start_args+=(--address-prefix 198.18.1)
passed=0
failed=0
started_pids=""

finish() {
  local rc=$?
  "$rk" stop || rc=1
  # Nothing we started may survive the stop.
  local pid
  for pid in ${started_pids//,/ }; do
    if [[ -d "/proc/$pid" && "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]]; then
      echo "smoke: FAIL process $pid still exists after stop" >&2
      failed=$((failed + 1))
      rc=1
    fi
  done
  ((failed == 0)) || rc=1
  echo "smoke: $passed passed, $failed failed"
  exit "$rc"
}
trap finish EXIT

pass() { passed=$((passed + 1)); echo "smoke: ok   $*"; }
fail() { failed=$((failed + 1)); echo "smoke: FAIL $*" >&2; exit 1; }

"$rk" start "${start_args[@]}"
# shellcheck source=/dev/null
source <("$rk" env)
started_pids="$KUBESET_REALKUBE_APISERVER_PIDS,$KUBESET_REALKUBE_ETCD_PID"
IFS=, read -r -a servers <<< "$KUBESET_REALKUBE_SERVERS"
((${#servers[@]} == n)) || fail "env lists ${#servers[@]} servers, want $n"

tls=(--cacert "$KUBESET_REALKUBE_CA" --cert "$KUBESET_REALKUBE_CLIENT_CERT" --key "$KUBESET_REALKUBE_CLIENT_KEY")
api() { curl -fsS --max-time 30 "${tls[@]}" "$@"; }

for url in "${servers[@]}"; do
  [[ "$(api "$url/readyz")" == ok ]] || fail "$url/readyz"
  pass "$url/readyz"
done

version="$(api "${servers[0]}/version")"
grep -q "\"gitVersion\": \"$KUBESET_REALKUBE_KUBERNETES_VERSION\"" <<< "$version" \
  || fail "/version does not report $KUBESET_REALKUBE_KUBERNETES_VERSION: $version"
pass "/version reports $KUBESET_REALKUBE_KUBERNETES_VERSION"

# The non-admin identity (not system:masters) is authorised through RBAC.
curl -fsS --max-time 30 --cacert "$KUBESET_REALKUBE_CA" \
  -H "Authorization: Bearer $KUBESET_REALKUBE_USER_TOKEN" \
  "${servers[0]}/api/v1/namespaces/kube-system" >/dev/null || fail "user token cannot read kube-system"
pass "bearer token of the kubeset:testers user"

# OpenAPI v3: the index and one group-version document.
index="$(api "${servers[0]}/openapi/v3")"
rel="$(grep -o '"/openapi/v3/apis/apps/v1?hash=[0-9A-F]*"' <<< "$index" | tr -d '"')" \
  || fail "/openapi/v3 has no apis/apps/v1 entry"
api "${servers[0]}$rel" | grep -q '"io.k8s.api.apps.v1.Deployment"' \
  || fail "$rel lacks io.k8s.api.apps.v1.Deployment"
pass "/openapi/v3 and $rel"

# 410 Expired: core/v1 events have no watch cache (kube-apiserver's default),
# so a watch from a resourceVersion that etcd compacted away fails with 410.
# Compact through etcd's JSON gateway rather than waiting for the API
# server's own --etcd-compaction-interval.
rv="$(api -H 'Content-Type: application/json' -X POST "${servers[0]}/api/v1/namespaces/default/events" \
  -d '{"metadata":{"name":"smoke"},"involvedObject":{"kind":"ConfigMap","namespace":"default","name":"smoke"},"reason":"Smoke","message":"smoke","type":"Normal"}' \
  | tr -d ' \n' | grep -o '"resourceVersion":"[0-9]*"' | head -n 1 | grep -o '[0-9][0-9]*')" \
  || fail "could not create an event"
# A watch from rv starts at revision rv+1, and compacting at revision R keeps
# R: two more writes let the compaction remove rv+1.
for bump in smoke-bump-1 smoke-bump-2; do
  api -H 'Content-Type: application/json' -X POST "${servers[0]}/api/v1/namespaces/default/configmaps" \
    -d "{\"metadata\":{\"name\":\"$bump\"}}" >/dev/null || fail "could not create configmap $bump"
done
rev="$(curl -fsS --max-time 10 -X POST "$KUBESET_REALKUBE_ETCD_URL/v3/kv/range" -d '{"key":"AA=="}' \
  | grep -o '"revision":"[0-9]*"' | grep -o '[0-9][0-9]*')" || fail "etcd range request"
((rev > rv + 1)) || fail "etcd revision $rev is not past the event's resourceVersion $rv + 1"
curl -fsS --max-time 10 -X POST "$KUBESET_REALKUBE_ETCD_URL/v3/kv/compaction" \
  -d "{\"revision\":\"$rev\",\"physical\":true}" >/dev/null || fail "etcd compaction"
out="$(api "${servers[0]}/api/v1/namespaces/default/events?watch=1&resourceVersion=$rv&timeoutSeconds=5")" \
  || fail "watch of events from resourceVersion $rv"
grep -q '"code":410' <<< "$out" || fail "watch of events from compacted resourceVersion $rv did not end in 410 Expired"
pass "watch from a compacted resourceVersion gives 410 Expired"

if [[ "${REALKUBE_SMOKE_NO_KUBECTL:-}" != 1 ]]; then
  command -v kubectl >/dev/null || fail "kubectl not on PATH (REALKUBE_SMOKE_NO_KUBECTL=1 skips these checks)"
  k() { kubectl --kubeconfig "$KUBESET_REALKUBE_KUBECONFIG" --request-timeout=30s "$@"; }
  k get ns -o name | grep -qx namespace/kube-system || fail "kubectl get ns"
  pass "kubectl get ns"
  k create -f - <<'YAML' >/dev/null || fail "kubectl create -f"
apiVersion: v1
kind: ConfigMap
metadata:
  name: smoke
  namespace: default
data:
  a: "1"
YAML
  [[ "$(k get configmap smoke -o jsonpath='{.data.a}')" == 1 ]] || fail "kubectl create -f did not store the ConfigMap"
  pass "kubectl create -f"
  k apply --server-side --field-manager=smoke -f - <<'YAML' >/dev/null || fail "kubectl apply --server-side"
apiVersion: v1
kind: ConfigMap
metadata:
  name: smoke-ssa
  namespace: default
data:
  b: "2"
YAML
  [[ "$(k get configmap smoke-ssa -o jsonpath='{.metadata.managedFields[0].manager}/{.metadata.managedFields[0].operation}')" == smoke/Apply ]] \
    || fail "server-side apply did not record the field manager"
  pass "kubectl apply --server-side"
  if [[ "${REALKUBE_SMOKE_LOOPBACK:-}" != 1 ]]; then
    # Every API server publishes itself in default/kubernetes (lease
    # reconciler); give the last one a few seconds to get there.
    want="$(printf '%s\n' "${servers[@]}" | sed 's|https://||; s|:.*||' | sort | paste -sd,)"
    got=""
    for _ in $(seq 1 60); do
      got="$(k get endpointslice kubernetes -n default -o jsonpath='{range .endpoints[*]}{.addresses[0]}{"\n"}{end}' 2>/dev/null | sort | paste -sd,)"
      [[ "$got" == "$want" ]] && break
      sleep 0.5
    done
    [[ "$got" == "$want" ]] || fail "EndpointSlice default/kubernetes lists '$got', want '$want'"
    pass "kubectl get endpointslices -n default lists $want"
  fi
fi

if ((n >= 2)); then
  # SIGKILL the last API server and SIGSTOP (hang) the one before it when
  # there are three: apiserver-0 keeps serving, through kubectl too.
  IFS=, read -r -a pids <<< "$KUBESET_REALKUBE_APISERVER_PIDS"
  last=$((n - 1))
  kill -KILL "${pids[$last]}"
  hung=""
  if ((n >= 3)); then
    hung=$((n - 2))
    kill -STOP "${pids[$hung]}"
  fi
  api "${servers[0]}/api/v1/namespaces/default/configmaps/smoke" >/dev/null \
    || fail "apiserver-0 stopped serving after the others failed"
  if curl -fsS --max-time 5 "${tls[@]}" "${servers[$last]}/readyz" >/dev/null 2>&1; then
    fail "apiserver-$last still answers after SIGKILL"
  fi
  if [[ -n "$hung" ]] && curl -fsS --max-time 3 "${tls[@]}" "${servers[$hung]}/readyz" >/dev/null 2>&1; then
    fail "apiserver-$hung still answers after SIGSTOP"
  fi
  if [[ "${REALKUBE_SMOKE_NO_KUBECTL:-}" != 1 ]]; then
    k --server "${servers[0]}" create configmap after-failover --from-literal=x=y >/dev/null \
      || fail "kubectl against apiserver-0 after the failures"
  fi
  pass "SIGKILL apiserver-$last${hung:+, SIGSTOP apiserver-$hung}: apiserver-0 still serves"
fi
