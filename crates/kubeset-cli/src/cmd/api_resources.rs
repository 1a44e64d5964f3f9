//! `kubeset api-resources`.

use kubeset::Client;

use super::{discover, print};
use crate::cli::ApiResourcesArgs;
use crate::error::CliError;
use crate::output::align;

/// Prints the served resource types (preferred versions), sorted by group
/// and name.
pub async fn run(client: &Client, args: &ApiResourcesArgs) -> Result<(), CliError> {
    let discovery = discover(client).await?;
    let mut resources: Vec<_> = discovery
        .resources()
        .iter()
        .filter(|r| r.preferred)
        .collect();
    resources.sort_by(|a, b| {
        (&a.resource.group, &a.resource.plural).cmp(&(&b.resource.group, &b.resource.plural))
    });
    resources.dedup_by(|a, b| {
        a.resource.group == b.resource.group && a.resource.plural == b.resource.plural
    });
    if args.output.as_deref() == Some("name") {
        let mut out = String::new();
        for r in resources {
            out.push_str(&r.resource.plural);
            if !r.resource.group.is_empty() {
                out.push('.');
                out.push_str(&r.resource.group);
            }
            out.push('\n');
        }
        return print(&out);
    }
    let wide = args.output.as_deref() == Some("wide");
    let mut rows = vec![
        ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect::<Vec<_>>(),
    ];
    if wide {
        rows[0].push("VERBS".to_owned());
    }
    for r in resources {
        let mut row = vec![
            r.resource.plural.clone(),
            r.short_names.join(","),
            r.resource.api_version(),
            r.resource.namespaced.to_string(),
            r.resource.kind.clone(),
        ];
        if wide {
            row.push(format!("[{}]", r.verbs.join(" ")));
        }
        rows.push(row);
    }
    print(&align(&rows))
}
