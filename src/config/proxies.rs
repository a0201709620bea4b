//! `TrustedProxies`: the proxies (CDN edges, load balancers, the front) whose
//! `Forwarded` (RFC 7239) and `X-Forwarded-For` headers name the client, and the walk that
//! finds the client's address in them.
//!
//! The walk starts at the connection's peer and moves right to left through the hops the
//! proxies appended, skipping every trusted one; the first untrusted address is the client.
//! A hop that is not an address (`unknown`, an obfuscated `_name`) ends the walk at the
//! trusted proxy that wrote it, so a client can never choose its own address by sending a
//! header: only what a trusted proxy appended is read. With no trusted proxy (the default)
//! the peer is the client and the headers are never read.

use std::net::IpAddr;

use ipnet::IpNet;

/// CIDR blocks (or single addresses) of trusted proxies, as
/// `10.0.0.0/8,192.168.1.7,2001:db8::/32`; empty by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// Whether no proxy is trusted (the peer is always the client).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `ip` is a trusted proxy.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The client's address for a connection from `peer` whose request carried these
    /// `forwarded` and `x_forwarded_for` header values (each header line as received, in
    /// order). `Forwarded` is read when present, else `X-Forwarded-For`.
    pub fn client<'a>(
        &self,
        peer: IpAddr,
        forwarded: impl IntoIterator<Item = &'a str>,
        x_forwarded_for: impl IntoIterator<Item = &'a str>,
    ) -> IpAddr {
        let peer = peer.to_canonical();
        if !self.contains(peer) {
            return peer;
        }
        let mut hops: Vec<Option<IpAddr>> = Vec::new();
        for line in forwarded {
            hops.extend(line.split(',').take(MAX_HOPS).map(forwarded_for));
        }
        if hops.is_empty() {
            for line in x_forwarded_for {
                hops.extend(line.split(',').take(MAX_HOPS).map(|h| address(h.trim())));
            }
        }
        let mut client = peer;
        for hop in hops.iter().rev() {
            match hop {
                None => return client,
                Some(ip) => {
                    client = ip.to_canonical();
                    if !self.contains(client) {
                        return client;
                    }
                }
            }
        }
        client
    }
}

/// Most hops read from one header line: a longer list is cut (the right end, written by
/// the proxies nearest to us, is what the walk reads first).
const MAX_HOPS: usize = 64;

/// The address of one `Forwarded` element's `for=` parameter, if it names one.
fn forwarded_for(element: &str) -> Option<IpAddr> {
    let value = element.split(';').find_map(|pair| {
        let (name, value) = pair.trim().split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("for")
            .then_some(value.trim())
    })?;
    address(value.trim_matches('"'))
}

/// An address as proxies write it: `192.0.2.1`, `192.0.2.1:4711`, `2001:db8::1`,
/// `[2001:db8::1]` or `[2001:db8::1]:4711`.
fn address(text: &str) -> Option<IpAddr> {
    if let Some(rest) = text.strip_prefix('[') {
        let (inside, _) = rest.split_once(']')?;
        return inside.parse().ok();
    }
    if let Ok(ip) = text.parse() {
        return Some(ip);
    }
    // An IPv4 address with a port (one colon; IPv6 without brackets parsed above).
    let (host, port) = text.rsplit_once(':')?;
    port.parse::<u16>().ok()?;
    host.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)
}

impl std::str::FromStr for TrustedProxies {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let mut nets = Vec::new();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let net = match item.parse::<IpNet>() {
                Ok(net) => net,
                Err(_) => item
                    .parse::<IpAddr>()
                    .map(IpNet::from)
                    .map_err(|_| format!("{item:?} is not a CIDR block or an IP address"))?,
            };
            nets.push(net.trunc());
        }
        Ok(Self(nets))
    }
}

impl std::fmt::Display for TrustedProxies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut first = true;
        for net in &self.0 {
            if !first {
                f.write_str(",")?;
            }
            first = false;
            write!(f, "{net}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn proxies(text: &str) -> TrustedProxies {
        text.parse().unwrap()
    }

    #[test]
    fn lists_of_blocks_and_addresses_parse_and_bad_ones_are_refused() {
        let list = proxies("10.0.0.0/8, 192.168.1.7 ,2001:db8::/32");
        assert_eq!(list.to_string(), "10.0.0.0/8,192.168.1.7/32,2001:db8::/32");
        assert!(list.contains(ip("10.2.3.4")));
        assert!(
            list.contains(ip("::ffff:10.2.3.4")),
            "v4-mapped peers count"
        );
        assert!(!list.contains(ip("192.168.1.8")));
        assert!(proxies("").is_empty());
        assert!("10.0.0.0/33".parse::<TrustedProxies>().is_err());
        assert!("cdn.example".parse::<TrustedProxies>().is_err());
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_sends() {
        let list = proxies("10.0.0.0/8");
        let client = list.client(ip("203.0.113.9"), ["for=1.1.1.1"], ["1.1.1.1"]);
        assert_eq!(client, ip("203.0.113.9"));
        let none = TrustedProxies::default();
        assert_eq!(none.client(ip("10.0.0.1"), [], ["1.1.1.1"]), ip("10.0.0.1"));
    }

    #[test]
    fn the_walk_skips_trusted_hops_from_the_right() {
        let list = proxies("10.0.0.0/8,192.0.2.0/24");
        // A client forging a hop on the left cannot choose its address.
        let xff = ["6.6.6.6, 198.51.100.7", "192.0.2.10"];
        assert_eq!(list.client(ip("10.0.0.5"), [], xff), ip("198.51.100.7"));
        // Every hop trusted: the leftmost one.
        assert_eq!(
            list.client(ip("10.0.0.5"), [], ["10.1.1.1, 192.0.2.3"]),
            ip("10.1.1.1")
        );
        // No header: the peer.
        assert_eq!(list.client(ip("10.0.0.5"), [], []), ip("10.0.0.5"));
        // A hop that is no address ends the walk at the proxy that wrote it.
        assert_eq!(
            list.client(ip("10.0.0.5"), [], ["198.51.100.7, unknown"]),
            ip("10.0.0.5")
        );
    }

    #[test]
    fn forwarded_is_read_before_x_forwarded_for_with_ports_and_brackets() {
        let list = proxies("10.0.0.0/8");
        let forwarded = [r#"for="[2001:db8:cafe::17]:4711";proto=https, for=10.0.0.9:80"#];
        assert_eq!(
            list.client(ip("10.0.0.5"), forwarded, ["198.51.100.7"]),
            ip("2001:db8:cafe::17")
        );
        assert_eq!(
            list.client(ip("10.0.0.5"), ["by=10.0.0.1;For=192.0.2.60"], []),
            ip("192.0.2.60")
        );
        assert_eq!(
            list.client(ip("10.0.0.5"), ["for=_hidden"], []),
            ip("10.0.0.5")
        );
        assert_eq!(
            list.client(ip("10.0.0.5"), [], ["198.51.100.7:5000"]),
            ip("198.51.100.7")
        );
    }
}
