//! Flags and subcommands, and turning the global flags into a [`Client`].

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use kubeset::Client;
use kubeset::rest::RestClient;
use kubeset::rest::config::{Kubeconfig, Secret, StaticToken};
use kubeset::rest::warning::{DedupWarnings, Warning, WarningHandler};
use kubeset::{Config, KubeConfigOptions};

use crate::error::CliError;

/// kubeset: a Kubernetes client, its command line, and an embedded API
/// server to try it on.
#[derive(Debug, Parser)]
#[command(name = "kubeset", version, about, max_term_width = 100)]
pub struct Cli {
    /// Connection and logging flags, accepted before or after the subcommand.
    #[command(flatten)]
    pub global: Global,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every command understands.
#[derive(Debug, Args)]
pub struct Global {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
    /// Namespace of the request (default: the context's, else `default`).
    #[arg(short = 'n', long, global = true, value_name = "NS")]
    pub namespace: Option<String>,
    /// API server URL, repeatable: the first is tried first, the others
    /// are failover endpoints of the same cluster (a call that cannot reach
    /// one server moves to the next). With --kubeconfig, the kubeconfig's
    /// credentials and CA are kept.
    #[arg(long = "server", short = 's', global = true, value_name = "URL")]
    pub servers: Vec<String>,
    /// Bearer token for authentication (replaces the kubeconfig's credentials).
    #[arg(long, global = true, value_name = "TOKEN")]
    pub token: Option<String>,
    /// Do not verify the server's certificate (insecure).
    #[arg(long, global = true)]
    pub insecure_skip_tls_verify: bool,
    /// Give up on a request after this long (`500ms`, `1s`, `2m`; `0` for never).
    #[arg(long, global = true, value_name = "DURATION", value_parser = parse_duration)]
    pub request_timeout: Option<Duration>,
    /// Log verbosity on stderr, as kubectl's `-v`: `-v 1` (or `-v=1`)
    /// warnings, `2` info, `4` debug, `6` trace (default: errors only).
    #[arg(short = 'v', long = "v", global = true, value_name = "LEVEL")]
    pub verbosity: Option<u8>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List objects of a resource type, or show one.
    Get(GetArgs),
    /// Create objects from a manifest file (YAML, multi-document, or JSON),
    /// or a namespace or ConfigMap from the command line.
    Create(CreateArgs),
    /// Server-side apply objects from a manifest file.
    Apply(ApplyArgs),
    /// Patch one object.
    Patch(PatchArgs),
    /// Delete objects by name.
    Delete(DeleteArgs),
    /// Watch a resource type: one line per event.
    Watch(WatchArgs),
    /// Print a pod's logs.
    Logs(LogsArgs),
    /// Run a command in a container (exits with the command's exit code).
    Exec(ExecArgs),
    /// Attach to the main process of a running container.
    Attach(AttachArgs),
    /// Forward local ports to a pod.
    PortForward(PortForwardArgs),
    /// Copy files to and from a container (tar over exec, as kubectl).
    Cp(CpArgs),
    /// List the resource types the server serves.
    ApiResources(ApiResourcesArgs),
    /// Run the embedded API server until Ctrl-C or SIGTERM.
    Serve(ServeArgs),
    /// Start an embedded 3-replica server and walk through what a
    /// controller does, checking every step.
    Demo,
    /// Print a shell completion script (`source <(kubeset completion bash)`).
    Completion(CompletionArgs),
}

/// `completion` arguments.
#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Shells `completion` writes scripts for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    /// bash (needs the bash-completion package).
    Bash,
    /// zsh.
    Zsh,
    /// fish.
    Fish,
}

/// `--dry-run`, as kubectl's: `server` sends the request with
/// `dryRun=All` (validated, admitted and defaulted, never stored).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum DryRun {
    /// A real request (the default).
    #[default]
    None,
    /// `dryRun=All`: the server answers what it would store.
    Server,
}

impl DryRun {
    /// kubectl's suffix of the result line: ` (server dry run)`.
    pub fn suffix(self) -> &'static str {
        match self {
            DryRun::None => "",
            DryRun::Server => " (server dry run)",
        }
    }
}

/// The `--dry-run` flag of the writing commands.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct DryRunArg {
    /// `server`: submit with `dryRun=All`, nothing is stored; `none`: a
    /// real request. (kubectl's `client` needs no server; it is not offered.)
    #[arg(
        long = "dry-run",
        value_enum,
        value_name = "STRATEGY",
        default_value = "none"
    )]
    pub dry_run: DryRun,
}

impl DryRunArg {
    /// Whether the request is a dry run.
    pub fn on(self) -> bool {
        self.dry_run == DryRun::Server
    }
}

/// `create` arguments: a manifest, or one of the subcommands.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct CreateArgs {
    /// Create this instead of reading a manifest.
    #[command(subcommand)]
    pub what: Option<CreateWhat>,
    /// Manifest file, or `-` for stdin.
    #[arg(short = 'f', long = "filename", value_name = "FILE", required = true)]
    pub file: Option<String>,
    /// Dry run.
    #[command(flatten)]
    pub dry_run: DryRunArg,
}

/// What `create` makes from flags.
#[derive(Debug, Subcommand)]
pub enum CreateWhat {
    /// A namespace.
    #[command(alias = "ns")]
    Namespace(CreateNamespaceArgs),
    /// A ConfigMap from literals and files.
    #[command(alias = "cm")]
    Configmap(CreateConfigMapArgs),
}

/// `create namespace` arguments.
#[derive(Debug, Args)]
pub struct CreateNamespaceArgs {
    /// The namespace's name.
    pub name: String,
    /// Dry run.
    #[command(flatten)]
    pub dry_run: DryRunArg,
}

/// `create configmap` arguments.
#[derive(Debug, Args)]
pub struct CreateConfigMapArgs {
    /// The ConfigMap's name.
    pub name: String,
    /// `key=value`, repeatable.
    #[arg(long = "from-literal", value_name = "KEY=VALUE")]
    pub from_literal: Vec<String>,
    /// `[key=]path`: the file's content under its base name (or `key`),
    /// repeatable; binary files go to `binaryData`.
    #[arg(long = "from-file", value_name = "[KEY=]PATH")]
    pub from_file: Vec<String>,
    /// Dry run.
    #[command(flatten)]
    pub dry_run: DryRunArg,
}

/// Output formats of `get`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputFormat {
    /// The object(s) as JSON.
    Json,
    /// The object(s) as YAML.
    Yaml,
    /// `kind.group/name` per object.
    Name,
    /// The table with more columns.
    Wide,
    /// `jsonpath=TEMPLATE`: kubectl's JSONPath template (`{.metadata.name}`,
    /// `{range .items[*]}…{end}`), checked when parsed.
    JsonPath(crate::jsonpath::Template),
}

/// Parses `-o`: `json`, `yaml`, `name`, `wide`, `jsonpath=TEMPLATE`.
pub fn parse_output(text: &str) -> Result<OutputFormat, String> {
    match text {
        "json" => Ok(OutputFormat::Json),
        "yaml" => Ok(OutputFormat::Yaml),
        "name" => Ok(OutputFormat::Name),
        "wide" => Ok(OutputFormat::Wide),
        _ => match text.split_once('=') {
            Some(("jsonpath", template)) => crate::jsonpath::Template::parse(template)
                .map(OutputFormat::JsonPath)
                .map_err(|e| e.to_string()),
            _ => Err(format!(
                "unknown output format {text:?} (json, yaml, name, wide, jsonpath=TEMPLATE)"
            )),
        },
    }
}

/// `get` arguments.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// Resource type: plural, singular, short name or kind, optionally
    /// `.group` qualified (`deploy`, `deployments.apps`).
    pub resource: String,
    /// Object name (all objects when absent).
    pub name: Option<String>,
    /// List across all namespaces.
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
    /// Label selector (`app=web,tier!=db`).
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Field selector (`metadata.name=x`).
    #[arg(long, value_name = "SELECTOR")]
    pub field_selector: Option<String>,
    /// Output format: json, yaml, name, wide, jsonpath=TEMPLATE (a table
    /// when absent).
    #[arg(short = 'o', long, value_parser = parse_output, value_name = "FORMAT")]
    pub output: Option<OutputFormat>,
    /// After listing, watch for changes: one table row per change (from the
    /// list's resourceVersion, so nothing is missed or repeated).
    #[arg(short = 'w', long)]
    pub watch: bool,
    /// Print `metadata.managedFields` too in json and yaml output (hidden
    /// by default, as kubectl does; JSONPath templates always see them).
    #[arg(long)]
    pub show_managed_fields: bool,
}

/// A manifest file argument.
#[derive(Debug, Args)]
pub struct FileArgs {
    /// Manifest file, or `-` for stdin.
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub file: String,
}

/// `apply` arguments.
#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// The manifest.
    #[command(flatten)]
    pub file: FileArgs,
    /// Field manager that owns the applied fields.
    #[arg(long, default_value = "kubeset")]
    pub field_manager: String,
    /// Take ownership of fields other managers own instead of failing.
    #[arg(long)]
    pub force_conflicts: bool,
    /// Accepted for kubectl compatibility; apply is always server-side.
    #[arg(long, hide = true)]
    pub server_side: bool,
    /// Dry run.
    #[command(flatten)]
    pub dry_run: DryRunArg,
}

/// Patch flavours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PatchKind {
    /// RFC 6902 JSON patch (an array of operations).
    Json,
    /// RFC 7386 JSON merge patch.
    Merge,
    /// Kubernetes strategic merge patch.
    Strategic,
}

/// `patch` arguments.
#[derive(Debug, Args)]
pub struct PatchArgs {
    /// Resource type.
    pub resource: String,
    /// Object name.
    pub name: String,
    /// Patch flavour.
    #[arg(long = "type", value_enum, default_value = "strategic")]
    pub kind: PatchKind,
    /// The patch, as JSON (or YAML).
    #[arg(short = 'p', long, value_name = "PATCH")]
    pub patch: String,
    /// Dry run.
    #[command(flatten)]
    pub dry_run: DryRunArg,
}

/// `delete` arguments.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// Resource type.
    pub resource: String,
    /// Object names.
    #[arg(required = true)]
    pub names: Vec<String>,
    /// Succeed when the object does not exist.
    #[arg(long)]
    pub ignore_not_found: bool,
    /// Dry run.
    #[command(flatten)]
    pub dry_run: DryRunArg,
}

/// `watch` arguments.
#[derive(Debug, Default, Args)]
pub struct WatchArgs {
    /// Resource type.
    pub resource: String,
    /// Watch across all namespaces.
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
    /// Label selector.
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Field selector.
    #[arg(long, value_name = "SELECTOR")]
    pub field_selector: Option<String>,
    /// Start after this resourceVersion (default: list the current objects,
    /// print them as ADDED, and watch from the list's resourceVersion).
    #[arg(long, value_name = "RV")]
    pub resource_version: Option<String>,
    /// Stop after this many seconds (the server ends the watch); without
    /// it the watch is resumable: it reopens from the last resourceVersion
    /// whenever its server closes it or dies (on the next --server).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u32>,
    /// How events print (`get -w` asks for table rows).
    #[arg(skip)]
    pub print: EventPrint,
    /// The table's column widths printed so far: rows stay aligned with
    /// the list above them and with each other (kubectl's tabwriter
    /// remembers widths across flushes).
    #[arg(skip)]
    pub widths: Vec<usize>,
}

/// How `watch` prints an event.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum EventPrint {
    /// `ADDED configmap/x rv=12`.
    #[default]
    Lines,
    /// The object's table row, as `kubectl get -w`; the header first
    /// unless the list before the watch printed it.
    Rows {
        /// `-o wide` columns.
        wide: bool,
        /// Whether the header is already on the screen.
        header_printed: bool,
    },
}

/// `logs` arguments.
#[derive(Debug, Args)]
pub struct LogsArgs {
    /// Pod name.
    pub pod: String,
    /// Container name.
    #[arg(short = 'c', long)]
    pub container: Option<String>,
    /// Keep streaming new lines.
    #[arg(short = 'f', long)]
    pub follow: bool,
}

/// `exec` arguments.
#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Pod, container, stdin and TTY, as for `attach`.
    #[command(flatten)]
    pub target: AttachArgs,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `attach` arguments.
#[derive(Debug, Args)]
pub struct AttachArgs {
    /// Pod name.
    pub pod: String,
    /// Container name (default: the pod's only container).
    #[arg(short = 'c', long)]
    pub container: Option<String>,
    /// Pass stdin to the process.
    #[arg(short = 'i', long)]
    pub stdin: bool,
    /// Allocate a TTY (stderr is merged into stdout).
    #[arg(short = 't', long)]
    pub tty: bool,
}

/// `port-forward` arguments.
#[derive(Debug, Args)]
pub struct PortForwardArgs {
    /// Pod name.
    pub pod: String,
    /// `LOCAL:REMOTE`, `PORT` (the same on both sides) or `:REMOTE` (any
    /// free local port).
    #[arg(required = true, value_name = "PORTS")]
    pub ports: Vec<String>,
    /// Local address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub address: std::net::IpAddr,
}

/// `cp` arguments.
#[derive(Debug, Args)]
pub struct CpArgs {
    /// `[NAMESPACE/]POD:PATH` or a local path.
    pub src: String,
    /// `[NAMESPACE/]POD:PATH` or a local path.
    pub dest: String,
    /// Container name (default: the pod's only container).
    #[arg(short = 'c', long)]
    pub container: Option<String>,
}

/// `api-resources` arguments.
#[derive(Debug, Args)]
pub struct ApiResourcesArgs {
    /// Only `plural.group` per line.
    #[arg(short = 'o', long, value_parser = ["name", "wide"])]
    pub output: Option<String>,
}

/// `serve` arguments. The global flags (under "Options" in `--help`) are
/// client flags and do not change the server.
#[derive(Debug, Args)]
#[command(
    next_help_heading = "Server options",
    after_help = crate::cmd::serve::AFTER_HELP
)]
pub struct ServeArgs {
    /// Number of replicas (listeners sharing one store).
    #[arg(long, default_value_t = 1)]
    pub replicas: usize,
    /// Port of replica 0; replica i listens on port+i (0: any free ports).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Serve HTTPS with a generated CA; without --require-token a random
    /// token is generated and required (it and the CA go to
    /// --kubeconfig-out, which --tls then needs).
    #[arg(long)]
    pub tls: bool,
    /// Write a kubeconfig for the replicas to this file (mode 0600).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig_out: Option<PathBuf>,
    /// Also serve the fault-injection admin endpoint (behind the same
    /// token as the API).
    #[arg(long)]
    pub admin: bool,
    /// Require this bearer token (on the API and the admin endpoint).
    #[arg(long = "require-token", value_name = "TOKEN")]
    pub require_token: Option<String>,
    /// Serve /openapi/v2 and /openapi/v3 from this Kubernetes spec
    /// directory (`swagger.json`, `openapi-v3/`; default
    /// $KUBESET_SPECS/kubernetes/<the models' version, `v1.37` unless a
    /// version feature picked another> when that exists) instead of the
    /// documents built from the compiled-in schemas.
    #[arg(long, value_name = "DIR")]
    pub openapi_specs: Option<PathBuf>,
    /// Run controllers-lite: Deployments make ReplicaSets and Pods, Pods
    /// turn Running and ready, Jobs complete, owners' dependents are
    /// garbage-collected (`kubectl rollout status` and `wait` finish).
    #[arg(long)]
    pub controllers: bool,
    /// Serve exec, attach, port-forward and cp (WebSocket) with a
    /// simulated runtime of built-in commands (echo, cat, env, sh -c 'exit N',
    /// sleep, tar; a TCP echo or HTTP hello on declared ports); never runs a
    /// host process. Pods need spec.nodeName
    #[arg(long)]
    pub container_runtime: bool,
    /// Close a new connection whose first request head has not arrived
    /// within this (kube-apiserver's ReadHeaderTimeout; default 32s).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub header_timeout: Option<Duration>,
    /// Close a kept-alive connection whose next request has not arrived
    /// within this of the last answer (kube-apiserver's IdleTimeout;
    /// default 90s).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub idle_timeout: Option<Duration>,
    /// Answer 504 and close the connection when a request body takes
    /// longer (kube-apiserver's --request-timeout; default 60s).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub body_timeout: Option<Duration>,
    /// Close a connection whose TLS handshake takes longer (default 32s).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub handshake_timeout: Option<Duration>,
    /// Connections served at once, over every replica and the admin
    /// endpoint; one more is closed at once (default 4096).
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
    /// End a watch whose client has not read for this long while its
    /// queue is full (default 10s); the client re-watches.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub slow_watcher_timeout: Option<Duration>,
}

/// Parses `1s`, `500ms`, `2m`, `1h`, `1m30s`, or a bare number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty duration".to_owned());
    }
    if let Ok(secs) = text.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| format!("{text:?}: missing unit (ms, s, m, h)"))?;
        if digits == 0 {
            return Err(format!("{text:?} is not a duration like 1s or 500ms"));
        }
        let value: f64 = rest[..digits]
            .parse()
            .map_err(|_| format!("{text:?}: bad number"))?;
        let after = &rest[digits..];
        let unit_len = after
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(after.len());
        let unit = &after[..unit_len];
        let scale = match unit {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(format!("{text:?}: unknown unit {unit:?} (ms, s, m, h)")),
        };
        total += Duration::try_from_secs_f64(value * scale)
            .map_err(|_| format!("{text:?} is out of range"))?;
        rest = &after[unit_len..];
    }
    Ok(total)
}

/// The CLI's read timeout: the longest silence of a server on an open
/// connection (headers, or any gap in a body) before a command fails;
/// above the API server's watch bookmark interval (about a minute).
pub const READ_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// Prints server warnings as `Warning: <text>` on stderr.
#[derive(Debug, Default)]
struct StderrWarnings;

impl WarningHandler for StderrWarnings {
    fn handle_warning(&self, warning: &Warning) {
        eprintln!("Warning: {}", crate::error::escape_controls(&warning.text));
    }
}

impl Global {
    /// The config the flags describe: the kubeconfig (from --kubeconfig or
    /// the environment) with --server, --token, --insecure-skip-tls-verify,
    /// --request-timeout and -n applied on top. `--server` without
    /// `--kubeconfig` needs no kubeconfig at all.
    pub fn config(&self) -> Result<Config, CliError> {
        let options = match &self.context {
            Some(c) => KubeConfigOptions::default().with_context(c.clone()),
            None => KubeConfigOptions::default(),
        };
        let mut config = match (&self.kubeconfig, self.servers.first()) {
            (Some(path), _) => {
                let kc =
                    Kubeconfig::read_from(path).map_err(|source| CliError::Config { source })?;
                Config::from_custom_kubeconfig_sync(kc, &options)
                    .map_err(|source| CliError::Config { source })?
            }
            (None, Some(server)) => Config::new(parse_server(server)?),
            (None, None) => Config::from_kubeconfig_sync(&options)
                .map_err(|source| CliError::Config { source })?,
        };
        if let Some(server) = self.servers.first() {
            config.cluster_url = parse_server(server)?;
        }
        config.extra_endpoints = self
            .servers
            .iter()
            .skip(1)
            .map(|s| parse_server(s))
            .collect::<Result<_, _>>()?;
        if let Some(token) = &self.token {
            let auth = StaticToken::new(&Secret::new(token.clone()))
                .map_err(|source| CliError::Config { source })?;
            config.authenticator = Some(Arc::new(auth));
        }
        if self.insecure_skip_tls_verify {
            config.tls.insecure_skip_verify = true;
            config.tls.root_certs.clear();
        }
        if let Some(t) = self.request_timeout {
            config.timeout = (!t.is_zero()).then_some(t);
        }
        // A server that accepts and then goes silent must not hang a
        // command for ever (`logs -f` turns this off: a quiet container).
        config.read_timeout = Some(READ_TIMEOUT);
        if let Some(ns) = &self.namespace {
            config.default_namespace = ns.clone();
        }
        // A command line makes bursts of requests (discovery, then the
        // verb); kubectl raises client-go's 5/10 the same way.
        config.qps = 50.0;
        config.burst = 100;
        Ok(config)
    }

    /// A client for the flags, printing server warnings on stderr.
    pub fn client(&self) -> Result<Client, CliError> {
        let config = self.config()?;
        client_for(&config)
    }
}

/// A client for `config` that prints each distinct server warning once on
/// stderr as `Warning: <text>`.
pub fn client_for(config: &Config) -> Result<Client, CliError> {
    if config.tls.insecure_skip_verify {
        // At any verbosity (the library's log line needs -v=1).
        eprintln!(
            "Warning: insecure-skip-tls-verify is set: the server's certificate is not verified"
        );
    }
    let rest_config = config
        .rest_config()
        .map_err(|source| CliError::Config { source })?
        .with_warning_handler(Arc::new(DedupWarnings::new(Arc::new(StderrWarnings))));
    let rest = RestClient::new(rest_config).map_err(|source| CliError::Client { source })?;
    Ok(Client::new(rest, config.default_namespace.clone()))
}

/// A `--server` value as a URL (`host:port` alone means https).
/// `--server`, read as kubeconfig's `server` is (kubeset-rest's rules:
/// `host:port` means https, numeric hosts such as `12345` are refused).
fn parse_server(server: &str) -> Result<url::Url, CliError> {
    kubeset::rest::config::parse_server(server)
        .map_err(|e| CliError::usage(format!("--server {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        for bad in ["", "s", "1x", "1 s", "-1s", "1e999s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn servers_and_flags_make_a_config_without_kubeconfig() {
        let cli = Cli::try_parse_from([
            "kubeset",
            "get",
            "pods",
            "--server",
            "http://127.0.0.1:1",
            "--server=127.0.0.1:2",
            "-n",
            "prod",
            "--request-timeout",
            "2s",
            "--token",
            "t0k",
        ])
        .unwrap();
        let c = cli.global.config().unwrap();
        assert_eq!(c.cluster_url.as_str(), "http://127.0.0.1:1/");
        assert_eq!(c.extra_endpoints.len(), 1);
        assert_eq!(c.extra_endpoints[0].as_str(), "https://127.0.0.1:2/");
        assert_eq!(c.default_namespace, "prod");
        assert_eq!(c.timeout, Some(Duration::from_secs(2)));
        assert_eq!(c.read_timeout, Some(READ_TIMEOUT));
        assert!(c.authenticator.is_some());
    }

    #[test]
    fn numeric_servers_are_refused_as_in_kubeconfig() {
        for server in ["12345", "https://127.1:6443"] {
            let cli = Cli::try_parse_from(["kubeset", "get", "pods", "--server", server]).unwrap();
            let err = cli.global.config().unwrap_err().to_string();
            assert!(
                err.contains("would be dialled as the IPv4 address"),
                "{server}: {err}"
            );
        }
    }

    #[test]
    fn verbosity_forms() {
        let v = |args: &[&str]| {
            let mut all = vec!["kubeset"];
            all.extend_from_slice(args);
            all.push("demo");
            Cli::try_parse_from(all).unwrap().global.verbosity
        };
        assert_eq!(v(&[]), None);
        assert_eq!(v(&["-v", "9"]), Some(9));
        assert_eq!(v(&["-v=6"]), Some(6));
        assert_eq!(v(&["-v3"]), Some(3));
        assert_eq!(v(&["--v=4"]), Some(4));
        assert_eq!(v(&["--v", "5"]), Some(5));
        // kubectl: "flag needs an argument".
        assert!(Cli::try_parse_from(["kubeset", "-v"]).is_err());
    }

    #[test]
    fn output_formats() {
        assert_eq!(parse_output("yaml"), Ok(OutputFormat::Yaml));
        assert!(matches!(
            parse_output("jsonpath={.metadata.name}"),
            Ok(OutputFormat::JsonPath(_))
        ));
        assert!(parse_output("jsonpath={.a").is_err());
        assert!(parse_output("table").is_err());
    }

    #[test]
    fn create_takes_a_file_or_a_subcommand() {
        let create = |args: &[&str]| {
            let mut all = vec!["kubeset", "create"];
            all.extend_from_slice(args);
            Cli::try_parse_from(all)
        };
        assert!(create(&["-f", "m.yaml"]).is_ok());
        assert!(create(&["ns", "x", "--dry-run=server"]).is_ok());
        assert!(create(&["configmap", "c", "--from-literal", "a=b"]).is_ok());
        assert!(create(&[]).is_err());
        assert!(create(&["ns", "x", "--dry-run=client"]).is_err());
    }

    #[test]
    fn bad_server_is_a_usage_error() {
        let cli = Cli::try_parse_from(["kubeset", "--server", "ftp://x", "get", "pods"]).unwrap();
        let err = cli.global.config().unwrap_err();
        assert_eq!(err.exit_code(), 2);
    }
}
