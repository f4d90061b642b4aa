//! Where the extension's memory comes from: large blocks (a batch's column buffers, a chunk's text) are
//! mapped from the system and unmapped when freed; small ones come from the system's `malloc`.
//!
//! Why: glibc serves a block below its mmap threshold from the allocating thread's arena, and raises that
//! threshold to the size of each mapped block freed (up to 32 MB). A batch's buffers are allocated by a
//! reader thread and freed by the writer minutes later, in another order, so they left their arenas full
//! of free holes that stayed resident: a 1M-game load with `--jobs 2` ended with ~500 MB of free arena
//! memory (glibc's `mallinfo2`), growing with the input. A mapped block goes back to the system when
//! freed (unless kept for reuse, below), and grows into a kept block of its new size when there is one,
//! else shrinks or grows in place (`mremap`) without a copy. It costs the mappings' system calls and fresh
//! pages' faults: +5–10% of a 200,000-game `--jobs 2` load's CPU (interleaved runs, 2026-11-25), for a
//! peak RSS of 0.80–0.89 GB instead of 1.25–1.28. Linux only (`mremap`); elsewhere the system's
//! allocator serves all.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;

/// Blocks of this size or more are mapped.
const LARGE: usize = 64 << 10;
/// `mmap` returns page-aligned memory: blocks asking for more alignment go to `malloc`.
const PAGE: usize = 4096;
/// Freed mapped blocks kept for reuse, in all (see [`Kept`]).
const KEEP_BYTES: usize = 64 << 20;
/// The largest block kept: a bigger one is rare, and would take much of `KEEP_BYTES`.
const KEEP_LARGEST: usize = KEEP_BYTES / 4;
/// Size classes: four a power of two, from `LARGE` up to 2^63.
const CLASSES: usize = 4 * (64 - LARGE.trailing_zeros() as usize);

pub struct Allocator;

fn mapped(size: usize, align: usize) -> bool {
    size >= LARGE && align <= PAGE
}

/// The bytes mapped for a block of `size`: `size` rounded up to a quarter of its power of two, so that
/// a freed block serves any later block of its class (at most 25% of it left untouched, and unfaulted).
fn class_bytes(size: usize) -> usize {
    let step = 1 << (size.ilog2() - 2);
    size.div_ceil(step) * step
}

/// The index of a class in [`Kept`], from its mapped bytes.
fn class_index(bytes: usize) -> usize {
    let power = bytes.ilog2();
    (power - LARGE.trailing_zeros()) as usize * 4 + ((bytes >> (power - 2)) & 3)
}

/// Freed mapped blocks, up to `KEEP_BYTES`, reused before new ones are mapped: each block's pages are
/// faulted in already, where a new mapping pays a fault and a zeroed page each (with transparent huge
/// pages, 2 MB at once), and freeing it a `munmap` and the other cores' TLB flush. A batch's buffers
/// come and go at the same sizes batch after batch. Each class is a stack linked through the blocks'
/// first word.
struct Kept {
    heads: [*mut u8; CLASSES],
    bytes: usize,
}

// SAFETY: the pointers are blocks owned by the allocator, reached only under the mutex.
unsafe impl Send for Kept {}

static KEPT: Mutex<Kept> = Mutex::new(Kept {
    heads: [std::ptr::null_mut(); CLASSES],
    bytes: 0,
});

impl Kept {
    /// A kept block of `bytes` (a class's), if any.
    fn take(bytes: usize) -> *mut u8 {
        if bytes > KEEP_LARGEST {
            return std::ptr::null_mut();
        }
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        let head = &mut kept.heads[class_index(bytes)];
        let block = *head;
        if !block.is_null() {
            // SAFETY: a kept block's first word is the next block of its class (`keep`).
            *head = unsafe { block.cast::<*mut u8>().read() };
            kept.bytes -= bytes;
        }
        block
    }

    /// Keeps a freed block of `bytes` (a class's) if there is room; false if not (the caller unmaps it).
    fn keep(block: *mut u8, bytes: usize) -> bool {
        if bytes > KEEP_LARGEST {
            return false;
        }
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        if kept.bytes + bytes > KEEP_BYTES {
            return false;
        }
        let head = &mut kept.heads[class_index(bytes)];
        // SAFETY: the block is ours, freed, page-aligned and at least `LARGE` bytes.
        unsafe { block.cast::<*mut u8>().write(*head) };
        *head = block;
        kept.bytes += bytes;
        true
    }
}

/// A block of `size` bytes, and whether it is a new mapping (its pages zero) rather than a kept one.
unsafe fn map(size: usize) -> (*mut u8, bool) {
    let bytes = class_bytes(size);
    let block = Kept::take(bytes);
    if !block.is_null() {
        return (block, false);
    }
    (unsafe { map_new(bytes) }, true)
}

unsafe fn map_new(bytes: usize) -> *mut u8 {
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
    // SAFETY: an anonymous mapping of a new region, no file or address given.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), bytes, prot, flags, -1, 0) };
    if p == libc::MAP_FAILED {
        std::ptr::null_mut()
    } else {
        p.cast()
    }
}

unsafe fn unmap(ptr: *mut u8, size: usize) {
    let bytes = class_bytes(size);
    if !Kept::keep(ptr, bytes) {
        // SAFETY: `ptr` was mapped by `map` or `remap` with `bytes` bytes (its layout's class).
        unsafe { libc::munmap(ptr.cast(), bytes) };
    }
}

unsafe fn remap(ptr: *mut u8, old: usize, new: usize) -> *mut u8 {
    let (old_bytes, new_bytes) = (class_bytes(old), class_bytes(new));
    if old_bytes == new_bytes {
        return ptr;
    }
    if new_bytes > old_bytes {
        // A growing block (a column built move by move) takes a kept block of its new class when there
        // is one: a copy of what it holds costs less than the fresh pages `mremap` would fault in, and
        // the blocks of each step of its growth are asked for again by the next batch's column.
        let block = Kept::take(new_bytes);
        if !block.is_null() {
            // SAFETY: `ptr` holds `old` bytes; the kept block has `new_bytes` > `old`, and is not `ptr`.
            unsafe { std::ptr::copy_nonoverlapping(ptr, block, old) };
            unsafe { unmap(ptr, old) };
            return block;
        }
    }
    let (old, new) = (old_bytes, new_bytes);
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
            unsafe { map(layout.size()) }.0
        } else {
            unsafe { System.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if mapped(layout.size(), layout.align()) {
            let (block, fresh) = unsafe { map(layout.size()) };
            if !fresh {
                // A kept block holds what it held: zeroed in place, cheaper than a new mapping's faults.
                unsafe { block.write_bytes(0, layout.size()) };
            }
            block
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `bytes` of a pattern at `p`, or whether `p` still holds it.
    unsafe fn fill(p: *mut u8, bytes: usize) {
        for i in 0..bytes {
            unsafe { p.add(i).write((i % 251) as u8) };
        }
    }

    unsafe fn holds(p: *const u8, bytes: usize) -> bool {
        (0..bytes).all(|i| unsafe { p.add(i).read() } == (i % 251) as u8)
    }

    #[test]
    fn a_growing_block_keeps_its_bytes_in_a_kept_block_or_a_remapped_one() {
        // Sizes of classes nothing else in this test binary asks for.
        let (small, middle, large) = (77_777, 333_333, 1_444_444);
        let layout = |size| Layout::from_size_align(size, 8).unwrap();
        let a = Allocator;
        unsafe {
            // A freed block of the class the first growth asks for is kept, and taken by that growth.
            let spare = a.alloc(layout(middle));
            a.dealloc(spare, layout(middle));
            let p = a.alloc(layout(small));
            fill(p, small);
            let q = a.realloc(p, layout(small), middle);
            assert_eq!(q, spare, "the kept block of the new class");
            assert!(holds(q, small));
            // No kept block of the next class: the block is remapped, its bytes kept.
            fill(q, middle);
            let r = a.realloc(q, layout(middle), large);
            assert!(!r.is_null());
            assert!(holds(r, middle));
            // The first block was kept when the growth left it: a block of its class is that one.
            let again = a.alloc(layout(small));
            assert_eq!(again, p);
            a.dealloc(again, layout(small));
            a.dealloc(r, layout(large));
        }
    }
}
