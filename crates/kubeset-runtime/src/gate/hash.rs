//! The shard of an object: KEP-5866's hash of `metadata.uid` and its
//! ranges.

use std::fmt::Write as _;

/// The 64-bit hash the API server's `shardSelector` computes for a field
/// value: FNV-1a 64 over its bytes (`k8s.io/apimachinery/pkg/sharding`
/// `HashField`, Kubernetes 1.36). Every shard decision goes through this
/// one function, so the client-side filter and `shardRange(...)` agree.
///
/// ```
/// use kubeset_runtime::shard::uid_hash;
/// // The value apimachinery v0.36.0 prints for this uid.
/// assert_eq!(uid_hash("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"), 0x93754b7248a00eb9);
/// ```
#[must_use]
pub fn uid_hash(uid: &str) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    uid.bytes()
        .fold(OFFSET, |h, b| (h ^ u64::from(b)).wrapping_mul(PRIME))
}

/// The shard (of `shards`, at least 1) a hash falls in: shard `i` covers
/// `[ceil(i·2⁶⁴/n), ceil((i+1)·2⁶⁴/n))`, see [`shard_range`].
///
/// ```
/// use kubeset_runtime::shard::shard_of;
/// assert_eq!(shard_of(0, 64), 0);
/// assert_eq!(shard_of(u64::MAX, 64), 63);
/// assert_eq!(shard_of(0x8000_0000_0000_0000, 2), 1);
/// ```
#[must_use]
pub fn shard_of(hash: u64, shards: u32) -> u32 {
    let n = u128::from(shards.max(1));
    // floor(h·n / 2⁶⁴) < n, so it fits.
    u32::try_from((u128::from(hash) * n) >> 64).unwrap_or(u32::MAX)
}

/// The hash range `[start, end)` of shard `shard` of `shards`; `end` is
/// 2⁶⁴ for the last one (hence `u128`).
///
/// ```
/// use kubeset_runtime::shard::shard_range;
/// assert_eq!(shard_range(1, 4), (0x4000_0000_0000_0000, 0x8000_0000_0000_0000));
/// assert_eq!(shard_range(3, 4).1, 1u128 << 64);
/// ```
#[must_use]
pub fn shard_range(shard: u32, shards: u32) -> (u128, u128) {
    let n = u128::from(shards.max(1));
    let bound = |i: u128| (i << 64).div_ceil(n);
    let i = u128::from(shard.min(shards.max(1) - 1));
    (bound(i), bound(i + 1))
}

fn hex(v: u128) -> String {
    if v >= 1 << 64 {
        "0x10000000000000000".to_owned()
    } else {
        format!("0x{v:016x}")
    }
}

/// The `ListOptions.shardSelector` (KEP-5866) that selects the objects of
/// `held` (shard numbers of `shards`): one `shardRange(object.metadata.uid,
/// …)` per run of adjacent shards, joined by `||`, with the 16-digit
/// lowercase bounds the API server's parser and `HexLess` compare. `None`
/// when nothing is held (the server refuses an empty selector).
///
/// ```
/// use kubeset_runtime::shard::shard_selector;
/// assert_eq!(
///     shard_selector([0, 1], 4).as_deref(),
///     Some("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')")
/// );
/// assert_eq!(shard_selector([], 4), None);
/// ```
#[must_use]
pub fn shard_selector(held: impl IntoIterator<Item = u32>, shards: u32) -> Option<String> {
    let mut held: Vec<u32> = held.into_iter().filter(|s| *s < shards).collect();
    held.sort_unstable();
    held.dedup();
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for s in held {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == s => *end = s,
            _ => runs.push((s, s)),
        }
    }
    let mut out = String::new();
    for (first, last) in runs {
        if !out.is_empty() {
            out.push_str(" || ");
        }
        let (start, _) = shard_range(first, shards);
        let (_, end) = shard_range(last, shards);
        let _ = write!(
            out,
            "shardRange(object.metadata.uid, '{}', '{}')",
            hex(start),
            hex(end)
        );
    }
    (!out.is_empty()).then_some(out)
}

/// Rendezvous (highest random weight) score of `member` for `shard`: the
/// shard goes to the live member with the highest score, so a join moves
/// only the shards the newcomer wins and a leave only the leaver's.
pub(crate) fn rendezvous_score(member: &str, shard: u32) -> u64 {
    // FNV-1a of the member, mixed with the shard by splitmix64's finaliser
    // (FNV alone spreads neighbouring shard numbers poorly).
    let mut z = uid_hash(member) ^ u64::from(shard).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The member `shard` belongs to among `members` by plain rendezvous
/// (ties: the smaller name), without a bound on anyone's load.
#[cfg(test)]
pub(crate) fn owner(members: &[String], shard: u32) -> Option<&str> {
    members
        .iter()
        .max_by(|a, b| {
            rendezvous_score(a, shard)
                .cmp(&rendezvous_score(b, shard))
                .then_with(|| b.cmp(a))
        })
        .map(String::as_str)
}

/// The owner of each of `shards` shards among `members` (index: shard),
/// by rendezvous with bounded loads: the (shard, member) pairs are taken
/// by descending score (ties: the smaller name) and a pair assigns its
/// shard when the shard is still free and the member holds fewer than
/// `ceil(shards / members)`. So every member holds at most one shard
/// more than any other (plain rendezvous gave one of two replicas 39 of
/// 64 shards: the busiest replica caps the gain of adding replicas), the
/// result depends only on the set of members (every replica computes the
/// same), and a join or leave moves little more than it must: a shard
/// changes hands only when its winner changed or a capacity moved.
pub(crate) fn assign(members: &[String], shards: u32) -> Vec<Option<&str>> {
    let mut owners: Vec<Option<&str>> = vec![None; usize::try_from(shards).unwrap_or(0)];
    if members.is_empty() {
        return owners;
    }
    let n = u32::try_from(members.len()).unwrap_or(u32::MAX);
    let cap = shards.div_ceil(n);
    let mut pairs: Vec<(u64, &str, u32)> = members
        .iter()
        .flat_map(|m| (0..shards).map(move |s| (rendezvous_score(m, s), m.as_str(), s)))
        .collect();
    pairs.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)).then(a.2.cmp(&b.2)));
    let mut load: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    let mut left = owners.len();
    for (_, member, shard) in pairs {
        let slot = &mut owners[shard as usize];
        let held = load.entry(member).or_default();
        if slot.is_none() && *held < cap {
            *slot = Some(member);
            *held += 1;
            left -= 1;
            if left == 0 {
                break;
            }
        }
    }
    owners
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sharding.HashField(uid)` and whether `sharding.NewSelector` with
    /// `[0x0000000000000000, 0x8000000000000000)` matches an object of
    /// that uid, printed by a Go program against k8s.io/apimachinery
    /// v0.36.0 (`pkg/sharding`).
    const APIMACHINERY_V0_36_0: &[(&str, u64, bool)] = &[
        ("", 0xcbf29ce484222325, false),
        ("abc", 0xe71fa2190541574b, false),
        ("test-uid-12345", 0xd4c53b72f9287c28, false),
        (
            "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
            0x93754b7248a00eb9,
            false,
        ),
        (
            "6f1c3c1e-0d3e-4a59-9a51-3b1d2b7c9e10",
            0xbbb99c2bf85e9fa1,
            false,
        ),
        (
            "00000000-0000-0000-0000-000000000000",
            0x7c384c6218f299f1,
            true,
        ),
        (
            "ffffffff-ffff-ffff-ffff-ffffffffffff",
            0x7718f1b2f3cdd331,
            true,
        ),
        (
            "d9b6f0a2-5c2b-4b8e-8f37-1e0c4a7d2b91",
            0xea9e75ca523f8c6f,
            false,
        ),
    ];

    #[test]
    fn hash_and_first_half_agree_with_apimachinery() {
        for (uid, hash, first_half) in APIMACHINERY_V0_36_0 {
            assert_eq!(uid_hash(uid), *hash, "hash of {uid:?}");
            assert_eq!(shard_of(uid_hash(uid), 2) == 0, *first_half, "{uid:?}");
        }
    }

    #[test]
    fn ranges_tile_the_hash_space_and_match_shard_of() {
        for n in [1u32, 2, 3, 7, 64, 1000] {
            let mut next = 0u128;
            for s in 0..n {
                let (start, end) = shard_range(s, n);
                assert_eq!(
                    start, next,
                    "shard {s} of {n} starts where the previous ends"
                );
                assert!(end > start);
                let lo = u64::try_from(start).expect("start < 2^64");
                assert_eq!(shard_of(lo, n), s);
                let hi = u64::try_from(end - 1).expect("end - 1 < 2^64");
                assert_eq!(shard_of(hi, n), s, "last hash of shard {s} of {n}");
                next = end;
            }
            assert_eq!(next, 1u128 << 64);
        }
    }

    #[test]
    fn selector_merges_adjacent_shards_and_ends_at_two_to_the_64() {
        assert_eq!(
            shard_selector([3, 0, 2], 4).as_deref(),
            Some(
                "shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000') || \
                 shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"
            )
        );
        assert_eq!(
            shard_selector([9], 4),
            None,
            "out-of-range shards are ignored"
        );
    }

    #[test]
    fn bounded_rendezvous_balances_and_moves_little() {
        let names = |n: &[&str]| n.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let loads = |owners: &[Option<&str>]| {
            let mut l: std::collections::BTreeMap<&str, u32> = Default::default();
            for o in owners {
                *l.entry(o.expect("every shard owned")).or_default() += 1;
            }
            l.into_values().collect::<Vec<_>>()
        };
        for (members, want) in [
            (names(&["a"]), vec![64]),
            (names(&["a", "b"]), vec![32, 32]),
            (names(&["a", "b", "c"]), vec![22, 22, 20]),
            (names(&["a", "b", "c", "d"]), vec![16, 16, 16, 16]),
        ] {
            let mut got = loads(&assign(&members, 64));
            got.sort_unstable_by(|x, y| y.cmp(x));
            assert_eq!(got, want, "{members:?}");
        }
        // The same set in another order: the same owners.
        assert_eq!(
            assign(&names(&["c", "a", "b"]), 64),
            assign(&names(&["a", "b", "c"]), 64)
        );
        // A join moves about what the newcomer must take (16 of 64), not
        // everything; a leave moves the leaver's share and a little more.
        let (three, four) = (names(&["a", "b", "c"]), names(&["a", "b", "c", "d"]));
        let moved = |x: &[String], y: &[String]| {
            let (x, y) = (assign(x, 64), assign(y, 64));
            x.iter().zip(&y).filter(|(p, q)| p != q).count()
        };
        assert!(
            (16..=24).contains(&moved(&three, &four)),
            "{}",
            moved(&three, &four)
        );
        assert!(
            (16..=24).contains(&moved(&four, &three)),
            "{}",
            moved(&four, &three)
        );
        assert!(assign(&[], 8).iter().all(Option::is_none));
        assert_eq!(assign(&names(&["a", "b"]), 0), Vec::<Option<&str>>::new());
    }

    #[test]
    fn rendezvous_moves_only_what_it_must() {
        let three: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let four: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        let mut moved = 0;
        for s in 0..64 {
            let before = owner(&three, s).expect("owner");
            let after = owner(&four, s).expect("owner");
            if before != after {
                assert_eq!(after, "d", "a join only moves shards to the newcomer");
                moved += 1;
            }
        }
        // About a quarter move; all 64 or none would be a broken hash.
        assert!((5..=30).contains(&moved), "{moved} of 64 moved");
        let two: Vec<String> = ["a", "c"].map(String::from).to_vec();
        for s in 0..64 {
            if owner(&three, s) != Some("b") {
                assert_eq!(
                    owner(&three, s),
                    owner(&two, s),
                    "a leave only moves the leaver's"
                );
            }
        }
    }
}
