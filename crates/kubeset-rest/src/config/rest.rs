//! The bridge from a [`Config`] to the request layer's [`RestConfig`].

use super::{Config, ConfigError};
use crate::RestConfig;

impl Config {
    /// A [`RestConfig`] with this configuration's server, TLS, credentials,
    /// impersonation headers, proxy, rate limit, timeout, user agent and
    /// failover settings (extra endpoints, endpoint discovery, request
    /// deadline, watch idle timeout), read timeout, response body limit and
    /// wire format.
    /// The request layer's other settings keep their defaults.
    pub fn rest_config(&self) -> Result<RestConfig, ConfigError> {
        let base = self.cluster_url.as_str().trim_end_matches('/');
        let tls = if self.accept_invalid_certs && !self.tls.insecure_skip_verify {
            let mut tls = self.tls.clone();
            tls.insecure_skip_verify = true;
            tls.client_config()?
        } else {
            self.tls.client_config()?
        };
        let mut rest = RestConfig::new(base)
            .with_tls(tls)
            .with_default_headers(self.default_headers()?)
            .with_qps_burst(self.qps, self.burst)
            .with_wire_format(self.wire_format);
        if let Some(auth) = &self.authenticator {
            rest = rest.with_authenticator(auth.clone());
        }
        if let Some(proxy) = &self.proxy_url {
            rest = rest.with_proxy(proxy.as_str());
        }
        if let Some(timeout) = self.timeout {
            rest = rest.with_timeout(timeout);
        }
        if let Some(user_agent) = &self.user_agent {
            rest = rest.with_user_agent(user_agent.clone());
        }
        if !self.extra_endpoints.is_empty() {
            rest = rest.with_endpoints(
                self.extra_endpoints
                    .iter()
                    .map(|u| u.as_str().trim_end_matches('/').to_owned()),
            );
        }
        if self.endpoint_discovery {
            rest = rest.with_endpoint_discovery(true);
        }
        if let Some(deadline) = self.request_deadline {
            rest = rest.with_request_deadline(deadline);
        }
        if let Some(idle) = self.watch_idle_timeout {
            rest = rest.with_watch_idle_timeout(idle);
        }
        if let Some(read) = self.read_timeout {
            rest = rest.with_read_timeout(read);
        }
        if let Some(limit) = self.max_response_body {
            rest = rest.with_max_response_body(limit);
        }
        Ok(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RestClient, content::WireFormat};

    fn client(config: &Config) -> RestClient {
        RestClient::new(config.rest_config().unwrap()).unwrap()
    }

    #[test]
    fn the_wire_format_is_carried_into_the_client() {
        let config = Config::new("https://h:6443".parse().unwrap());
        assert_eq!(config.wire_format, WireFormat::Json, "client-go's default");
        assert_eq!(client(&config).wire_format(), WireFormat::Json);
        let config = config.with_wire_format(WireFormat::Protobuf);
        assert_eq!(client(&config).wire_format(), WireFormat::Protobuf);
        assert!(format!("{config:?}").contains("wire_format: Protobuf"));
    }
}
