//! What the client logs: long rate-limiter waits and server warnings.

mod support;

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use kubeset_rest::{RestClient, RestConfig, rate_limit::RateLimiter};
use support::{RecordingSleeper, Reply, Server};
use tracing::{
    Event, Level, Metadata, Subscriber,
    field::{Field, Visit},
    span::{Attributes, Id, Record},
};

/// Keeps (level, message) of every event.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<(Level, String)>>>);

struct Message(String);
impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut m = Message(String::new());
        event.record(&mut m);
        self.0
            .lock()
            .unwrap()
            .push((*event.metadata().level(), m.0));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[derive(Debug)]
struct Fixed(Duration);
impl RateLimiter for Fixed {
    fn reserve(&self) -> Duration {
        self.0
    }
}

#[tokio::test(flavor = "current_thread")]
async fn long_throttling_is_logged_and_info_is_rate_limited() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let replies = (0..5).map(|_| Reply::json(200, "{}")).collect();
    let server = Server::start(replies).await;
    let sleeper = Arc::new(RecordingSleeper::default());
    let client = RestClient::new(
        RestConfig::new(server.url())
            .with_rate_limiter(Arc::new(Fixed(Duration::from_secs(2))))
            .with_sleeper(sleeper.clone()),
    )
    .unwrap();
    for _ in 0..5 {
        client.get().resource("pods").send().await.unwrap();
    }
    let events = capture.0.lock().unwrap().clone();
    let throttled = |level: Level| {
        events
            .iter()
            .filter(|(l, m)| *l == level && m.starts_with("waited for client-side throttling"))
            .count()
    };
    assert_eq!(throttled(Level::DEBUG), 5);
    let info = throttled(Level::INFO);
    // At most once per second; five loopback requests take far less.
    assert!((1..5).contains(&info), "{events:?}");

    // Short waits are not logged.
    let capture2 = Capture::default();
    let _guard2 = tracing::subscriber::set_default(capture2.clone());
    let server = Server::start(vec![Reply::json(200, "{}")]).await;
    let client = RestClient::new(
        RestConfig::new(server.url())
            .with_rate_limiter(Arc::new(Fixed(Duration::from_millis(20))))
            .with_sleeper(sleeper),
    )
    .unwrap();
    client.get().send().await.unwrap();
    let events = capture2.0.lock().unwrap().clone();
    assert!(
        !events.iter().any(|(_, m)| m.contains("throttling")),
        "{events:?}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn default_handler_logs_code_299_warnings() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let reply = Reply::json(200, "{}")
        .with_header("Warning", r#"299 - "v1beta1 is deprecated", 199 - "other""#);
    let server = Server::start(vec![reply]).await;
    let client = RestClient::new(RestConfig::new(server.url())).unwrap();
    client.get().send().await.unwrap();
    let events = capture.0.lock().unwrap().clone();
    let warnings: Vec<_> = events
        .iter()
        .filter(|(l, _)| *l == Level::WARN)
        .map(|(_, m)| m.as_str())
        .collect();
    assert_eq!(warnings, vec!["Warning: v1beta1 is deprecated"]);
}
