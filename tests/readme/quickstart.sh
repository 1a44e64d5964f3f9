#!/usr/bin/env bash
# The README's first ten minutes, as a newcomer types them: `kubeset serve
# --kubeconfig-out`, then the Quick start (crates/kubeset/examples/
# quickstart.rs, identical to the README's block) twice with KUBECONFIG
# pointing at it. The realkube suite runs the same code against a real
# kube-apiserver (tests/tests/suite/readme.rs).
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build -q -p kubeset-cli
cargo build -q -p kubeset --example quickstart
dir="$(mktemp -d)"
target/debug/kubeset serve --kubeconfig-out "$dir/kubeconfig" > "$dir/serve.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 1 300); do
  grep -q '^ready:' "$dir/serve.log" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$dir/serve.log"; exit 1; }
  sleep 0.1
done
grep -q '^ready:' "$dir/serve.log" || { echo "kubeset serve did not become ready"; cat "$dir/serve.log"; exit 1; }
for run in 1 2; do
  echo "--- quickstart run $run"
  KUBECONFIG="$dir/kubeconfig" target/debug/examples/quickstart | tee "$dir/run$run.out"
done
grep -q '^created greeting' "$dir/run1.out"
grep -q '^greeting exists' "$dir/run2.out"
grep -q 'greeting Some({"hello": "kubeset"})' "$dir/run2.out"
# kubectl users' way in: the CLI on the same server sees the object.
target/debug/kubeset --kubeconfig "$dir/kubeconfig" get cm greeting -o jsonpath='{.data.hello}{"\n"}' | grep -qx kubeset
echo "quickstart: both runs passed"
