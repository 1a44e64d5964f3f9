//! An error printed with its causes, each once.

use std::error::Error;
use std::fmt;

/// Displays an error and its chain of sources joined by `: `, skipping a
/// cause whose text the message already ends with (errors that print
/// their cause, as kubeset's and kube-rs's do, would otherwise print it
/// twice) and causes with no text. For one log line or one line of a
/// command's error output; `{:#}` of `anyhow` does the same without the
/// skipping.
///
/// ```
/// use kubeset_rest::ErrorChain;
///
/// #[derive(Debug, thiserror::Error)]
/// #[error("reading the kubeconfig failed")]
/// struct Outer(#[source] std::io::Error);
///
/// #[derive(Debug, thiserror::Error)]
/// #[error("opening the watch failed: {0}")]
/// struct Printing(#[source] std::io::Error);
///
/// let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
/// assert_eq!(
///     ErrorChain(&Outer(io())).to_string(),
///     "reading the kubeconfig failed: no such file"
/// );
/// assert_eq!(
///     ErrorChain(&Printing(io())).to_string(),
///     "opening the watch failed: no such file"
/// );
/// ```
#[derive(Clone, Copy)]
pub struct ErrorChain<'a>(pub &'a (dyn Error + 'static));

impl fmt::Display for ErrorChain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut written = self.0.to_string();
        f.write_str(&written)?;
        let mut cause = self.0.source();
        while let Some(e) = cause {
            let text = e.to_string();
            if !text.is_empty() && !written.ends_with(&text) {
                write!(f, ": {text}")?;
                written.push_str(": ");
                written.push_str(&text);
            }
            cause = e.source();
        }
        Ok(())
    }
}

impl fmt::Debug for ErrorChain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
