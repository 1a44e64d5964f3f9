//! The CLI's one error type and how it maps to an exit code and one line
//! on stderr.

/// Everything a command can fail with.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad flags or arguments (exit 2).
    #[error("{message}")]
    Usage {
        /// What is wrong, for the user.
        message: String,
    },
    /// The kubeconfig or the flags that replace it are unusable (exit 2).
    #[error("invalid client configuration")]
    Config {
        /// The config layer's error.
        #[source]
        source: kubeset::ConfigError,
    },
    /// The HTTP client could not be built from a valid config (exit 2).
    #[error("could not build the client")]
    Client {
        /// The REST layer's error.
        #[source]
        source: kubeset::Error,
    },
    /// A manifest file could not be read or parsed (exit 2).
    #[error("{path}: {reason}")]
    Manifest {
        /// The file (`-` for stdin).
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The server does not serve the resource type the user named (exit 1).
    #[error("the server doesn't have a resource type {name:?}")]
    UnknownResource {
        /// What the user typed.
        name: String,
    },
    /// A request failed (exit 1).
    #[error("{action}")]
    Api {
        /// What was being done, e.g. `getting configmaps "x"`.
        action: String,
        /// The REST layer's error.
        #[source]
        source: kubeset::Error,
    },
    /// The server does not offer what the command needs (exit 1).
    #[error("{message}")]
    Unsupported {
        /// What is missing.
        message: String,
    },
    /// `logs -c` named a container the pod does not have (exit 1; kubectl's
    /// words).
    #[error("container {container} is not valid for pod {pod}")]
    InvalidContainer {
        /// The pod.
        pod: String,
        /// The container asked for.
        container: String,
    },
    /// Some of several operations failed; each was already reported (exit 1).
    #[error("{failed} of {total} objects failed")]
    Partial {
        /// How many failed.
        failed: usize,
        /// How many were tried.
        total: usize,
    },
    /// A `kubeset demo` step did not see what it expected (exit 1).
    #[error("demo step {step:?} failed: {reason}")]
    Demo {
        /// The step.
        step: &'static str,
        /// The expectation that did not hold.
        reason: String,
    },
    /// The embedded server could not start (exit 1).
    #[error("the embedded API server failed")]
    Server {
        /// The server's error.
        #[source]
        source: kubeset_testserver::Error,
    },
    /// The remote command exited with a non-zero code: kubectl's line
    /// and the same exit code.
    #[error("command terminated with exit code {code}")]
    CommandExit {
        /// The command's exit code.
        code: i32,
    },
    /// The remote command did not run, or a stream failed without a status
    /// (exit 1).
    #[error("{message}")]
    Remote {
        /// The server's message.
        message: String,
    },
    /// Reading stdin, writing stdout or a file failed (exit 1).
    #[error("{what}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

impl CliError {
    /// The process exit code: 2 for usage and configuration errors, 1 for
    /// everything else.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage { .. }
            | CliError::Config { .. }
            | CliError::Client { .. }
            | CliError::Manifest { .. } => 2,
            // An exit code outside 1..=255 (a signal's negative one) is 1.
            CliError::CommandExit { code } => {
                u8::try_from(*code).ok().filter(|c| *c != 0).unwrap_or(1)
            }
            _ => 1,
        }
    }

    /// A shorthand for [`CliError::Usage`].
    pub fn usage(message: impl Into<String>) -> Self {
        CliError::Usage {
            message: message.into(),
        }
    }

    /// A request error with what was being done.
    pub fn api(action: impl Into<String>, source: kubeset::Error) -> Self {
        CliError::Api {
            action: action.into(),
            source,
        }
    }

    /// An I/O error with what was being done.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        CliError::Io {
            what: what.into(),
            source,
        }
    }

    /// The single line printed on stderr: the server's error as kubectl
    /// shows it (`Error from server (NotFound): …`), otherwise `error:`
    /// and the chain of causes joined by `: `.
    pub fn one_line(&self) -> String {
        if let CliError::CommandExit { .. } = self {
            // kubectl prints this line without `error:`.
            return self.to_string();
        }
        if let CliError::Api { source, .. } = self
            && let Some(api) = source.api_error()
        {
            let reason = api.status_reason.as_str();
            let reason = if reason.is_empty() {
                api.code.to_string()
            } else {
                reason.to_owned()
            };
            return flatten(&format!("Error from server ({reason}): {}", api.message));
        }
        flatten(&format!("error: {}", chain(self)))
    }
}

/// An error and its sources, each once, joined by `: `
/// ([`kubeset::rest::ErrorChain`]).
pub fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    kubeset::rest::ErrorChain(err).to_string()
}

/// Newlines and tabs in a message become spaces: one line on stderr.
pub fn flatten(s: &str) -> String {
    s.split(['\n', '\r', '\t'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(escape_controls)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `s` with every control character (ESC, the C1 controls such as U+009B,
/// DEL, …) and every bidirectional formatting character (U+202A–U+202E,
/// U+2066–U+2069, U+200E/U+200F, U+061C) written as `\u{1b}`: text from a
/// server must not drive the terminal it is printed on, nor reorder what
/// the reader sees (Trojan Source).
pub fn escape_controls(s: &str) -> String {
    s.chars()
        .fold(String::with_capacity(s.len()), |mut out, c| {
            let bidi = matches!(
                c,
                '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}'
            );
            if c.is_control() || bidi {
                out.extend(c.escape_unicode());
            } else {
                out.push(c);
            }
            out
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(
            flatten("pods \"x\x1b[2J\" not\nfound\u{9b}31m\x07\x7f é"),
            "pods \"x\\u{1b}[2J\" not found\\u{9b}31m\\u{7}\\u{7f} é"
        );
        assert_eq!(escape_controls("plain"), "plain");
        assert_eq!(
            escape_controls("rv=\u{202e}1-\u{2066}x\u{200f}"),
            "rv=\\u{202e}1-\\u{2066}x\\u{200f}"
        );
    }

    #[test]
    fn exit_codes() {
        assert_eq!(CliError::usage("x").exit_code(), 2);
        assert_eq!(
            CliError::UnknownResource { name: "x".into() }.exit_code(),
            1
        );
        assert_eq!(
            CliError::Manifest {
                path: "-".into(),
                reason: "r".into()
            }
            .exit_code(),
            2
        );
    }

    #[test]
    fn one_line_chains_causes_once() {
        let e = CliError::io(
            "reading manifest.yaml",
            std::io::Error::new(std::io::ErrorKind::NotFound, "no such file\nat all"),
        );
        assert_eq!(
            e.one_line(),
            "error: reading manifest.yaml: no such file at all"
        );
    }

    #[test]
    fn api_errors_look_like_kubectl() {
        let api = kubeset::ApiError::new(
            kubeset::StatusReason::NotFound,
            404,
            "configmaps \"x\" not found",
        );
        let e = CliError::api("getting configmaps \"x\"", kubeset::Error::from(api));
        assert_eq!(
            e.one_line(),
            "Error from server (NotFound): configmaps \"x\" not found"
        );
    }
}
