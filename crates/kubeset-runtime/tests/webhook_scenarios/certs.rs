//! A CA of the test's own and a leaf certificate issued by it, written to
//! `tls.crt`/`tls.key` in a temporary directory (deleted with it): what a
//! webhook server under test serves from. Shared by the webhook server's
//! own tests (`tests/webhook.rs`) and the scenarios run on both API
//! servers (`webhook_scenarios/mod.rs`); the includer names the runtime
//! `rt` (`kubeset_runtime` or `kubeset::runtime`).
#![allow(dead_code)]

use std::path::PathBuf;

use super::rt::webhook::{CertFiles, LeafCert, SelfSignedCa};

/// The CA, and the files of the leaf it issued last.
pub struct TestCerts {
    _dir: tempfile::TempDir,
    /// The leaf's certificate file.
    pub cert: PathBuf,
    /// The leaf's key file.
    pub key: PathBuf,
    /// The CA (its PEM is the `caBundle`).
    pub ca: SelfSignedCa,
    hosts: &'static [&'static str],
}

impl TestCerts {
    /// A new CA named `ca_name` and a first leaf for `hosts`.
    pub fn new(ca_name: &str, hosts: &'static [&'static str]) -> TestCerts {
        let dir = tempfile::tempdir().expect("temp dir");
        let ca = SelfSignedCa::generate(ca_name).expect("CA");
        let certs = TestCerts {
            cert: dir.path().join("tls.crt"),
            key: dir.path().join("tls.key"),
            _dir: dir,
            ca,
            hosts,
        };
        certs.rotate();
        certs
    }

    /// A new leaf (new key) from the same CA, written over the files.
    pub fn rotate(&self) -> LeafCert {
        let leaf = self.ca.issue(self.hosts).expect("leaf");
        leaf.write(&self.cert, &self.key).expect("leaf written");
        leaf
    }

    /// The files, as a webhook server reads them.
    pub fn files(&self) -> CertFiles {
        CertFiles::new(&self.cert, &self.key)
    }
}
