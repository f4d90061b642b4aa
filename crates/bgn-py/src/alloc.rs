//! Where the extension's memory comes from: large blocks (a batch's column buffers, a chunk's text) are
//! mapped from the system and unmapped when freed; small ones come from the system's `malloc`.
//!
//! Why: glibc serves a block below its mmap threshold from the allocating thread's arena, and raises that
//! threshold to the size of each mapped block freed (up to 32 MB). A batch's buffers are allocated by a
//! reader thread and freed by the writer minutes later, in another order, so they left their arenas full
//! of free holes that stayed resident: a 1M-game load with `--jobs 2` ended with ~500 MB of free arena
//! memory (glibc's `mallinfo2`), growing with the input. A mapped block goes back to the system when
//! freed, and grows or shrinks (`mremap`) without a copy. It costs the mappings' system calls and fresh
//! pages' faults: +5–10% of a 200,000-game `--jobs 2` load's CPU (interleaved runs, 2026-11-25), for a
//! peak RSS of 0.80–0.89 GB instead of 1.25–1.28. Linux only (`mremap`); elsewhere the system's
//! allocator serves all.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks of this size or more are mapped.
const LARGE: usize = 64 << 10;
/// `mmap` returns page-aligned memory: blocks asking for more alignment go to `malloc`.
const PAGE: usize = 4096;

pub struct Allocator;

fn mapped(size: usize, align: usize) -> bool {
    size >= LARGE && align <= PAGE
}

unsafe fn map(size: usize) -> *mut u8 {
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
    // SAFETY: an anonymous mapping of a new region, no file or address given.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), size, prot, flags, -1, 0) };
    if p == libc::MAP_FAILED {
        std::ptr::null_mut()
    } else {
        p.cast()
    }
}

unsafe fn unmap(ptr: *mut u8, size: usize) {
    // SAFETY: `ptr` was mapped by `map` or `remap` with `size` bytes (the layout's).
    unsafe { libc::munmap(ptr.cast(), size) };
}

unsafe fn remap(ptr: *mut u8, old: usize, new: usize) -> *mut u8 {
    // SAFETY: `ptr` is a mapping of `old` bytes; it may move, its content kept.
    let p = unsafe { libc::mremap(ptr.cast(), old, new, libc::MREMAP_MAYMOVE) };
    if p == libc::MAP_FAILED {
        std::ptr::null_mut()
    } else {
        p.cast()
    }
}

// SAFETY: each block is freed by the allocator that made it: `mapped` decides by the layout alone, which
// `dealloc` and `realloc` receive as `alloc` (or the last `realloc`) was given it.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if mapped(layout.size(), layout.align()) {
            unsafe { map(layout.size()) }
        } else {
            unsafe { System.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if mapped(layout.size(), layout.align()) {
            unsafe { map(layout.size()) } // fresh pages are zero
        } else {
            unsafe { System.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if mapped(layout.size(), layout.align()) {
            unsafe { unmap(ptr, layout.size()) }
        } else {
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let align = layout.align();
        match (mapped(layout.size(), align), mapped(new_size, align)) {
            (true, true) => unsafe { remap(ptr, layout.size(), new_size) },
            (false, false) => unsafe { System.realloc(ptr, layout, new_size) },
            _ => {
                // SAFETY: `new_size` with the same alignment makes a valid layout (`realloc`'s contract).
                let new = unsafe { Layout::from_size_align_unchecked(new_size, align) };
                let p = unsafe { self.alloc(new) };
                if !p.is_null() {
                    let n = layout.size().min(new_size);
                    unsafe { std::ptr::copy_nonoverlapping(ptr, p, n) };
                    unsafe { self.dealloc(ptr, layout) };
                }
                p
            }
        }
    }
}
