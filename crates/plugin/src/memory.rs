//! Giving memory back to the operating system after a large load. Parsing a zone of a million
//! records frees twice what the zone then holds; the allocator keeps freed pages of a thread
//! until that thread allocates again, and the thread that loaded (the main thread, a reload
//! thread) goes to sleep instead, so the process would hold the parse's memory for good.
//! The server installs its allocator's collection here ([`set_give_back`]); the plugins
//! that load large data call [`give_back`] on the loading thread when they are done.

use std::sync::OnceLock;

static GIVE_BACK: OnceLock<fn()> = OnceLock::new();

/// Installs what [`give_back`] runs (the server's, once, at start).
pub fn set_give_back(collect: fn()) {
    let _ = GIVE_BACK.set(collect);
}

/// Returns the calling thread's freed memory to the operating system, when the server
/// installed a way to; nothing otherwise (tests, a library user). Off the query path only:
/// it walks the thread's heap.
pub fn give_back() {
    if let Some(collect) = GIVE_BACK.get() {
        collect();
    }
}
