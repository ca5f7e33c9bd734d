//! Where a shared run lives: any object store behind Apache Arrow's `object_store` — a
//! local directory, memory (tests), or an S3-compatible bucket (AWS S3, MinIO,
//! SeaweedFS, Ceph…) — seen through a small blocking interface with the three kinds of
//! write a run needs: overwrite, create-only (write-once files, locks) and
//! update-if-unchanged (the `LATEST` pointer, the lock's lease).
//!
//! Calls that fail for a reason that retrying can mend (a dropped connection, a 5xx)
//! are retried with exponential backoff, each retry logged; what still fails is an
//! error naming the store and the object, never dropped.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::TryStreamExt;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path as ObjectPath;
use object_store::prefix::PrefixStore;
use object_store::{
    ClientConfigKey, ObjectStore, ObjectStoreExt, PutMode, PutOptions, RetryConfig, UpdateVersion,
};

use crate::ZeroError;

/// Attempts of one call before its error is returned.
const ATTEMPTS: u32 = 6;

/// An object's contents and the version they were read at.
#[derive(Clone, Debug)]
pub struct Object {
    /// The contents.
    pub bytes: Bytes,
    /// The version, for [`RunStore::update`].
    pub version: Version,
}

/// The version of an object as read (its entity tag and, where the store keeps them,
/// its version id).
#[derive(Clone, Debug, PartialEq)]
pub struct Version(UpdateVersion);

/// A run's objects under one prefix of one store.
pub struct RunStore {
    store: Arc<dyn ObjectStore>,
    url: String,
    /// The store has no atomic update-if-unchanged (a local directory): updates compare
    /// and then write, which is safe while one trainer holds the run's lease.
    emulate_update: bool,
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for RunStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.url)
    }
}

/// Whether `location` names an object store rather than a plain directory.
pub fn is_url(location: &str) -> bool {
    location.contains("://")
}

impl RunStore {
    /// Opens the run at `location`: `s3://bucket/prefix` (configured by the usual
    /// `AWS_*` environment: `AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ALLOW_HTTP=true` for a plain-HTTP
    /// endpoint such as one on loopback), `file:///dir`, `memory://` (this process only),
    /// or a directory path (created if missing).
    pub fn open(location: &str) -> Result<RunStore, ZeroError> {
        let fail = |reason: String| ZeroError::Store {
            store: location.to_string(),
            key: String::new(),
            reason,
        };
        let (store, emulate_update): (Arc<dyn ObjectStore>, bool) =
            if let Some(rest) = location.strip_prefix("s3://") {
                let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
                if bucket.is_empty() {
                    return Err(fail("no bucket in the URL (s3://BUCKET/PREFIX)".into()));
                }
                // Timeouts through config keys: client options given whole would replace
                // those read from the environment (AWS_ALLOW_HTTP among them).
                let s3 = AmazonS3Builder::from_env()
                    .with_bucket_name(bucket)
                    .with_config(
                        AmazonS3ConfigKey::Client(ClientConfigKey::ConnectTimeout),
                        "5s",
                    )
                    .with_config(AmazonS3ConfigKey::Client(ClientConfigKey::Timeout), "60s")
                    .with_retry(RetryConfig {
                        max_retries: 2,
                        retry_timeout: Duration::from_secs(20),
                        ..RetryConfig::default()
                    })
                    .build()
                    .map_err(|e| fail(e.to_string()))?;
                let prefix = prefix.trim_matches('/');
                let store: Arc<dyn ObjectStore> = if prefix.is_empty() {
                    Arc::new(s3)
                } else {
                    Arc::new(PrefixStore::new(s3, prefix))
                };
                (store, false)
            } else if location == "memory://" {
                (Arc::new(InMemory::new()), false)
            } else if is_url(location) && !location.starts_with("file://") {
                return Err(fail(
                    "unknown scheme: give a directory, file:///DIR, s3://BUCKET/PREFIX or memory://"
                        .into(),
                ));
            } else {
                let dir = location.strip_prefix("file://").unwrap_or(location);
                std::fs::create_dir_all(dir).map_err(|e| fail(e.to_string()))?;
                let local = LocalFileSystem::new_with_prefix(dir)
                    .map_err(|e| fail(e.to_string()))?
                    .with_automatic_cleanup(true);
                (Arc::new(local), true)
            };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| fail(format!("cannot start the I/O runtime: {e}")))?;
        Ok(RunStore {
            store,
            url: location.to_string(),
            emulate_update,
            runtime,
        })
    }

    /// A second handle on the same store, for another thread (each handle drives its
    /// calls on its own small runtime).
    pub fn handle(&self) -> Result<RunStore, ZeroError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| self.error("", format!("cannot start the I/O runtime: {e}")))?;
        Ok(RunStore {
            store: self.store.clone(),
            url: self.url.clone(),
            emulate_update: self.emulate_update,
            runtime,
        })
    }

    /// The location this store was opened at.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn error(&self, key: &str, e: impl std::fmt::Display) -> ZeroError {
        ZeroError::Store {
            store: self.url.clone(),
            key: key.to_string(),
            reason: e.to_string(),
        }
    }

    /// An object-store error with its innermost cause, which its own message can leave
    /// out ("builder error" for "URL scheme is not allowed").
    fn failed(&self, key: &str, e: object_store::Error) -> ZeroError {
        let mut reason = e.to_string();
        let mut source = std::error::Error::source(&e);
        let mut last = None;
        while let Some(s) = source {
            last = Some(s.to_string());
            source = s.source();
        }
        if let Some(cause) = last.filter(|c| !reason.contains(c.as_str())) {
            reason = format!("{reason}: {cause}");
        }
        self.error(key, reason)
    }

    /// Runs `call` until it succeeds, fails for good, or has been tried [`ATTEMPTS`]
    /// times, with exponential backoff between tries.
    fn retry<T, F, Fut>(&self, key: &str, what: &str, call: F) -> Result<T, object_store::Error>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<T, object_store::Error>>,
    {
        let mut delay = Duration::from_millis(100);
        let mut attempt = 1;
        loop {
            match self.runtime.block_on(call()) {
                Err(e) if attempt < ATTEMPTS && transient(&e) => {
                    tracing::warn!(
                        "{} {key} on {} failed (attempt {attempt} of {ATTEMPTS}), retrying in {:.1} s: {e}",
                        what,
                        self.url,
                        delay.as_secs_f64()
                    );
                    std::thread::sleep(delay);
                    delay = (delay * 2).min(Duration::from_secs(5));
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    /// The object `key`, or `None` if there is none.
    pub fn get(&self, key: &str) -> Result<Option<Object>, ZeroError> {
        let path = ObjectPath::from(key);
        let got = self.retry(key, "reading", || async {
            let r = self.store.get(&path).await?;
            let version = Version(UpdateVersion {
                e_tag: r.meta.e_tag.clone(),
                version: r.meta.version.clone(),
            });
            Ok((r.bytes().await?, version))
        });
        match got {
            Ok((bytes, version)) => Ok(Some(Object { bytes, version })),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.failed(key, e)),
        }
    }

    /// Writes `key`, replacing what was there.
    pub fn put(&self, key: &str, bytes: impl Into<Bytes>) -> Result<(), ZeroError> {
        let bytes = bytes.into();
        let path = ObjectPath::from(key);
        self.retry(key, "writing", || {
            self.store
                .put_opts(&path, bytes.clone().into(), PutOptions::default())
        })
        .map(|_| ())
        .map_err(|e| self.failed(key, e))
    }

    /// Writes `key` only if it does not exist; `false` when it did (nothing written).
    pub fn create(&self, key: &str, bytes: impl Into<Bytes>) -> Result<bool, ZeroError> {
        self.create_versioned(key, bytes).map(|v| v.is_some())
    }

    /// [`Self::create`], returning the version written.
    pub fn create_versioned(
        &self,
        key: &str,
        bytes: impl Into<Bytes>,
    ) -> Result<Option<Version>, ZeroError> {
        let bytes = bytes.into();
        let path = ObjectPath::from(key);
        let put = self.retry(key, "creating", || {
            self.store
                .put_opts(&path, bytes.clone().into(), PutMode::Create.into())
        });
        match put {
            Ok(r) => Ok(Some(written(r))),
            // A retried create whose first try had landed also ends here: the caller
            // sees the object already there, as it is.
            Err(object_store::Error::AlreadyExists { .. })
            | Err(object_store::Error::Precondition { .. }) => Ok(None),
            Err(e) => Err(self.failed(key, e)),
        }
    }

    /// Replaces `key` only if it is still at `version`, returning the new version;
    /// `None` when it has changed (or gone) since (nothing written).
    pub fn update(
        &self,
        key: &str,
        bytes: impl Into<Bytes>,
        version: &Version,
    ) -> Result<Option<Version>, ZeroError> {
        let bytes = bytes.into();
        if self.emulate_update {
            return match self.get(key)? {
                Some(now) if &now.version == version => {
                    let path = ObjectPath::from(key);
                    self.retry(key, "writing", || {
                        self.store
                            .put_opts(&path, bytes.clone().into(), PutOptions::default())
                    })
                    .map(|r| Some(written(r)))
                    .map_err(|e| self.failed(key, e))
                }
                _ => Ok(None),
            };
        }
        let path = ObjectPath::from(key);
        let put = self.retry(key, "updating", || {
            self.store.put_opts(
                &path,
                bytes.clone().into(),
                PutMode::Update(version.0.clone()).into(),
            )
        });
        match put {
            Ok(r) => Ok(Some(written(r))),
            Err(object_store::Error::Precondition { .. })
            | Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.failed(key, e)),
        }
    }

    /// Deletes `key` (no error if it is not there).
    pub fn delete(&self, key: &str) -> Result<(), ZeroError> {
        let path = ObjectPath::from(key);
        match self.retry(key, "deleting", || self.store.delete(&path)) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.failed(key, e)),
        }
    }

    /// The keys under `prefix` (a folder such as `games`; empty: every key), sorted.
    pub fn list(&self, prefix: &str) -> Result<Vec<String>, ZeroError> {
        let path = (!prefix.is_empty()).then(|| ObjectPath::from(prefix));
        let mut keys: Vec<String> = self
            .retry(prefix, "listing", || {
                self.store
                    .list(path.as_ref())
                    .map_ok(|m| m.location.to_string())
                    .try_collect::<Vec<_>>()
            })
            .map_err(|e| self.failed(prefix, e))?;
        keys.sort();
        Ok(keys)
    }

    /// Copies every object of `self` to `to`, which must hold none; returns how many.
    pub fn copy_to(&self, to: &RunStore) -> Result<usize, ZeroError> {
        if let Some(first) = to.list("")?.first() {
            return Err(to.error(
                first,
                "the destination is not empty; copy into a new, empty location",
            ));
        }
        let keys = self.list("")?;
        for key in &keys {
            let Some(object) = self.get(key)? else {
                continue; // deleted while copying (a released lock)
            };
            if !to.create(key, object.bytes)? {
                return Err(to.error(key, "appeared in the destination while copying"));
            }
        }
        Ok(keys.len())
    }
}

/// The version a write produced.
fn written(r: object_store::PutResult) -> Version {
    Version(UpdateVersion {
        e_tag: r.e_tag,
        version: r.version,
    })
}

/// Whether retrying can mend `e` (not: it exists, it is missing, it changed, the store
/// cannot do it, the request is wrong).
fn transient(e: &object_store::Error) -> bool {
    matches!(e, object_store::Error::Generic { .. })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stores() -> Vec<(RunStore, std::path::PathBuf)> {
        let dir = std::env::temp_dir().join(format!("tabula-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        vec![
            (RunStore::open("memory://").unwrap(), dir.clone()),
            (RunStore::open(dir.to_str().unwrap()).unwrap(), dir),
        ]
    }

    #[test]
    fn create_update_and_list_behave_alike_on_every_store() {
        for (store, dir) in stores() {
            assert!(store.get("LATEST").unwrap().is_none());
            assert!(store.create("LATEST", "0").unwrap());
            assert!(!store.create("LATEST", "9").unwrap(), "write-once");
            let v0 = store.get("LATEST").unwrap().unwrap();
            assert_eq!(&v0.bytes[..], b"0");
            let v1 = store.update("LATEST", "1", &v0.version).unwrap().unwrap();
            // the version read before the update is stale now; the one returned is not
            assert!(store.update("LATEST", "2", &v0.version).unwrap().is_none());
            assert_eq!(store.get("LATEST").unwrap().unwrap().version, v1);
            assert_eq!(&store.get("LATEST").unwrap().unwrap().bytes[..], b"1");
            store.put("games/000001/w-b.jsonl.gz", "b").unwrap();
            store.put("games/000000/w-a.jsonl.gz", "a").unwrap();
            assert_eq!(
                store.list("games").unwrap(),
                ["games/000000/w-a.jsonl.gz", "games/000001/w-b.jsonl.gz"]
            );
            store.delete("LATEST").unwrap();
            store.delete("LATEST").unwrap();
            assert!(store.get("LATEST").unwrap().is_none());
            // copying refuses a destination that holds anything
            let copy = RunStore::open("memory://").unwrap();
            assert_eq!(store.copy_to(&copy).unwrap(), 2);
            assert!(store.copy_to(&copy).is_err());
            let _ = std::fs::remove_dir_all(&dir);
        }
    }

    #[test]
    fn unknown_schemes_are_refused() {
        let err = RunStore::open("ftp://host/run").unwrap_err().to_string();
        assert!(err.contains("unknown scheme"), "{err}");
        let err = RunStore::open("s3:///run").unwrap_err().to_string();
        assert!(err.contains("no bucket"), "{err}");
    }
}
