//! Reading the manifests the server answers: the paths an HLS playlist links to, and the
//! version folders HLS and DASH point into.

use std::net::SocketAddr;

use super::http::get;

/// The paths a playlist at `path` links to: `URI="..."` attributes and URI lines,
/// resolved against the playlist's folder.
pub fn linked(path: &str, playlist: &str) -> Vec<String> {
    let folder = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    let mut names = Vec::new();
    for line in playlist.lines() {
        if let Some(tag) = line.strip_prefix('#') {
            let mut rest = tag;
            while let Some(at) = rest.find("URI=\"") {
                let value = &rest[at + 5..];
                let Some(end) = value.find('"') else { break };
                names.push(value[..end].to_owned());
                rest = &value[end..];
            }
        } else if !line.trim().is_empty() {
            names.push(line.trim().to_owned());
        }
    }
    names.into_iter().map(|n| format!("{folder}{n}")).collect()
}

/// Add to `all` the media playlists the multivariant playlist at `master` links to and
/// every resource they link to that `all` does not hold yet (inits, segments, keys),
/// asserting that each playlist answers 200.
pub async fn add_linked(addr: SocketAddr, master: &str, all: &mut Vec<String>) {
    let reply = get(addr, master).await;
    assert_eq!(reply.status, 200, "{master}: {}", reply.text());
    for playlist in linked(master, &reply.text()) {
        let reply = get(addr, &playlist).await;
        assert_eq!(reply.status, 200, "{playlist}");
        all.push(playlist.clone());
        for resource in linked(&playlist, &reply.text()) {
            if !all.contains(&resource) {
                all.push(resource);
            }
        }
    }
}

/// The version folder (`v{token}/`, slash included) a multivariant playlist points into.
pub fn version_folder_in(master: &str) -> String {
    let uri = master
        .lines()
        .find(|l| !l.starts_with('#') && !l.is_empty())
        .expect("a variant URI");
    let (folder, _) = uri.split_once('/').expect("a version folder");
    format!("{folder}/")
}

/// The version folder (`v{token}/`, slash included) an MPD's segment templates point into
/// (the folder of the first `initialization` attribute).
pub fn dash_folder_in(mpd: &str) -> String {
    let template = mpd
        .split("initialization=\"")
        .nth(1)
        .expect("an initialization template");
    let (folder, _) = template.split_once('/').expect("a version folder");
    format!("{folder}/")
}

/// The version folder (`v{token}/`) the multivariant playlist of `key` points into.
pub async fn version_folder(addr: SocketAddr, key: &str) -> String {
    version_folder_in(&get(addr, &format!("/vod/{key}/master.m3u8")).await.text())
}
