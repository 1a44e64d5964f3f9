//! `logs -c NAME`: the container must be one of the pod's, checked before
//! the log is asked for, as kubectl does (`error: container x is not
//! valid for pod p`, exit 1).

use kubeset::Api;
use kubeset::Client;
use kubeset::api::core::v1::Pod;

use crate::error::CliError;

/// Fails unless `pod` in `ns` has a container, init container or
/// ephemeral container named `container`.
pub async fn check(client: &Client, ns: &str, pod: &str, container: &str) -> Result<(), CliError> {
    let api: Api<Pod> = Api::namespaced(client.clone(), ns);
    let found = api
        .get(pod)
        .await
        .map_err(|e| CliError::api(format!("getting pod {pod:?}"), e))?;
    if has_container(&found, container) {
        Ok(())
    } else {
        Err(CliError::InvalidContainer {
            pod: pod.to_owned(),
            container: container.to_owned(),
        })
    }
}

/// Whether `pod` has a container of that name, of any of the three kinds.
pub fn has_container(pod: &Pod, name: &str) -> bool {
    let Some(spec) = &pod.spec else {
        return false;
    };
    spec.containers.iter().any(|c| c.name == name)
        || spec
            .init_containers
            .iter()
            .flatten()
            .any(|c| c.name == name)
        || spec
            .ephemeral_containers
            .iter()
            .flatten()
            .any(|c| c.name == name)
}
