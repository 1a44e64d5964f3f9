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

/// The container `exec`, `attach` and `cp` use when `-c` is not given,
/// by kubectl's rule: the `kubectl.kubernetes.io/default-container`
/// annotation when it names a container, else the first one; with more
/// than one, kubectl's `Defaulted container "a" out of: a, b, c (init)`
/// note goes to stderr. A completed pod is refused as kubectl refuses it.
pub async fn default_for(client: &Client, ns: &str, pod: &str) -> Result<String, CliError> {
    let api: Api<Pod> = Api::namespaced(client.clone(), ns);
    let found = api
        .get(pod)
        .await
        .map_err(|e| CliError::api(format!("getting pod {pod:?}"), e))?;
    if let Some(phase @ ("Succeeded" | "Failed")) =
        found.status.as_ref().and_then(|s| s.phase.as_deref())
    {
        return Err(CliError::Remote {
            message: format!(
                "cannot exec into a container in a completed pod; current phase is {phase}"
            ),
        });
    }
    let (name, note) = pick_default(&found).ok_or_else(|| CliError::Remote {
        message: format!("pod {pod} does not have any containers"),
    })?;
    if let Some(note) = note {
        eprintln!("{note}");
    }
    Ok(name)
}

/// The default container and, when there was a choice, kubectl's note.
pub fn pick_default(pod: &Pod) -> Option<(String, Option<String>)> {
    let spec = pod.spec.as_ref()?;
    let annotated = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get("kubectl.kubernetes.io/default-container"))
        .filter(|name| spec.containers.iter().any(|c| &c.name == *name));
    let name = match annotated {
        Some(a) => a.clone(),
        None => spec.containers.first()?.name.clone(),
    };
    let mut all: Vec<String> = spec.containers.iter().map(|c| c.name.clone()).collect();
    all.extend(
        spec.init_containers
            .iter()
            .flatten()
            .map(|c| format!("{} (init)", c.name)),
    );
    all.extend(
        spec.ephemeral_containers
            .iter()
            .flatten()
            .map(|c| format!("{} (ephem)", c.name)),
    );
    let note = (annotated.is_none() && all.len() > 1)
        .then(|| format!("Defaulted container {name:?} out of: {}", all.join(", ")));
    Some((name, note))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(v: serde_json::Value) -> Pod {
        serde_json::from_value(v).expect("a pod")
    }

    #[test]
    fn default_container_as_kubectl() {
        let two = pod(
            serde_json::json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}],
            "initContainers": [{"name": "i"}]}}),
        );
        assert_eq!(
            pick_default(&two),
            Some((
                "a".into(),
                Some("Defaulted container \"a\" out of: a, b, i (init)".into())
            ))
        );
        let annotated = pod(serde_json::json!({
            "metadata": {"annotations": {"kubectl.kubernetes.io/default-container": "b"}},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]}}));
        assert_eq!(pick_default(&annotated), Some(("b".into(), None)));
        let one = pod(serde_json::json!({"spec": {"containers": [{"name": "only"}]}}));
        assert_eq!(pick_default(&one), Some(("only".into(), None)));
    }
}
