//! `kubeset-codegen`: typed Rust for CustomResourceDefinitions.
//!
//! ```text
//! kubeset-codegen crd --out DIR [OPTIONS] FILE_OR_DIR…
//! kubeset-codegen crd --out DIR [OPTIONS] --from-cluster [--kubeconfig F] [--context C] [GROUP…]
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use kubeset_codegen::crd::{self, KubesetDependency, Options, cluster::ClusterOptions, reuse};

const USAGE: &str = "usage:
  kubeset-codegen crd --out DIR [OPTIONS] FILE_OR_DIR...
  kubeset-codegen crd --out DIR [OPTIONS] --from-cluster [--kubeconfig FILE] [--context NAME] [GROUP...]

Writes DIR/mod.rs, one module per API group, one per served version and one
file per type; include it with `mod crds;`. Warnings (constructs kept as
serde_json::Value) and skipped objects go to stderr.

options:
  --builtins SPEC_DIR    a Kubernetes release's spec directory (openapi-v3/,
                         swagger.json; e.g. specs/kubernetes/v1.35): schemas
                         matching its models use kubeset::api::... directly;
                         name the release your kubeset version feature
                         selects (none: v1.37), whose models the reused
                         paths will be
  --report               print which schemas use a built-in model, the near
                         misses (close to one, and why not) and which
                         identical nested types were made one
  --crate NAME           write a crate into DIR (Cargo.toml, src/lib.rs, the
                         module tree) instead of a module
  --apply                also write apply configurations for server-side
                         apply (FooApply beside each struct Foo); with
                         --crate behind the crate's feature `apply`
  --kubeset-path PATH    the crate's kubeset dependency by path
  --kubeset-version REQ  ... or by version (default: this generator's)";

/// The parsed command line.
#[derive(Debug, Default)]
struct Args {
    out: Option<PathBuf>,
    from_cluster: bool,
    cluster: ClusterOptions,
    inputs: Vec<String>,
    builtins: Option<PathBuf>,
    report: bool,
    apply: bool,
    crate_name: Option<String>,
    kubeset: Option<KubesetDependency>,
}

fn parse(mut argv: impl Iterator<Item = String>) -> Result<Args, String> {
    match argv.next().as_deref() {
        Some("crd") => {}
        Some("-h" | "--help") | None => return Err(String::new()),
        Some(other) => return Err(format!("unknown command {other:?}")),
    }
    let mut args = Args::default();
    while let Some(a) = argv.next() {
        let mut value = |flag: &str| argv.next().ok_or_else(|| format!("{flag} needs a value"));
        match a.as_str() {
            "--out" => args.out = Some(PathBuf::from(value("--out")?)),
            "--from-cluster" => args.from_cluster = true,
            "--builtins" => args.builtins = Some(PathBuf::from(value("--builtins")?)),
            "--report" => args.report = true,
            "--apply" => args.apply = true,
            "--crate" => args.crate_name = Some(value("--crate")?),
            "--kubeset-path" => {
                args.kubeset = Some(KubesetDependency::Path(value("--kubeset-path")?.into()));
            }
            "--kubeset-version" => {
                args.kubeset = Some(KubesetDependency::Version(value("--kubeset-version")?));
            }
            "--kubeconfig" => args.cluster.kubeconfig = Some(PathBuf::from(value("--kubeconfig")?)),
            "--context" => args.cluster.context = Some(value("--context")?),
            "-h" | "--help" => return Err(String::new()),
            flag if flag.starts_with("--") => return Err(format!("unknown flag {flag:?}")),
            _ => args.inputs.push(a),
        }
    }
    if args.out.is_none() {
        return Err("--out DIR is required".into());
    }
    if !args.from_cluster && args.inputs.is_empty() {
        return Err("give CRD files or directories, or --from-cluster".into());
    }
    if args.kubeset.is_some() && args.crate_name.is_none() {
        return Err("--kubeset-path and --kubeset-version need --crate".into());
    }
    if !args.from_cluster && (args.cluster.kubeconfig.is_some() || args.cluster.context.is_some()) {
        return Err("--kubeconfig and --context need --from-cluster".into());
    }
    Ok(args)
}

fn report(err: &dyn std::error::Error) {
    let mut msg = format!("error: {err}");
    let mut source = err.source();
    while let Some(s) = source {
        msg.push_str(&format!(": {s}"));
        source = s.source();
    }
    eprintln!("{msg}");
}

fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let crds = if args.from_cluster {
        let mut options = args.cluster;
        options.groups = args.inputs;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let client = crd::cluster::client(&options)?;
        runtime.block_on(crd::cluster::read_cluster(client, &options.groups))?
    } else {
        let paths: Vec<PathBuf> = args.inputs.iter().map(PathBuf::from).collect();
        let (crds, notes) = crd::read_paths(&paths)?;
        for note in notes {
            eprintln!("note: {note}");
        }
        crds
    };
    if crds.is_empty() {
        return Err("no CustomResourceDefinition found".into());
    }
    let mut options = Options::default();
    if let Some(dir) = &args.builtins {
        let builtins = reuse::Builtins::from_spec_dir(dir, reuse::DEFAULT_FEATURES)?;
        options = options.builtins(Arc::new(builtins));
    }
    if args.apply {
        options = options.apply(true);
        if args.crate_name.is_some() {
            options = options.apply_feature("apply");
        }
    }
    let out = crd::generate(&crds, &options)?;
    for w in &out.warnings {
        eprintln!("warning: {w}");
    }
    if args.report {
        for (origin, path, rust) in &out.reused {
            eprintln!("reused: {origin} at {path}: {rust}");
        }
        for miss in &out.near_misses {
            eprintln!("near miss: {miss}");
        }
        for s in &out.shared {
            eprintln!(
                "shared: {}::{} for {}",
                s.module,
                s.name,
                s.members.join(", ")
            );
        }
    }
    if args.builtins.is_some() {
        eprintln!(
            "{} schemas use a built-in model, {} near misses{}",
            out.reused.len(),
            out.near_misses.len(),
            if args.report {
                ""
            } else {
                " (--report lists them)"
            }
        );
    }
    let dir = args.out.unwrap_or_default();
    match &args.crate_name {
        Some(name) => out.write_crate(&dir, name, &args.kubeset.unwrap_or_default())?,
        None => out.write_to(&dir)?,
    }
    let bytes: usize = out.files.values().map(String::len).sum();
    eprintln!(
        "{} CRDs: wrote {} files ({} KB) to {}",
        crds.len(),
        out.files.len(),
        bytes / 1024,
        dir.display()
    );
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("error: {e}\n");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            report(e.as_ref());
            ExitCode::FAILURE
        }
    }
}
