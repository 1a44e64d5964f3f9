//! What the kernel says about this process: CPU time and peak RSS, read
//! from `/proc/self` (Linux; `None` elsewhere).

/// Clock ticks per second of `/proc/*/stat` times (`USER_HZ`, 100 on every
/// Linux architecture this runs on).
pub const TICKS_PER_S: f64 = 100.0;

/// User + system CPU seconds of the process whose `/proc/<pid>/stat` text
/// is `stat` (every thread, live or exited).
pub fn cpu_s_of_stat(stat: &str) -> Option<f64> {
    // The command name is in parentheses and may hold spaces: fields are
    // counted after its closing parenthesis (field 3, `state`, first).
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / TICKS_PER_S)
}

/// User + system CPU seconds of process `pid` (`self` for this one).
pub fn cpu_s(pid: &str) -> Option<f64> {
    cpu_s_of_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// This process's CPU seconds so far.
pub fn self_cpu_s() -> Option<f64> {
    cpu_s("self")
}

/// `VmHWM` (peak resident set size, KiB) from `/proc/<pid>/status` text.
pub fn peak_rss_kib_of_status(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// `VmRSS` (resident set size now, KiB) from `/proc/<pid>/status` text.
pub fn rss_kib_of_status(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// This process's resident set size now, KiB.
pub fn self_rss_kib() -> Option<u64> {
    rss_kib_of_status(&std::fs::read_to_string("/proc/self/status").ok()?)
}

/// This process's peak resident set size so far, KiB.
pub fn self_peak_rss_kib() -> Option<u64> {
    peak_rss_kib_of_status(&std::fs::read_to_string("/proc/self/status").ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_and_status() {
        let stat = "1234 (a (b) c) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 4 0";
        assert_eq!(cpu_s_of_stat(stat), Some(3.0));
        assert_eq!(cpu_s_of_stat("garbage"), None);
        let status = "Name:\tx\nVmPeak:\t  99 kB\nVmHWM:\t   4321 kB\nVmRSS:\t 12 kB\n";
        assert_eq!(peak_rss_kib_of_status(status), Some(4321));
        assert_eq!(peak_rss_kib_of_status("Name: x\n"), None);
        assert_eq!(rss_kib_of_status(status), Some(12));
    }

    #[test]
    fn reads_this_process() {
        if std::path::Path::new("/proc/self/stat").exists() {
            assert!(self_cpu_s().is_some());
            assert!(self_peak_rss_kib().is_some_and(|k| k > 0));
            assert!(self_rss_kib().is_some_and(|k| k > 0));
        }
    }
}
