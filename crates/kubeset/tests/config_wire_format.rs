//! The wire format set on a [`Config`] reaches the wire: a `Client` built
//! from a kubeconfig-loaded `Config` with `WireFormat::Protobuf` gets
//! protobuf answers from the embedded server, and the default `Config`
//! gets JSON. The answers are read off the socket by a recording HTTP
//! proxy (the `Config`'s own `proxy_url`) between client and server.

use std::sync::{Arc, Mutex};

use kubeset::api::core::v1::ConfigMap;
use kubeset::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset::params::PostParams;
use kubeset::rest::config::Kubeconfig;
use kubeset::rest::content::{PROTOBUF, WireFormat};
use kubeset::{Api, Client, Config, KubeConfigOptions};
use kubeset_testserver::TestServer;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// The most response bytes the proxy keeps (the test's answers are small).
const MAX_RECORDED: usize = 1 << 20;

/// A plain HTTP forward proxy on loopback that relays every connection to
/// `upstream` and keeps the bytes the server sent back.
struct Recorder {
    url: String,
    answers: Arc<Mutex<Vec<u8>>>,
}

impl Recorder {
    async fn start(upstream: std::net::SocketAddr) -> Recorder {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let answers = Arc::new(Mutex::new(Vec::new()));
        let keep = answers.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(relay(client, upstream, keep.clone()));
            }
        });
        Recorder { url, answers }
    }

    /// The `Content-Type` of every response so far, in order.
    fn content_types(&self) -> Vec<String> {
        let bytes = self.answers.lock().expect("not poisoned").clone();
        let text = String::from_utf8_lossy(&bytes).to_ascii_lowercase();
        text.split("\r\ncontent-type: ")
            .skip(1)
            .map(|rest| rest.split("\r\n").next().unwrap_or("").to_owned())
            .collect()
    }
}

async fn relay(client: TcpStream, upstream: std::net::SocketAddr, keep: Arc<Mutex<Vec<u8>>>) {
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let requests = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
    });
    let mut buf = vec![0u8; 16 * 1024];
    while let Ok(n @ 1..) = server_read.read(&mut buf).await {
        {
            let mut kept = keep.lock().expect("not poisoned");
            let room = MAX_RECORDED.saturating_sub(kept.len());
            kept.extend_from_slice(&buf[..n.min(room)]);
        }
        if client_write.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    requests.abort();
}

/// The embedded server's kubeconfig, loaded as a user's would be, sent
/// through `proxy`.
fn config(server: &TestServer, proxy: &Recorder) -> Config {
    let kubeconfig = Kubeconfig::from_yaml(&server.kubeconfig_yaml()).expect("kubeconfig parses");
    let mut config = Config::from_custom_kubeconfig_sync(kubeconfig, &KubeConfigOptions::default())
        .expect("kubeconfig resolves");
    config.proxy_url = Some(proxy.url.parse().expect("proxy URL"));
    config.qps = -1.0;
    config
}

fn cm(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        data: Some([("k".to_owned(), "v".to_owned())].into()),
        ..ConfigMap::default()
    }
}

#[tokio::test]
async fn a_protobuf_config_gets_protobuf_answers_and_the_default_json() {
    let server = TestServer::start().await.expect("test server starts");
    let proxy = Recorder::start(server.replica(0).expect("one replica").addr()).await;

    let json = Client::try_from(config(&server, &proxy)).expect("client builds");
    assert_eq!(json.rest().wire_format(), WireFormat::Json);
    let cms: Api<ConfigMap> = Api::default_namespaced(json);
    let created = cms.create(&PostParams::default(), &cm("a")).await.unwrap();
    assert_eq!(cms.get("a").await.unwrap(), created);
    assert_eq!(
        proxy.content_types(),
        ["application/json", "application/json"],
        "the default is JSON"
    );

    let protobuf = Client::try_from(config(&server, &proxy).with_wire_format(WireFormat::Protobuf))
        .expect("client builds");
    assert_eq!(protobuf.rest().wire_format(), WireFormat::Protobuf);
    let cms: Api<ConfigMap> = Api::default_namespaced(protobuf);
    assert_eq!(cms.get("a").await.unwrap(), created);
    let created = cms.create(&PostParams::default(), &cm("b")).await.unwrap();
    assert_eq!(created.data, cm("b").data);
    let types = proxy.content_types();
    assert_eq!(types[2..], [PROTOBUF, PROTOBUF], "{types:?}");
}
