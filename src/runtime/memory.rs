//! The allocator's side of [`ringdns_plugin::memory`]: mimalloc's collection, which
//! returns the freed pages of the calling thread's heap to the operating system.

/// Makes [`ringdns_plugin::memory::give_back`] collect mimalloc's heap (main, at start).
pub fn install() {
    ringdns_plugin::memory::set_give_back(collect);
}

fn collect() {
    // SAFETY: mi_collect takes no pointers and may be called from any thread at any time;
    // with `force` it also frees the thread's retired pages and purges their memory.
    unsafe { libmimalloc_sys::mi_collect(true) }
}
