//! CPU work of one load split across the cores: the parser's sample tables of a long title
//! (`parse::read_tables`) and an index object's sample blocks (`stored::decode_blocks`)
//! are read one group of tracks per scoped thread.

/// The cores this process may use, worked out once: `available_parallelism` reads the
/// cgroup quota files on every call (six system calls), and every cold load asks.
pub(super) fn cpu_cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// `run` on each of `items`, side by side: one group per core at most, this thread one of
/// them. Items go, most `work` first, each to the group with the least work so far, so this
/// thread (which starts at once) takes the largest: a 60-minute title's audio track has
/// more samples than its video, and read second on a new thread it finished last. Returns
/// `(item index, result)` for every item, but those of a thread that panicked (the caller
/// says what a missing one means).
pub(super) fn side_by_side<T: Sync, R: Send>(
    items: &[T],
    work: impl Fn(&T) -> u64,
    run: impl Fn(&T) -> R + Sync,
) -> Vec<(usize, R)> {
    let groups = cpu_cores().min(items.len()).max(1);
    let mut by_work: Vec<(u64, usize)> = (items.iter().enumerate())
        .map(|(i, item)| (work(item), i))
        .collect();
    by_work.sort_by_key(|&(work, i)| (std::cmp::Reverse(work), i));
    let mut assigned: Vec<Vec<usize>> = vec![Vec::new(); groups];
    let mut loads = vec![0u64; groups];
    for (work, i) in by_work {
        let least = (loads.iter().enumerate())
            .min_by_key(|&(g, load)| (*load, g))
            .map_or(0, |(g, _)| g);
        if let (Some(load), Some(group)) = (loads.get_mut(least), assigned.get_mut(least)) {
            *load = load.saturating_add(work);
            group.push(i);
        }
    }
    let group = |g: usize| -> Vec<(usize, R)> {
        (assigned.get(g).into_iter().flatten())
            .filter_map(|&i| Some((i, run(items.get(i)?))))
            .collect()
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = (1..groups).map(|g| scope.spawn(move || group(g))).collect();
        let mut results = group(0);
        for handle in handles {
            results.extend(handle.join().unwrap_or_default());
        }
        results
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_is_run_once_and_comes_back_with_its_index() {
        let items: Vec<u64> = (0..7).map(|i| (i * 37) % 11).collect();
        let mut results = side_by_side(&items, |&w| w, |&w| w * 2);
        results.sort_unstable();
        let want: Vec<(usize, u64)> = items.iter().enumerate().map(|(i, w)| (i, w * 2)).collect();
        assert_eq!(results, want);
        assert!(side_by_side(&[] as &[u64], |&w| w, |&w| w).is_empty());
    }
}
