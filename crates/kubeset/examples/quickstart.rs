//! The README's quick start, compiled so that it stays true.

use kubeset::api::core::v1::ConfigMap;
use kubeset::params::{ListParams, PatchParams, PostParams};
use kubeset::{Api, Client, Patch};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // kubeconfig (KUBECONFIG or ~/.kube/config), else in-cluster.
    let client = Client::try_default().await?;
    let cms: Api<ConfigMap> = Api::default_namespaced(client);

    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("greeting".into());
    cm.data = Some([("hello".to_owned(), "world".to_owned())].into());
    cms.create(&PostParams::default(), &cm).await?;

    let intent = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "greeting"}, "data": {"hello": "kubeset"}});
    let apply = PatchParams::apply("my-controller");
    cms.patch("greeting", &apply, &Patch::Apply(&intent))
        .await?;

    for cm in cms.list(&ListParams::default()).await?.items {
        println!("{} {:?}", cm.metadata.name.unwrap_or_default(), cm.data);
    }
    Ok(())
}
