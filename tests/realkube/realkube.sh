#!/usr/bin/env bash
# realkube.sh: a real kube-apiserver (+ etcd) on loopback for kubeset's tests.
#
#   realkube.sh build [--kubernetes 1.36]
#                                     build etcd and kube-apiserver once (skips
#                                     when binaries for the pinned versions exist)
#   realkube.sh start [--apiservers N] [--max-requests-inflight K]
#                     [--kubernetes 1.36] [--feature-gates K=V,...]
#                     [--max-mutating-requests-inflight M] [--no-apf]
#                     [--port P] [--etcd-compaction-interval D]
#                     [--watch-cache on|off] [--routable-addresses]
#                     [--address-prefix A.B.C] [--runtime-config LIST]
#                                     start etcd and N kube-apiservers, wait for
#                                     /readyz on each, write kubeconfig and env
#   realkube.sh stop                  stop everything `start` started
#   realkube.sh status                show what runs, exit 1 if something is down
#   realkube.sh env                   print the env file of the running cluster
#
# --kubernetes (or REALKUBE_KUBERNETES) picks a second pinned version: 1.36
# is built from v1.36/go.mod (the default, from ./go.mod, is 1.35).
# --feature-gates and --runtime-config are passed through to every
# kube-apiserver.
# State lives under $REALKUBE_CACHE (default <repo>/.cache/realkube), binaries
# under $REALKUBE_BIN_DIR (default <repo>/.cache/realkube/bin).
# See README.md beside this script.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# State of one running instance; a second instance needs its own
# REALKUBE_CACHE and its own --port/--etcd-port (and, with
# --routable-addresses, no overlap of addresses).
cache="${REALKUBE_CACHE:-$repo/.cache/realkube}"
run="$cache/run"
# Binaries, shared by every instance.
bindir="${REALKUBE_BIN_DIR:-$repo/.cache/realkube/bin}"

# --routable-addresses puts the API servers on these /32s of lo: RFC 2544's
# benchmarking range, never routed, and not loopback in Kubernetes' eyes.
routable_prefix=198.18.0

log() { printf 'realkube: %s\n' "$*" >&2; }
die() { printf 'realkube: error: %s\n' "$*" >&2; exit 1; }

# The version a go.mod requires for a module path (single-line or block form).
gomod_version() {
  local file="$1" path="$2"
  sed -n "s|^[[:space:]]*\(require[[:space:]]\{1,\}\)\{0,1\}${path//./\\.}[[:space:]]\{1,\}\(v[^[:space:]]*\).*|\2|p" "$file" | head -n 1
}

# The folder whose go.mod pins the kube-apiserver to build and run.
kdir="$here"
select_kubernetes() {
  case "$1" in
    ""|1.35) kdir="$here" ;;
    1.36) kdir="$here/v1.36" ;;
    *) die "--kubernetes: 1.35 or 1.36, not '$1'" ;;
  esac
}
select_kubernetes "${REALKUBE_KUBERNETES:-}"

kube_version() { gomod_version "$kdir/go.mod" k8s.io/kubernetes; }
# The stable name start runs: kube-apiserver for the default pin,
# kube-apiserver-1.36 for the other.
apiserver_link() {
  if [[ "$kdir" == "$here" ]]; then echo kube-apiserver; else echo "kube-apiserver-$(basename "$kdir" | tr -d v)"; fi
}
etcd_version() { gomod_version "$here/etcd/go.mod" go.etcd.io/etcd/server/v3; }

# A digest of everything a binary is built from, so that a changed pin rebuilds.
inputs_digest() {
  cat "$@" | sha256sum | cut -c1-16
}

# The version stamps upstream's hack/lib/version.sh sets, so that /version
# reports the release instead of v0.0.0-master. The commit is not known from
# the module, so it is left empty.
apiserver_ldflags() {
  local kv="$1" kmaj kmin pkgv x=""
  kmaj="${kv#v}"; kmaj="${kmaj%%.*}"
  kmin="${kv#v*.}"; kmin="${kmin%%.*}"
  for pkgv in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    x+=" -X $pkgv.gitVersion=$kv -X $pkgv.gitMajor=$kmaj -X $pkgv.gitMinor=$kmin -X $pkgv.gitCommit="
    x+=" -X $pkgv.gitTreeState=clean -X $pkgv.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$x"
}

apiserver_bin() {
  echo "$bindir/kube-apiserver-$(kube_version)-$(inputs_digest "$kdir/go.mod" "$kdir/go.sum" <(apiserver_ldflags "$(kube_version)"))"
}
etcd_bin() { echo "$bindir/etcd-$(etcd_version)-$(inputs_digest "$here/etcd/go.mod" "$here/etcd/go.sum" "$here/etcd/main.go")"; }

go_build() {
  local dir="$1" out="$2" pkg="$3" ldflags="$4"
  local tmp="$out.tmp.$$"
  command -v go >/dev/null || die "go is not installed; it is needed to build $(basename "$out")"
  log "building $(basename "$out") (this takes minutes on a cold Go cache)"
  local start=$SECONDS
  if ! (
    cd "$dir"
    # Static binaries, no debug info; go.sum must already be complete.
    CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly" nice -n 10 \
      go build -trimpath -ldflags="-s -w $ldflags" -o "$tmp" "$pkg"
  ); then
    rm -f "$tmp"
    die "go build of $pkg in $dir failed"
  fi
  mv -f "$tmp" "$out"
  log "built $(basename "$out") in $((SECONDS - start))s"
}

cmd_build() {
  while (($#)); do
    case "$1" in
      --kubernetes) select_kubernetes "${2:?}"; shift 2 ;;
      *) die "build: unknown option '$1'" ;;
    esac
  done
  mkdir -p "$bindir"
  # One build at a time per bin dir and Kubernetes version: a second caller
  # waits, then finds the binaries built (two versions build side by side;
  # etcd, when both lack it, is built twice into the same name, harmlessly).
  local lock=.build.lock
  [[ "$kdir" == "$here" ]] || lock=".build-$(apiserver_link).lock"
  exec 9>"$bindir/$lock"
  flock 9
  local kv ev
  kv="$(kube_version)"; ev="$(etcd_version)"
  [[ -n "$kv" && -n "$ev" ]] || die "cannot read the pinned versions from go.mod"

  local eb ab
  eb="$(etcd_bin)"; ab="$(apiserver_bin)"
  if [[ -x "$eb" ]]; then
    log "etcd $ev already built: $eb"
  else
    go_build "$here/etcd" "$eb" . ""
  fi
  if [[ -x "$ab" ]]; then
    log "kube-apiserver $kv already built: $ab"
  else
    go_build "$kdir" "$ab" k8s.io/kubernetes/cmd/kube-apiserver "$(apiserver_ldflags "$kv")"
  fi
  ln -sfn "$(basename "$eb")" "$bindir/etcd"
  ln -sfn "$(basename "$ab")" "$bindir/$(apiserver_link)"
  # Binaries of earlier pins are 30-100 MB each; keep only the current ones
  # (of each minor version: 1.35 and 1.36 live side by side).
  local old
  for old in "$bindir"/etcd-v* "$bindir"/kube-apiserver-"${kv%.*}".*; do
    [[ -f "$old" && "$old" != "$eb" && "$old" != "$ab" && "$old" != *.tmp.* ]] && rm -f "$old"
  done
  flock -u 9
  exec 9>&-
  return 0
}

# ---------------------------------------------------------------- processes

# True when pid $1 runs one of our binaries: its argv[0] is a path under
# $bindir (guards against a recycled pid). Reads /proc with builtins only.
pid_runs_ours() {
  local pid="$1" argv0=""
  [[ "$pid" =~ ^[0-9]+$ && -r "/proc/$pid/cmdline" ]] || return 1
  IFS= read -r -d '' argv0 < "/proc/$pid/cmdline" 2>/dev/null || [[ -n "$argv0" ]] || return 1
  [[ "$argv0" == "$bindir/"* ]]
}

pidfile_alive() {
  # A pid file names a live process of ours when that process runs one of our
  # binaries and is not a zombie.
  local f="$1" pid
  [[ -f "$f" ]] || return 1
  pid="$(<"$f")" 2>/dev/null || return 1
  pid_runs_ours "$pid" && ! proc_exited "$pid"
}

# Starts "$@" (our binary and its arguments) detached in a session of its
# own, output to $2, and writes its pid to $1 once the binary runs.
#
# `$!` is the pid of a forked copy of this shell, which then execs setsid(1),
# which execs the binary (setsid does not fork: a background job of a script
# is no process-group leader). Until both execs happened, /proc/$!/cmdline is
# this script's; on a loaded machine that takes a while, so wait for the exec
# (bounded by $3 seconds) instead of taking "not ours yet" for "exited".
spawn() {
  local pidf="$1" logf="$2" deadline=$((SECONDS + $3)) pid
  shift 3
  setsid "$@" </dev/null >"$logf" 2>&1 &
  pid=$!
  until pid_runs_ours "$pid"; do
    if proc_exited "$pid"; then
      log "$(basename "$1") (pid $pid) exited before it ran; last lines of $logf:"
      tail -n 30 "$logf" >&2 || true
      return 1
    fi
    if ((SECONDS >= deadline)); then
      log "$(basename "$1") (pid $pid) did not exec within the timeout"
      kill -KILL "$pid" 2>/dev/null || true
      return 1
    fi
    sleep 0.05
  done
  echo "$pid" > "$pidf"
}

pidfiles() {
  shopt -s nullglob
  local f
  for f in "$run"/apiserver-*.pid "$run"/etcd.pi[d]; do echo "$f"; done
  shopt -u nullglob
}

# True once a process has exited: gone, or a zombie waiting for its reaper.
proc_exited() {
  local pid="$1" state
  [[ -d "/proc/$pid" ]] || return 0
  state="$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" || return 0
  [[ -z "$state" || "$state" == Z ]]
}

# Waits up to $2 tenths of a second for pid $1 to exit.
wait_exit() {
  local pid="$1" tenths="$2" i
  for ((i = 0; i < tenths; i++)); do
    proc_exited "$pid" && return 0
    sleep 0.1
  done
  proc_exited "$pid"
}

stop_pidfile() {
  local f="$1" pid i
  if pidfile_alive "$f"; then
    pid="$(cat "$f")"
    # A SIGSTOPped process only acts on SIGTERM once it is continued.
    kill -CONT "$pid" 2>/dev/null || true
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_exit "$pid" 300; then
      log "$(basename "$f" .pid) (pid $pid) still runs 30s after SIGTERM; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      wait_exit "$pid" 50 || log "$(basename "$f" .pid) (pid $pid) survived SIGKILL"
    fi
    # Our processes are reparented to PID 1 when start returns; give it a
    # moment to reap them so that no zombie is left either.
    for ((i = 0; i < 50; i++)); do
      [[ -d "/proc/$pid" ]] || break
      sleep 0.1
    done
  fi
  rm -f "$f"
}

# Addresses added to lo by --routable-addresses, removed again by stop.
remove_addresses() {
  local a
  [[ -f "$run/added-addresses" ]] || return 0
  while read -r a; do
    if [[ -n "$a" ]]; then ip addr del "$a/32" dev lo 2>/dev/null || true; fi
  done < "$run/added-addresses"
  rm -f "$run/added-addresses"
}

add_address() {
  local a="$1"
  if ip -4 -o addr show dev lo | grep -q " inet $a/32 "; then
    return 0
  fi
  ip addr add "$a/32" dev lo || die "cannot add $a/32 to lo (needs root with CAP_NET_ADMIN); start without --routable-addresses"
  echo "$a" >> "$run/added-addresses"
}

cmd_stop() {
  local f
  [[ -d "$run" ]] || { log "nothing to stop"; return 0; }
  # API servers first, then etcd.
  for f in $(pidfiles); do
    stop_pidfile "$f"
  done
  remove_addresses
  rm -f "$cache/env"
  log "stopped"
}

cmd_status() {
  local f bad=0 name
  if [[ -z "$(pidfiles)" ]]; then
    echo "realkube: not running"
    return 1
  fi
  for f in $(pidfiles); do
    name="$(basename "$f" .pid)"
    if pidfile_alive "$f"; then
      local state
      state="$(awk '{print $3}' "/proc/$(cat "$f")/stat" 2>/dev/null || echo '?')"
      echo "$name: pid $(cat "$f") state $state"
    else
      echo "$name: DOWN (pid file $f)"
      bad=1
    fi
  done
  if [[ -f "$cache/env" ]]; then
    # shellcheck disable=SC1091
    ( source "$cache/env"
      local url i=0
      IFS=, read -r -a urls <<< "$KUBESET_REALKUBE_SERVERS"
      for url in "${urls[@]}"; do
        if curl -fsS --max-time 5 --cacert "$KUBESET_REALKUBE_CA" \
             --cert "$KUBESET_REALKUBE_CLIENT_CERT" --key "$KUBESET_REALKUBE_CLIENT_KEY" \
             "$url/readyz" >/dev/null 2>&1; then
          echo "apiserver-$i: $url/readyz ok"
        else
          echo "apiserver-$i: $url/readyz NOT ok"
        fi
        i=$((i + 1))
      done )
  fi
  return "$bad"
}

# ------------------------------------------------------------ certificates

gen_pki() {
  local pki="$1" n="$2" prefix="$3"
  local cnf="$pki/openssl.cnf" i san
  mkdir -p "$pki"
  ( umask 077
    openssl ecparam -name prime256v1 -genkey -noout -out "$pki/ca.key"
    openssl req -x509 -new -key "$pki/ca.key" -sha256 -days 3650 \
      -subj "/CN=kubeset-realkube-ca" -out "$pki/ca.crt" \
      -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null

    san="DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:10.0.0.1"
    for ((i = 1; i <= n; i++)); do
      san+=",IP:127.0.0.$i"
      [[ "$prefix" == 127.0.0 ]] || san+=",IP:$prefix.$i"
    done
    cat > "$cnf" <<CNF
[server]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = $san
[client]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = clientAuth
CNF
    # name  subject  extension-section
    local spec name subj ext
    for spec in "apiserver|/CN=kube-apiserver|server" \
                "admin|/O=system:masters/CN=kubeset-admin|client" \
                "user|/O=kubeset:testers/CN=kubeset-tester|client"; do
      IFS='|' read -r name subj ext <<< "$spec"
      openssl ecparam -name prime256v1 -genkey -noout -out "$pki/$name.key.ec"
      # PKCS#8 keys: every TLS stack (rustls, Go, OpenSSL) reads them.
      openssl pkcs8 -topk8 -nocrypt -in "$pki/$name.key.ec" -out "$pki/$name.key"
      rm -f "$pki/$name.key.ec"
      openssl req -new -key "$pki/$name.key" -subj "$subj" -out "$pki/$name.csr"
      openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
        -CAcreateserial -sha256 -days 3650 -extfile "$cnf" -extensions "$ext" \
        -out "$pki/$name.crt" 2>/dev/null
      rm -f "$pki/$name.csr"
    done
    # Service-account token signing key pair (RS256, the default algorithm).
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$pki/sa.key" 2>/dev/null
    openssl pkey -in "$pki/sa.key" -pubout -out "$pki/sa.pub"
    # Static bearer tokens: token,user,uid,"groups".
    local admin_token user_token
    admin_token="$(openssl rand -hex 24)"; user_token="$(openssl rand -hex 24)"
    printf '%s,kubeset-admin-token,uid-admin,"system:masters"\n%s,kubeset-tester-token,uid-tester,"kubeset:testers"\n' \
      "$admin_token" "$user_token" > "$pki/tokens.csv"
    printf '%s' "$admin_token" > "$pki/admin.token"
    printf '%s' "$user_token" > "$pki/user.token"
  )
}

# ----------------------------------------------------------------- start

port_in_use() {
  local addr="$1" port="$2"
  ss -Htln "sport = :$port" 2>/dev/null | awk '{print $4}' | grep -q -E "^(\\*|0\\.0\\.0\\.0|\\[::\\]|$addr):$port\$"
}

wait_ready() {
  local name="$1" pidf="$2" url="$3" logf="$4" deadline=$((SECONDS + $5))
  shift 5
  while ((SECONDS < deadline)); do
    if ! pidfile_alive "$pidf"; then
      log "$name exited during start; last lines of $logf:"
      tail -n 30 "$logf" >&2 || true
      return 1
    fi
    if curl -fsS --max-time 5 "$@" "$url" >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.25
  done
  log "$name not ready at $url after the timeout; last lines of $logf:"
  tail -n 30 "$logf" >&2 || true
  return 1
}

cmd_start() {
  local n=1 port=16443 etcd_port=23790 inflight="" mutating="" apf=true
  local compaction=10s watch_cache=true timeout=180 prefix=127.0.0
  local gates="" runtime_config=""
  while (($#)); do
    case "$1" in
      --apiservers) n="${2:?}"; shift 2 ;;
      --max-requests-inflight) inflight="${2:?}"; shift 2 ;;
      --max-mutating-requests-inflight) mutating="${2:?}"; shift 2 ;;
      --no-apf) apf=false; shift ;;
      --port) port="${2:?}"; shift 2 ;;
      --etcd-port) etcd_port="${2:?}"; shift 2 ;;
      --etcd-compaction-interval) compaction="${2:?}"; shift 2 ;;
      --watch-cache) case "${2:?}" in on) watch_cache=true ;; off) watch_cache=false ;; *) die "--watch-cache on|off" ;; esac; shift 2 ;;
      --timeout) timeout="${2:?}"; shift 2 ;;
      --routable-addresses) prefix="$routable_prefix"; shift ;;
      --address-prefix) prefix="${2:?}"; shift 2 ;;
      --kubernetes) select_kubernetes "${2:?}"; shift 2 ;;
      --feature-gates) gates="${2:?}"; shift 2 ;;
      --runtime-config) runtime_config="${2:?}"; shift 2 ;;
      *) die "start: unknown option '$1'" ;;
    esac
  done
  [[ "$n" =~ ^[1-9]$ ]] || die "--apiservers must be 1..9"
  [[ "$prefix" =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] || die "--address-prefix wants three octets, like 198.18.1"

  local f
  for f in $(pidfiles); do
    if pidfile_alive "$f"; then
      die "already running ($(basename "$f" .pid)); run 'realkube.sh stop' first"
    fi
  done

  cmd_build
  local started=$SECONDS
  # Leftovers of a run whose processes died (pid files, added addresses).
  cmd_stop 2>/dev/null
  rm -rf "$run"
  mkdir -p "$run/pki" "$run/etcd-data"
  gen_pki "$run/pki" "$n" "$prefix"
  local pki="$run/pki"

  port_in_use 127.0.0.1 "$etcd_port" && die "port $etcd_port is in use (etcd); pass --etcd-port"
  port_in_use 127.0.0.1 "$((etcd_port + 1))" && die "port $((etcd_port + 1)) is in use (etcd peer); pass --etcd-port"
  for ((i = 1; i <= n; i++)); do
    port_in_use "$prefix.$i" "$port" && die "port $prefix.$i:$port is in use; pass --port"
  done

  # Anything failing from here on stops what was started.
  trap 'rc=$?; if ((rc != 0)); then log "start failed; stopping what was started"; cmd_stop; fi' EXIT
  if [[ "$prefix" != 127.* ]]; then
    for ((i = 1; i <= n; i++)); do add_address "$prefix.$i"; done
  fi

  # etcd: one member, plain HTTP on loopback.
  local etcd_url="http://127.0.0.1:$etcd_port"
  spawn "$run/etcd.pid" "$run/etcd.log" "$timeout" "$bindir/etcd" \
    --name realkube \
    --data-dir "$run/etcd-data" \
    --listen-client-urls "$etcd_url" \
    --advertise-client-urls "$etcd_url" \
    --listen-peer-urls "http://127.0.0.1:$((etcd_port + 1))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((etcd_port + 1))" \
    --initial-cluster "realkube=http://127.0.0.1:$((etcd_port + 1))" \
    --unsafe-no-fsync \
    --log-level warn
  wait_ready etcd "$run/etcd.pid" "$etcd_url/health" "$run/etcd.log" "$timeout"

  local servers=() pids=() i addr
  for ((i = 0; i < n; i++)); do
    addr="$prefix.$((i + 1))"
    local args=(
      --etcd-servers="$etcd_url"
      --etcd-compaction-interval="$compaction"
      --watch-cache="$watch_cache"
      --bind-address="$addr"
      --advertise-address="$addr"
      --secure-port="$port"
      --tls-cert-file="$pki/apiserver.crt"
      --tls-private-key-file="$pki/apiserver.key"
      --client-ca-file="$pki/ca.crt"
      --token-auth-file="$pki/tokens.csv"
      --authorization-mode=RBAC
      --service-account-issuer=https://kubernetes.default.svc
      --service-account-key-file="$pki/sa.pub"
      --service-account-signing-key-file="$pki/sa.key"
      --service-cluster-ip-range=10.0.0.0/24
      --allow-privileged=true
      # No controller-manager runs, so nothing creates the "default"
      # ServiceAccount a pod would otherwise need.
      --disable-admission-plugins=ServiceAccount
      --enable-priority-and-fairness="$apf"
      --profiling=false
      --v=1
    )
    [[ -n "$inflight" ]] && args+=(--max-requests-inflight="$inflight")
    [[ -n "$mutating" ]] && args+=(--max-mutating-requests-inflight="$mutating")
    [[ -n "$gates" ]] && args+=(--feature-gates="$gates")
    [[ -n "$runtime_config" ]] && args+=(--runtime-config="$runtime_config")
    spawn "$run/apiserver-$i.pid" "$run/apiserver-$i.log" "$timeout" "$bindir/$(apiserver_link)" "${args[@]}"
    servers+=("https://$addr:$port")
    pids+=("$(<"$run/apiserver-$i.pid")")
  done

  local tls=(--cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key")
  for ((i = 0; i < n; i++)); do
    wait_ready "apiserver-$i" "$run/apiserver-$i.pid" "${servers[$i]}/readyz" \
      "$run/apiserver-$i.log" "$timeout" "${tls[@]}"
  done
  local ready_after=$((SECONDS - started))

  # The non-admin test identity (group kubeset:testers) may do everything,
  # but unlike system:masters it is subject to max-in-flight limits and APF.
  # On a loaded machine the first write can time out; retry (a retry after a
  # lost answer finds it created: 409, also fine) until the start timeout.
  local crb_deadline=$((SECONDS + timeout)) code
  while :; do
    code="$(curl -sS -o /dev/null -w '%{http_code}' --max-time 20 "${tls[@]}" \
      -H 'Content-Type: application/json' -X POST \
      "${servers[0]}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings" \
      -d '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding",
           "metadata":{"name":"kubeset-testers-admin"},
           "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},
           "subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"Group","name":"kubeset:testers"}]}' \
      2>/dev/null)" || true
    [[ "$code" == 201 || "$code" == 409 ]] && break
    ((SECONDS < crb_deadline)) || die "creating the ClusterRoleBinding kubeset-testers-admin failed (HTTP ${code:-none})"
    sleep 1
  done

  write_kubeconfig "$cache/kubeconfig" "${servers[0]}" "$pki"
  write_kubeconfig "$cache/kubeconfig-embedded" "${servers[0]}" "$pki" embedded
  local joined_servers joined_pids
  joined_servers="$(IFS=,; echo "${servers[*]}")"
  joined_pids="$(IFS=,; echo "${pids[*]}")"
  {
    echo "# Written by tests/realkube/realkube.sh start; source it."
    printf 'export KUBESET_REALKUBE_KUBECONFIG=%q\n' "$cache/kubeconfig"
    printf 'export KUBESET_REALKUBE_KUBECONFIG_EMBEDDED=%q\n' "$cache/kubeconfig-embedded"
    printf 'export KUBESET_REALKUBE_SERVERS=%q\n' "$joined_servers"
    printf 'export KUBESET_REALKUBE_APISERVER_PIDS=%q\n' "$joined_pids"
    printf 'export KUBESET_REALKUBE_ETCD_URL=%q\n' "$etcd_url"
    printf 'export KUBESET_REALKUBE_ETCD_PID=%q\n' "$(cat "$run/etcd.pid")"
    printf 'export KUBESET_REALKUBE_CA=%q\n' "$pki/ca.crt"
    printf 'export KUBESET_REALKUBE_CLIENT_CERT=%q\n' "$pki/admin.crt"
    printf 'export KUBESET_REALKUBE_CLIENT_KEY=%q\n' "$pki/admin.key"
    printf 'export KUBESET_REALKUBE_USER_CERT=%q\n' "$pki/user.crt"
    printf 'export KUBESET_REALKUBE_USER_KEY=%q\n' "$pki/user.key"
    printf 'export KUBESET_REALKUBE_ADMIN_TOKEN=%q\n' "$(cat "$pki/admin.token")"
    printf 'export KUBESET_REALKUBE_USER_TOKEN=%q\n' "$(cat "$pki/user.token")"
    printf 'export KUBESET_REALKUBE_KUBERNETES_VERSION=%q\n' "$(kube_version)"
    printf 'export KUBESET_REALKUBE_ETCD_VERSION=%q\n' "$(etcd_version)"
    printf 'export KUBESET_REALKUBE_FEATURE_GATES=%q\n' "$gates"
    printf 'export KUBESET_REALKUBE_LOG_DIR=%q\n' "$run"
  } > "$cache/env.tmp"
  chmod 600 "$cache/env.tmp"
  mv -f "$cache/env.tmp" "$cache/env"
  trap - EXIT
  log "ready: $n apiserver(s) at $joined_servers after ${ready_after}s (etcd $etcd_url)"
  log "source $cache/env  or  kubectl --kubeconfig $cache/kubeconfig ..."
}

# One cluster, one admin user, one context. With "embedded" the CA and the
# client certificate and key are inlined as base64 *-data fields instead of
# being referred to by path.
write_kubeconfig() {
  local out="$1" server="$2" pki="$3" mode="${4:-paths}"
  local ca_line crt_line key_line
  if [[ "$mode" == embedded ]]; then
    ca_line="certificate-authority-data: $(base64 -w0 < "$pki/ca.crt")"
    crt_line="client-certificate-data: $(base64 -w0 < "$pki/admin.crt")"
    key_line="client-key-data: $(base64 -w0 < "$pki/admin.key")"
  else
    ca_line="certificate-authority: $pki/ca.crt"
    crt_line="client-certificate: $pki/admin.crt"
    key_line="client-key: $pki/admin.key"
  fi
  ( umask 077
    cat > "$out.tmp" <<KC
apiVersion: v1
kind: Config
clusters:
- name: realkube
  cluster:
    server: $server
    $ca_line
users:
- name: kubeset-admin
  user:
    $crt_line
    $key_line
contexts:
- name: realkube
  context:
    cluster: realkube
    user: kubeset-admin
    namespace: default
current-context: realkube
KC
  )
  mv -f "$out.tmp" "$out"
}

cmd_env() {
  [[ -f "$cache/env" ]] || die "not running (no $cache/env)"
  cat "$cache/env"
}

main() {
  local sub="${1:-}"
  shift || true
  case "$sub" in
    build) cmd_build "$@" ;;
    start) cmd_start "$@" ;;
    stop) cmd_stop "$@" ;;
    status) cmd_status "$@" ;;
    env) cmd_env "$@" ;;
    *) die "usage: realkube.sh build|start|stop|status|env (see the header of this script)" ;;
  esac
}

main "$@"
