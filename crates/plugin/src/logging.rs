//! CoreDNS-style log lines on stdout: `[INFO] …`, `[WARNING] …`, `[ERROR] …` and `[FATAL] …`
//! (which ends the process), with `plugin/NAME:` scopes written by the caller. Off the query
//! path; the `log` plugin buffers its own lines per core and writes them with [`write_raw`].

use std::io::Write;

/// Writes one already formatted line (or many) to stdout in a single call.
pub fn write_raw(bytes: &[u8]) {
    let out = std::io::stdout();
    let mut lock = out.lock();
    let _ = lock.write_all(bytes);
    let _ = lock.flush();
}

/// Logs a line with a level prefix such as `[INFO]`.
pub fn line(level: &str, msg: std::fmt::Arguments<'_>) {
    let text = format!("[{level}] {msg}\n");
    write_raw(text.as_bytes());
}

/// `[INFO] …`
#[macro_export]
macro_rules! info {
    ($($arg:tt)*) => { $crate::logging::line("INFO", format_args!($($arg)*)) };
}

/// `[WARNING] …`
#[macro_export]
macro_rules! warning {
    ($($arg:tt)*) => { $crate::logging::line("WARNING", format_args!($($arg)*)) };
}

/// `[ERROR] …`
#[macro_export]
macro_rules! error {
    ($($arg:tt)*) => { $crate::logging::line("ERROR", format_args!($($arg)*)) };
}

/// `[FATAL] …`, then the process exits with status 1, as CoreDNS's `log.Fatal`: for a
/// plugin that finds the server must not go on (loop's detected forwarding loop).
#[macro_export]
macro_rules! fatal {
    ($($arg:tt)*) => {{
        $crate::logging::line("FATAL", format_args!($($arg)*));
        ::std::process::exit(1)
    }};
}
