//! The README stays true: its Quick start is `examples/quickstart.rs`
//! byte for byte, its TOML block names every crate its Rust blocks use,
//! and the Quick start runs twice in a row against the embedded API
//! server (the realkube suite runs it against a real kube-apiserver,
//! `tests/tests/suite/readme.rs`; the crate docs include the README, so
//! `cargo test --doc -p kubeset` compiles every block).

#[path = "common/quickstart.rs"]
mod quickstart;

use kubeset::Client;
use kubeset::rest::{RestClient, RestConfig};
use kubeset_testserver::TestServer;

const README: &str = include_str!("../README.md");
const QUICKSTART: &str = include_str!("../examples/quickstart.rs");

/// The fenced blocks of `text` as (info string, body).
fn blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in text.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => open = Some((info.trim().to_owned(), String::new())),
            (Some(_), Some(_)) => out.extend(open.take()),
            (Some((_, body)), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "README has an unclosed code block");
    out
}

fn is_rust(info: &str) -> bool {
    info.split(',').next() == Some("rust")
}

#[test]
fn quick_start_block_is_the_example() {
    let quick = README
        .split_once("## Quick start")
        .map(|(_, rest)| rest)
        .expect("README has a Quick start section");
    let first_rust = blocks(quick)
        .into_iter()
        .find(|(info, _)| is_rust(info))
        .expect("a Rust block in the Quick start");
    assert_eq!(
        first_rust.1, QUICKSTART,
        "README's Quick start and examples/quickstart.rs differ: copy one onto the other"
    );
}

#[test]
fn toml_block_names_every_crate_the_rust_blocks_use() {
    let all = blocks(README);
    let toml: String = all
        .iter()
        .filter(|(info, _)| info == "toml")
        .map(|(_, b)| b.as_str())
        .collect();
    let rust: String = all
        .iter()
        .filter(|(info, _)| is_rust(info))
        .map(|(_, b)| b.as_str())
        .collect();
    let mut checked = 0;
    for krate in ["kubeset", "tokio", "serde_json", "serde", "futures"] {
        let used = rust.contains(&format!("{krate}::")) || rust.contains(&format!("use {krate}"));
        if used {
            checked += 1;
            let dep = krate.replace('_', "-");
            let listed = toml.lines().any(|l| {
                let l = l.trim_start();
                l.starts_with(&format!("{krate} =")) || l.starts_with(&format!("{dep} ="))
            });
            assert!(
                listed,
                "README's Rust blocks use {krate} but its TOML block does not list it"
            );
        }
    }
    assert!(checked >= 3, "kubeset, tokio and serde_json at least");
}

#[tokio::test]
async fn quick_start_runs_twice_on_the_embedded_server() {
    let server = TestServer::start().await.expect("test server starts");
    let rest = RestClient::new(RestConfig::new(server.url())).expect("client builds");
    quickstart::run_twice(Client::new(rest, "default")).await;
    server.shutdown().await;
}
