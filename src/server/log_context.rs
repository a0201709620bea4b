//! What a request's log lines say about it, without the `request` span.
//!
//! The `request` span is for traces (OTLP) only: the log filter leaves it out, because
//! formatting its fields on every request cost about a third of a cached playlist's CPU
//! (callgrind, docs/performance.md). The few lines that name their request (a failed
//! request, a cut stream) read it here: [`scope`] keeps the route label and path (an
//! `http::Uri`, a cheap clone) in a task-local, [`facts`] reads them back, and the object
//! key is parsed only when a line is written.

use std::future::Future;

use super::route::paths::{parse_route, Route};

/// The request a task is answering, for its log lines.
#[derive(Debug, Clone)]
pub(crate) struct RequestFacts {
    /// The metrics route label (`master`, `segment`, ...).
    pub route: &'static str,
    /// The request URI as received.
    pub uri: http::Uri,
}

tokio::task_local! {
    static REQUEST: RequestFacts;
}

/// Run `future` with `facts` as its request's facts.
pub(crate) fn scope<F: Future>(facts: RequestFacts, future: F) -> impl Future<Output = F::Output> {
    REQUEST.scope(facts, future)
}

/// The facts of the request this task answers, to carry into a task it spawns.
pub(crate) fn current() -> Option<RequestFacts> {
    REQUEST.try_with(RequestFacts::clone).ok()
}

/// Call `f` with `facts` as its request's facts (for a line written outside the
/// request's task, such as by a body its connection polls).
pub(crate) fn sync_scope<R>(facts: RequestFacts, f: impl FnOnce() -> R) -> R {
    REQUEST.sync_scope(facts, f)
}

/// Call `f` with the object key (when the path names one) and the route label of the
/// request this task answers; `(None, "other")` outside a request.
pub(crate) fn facts<R>(f: impl FnOnce(Option<&str>, &'static str) -> R) -> R {
    let Ok(facts) = REQUEST.try_with(RequestFacts::clone) else {
        return f(None, "other");
    };
    match parse_route(facts.uri.path()) {
        Ok(Route::Vod { key, .. }) => f(Some(key.as_str()), facts.route),
        _ => f(None, facts.route),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_scoped_task_knows_its_key_and_route_and_others_do_not() {
        let facts_in = RequestFacts {
            route: "master",
            uri: "/vod/dir/a%20b.mp4/master.m3u8?x=1".parse().unwrap(),
        };
        let seen = scope(facts_in, async {
            facts(|key, route| (key.map(str::to_owned), route))
        })
        .await;
        assert_eq!(seen, (Some("dir/a b.mp4".to_owned()), "master"));
        let outside = facts(|key, route| (key.map(str::to_owned), route));
        assert_eq!(outside, (None, "other"));
    }

    #[tokio::test]
    async fn a_path_that_is_not_a_title_has_no_key() {
        let facts_in = RequestFacts {
            route: "other",
            uri: "/nothing/here".parse().unwrap(),
        };
        let seen = scope(facts_in, async { facts(|key, _| key.map(str::to_owned)) }).await;
        assert_eq!(seen, None);
    }
}
