//! Process groups: every child ragate starts leads a group of its own, so that the child and all
//! it starts (its descendants, unless one leaves the group) end together: SIGTERM to the group,
//! then SIGKILL to what is left after [`GRACE`]. A process-wide registry holds the live groups;
//! when ragate gets SIGINT (Ctrl-C) or SIGTERM (a CI runner cancelling the job), the thread of
//! [`end_on_signals`] ends every one of them and exits 130 or 143. Unix only: elsewhere a child
//! starts as usual and ending it is the caller's `Child::kill`.

use std::process::{Child, Command};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;
#[cfg(unix)]
use std::time::Instant;

/// How long a group has, after SIGTERM, before what is left of it gets SIGKILL.
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) const GRACE: Duration = Duration::from_millis(500);

/// How long a group that got SIGKILL is waited for at most (its processes die at once, but not
/// instantly; a zombie, dead but not reaped, counts as there: where PID 1 reaps no orphans, as in
/// some containers, the whole wait).
#[cfg(unix)]
const AFTER_SIGKILL: Duration = Duration::from_millis(250);

/// How often a group that got SIGTERM is checked for having ended.
#[cfg(unix)]
const POLL: Duration = Duration::from_millis(10);

struct Registry {
    /// The live groups: each one's id, the pid of the child that leads it.
    groups: Vec<u32>,
    /// Set once ragate got SIGINT or SIGTERM: from then on only the signal thread ends groups,
    /// and a thread that would start or end one waits for the exit instead ([`hold`]).
    stopping: bool,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    groups: Vec::new(),
    stopping: false,
});

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Starts `command` as the leader of a process group of its own and registers the group. The
/// registry stays locked while it starts, so a signal cannot come between the start and the
/// registration and miss the group.
pub(crate) fn spawn(command: &mut Command) -> std::io::Result<Child> {
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(command, 0);
    let mut registry = registry();
    if registry.stopping {
        drop(registry);
        hold();
    }
    let child = command.spawn()?;
    registry.groups.push(child.id());
    Ok(child)
}

/// Ends the group `group` and takes it out of the registry: at once when no process is left in
/// it; otherwise SIGTERM, then SIGKILL to whatever is left after [`GRACE`]. `reap` is called
/// while waiting: it should reap the group's leader (`Child::try_wait`), which counts as a member
/// until it is reaped.
pub(crate) fn end(group: u32, mut reap: impl FnMut()) {
    if stopping() {
        hold();
    }
    #[cfg(unix)]
    {
        reap();
        if exists(group) {
            signal(group, libc::SIGTERM);
            let until = Instant::now() + GRACE;
            loop {
                reap();
                if !exists(group) {
                    break;
                }
                if Instant::now() >= until {
                    signal(group, libc::SIGKILL);
                    await_end(&[group], &mut reap);
                    break;
                }
                std::thread::sleep(POLL);
            }
        }
    }
    #[cfg(not(unix))]
    let _ = &mut reap;
    registry().groups.retain(|&g| g != group);
}

/// Whether `group` is in the registry (registered at its start, not ended yet).
#[cfg(test)]
pub(crate) fn registered(group: u32) -> bool {
    registry().groups.contains(&group)
}

fn stopping() -> bool {
    registry().stopping
}

/// Waits for the signal thread to exit the process: once ragate is stopping, a thread that is
/// done with a child neither starts another nor goes on to report the end of the one it had
/// (ended by the signal thread, not by a fault of its own).
fn hold() -> ! {
    loop {
        std::thread::park();
    }
}

/// Waits for the exit when ragate is stopping on a signal (see [`end_on_signals`]); returns at
/// once otherwise. For the end of a command: its result must not be printed then, nor its exit
/// code win the race with the signal's.
pub(crate) fn hold_if_stopping() {
    if stopping() {
        hold();
    }
}

/// Starts a thread that waits for SIGINT or SIGTERM; on the first one it ends every registered
/// group (SIGTERM, then SIGKILL after [`GRACE`] to any that is left) and exits with status 128
/// plus the signal's number: 130 for SIGINT, 143 for SIGTERM. (The children are in groups of
/// their own, so Ctrl-C at a terminal reaches only ragate, which passes it on this way.)
#[cfg(unix)]
pub(crate) fn end_on_signals() -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    std::thread::Builder::new()
        .name("ragate-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let groups = {
                    let mut registry = registry();
                    registry.stopping = true;
                    registry.groups.clone()
                };
                end_all(&groups);
                let name = if signal == SIGINT {
                    "SIGINT"
                } else {
                    "SIGTERM"
                };
                let _ = std::io::Write::write_all(
                    &mut std::io::stderr(),
                    format!(
                        "ragate: stopped by {name}; ended {} child process group(s)\n",
                        groups.len()
                    )
                    .as_bytes(),
                );
                std::process::exit(128 + signal);
            }
        })?;
    Ok(())
}

/// Elsewhere than on Unix: nothing (the system's default handling of Ctrl-C stays).
#[cfg(not(unix))]
pub(crate) fn end_on_signals() -> std::io::Result<()> {
    Ok(())
}

/// SIGTERM to every group in `groups`, then SIGKILL after [`GRACE`] to those with a process left.
#[cfg(unix)]
fn end_all(groups: &[u32]) {
    for &group in groups {
        signal(group, libc::SIGTERM);
    }
    let until = Instant::now() + GRACE;
    while groups.iter().any(|&group| exists(group)) && Instant::now() < until {
        std::thread::sleep(POLL);
    }
    for &group in groups {
        if exists(group) {
            signal(group, libc::SIGKILL);
        }
    }
    await_end(groups, &mut || {});
}

/// Waits, at most [`AFTER_SIGKILL`], for `groups` to be gone after SIGKILL (a process takes a
/// moment to die), so that none of them runs when this returns. `reap` as in [`end`].
#[cfg(unix)]
fn await_end(groups: &[u32], reap: &mut dyn FnMut()) {
    let until = Instant::now() + AFTER_SIGKILL;
    loop {
        reap();
        if !groups.iter().any(|&group| exists(group)) || Instant::now() >= until {
            return;
        }
        std::thread::sleep(POLL);
    }
}

/// `-group`, the argument of kill(2) that names the whole group; `None` for ids that would name
/// something else (0: ragate's own group; 1: every process).
#[cfg(unix)]
fn whole(group: u32) -> Option<libc::pid_t> {
    libc::pid_t::try_from(group)
        .ok()
        .filter(|&id| id > 1)
        .map(|id| -id)
}

/// Whether a process of `group` is left (a zombie not yet reaped counts).
#[cfg(unix)]
fn exists(group: u32) -> bool {
    let Some(target) = whole(group) else {
        return false;
    };
    // SAFETY: kill(2) with signal 0 sends nothing; it only checks that the target exists.
    let result = unsafe { libc::kill(target, 0) };
    // EPERM: a process is there, one ragate may not signal.
    result == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(unix)]
fn signal(group: u32, signal: libc::c_int) {
    if let Some(target) = whole(group) {
        // SAFETY: kill(2) has no memory effects; a group that is gone gives ESRCH, ignored.
        unsafe {
            libc::kill(target, signal);
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn no_id_names_ragate_s_own_group_or_every_process() {
        assert_eq!(whole(0), None);
        assert_eq!(whole(1), None);
        assert_eq!(whole(u32::MAX), None);
        assert_eq!(whole(4242), Some(-4242));
        assert!(!exists(0) && !exists(1));
    }

    #[test]
    fn ending_a_group_with_no_process_left_takes_no_time() {
        let mut child = spawn(Command::new("true").stdin(std::process::Stdio::null())).unwrap();
        let group = child.id();
        assert!(registered(group));
        child.wait().unwrap();
        let started = Instant::now();
        end(group, || {});
        assert!(started.elapsed() < GRACE, "{:?}", started.elapsed());
        assert!(!registered(group));
    }

    #[test]
    fn a_child_leads_a_group_of_its_own() {
        let mut child = spawn(
            Command::new("sh")
                .args(["-c", "ps -o pgid= -p $$"])
                .stdout(std::process::Stdio::piped()),
        )
        .unwrap();
        let group = child.id();
        let mut out = String::new();
        std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
        child.wait().unwrap();
        end(group, || {});
        assert_eq!(out.trim(), group.to_string());
    }
}
