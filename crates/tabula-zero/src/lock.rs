//! The lock that keeps two trainers off one run directory.
//!
//! `DIR/lock` is created with `create_new` (atomic on local file systems) and holds the
//! owner's process id and host. It is removed when the trainer ends. A trainer that was
//! killed leaves it behind: the next one takes it over when the lock names this host and
//! a process that no longer exists, and refuses otherwise, saying which process holds it.

use std::fs::OpenOptions;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use crate::error::io_err;
use crate::ZeroError;

/// A held run lock; dropping it releases the directory.
#[derive(Debug)]
pub struct RunLock {
    path: PathBuf,
}

/// This machine's name.
pub(crate) fn host() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".into())
}

/// Whether a process with this id runs on this machine (`None`: cannot tell here).
pub(crate) fn alive(pid: u32) -> Option<bool> {
    let proc = Path::new("/proc");
    proc.is_dir().then(|| proc.join(pid.to_string()).exists())
}

impl RunLock {
    /// Takes the lock of `dir`, or says who holds it.
    pub fn acquire(dir: &Path) -> Result<RunLock, ZeroError> {
        let path = dir.join("lock");
        let me = format!("{} {}\n", std::process::id(), host());
        // Two tries: the second after removing a lock left by a dead process.
        for _ in 0..2 {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut f) => {
                    f.write_all(me.as_bytes()).map_err(io_err(&path))?;
                    return Ok(RunLock { path });
                }
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                    let held = std::fs::read_to_string(&path).unwrap_or_default();
                    let mut words = held.split_whitespace();
                    let pid = words.next().and_then(|p| p.parse::<u32>().ok());
                    let their_host = words.next().unwrap_or("");
                    let stale = pid.is_some_and(|pid| {
                        their_host == host()
                            && pid != std::process::id()
                            && alive(pid) == Some(false)
                    });
                    if !stale {
                        return Err(ZeroError::Run {
                            dir: dir.display().to_string(),
                            reason: format!(
                                "another trainer holds it (lock file {} says {:?}); wait for it to end, or delete the lock file if no trainer runs",
                                path.display(),
                                held.trim()
                            ),
                        });
                    }
                    tracing::warn!(
                        "taking over {} left by a process that ended",
                        path.display()
                    );
                    match std::fs::remove_file(&path) {
                        Ok(()) => {}
                        Err(e) if e.kind() == ErrorKind::NotFound => {}
                        Err(e) => return Err(io_err(&path)(e)),
                    }
                }
                Err(e) => return Err(io_err(&path)(e)),
            }
        }
        Err(ZeroError::Run {
            dir: dir.display().to_string(),
            reason: format!("another trainer took {} first", path.display()),
        })
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time_and_stale_locks_are_taken_over() {
        let dir = std::env::temp_dir().join(format!("tabula-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let held = RunLock::acquire(&dir).unwrap();
        let err = RunLock::acquire(&dir).unwrap_err().to_string();
        assert!(err.contains("another trainer holds it"), "{err}");
        drop(held);
        assert!(!dir.join("lock").exists(), "released on drop");
        if alive(std::process::id()) == Some(true) {
            // a lock naming a process that has ended (pid beyond Linux's maximum)
            std::fs::write(dir.join("lock"), format!("4194305 {}\n", host())).unwrap();
            let taken = RunLock::acquire(&dir);
            assert!(taken.is_ok(), "{taken:?}");
            drop(taken);
            // another host's lock cannot be judged from here
            std::fs::write(dir.join("lock"), "4194305 some-other-host\n").unwrap();
            assert!(RunLock::acquire(&dir).is_err());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
