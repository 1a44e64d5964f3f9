//! The streaming subresources `pods/exec`, `pods/attach` and
//! `pods/portforward`, opt-in per server
//! ([`TestServerBuilder::container_runtime`](crate::TestServerBuilder::container_runtime)):
//! the WebSocket upgrade with the Kubernetes subprotocols, kube-apiserver's
//! checks before it (container choice, a pod without a node), and a
//! simulated runtime behind it (`runtime`: built-in commands only, never
//! a host process; `fs`: in-memory files; `portforward`: built-in TCP echo
//! and HTTP hello servers on the declared container ports).
//!
//! Bounds: [`MAX_SESSIONS`] at once (429 past it), `session::MAX_SESSION`
//! per session, 1 MiB WebSocket messages, `fs::MAX_BYTES` of files per
//! container and [`MAX_CONTAINERS`] containers with files.

mod attach;
mod channel;
mod fs;
pub(crate) mod portforward;
mod runtime;
mod session;
mod spdy;
mod spdy_session;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_util::sync::CancellationToken;

use tokio::sync::watch;

use crate::faults::{FaultState, Mode};
use crate::status::ApiError;
use crate::store::Store;
use crate::util;
use crate::wire::{Body, full, percent_decode};

/// Sessions (exec, attach, port-forward) open at once per server.
pub(crate) const MAX_SESSIONS: usize = 64;
/// Containers whose files are kept; the oldest is forgotten past it.
pub(crate) const MAX_CONTAINERS: usize = 32;
/// Most `command` arguments of one exec.
const MAX_ARGS: usize = 1024;

/// (uid, container) → files, and the order they were made in.
type Files = (
    HashMap<(String, String), Arc<fs::Fs>>,
    VecDeque<(String, String)>,
);

/// The simulated runtime of one server.
pub(crate) struct Runtime {
    sessions: Arc<Semaphore>,
    files: Mutex<Files>,
    /// Each container's main process, for attach.
    mains: Mutex<HashMap<(String, String), Arc<attach::Main>>>,
    /// Cancelled when the server shuts down: every session ends.
    cancel: CancellationToken,
}

impl Runtime {
    pub(crate) fn new(cancel: CancellationToken) -> Self {
        Self {
            sessions: Arc::new(Semaphore::new(MAX_SESSIONS)),
            files: Mutex::default(),
            mains: Mutex::default(),
            cancel,
        }
    }

    /// The files of container `name` of the pod with `uid`.
    fn fs(&self, uid: &str, name: &str) -> Arc<fs::Fs> {
        let mut guard = self
            .files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (map, order) = &mut *guard;
        let key = (uid.to_owned(), name.to_owned());
        if let Some(f) = map.get(&key) {
            return f.clone();
        }
        if map.len() >= MAX_CONTAINERS
            && let Some(old) = order.pop_front()
        {
            map.remove(&old);
        }
        let f = Arc::new(fs::Fs::default());
        map.insert(key.clone(), f.clone());
        order.push_back(key);
        f
    }
}

/// What an exec or attach runs, and where.
pub(crate) struct ExecTarget {
    pub(crate) pod: String,
    pub(crate) uid: String,
    pub(crate) container: String,
    pub(crate) command: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) stdin: bool,
    pub(crate) stdout: bool,
    pub(crate) stderr: bool,
    pub(crate) tty: bool,
    /// The container's `stdinOnce` (attach: the first stdin close is EOF).
    pub(crate) stdin_once: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Sub {
    Exec,
    Attach,
    PortForward,
}

fn params(query: Option<&str>) -> Vec<(String, String)> {
    query
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (percent_decode(k), percent_decode(v)),
            None => (percent_decode(p), String::new()),
        })
        .collect()
}

fn flag(q: &[(String, String)], k: &str) -> bool {
    q.iter()
        .any(|(key, v)| key == k && matches!(v.as_str(), "true" | "1" | "True" | "TRUE"))
}

fn status_response(e: &ApiError) -> Response<Body> {
    let mut r = Response::new(full(e.to_status().to_string()));
    *r.status_mut() = StatusCode::from_u16(e.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// Hook for `http::handle`: answers the streaming subresources of pods
/// when the server has a runtime; gives every other request back.
pub(crate) async fn intercept(
    req: Request<hyper::body::Incoming>,
    store: &Store,
    runtime: Option<&Arc<Runtime>>,
    faults: &FaultState,
) -> Result<Response<Body>, Request<hyper::body::Incoming>> {
    let Some(rt) = runtime.cloned() else {
        return Err(req);
    };
    let segs: Vec<String> = req
        .uri()
        .path()
        .split('/')
        .filter(|s| !s.is_empty())
        .map(percent_decode)
        .collect();
    let sub = match segs
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["api", "v1", "namespaces", _, "pods", _, "exec"] => Sub::Exec,
        ["api", "v1", "namespaces", _, "pods", _, "attach"] => Sub::Attach,
        ["api", "v1", "namespaces", _, "pods", _, "portforward"] => Sub::PortForward,
        _ => return Err(req),
    };
    Ok(
        match answer(
            req,
            store,
            rt,
            faults.subscribe_mode(),
            sub,
            &segs[3],
            &segs[5],
        )
        .await
        {
            Ok(r) => r,
            Err(e) => status_response(&e),
        },
    )
}

async fn answer(
    mut req: Request<hyper::body::Incoming>,
    store: &Store,
    rt: Arc<Runtime>,
    // A replica taken down drops its upgraded connections too (the
    // invariant of `server.rs`): the session watches the replica's mode.
    mode: watch::Receiver<Mode>,
    sub: Sub,
    ns: &str,
    name: &str,
) -> Result<Response<Body>, ApiError> {
    if !matches!(*req.method(), Method::GET | Method::POST) {
        return Err(ApiError::method_not_allowed());
    }
    let q = params(req.uri().query());
    let target = Target::of(store, sub, ns, name, &q)?;
    let (key, protocol) = upgrade_terms(req.headers(), sub, &target.wanted)?;
    let permit: OwnedSemaphorePermit = rt
        .sessions
        .clone()
        .try_acquire_owned()
        .map_err(|_| ApiError::injected(429))?;
    let upgrade = hyper::upgrade::on(&mut req);
    let session = Session {
        rt,
        mode,
        sub,
        protocol,
        target,
    };
    tokio::spawn(session.run(upgrade, permit));
    Ok(switching_protocols(&key, protocol))
}

/// What a streaming request reaches, checked as kube-apiserver checks it
/// before the upgrade: the pod, its container, its node, the ports.
struct Target {
    /// exec/attach: the container's command and stdio; none for port-forward.
    what: Option<ExecTarget>,
    /// The pod's declared container ports and what serves them.
    ports: Vec<(u16, portforward::Service)>,
    /// The ports the query asks for (port-forward).
    wanted: Vec<u16>,
}

impl Target {
    fn of(
        store: &Store,
        sub: Sub,
        ns: &str,
        name: &str,
        q: &[(String, String)],
    ) -> Result<Self, ApiError> {
        let pods = store
            .lookup("", "v1", "pods")
            .ok_or_else(ApiError::path_not_found)?;
        let pod = store.get(&pods, ns, name)?;
        let container = match sub {
            Sub::PortForward => String::new(),
            _ => pick_container(
                &pod,
                name,
                q.iter()
                    .find(|(k, _)| k == "container")
                    .map(|(_, v)| v.as_str()),
            )?,
        };
        if pod
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            return Err(ApiError::bad_request(format!(
                "pod {name} does not have a host assigned"
            )));
        }
        let ports = portforward::ports_of(&pod);
        let wanted = portforward::requested_ports(q)?;
        let what = match sub {
            Sub::PortForward => None,
            _ => Some(exec_target(&pod, name, container, sub, q)?),
        };
        Ok(Target {
            what,
            ports,
            wanted,
        })
    }
}

/// The WebSocket accept key and the subprotocol chosen from those the
/// client offers, or why the connection cannot be upgraded.
fn upgrade_terms(
    headers: &HeaderMap,
    sub: Sub,
    wanted: &[u16],
) -> Result<(String, &'static str), ApiError> {
    let offered = headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok());
    let protocol = match sub {
        Sub::PortForward => portforward::negotiate(offered),
        _ => channel::negotiate(offered),
    };
    let (Some(key), Some(protocol)) = (websocket_key(headers), protocol) else {
        return Err(ApiError::bad_request(
            "unable to upgrade connection: the embedded server speaks WebSocket \
             (v5.channel.k8s.io, v4.channel.k8s.io; port-forward: \
             SPDY/3.1+portforward.k8s.io, portforward.k8s.io), not SPDY",
        ));
    };
    if sub == Sub::PortForward && protocol != portforward::SPDY_TUNNEL && wanted.is_empty() {
        // The channel protocol numbers its channels by the query's ports.
        return Err(ApiError::bad_request(
            "query parameter \"ports\" is required",
        ));
    }
    Ok((key, protocol))
}

/// An accepted session, run on the upgraded connection until it ends, the
/// server stops or the replica goes down.
struct Session {
    rt: Arc<Runtime>,
    mode: watch::Receiver<Mode>,
    sub: Sub,
    protocol: &'static str,
    target: Target,
}

impl Session {
    async fn run(self, upgrade: hyper::upgrade::OnUpgrade, permit: OwnedSemaphorePermit) {
        let _permit = permit;
        let Session {
            rt,
            mut mode,
            sub,
            protocol,
            target,
        } = self;
        let Ok(up) = upgrade.await else { return };
        let ws = session::websocket(up).await;
        let work = async {
            match target.what {
                Some(t) if sub == Sub::Attach => {
                    let once = t.stdin_once;
                    attach::run(&rt, ws, protocol, t, once).await;
                }
                Some(t) => session::run(&rt, ws, protocol, t).await,
                None => portforward::run(ws, protocol, &target.wanted, &target.ports).await,
            }
        };
        tokio::select! {
            () = work => {}
            () = rt.cancel.cancelled() => {}
            _ = mode.wait_for(|m| *m == Mode::Down) => {}
        }
    }
}

/// The 101 answer that switches the connection to WebSocket.
fn switching_protocols(key: &str, protocol: &'static str) -> Response<Body> {
    let mut r = Response::new(full(""));
    *r.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = r.headers_mut();
    h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    h.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    if let Ok(v) = HeaderValue::from_str(key) {
        h.insert(header::SEC_WEBSOCKET_ACCEPT, v);
    }
    h.insert(
        header::SEC_WEBSOCKET_PROTOCOL,
        HeaderValue::from_static(protocol),
    );
    r
}

fn websocket_key(h: &HeaderMap) -> Option<String> {
    let upgrade = h
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    let key = h.get(header::SEC_WEBSOCKET_KEY)?;
    upgrade.then(|| derive_accept_key(key.as_bytes()))
}

fn container_names(pod: &Value) -> Vec<&str> {
    pod.pointer("/spec/containers")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .filter_map(|c| c.get("name").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default()
}

/// kube-apiserver's choice of container (`streamLocation`).
fn pick_container(pod: &Value, name: &str, asked: Option<&str>) -> Result<String, ApiError> {
    let names = container_names(pod);
    match asked.filter(|c| !c.is_empty()) {
        Some(c) if names.contains(&c) => Ok(c.to_owned()),
        Some(c) => Err(ApiError::bad_request(format!(
            "container {c} is not valid for pod {name}"
        ))),
        None => match names.as_slice() {
            [one] => Ok((*one).to_owned()),
            [] => Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {name}"
            ))),
            many => Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {name}, choose one of: [{}]",
                many.join(" ")
            ))),
        },
    }
}

fn exec_target(
    pod: &Value,
    name: &str,
    container: String,
    sub: Sub,
    q: &[(String, String)],
) -> Result<ExecTarget, ApiError> {
    let spec = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.get("name").and_then(Value::as_str) == Some(&container))
        });
    let strings = |k: &str| spec.map(|c| util::strings(&c[k])).unwrap_or_default();
    let command: Vec<String> = match sub {
        Sub::Exec => q
            .iter()
            .filter(|(k, _)| k == "command")
            .map(|(_, v)| v.clone())
            .collect(),
        _ => {
            let mut c = strings("command");
            c.extend(strings("args"));
            if c.is_empty() {
                c.push("sh".into());
            }
            c
        }
    };
    if command.is_empty() {
        return Err(ApiError::bad_request("you must specify at least 1 command"));
    }
    if command.len() > MAX_ARGS {
        return Err(ApiError::bad_request("too many command arguments"));
    }
    let (stdin, stdout, stderr, tty) = (
        flag(q, "stdin"),
        flag(q, "stdout"),
        flag(q, "stderr"),
        flag(q, "tty"),
    );
    if !(stdin || stdout || stderr) {
        return Err(ApiError::bad_request(
            "you must specify at least one of stdin, stdout, stderr",
        ));
    }
    let env = spec
        .and_then(|c| c.get("env"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|e| {
                    Some((
                        e.get("name")?.as_str()?.to_owned(),
                        e.get("value")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(ExecTarget {
        pod: name.to_owned(),
        uid: pod
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or(name)
            .to_owned(),
        container,
        command,
        env,
        stdin,
        stdout,
        stderr,
        tty,
        stdin_once: spec
            .and_then(|c| c.get("stdinOnce"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}
