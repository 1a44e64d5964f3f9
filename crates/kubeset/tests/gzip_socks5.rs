//! kube-rs's `gzip` and `socks5` features, over real sockets: a server that
//! compresses its answer (a one-answer HTTP server on loopback, as
//! kube-apiserver compresses a large answer when asked), a compression bomb
//! cut at the body cap, and requests to the embedded server through a SOCKS5
//! proxy written here (RFC 1928, no authentication).

use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use kubeset::api::core::v1::ConfigMap;
use kubeset::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset::params::PostParams;
use kubeset::rest::{RestClient, RestConfig};
use kubeset::{Api, Client};
use kubeset_testserver::TestServer;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

fn client(config: RestConfig) -> Client {
    Client::new(
        RestClient::new(config.with_qps_burst(-1.0, 0)).expect("client builds"),
        "default",
    )
}

fn gzip(body: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(body).unwrap();
    encoder.finish().unwrap()
}

/// Reads an HTTP/1.1 request head (the test's GETs have no body).
async fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert!(head.len() < 64 * 1024, "request head too large");
        if stream.read(&mut byte).await.unwrap() == 0 {
            break;
        }
        head.push(byte[0]);
    }
    String::from_utf8(head).unwrap().to_ascii_lowercase()
}

/// A server that answers one request with `body` gzip-compressed, and
/// hands back the request head it read.
async fn compressing_server(body: Vec<u8>) -> (String, tokio::task::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let head = read_head(&mut stream).await;
        let compressed = gzip(&body);
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n\
             content-length: {}\r\nconnection: close\r\n\r\n",
            compressed.len()
        );
        stream.write_all(answer.as_bytes()).await.unwrap();
        // The client may stop reading (the bomb): a failed write is fine.
        let _ = stream.write_all(&compressed).await;
        let _ = stream.shutdown().await;
        head
    });
    (url, task)
}

fn config_map_json(name: &str, value: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": "7"},
        "data": {"k": value},
    }))
    .unwrap()
}

#[tokio::test]
async fn a_compressed_answer_is_asked_for_and_inflated() {
    let value = "compressible ".repeat(10_000);
    let (url, server) = compressing_server(config_map_json("zipped", &value)).await;
    let cms: Api<ConfigMap> = Api::default_namespaced(client(RestConfig::new(url)));

    let got = cms
        .get("zipped")
        .await
        .expect("the inflated answer decodes");
    assert_eq!(got.metadata.name.as_deref(), Some("zipped"));
    assert_eq!(got.data.unwrap()["k"], value);
    let head = server.await.unwrap();
    assert!(
        head.lines()
            .any(|l| l.starts_with("accept-encoding:") && l.contains("gzip")),
        "the request did not offer gzip:\n{head}"
    );
}

#[tokio::test]
async fn a_compression_bomb_is_cut_at_the_body_cap() {
    // 8 MiB of one letter compresses to about 8 kB; the cap is 1 MiB of
    // inflated bytes.
    let value = "a".repeat(8 << 20);
    let (url, server) = compressing_server(config_map_json("bomb", &value)).await;
    let cms: Api<ConfigMap> =
        Api::default_namespaced(client(RestConfig::new(url).with_max_response_body(1 << 20)));

    let err = cms.get("bomb").await.expect_err("the bomb is refused");
    let message = err.to_string();
    assert!(
        message.contains("larger than the limit of 1048576 bytes"),
        "{message}"
    );
    server.await.unwrap();
}

/// A SOCKS5 proxy (no authentication, CONNECT only) that records where
/// each connection asked to go.
async fn socks5_proxy() -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let targets = Arc::new(Mutex::new(Vec::new()));
    let seen = targets.clone();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let seen = seen.clone();
            tokio::spawn(async move {
                if let Some((target, upstream)) = socks5_handshake(stream).await {
                    seen.lock().unwrap().push(target);
                    let (mut client, mut server) = upstream;
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
        }
    });
    (addr, targets)
}

/// RFC 1928: greeting, CONNECT to an IPv4 address or a domain name, the
/// reply. Returns the target as `host:port` and both streams.
async fn socks5_handshake(mut stream: TcpStream) -> Option<(String, (TcpStream, TcpStream))> {
    let mut greeting = [0u8; 2];
    stream.read_exact(&mut greeting).await.ok()?;
    assert_eq!(greeting[0], 5, "not SOCKS5");
    let mut methods = vec![0u8; usize::from(greeting[1])];
    stream.read_exact(&mut methods).await.ok()?;
    assert!(
        methods.contains(&0),
        "the client offers no unauthenticated method"
    );
    stream.write_all(&[5, 0]).await.ok()?;

    let mut request = [0u8; 4];
    stream.read_exact(&mut request).await.ok()?;
    assert_eq!(&request[..3], &[5, 1, 0], "not a CONNECT");
    let host = match request[3] {
        1 => {
            let mut ip = [0u8; 4];
            stream.read_exact(&mut ip).await.ok()?;
            std::net::Ipv4Addr::from(ip).to_string()
        }
        3 => {
            let mut len = [0u8; 1];
            stream.read_exact(&mut len).await.ok()?;
            let mut name = vec![0u8; usize::from(len[0])];
            stream.read_exact(&mut name).await.ok()?;
            String::from_utf8(name).ok()?
        }
        other => panic!("address type {other} not expected from a loopback URL"),
    };
    let mut port = [0u8; 2];
    stream.read_exact(&mut port).await.ok()?;
    let target = format!("{host}:{}", u16::from_be_bytes(port));
    let upstream = TcpStream::connect(&target).await.ok()?;
    stream
        .write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0])
        .await
        .ok()?;
    Some((target, (stream, upstream)))
}

#[tokio::test]
async fn requests_go_through_a_socks5_proxy() {
    let server = TestServer::start().await.expect("test server starts");
    let server_url = url::Url::parse(&server.url()).unwrap();
    let server_port = server_url.port_or_known_default().unwrap();
    let (proxy, targets) = socks5_proxy().await;

    // socks5h: the proxy resolves the name; socks5: the client does.
    for (scheme, host) in [("socks5h", "localhost"), ("socks5", "127.0.0.1")] {
        let mut url = server_url.clone();
        url.set_host(Some(host)).unwrap();
        let config = RestConfig::new(url.as_str()).with_proxy(format!("{scheme}://{proxy}"));
        let cms: Api<ConfigMap> = Api::default_namespaced(client(config));
        let name = format!("via-{scheme}");
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        cms.create(&PostParams::default(), &cm).await.unwrap();
        assert_eq!(cms.get(&name).await.unwrap().metadata.name, Some(name));
    }
    let targets = targets.lock().unwrap().clone();
    assert!(
        targets.contains(&format!("localhost:{server_port}")),
        "socks5h did not hand the name to the proxy: {targets:?}"
    );
    assert!(
        targets.contains(&format!("127.0.0.1:{server_port}")),
        "socks5 did not go through the proxy: {targets:?}"
    );
}
