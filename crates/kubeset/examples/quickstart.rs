//! The README's quick start: create-or-get, then a server-side apply.

use kubeset::api::core::v1::ConfigMap;
use kubeset::params::{ListParams, PatchParams, PostParams};
use kubeset::{Api, Client, Patch};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // kubeconfig (KUBECONFIG or ~/.kube/config), else in-cluster.
    let client = Client::try_default().await?;
    greet(client).await
}

/// Safe to run again and again, like a controller's reconcile.
pub async fn greet(client: Client) -> Result<(), Box<dyn std::error::Error>> {
    let cms: Api<ConfigMap> = Api::default_namespaced(client);

    // Create-or-get: a second run finds the object already there.
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("greeting".into());
    cm.data = Some([("hello".to_owned(), "world".to_owned())].into());
    match cms.create(&PostParams::default(), &cm).await {
        Ok(_) => println!("created greeting"),
        Err(e) if e.is_already_exists() => println!("greeting exists"),
        Err(e) => return Err(e.into()),
    }

    // Server-side apply as field manager "my-controller". The create above
    // made manager "kubeset" the owner of .data.hello, so without `force`
    // the server answers 409 Conflict; `force` takes the field over, which
    // is what a controller wants for fields it is the source of truth for.
    let intent = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "greeting"}, "data": {"hello": "kubeset"}});
    let apply = PatchParams::apply("my-controller").force();
    cms.patch("greeting", &apply, &Patch::Apply(&intent))
        .await?;

    for cm in cms.list(&ListParams::default()).await?.items {
        println!("{} {:?}", cm.metadata.name.unwrap_or_default(), cm.data);
    }
    Ok(())
}
