use super::*;
use crate::source::scratch::ScratchDir;

/// Given a folder shelf bounded to 250 bytes, when three 100-byte objects are kept and the
/// first is read in between, then the least recently used one (the second) is dropped,
/// and a shelf opened again on the folder holds what is left, in the same order.
#[tokio::test]
async fn a_folder_keeps_the_most_recently_used_within_its_bound() {
    let dir = ScratchDir::new("shelf-lru");
    let shelf = Shelf::folder(dir.path(), Some(250)).unwrap();
    let body = |b: u8| Bytes::from(vec![b; 100]);
    shelf.put("a.vpix", body(1)).await.unwrap();
    shelf.put("b.vpix", body(2)).await.unwrap();
    assert_eq!(shelf.get("a.vpix", 1000).await.unwrap(), Some(body(1)));
    shelf.put("c.vpix", body(3)).await.unwrap();
    assert_eq!(shelf.get("b.vpix", 1000).await.unwrap(), None);
    assert_eq!(shelf.held_bytes(), Some(200));
    drop(shelf);

    let again = Shelf::folder(dir.path(), Some(150)).unwrap();
    assert_eq!(again.held_bytes(), Some(100), "the older of a and c goes");
    assert_eq!(again.get("a.vpix", 1000).await.unwrap(), None);
    assert_eq!(again.get("c.vpix", 1000).await.unwrap(), Some(body(3)));
}

/// Given an object longer than the caller takes, then it is refused, not read.
#[tokio::test]
async fn an_object_over_what_is_taken_is_refused() {
    let dir = ScratchDir::new("shelf-large");
    let shelf = Shelf::folder(dir.path(), None).unwrap();
    shelf
        .put("big.vpix", Bytes::from(vec![0; 64]))
        .await
        .unwrap();
    let refused = shelf.get("big.vpix", 63).await;
    assert!(
        matches!(refused, Err(ShelfError::TooLarge { size: 64, .. })),
        "{refused:?}"
    );
}

/// Given names that could reach outside the folder or hide in it, then they are refused.
#[tokio::test]
async fn names_stay_flat_and_plain() {
    let dir = ScratchDir::new("shelf-names");
    let shelf = Shelf::folder(dir.path(), None).unwrap();
    for name in ["../x", "a/b", ".hidden", "", "A.vpix", "x y"] {
        let refused = shelf.put(name, Bytes::from_static(b"x")).await;
        assert!(matches!(refused, Err(ShelfError::Name(_))), "{name:?}");
    }
}
