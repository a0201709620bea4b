//! Who a request is from: the connection's peer, put in each request's extensions by the
//! accept loop, and the client address read from it and the forwarding headers of trusted
//! proxies (`config::TrustedProxies`), for IP-bound tokens and the access log.

use std::net::IpAddr;

use http::HeaderMap;

use crate::config::TrustedProxies;

/// The connection's peer address, put in each request's extensions by the accept loop
/// when something reads it (signed URLs or the access log).
#[derive(Debug, Clone, Copy)]
pub struct PeerAddr(pub IpAddr);

/// The client's address for a request from `peer` with `headers`: the peer itself unless
/// it is a trusted proxy, else the address the trusted proxies forwarded.
pub fn client_addr(trusted: &TrustedProxies, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
    if trusted.is_empty() {
        return peer;
    }
    let lines = |name: &str| -> Vec<&str> {
        (headers.get_all(name).iter())
            .filter_map(|v| v.to_str().ok())
            .collect()
    };
    trusted.client(peer, lines("forwarded"), lines("x-forwarded-for"))
}
