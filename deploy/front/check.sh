#!/usr/bin/env bash
# Check deploy/front/vodpack-front.conf with a real nginx and three stand-in replicas on
# 127.0.0.1 (a few lines of Python each, answering any path with their port in
# X-Replica). Shows that:
#   1. every URL of one title (manifests, media playlists, init and media segments, I-frame
#      and subtitle names, keys, views, signed URLs, nginx-vod names under /hls/, /hlsts/
#      and /dash/) reaches one replica, and the title the map derives from each URL is the
#      documented one (read back from the front's access log);
#   2. 200 titles spread over the three replicas;
#   3. with one replica stopped, only its titles move and no request fails (each is retried
#      on the next replica of the ring); started again, it gets exactly its titles back;
#   4. a replica shedding load (503 + Retry-After) has its requests served by the next one,
#      and when every replica sheds, the client gets vodpack's 503 with its Retry-After;
#   5. other paths go round robin, and connections to the replicas are kept alive.
#
#   bash deploy/front/check.sh              # Debian 12: apt-get install nginx-light
#   NGINX_BIN=/path/to/nginx bash deploy/front/check.sh
#
# It runs the conf unchanged but for its listen line (a free loopback port instead of
# 8080), with its own replica list beside it (`nginx -p DIR -c nginx.conf`). Loopback only;
# every process it starts is stopped when it exits. Not part of `cargo test`.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
NGINX=${NGINX_BIN:-nginx}  # not $NGINX, which nginx itself reads (inherited sockets)
for tool in "$NGINX" python3 curl; do
  command -v "$tool" >/dev/null 2>&1 || { echo "check.sh needs $tool" >&2; exit 2; }
done

work=$(mktemp -d)
pids=()
cleanup() {
  local i
  # Newest first: nginx before the replicas it holds connections to.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill "${pids[i]}" 2>/dev/null || true
    wait "${pids[i]}" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  echo "--- nginx error log (last lines)" >&2
  tail -n 20 "$work/error.log" >&2 2>/dev/null || true
  exit 1
}

# Four free loopback ports: the front and three replicas.
read -r front_port p1 p2 p3 < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(4)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])
')
ports=("$p1" "$p2" "$p3")

cat >"$work/standin.py" <<'PY'
# A stand-in replica: any GET or HEAD answers 200 with its port in X-Replica (or 503 with
# Retry-After while the file named by its second argument exists), and echoes what the
# front sent: the Host, X-Forwarded-For, and how many requests its connection has carried.
import http.server
import os
import sys

port, shed_flag = int(sys.argv[1]), sys.argv[2]


class Replica(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        self.requests_on_connection = 0

    def answer(self):
        self.requests_on_connection += 1
        body = f"{port} {self.path}\n".encode()
        shed = os.path.exists(shed_flag)
        self.send_response(503 if shed else 200)
        if shed:
            self.send_header("Retry-After", "1")
        self.send_header("X-Replica", str(port))
        self.send_header("X-Connection-Requests", str(self.requests_on_connection))
        self.send_header("X-Seen-Host", self.headers.get("Host", ""))
        self.send_header("X-Seen-Forwarded-For", self.headers.get("X-Forwarded-For", ""))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return body

    def do_GET(self):
        self.wfile.write(self.answer())

    def do_HEAD(self):
        self.answer()

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # a connection nginx closed while idle


Server(("127.0.0.1", port), Replica).serve_forever()
PY

declare -A replica_pid
start_replica() {
  python3 "$work/standin.py" "$1" "$work/shed-$1" 2>>"$work/replica-$1.log" &
  replica_pid[$1]=$!
  pids+=("$!")
}
wait_for() {
  local url=$1 _
  for _ in $(seq 1 100); do
    curl -fs -o /dev/null --max-time 1 "$url" && return 0
    sleep 0.1
  done
  fail "nothing answers $url"
}

for port in "${ports[@]}"; do
  start_replica "$port"
done
for port in "${ports[@]}"; do
  wait_for "http://127.0.0.1:$port/"
done

# The conf as shipped, listening on the free port: exactly one line differs.
sed "s/^    listen 8080;\$/    listen 127.0.0.1:$front_port;/" \
  "$here/vodpack-front.conf" >"$work/vodpack-front.conf"
changed=$(diff "$here/vodpack-front.conf" "$work/vodpack-front.conf" | grep -c '^[<>]' || true)
[ "$changed" = 2 ] || fail "expected to change the listen line only ($changed lines differ)"
grep -q 'max_fails=0;$' "$here/vodpack-replicas.conf" \
  || fail "vodpack-replicas.conf does not give its servers max_fails=0"
for port in "${ports[@]}"; do
  echo "server 127.0.0.1:$port max_fails=0;"
done >"$work/vodpack-replicas.conf"
# A main conf of the test's own, every path in the work folder (temp folders too, for the
# modules this nginx has, so it needs no write access elsewhere).
mkdir -p "$work/tmp"
{
  printf 'worker_processes 2;\npid nginx.pid;\nerror_log error.log info;\n'
  printf 'events {\n    worker_connections 512;\n}\nhttp {\n'
  printf '    client_body_temp_path tmp/body;\n    proxy_temp_path tmp/proxy;\n'
  for module in fastcgi uwsgi scgi; do
    "$NGINX" -V 2>&1 | grep -q -- "--without-http_${module}_module" \
      || printf '    %s_temp_path tmp/%s;\n' "$module" "$module"
  done
  printf '    include vodpack-front.conf;\n}\n'
} >"$work/nginx.conf"
"$NGINX" -p "$work/" -c nginx.conf -e "$work/error.log" -t -q || fail "nginx -t"
"$NGINX" -p "$work/" -c nginx.conf -e "$work/error.log" -g 'daemon off;' >>"$work/access.log" 2>&1 &
pids+=("$!")
wait_for "http://127.0.0.1:$front_port/front/healthz"
echo "$("$NGINX" -v 2>&1) on 127.0.0.1:$front_port, replicas on ${ports[*]}"

# fetch PATH [curl options]: "STATUS REPLICA CONNECTION_REQUESTS RETRY_AFTER SEEN_HOST SEEN_XFF".
fetch() {
  local path=$1
  shift
  { curl -sS --max-time 10 -o /dev/null -D - "$@" "http://127.0.0.1:$front_port$path" || true; } \
    | tr -d '\r' | awk '
      /^HTTP\// { status = $2 }
      tolower($1) == "x-replica:" { replica = $2 }
      tolower($1) == "x-connection-requests:" { requests = $2 }
      tolower($1) == "retry-after:" { retry = $2 }
      tolower($1) == "x-seen-host:" { host = $2 }
      tolower($1) == "x-seen-forwarded-for:" { xff = $2 }
      END {
        print (status ? status : "none"), (replica ? replica : "-"), (requests ? requests : 0),
              (retry ? retry : "-"), (host ? host : "-"), (xff ? xff : "-")
      }'
}
# The title the front logged for PATH (the access log escapes bytes over 0x7f as \xNN).
logged_title() {
  grep -F "\"GET $1 HTTP/1.1\"" "$work/access.log" | tail -n 1 | sed -n 's/.* title="\([^"]*\)".*/\1/p'
}

echo
echo "1. every URL of one title reaches one replica"
key='films/caf%C3%A9%20night.mp4'
title='films/caf\xC3\xA9 night.mp4'
token='?token=1999999999.n.L3ZvZC8.c2lnbmF0dXJl'
version=v0123456789abcdef
title_urls=(
  "/vod/$key/master.m3u8" "/vod/$key/master-ts.m3u8" "/vod/$key/manifest.mpd"
  "/vod/$key/$version/index-t1.m3u8" "/vod/$key/$version/init-t1.mp4"
  "/vod/$key/$version/seg-t1-3.m4s" "/vod/$key/$version/seg-t2-3.m4s"
  "/vod/$key/$version/iframes-t1.m3u8" "/vod/$key/$version/ifr-t1-2.m4s"
  "/vod/$key/$version/index-ts-t1.m3u8" "/vod/$key/$version/seg-ts-t1-3.ts"
  "/vod/$key/$version/sub-t3-1.vtt" "/vod/$key/$version/sub-t3.vtt"
  "/vod/$key/seg-t1-3.m4s" "/vod/$key/hls.key" "/vod/$key/$version/hls.key"
  "/vod/$key/master.m3u8$token" "/vod/$key/$version/seg-t1-4.m4s$token"
  "/vod/$key/clip/1200-2500/master.m3u8" "/vod/$key/tracks/v1-a2/manifest.mpd"
  "/vod/$key/clip/0-5000/tracks/lang=fr/$version/seg-t1-1.m4s"
  "/hls/$key/master.m3u8" "/hls/$key/index-v1.m3u8" "/hls/$key/seg-3-v1.m4s"
  "/hls/$key/index-v1-a1.m3u8" "/hls/$key/seg-3-v1-a1.m4s" "/hls/$key/init-v1-a1.mp4"
  "/hlsts/$key/seg-3-v1-a1.ts" "/dash/$key/manifest.mpd" "/dash/$key/fragment-3-a1-x3.m4s"
  "/hls/clipFrom/1000/$key/master.m3u8" "/hls/$key/clipTo/5000/seg-1-v1.m4s"
  "/dash/tracks/v1-a1/clipFrom/1000/$key/init-v1.mp4"
)
replicas_seen=""
for path in "${title_urls[@]}"; do
  read -r status replica _ _ host xff < <(fetch "$path")
  [ "$status" = 200 ] || fail "$path: status $status"
  [ "$host" = "127.0.0.1:$front_port" ] || fail "$path: the replica saw Host $host"
  [ "$xff" = 127.0.0.1 ] || fail "$path: the replica saw X-Forwarded-For $xff"
  replicas_seen="$replicas_seen $replica"
done
read -r status replica _ < <(fetch "/vod/$key/$version/seg-t1-5.m4s" -I)
[ "$status" = 200 ] || fail "HEAD: status $status"
replicas_seen="$replicas_seen $replica"
distinct=$(echo "$replicas_seen" | tr ' ' '\n' | sed '/^$/d' | sort -u)
[ "$(echo "$distinct" | wc -l)" = 1 ] || fail "one title reached several replicas: $distinct"
for path in "${title_urls[@]}"; do
  logged=$(logged_title "$path")
  [ "$logged" = "$title" ] || fail "$path: title \"$logged\", expected \"$title\""
done
echo "   ${#title_urls[@]} URLs and a HEAD, /vod/, /hls/, /hlsts/ and /dash/: all on replica $distinct," \
  "all with title \"$title\""

# Other titles the map derives, and paths that have none (round robin).
checks=(
  "/vod/shows/ep%201.json/index-f2-t1.m3u8|shows/ep 1.json"
  "/vod/shows/ep%201.json/clearkey.json|shows/ep 1.json"
  "/hls/folder/,a,b,.mp4.urlset/seg-1-f1-v1.m4s|folder/,a,b,.mp4.urlset"
  "/vod/dir.mp4/b.mov/master.m3u8|dir.mp4/b.mov"
  "/vod/Films/A.MP4/master.m3u8|Films/A.MP4"
  "/vod/a.m4a/v0123456789abcdef/seg-t1-1.m4s|a.m4a"
  "/vod/b.m4v/manifest.mpd|b.m4v"
  "/healthz|"
  "/readyz|"
  "/|"
  "/vod/a.txt/master.m3u8|"
)
for check in "${checks[@]}"; do
  path=${check%%|*}
  expected=${check#*|}
  read -r status _ < <(fetch "$path")
  [ "$status" = 200 ] || fail "$path: status $status"
  logged=$(logged_title "$path")
  [ "$logged" = "$expected" ] || fail "$path: title \"$logged\", expected \"$expected\""
done
read -r status replica _ < <(fetch /metrics)
if [ "$status" != 404 ] || [ "$replica" != - ]; then
  fail "/metrics went to a replica ($status $replica)"
fi
echo "   ${#checks[@]} more paths map to their titles (title documents, urlsets, a folder named" \
  "like a file, other extensions; none for /healthz, /readyz, / and non-media); /metrics stays at the front"

# map_titles FILE: "TITLE_NUMBER REPLICA STATUS" for 200 titles, into FILE.
map_titles() {
  local i status replica
  for i in $(seq 1 200); do
    read -r status replica _ < <(fetch "/vod/catalogue/title-$i.mp4/master.m3u8")
    echo "$i $replica $status"
  done >"$1"
}
count_by_replica() {
  awk '{ n[$2]++ } END { for (r in n) printf "%s: %d  ", r, n[r]; print "" }' "$1"
}

echo
echo "2. 200 titles spread over the replicas"
map_titles "$work/before"
awk '$3 != 200 { bad++ } END { exit bad > 0 }' "$work/before" || fail "a title failed"
echo "   $(count_by_replica "$work/before")"
for port in "${ports[@]}"; do
  n=$(awk -v r="$port" '$2 == r' "$work/before" | wc -l)
  [ "$n" -ge 30 ] || fail "replica $port got $n of 200 titles"
done
max_requests=$(for i in 1 2 3; do fetch "/vod/catalogue/title-$i.mp4/master.m3u8" | cut -d' ' -f3; done \
  | sort -n | tail -n 1)
[ "$max_requests" -gt 1 ] || fail "no connection to a replica carried a second request"
echo "   connections to the replicas are reused (one has carried $max_requests requests)"

echo
stopped=${ports[1]}
echo "3. replica $stopped stopped"
log_lines=$(wc -l <"$work/access.log")
kill "${replica_pid[$stopped]}"
wait "${replica_pid[$stopped]}" 2>/dev/null || true
map_titles "$work/stopped"
failed=$(awk '$3 != 200' "$work/stopped" | wc -l)
[ "$failed" = 0 ] || fail "$failed requests failed with a replica stopped"
moved_off=$(join "$work/before" "$work/stopped" | awk -v s="$stopped" '$2 == s' | wc -l)
moved_other=$(join "$work/before" "$work/stopped" | awk -v s="$stopped" '$2 != s && $2 != $4' | wc -l)
[ "$moved_other" = 0 ] || fail "$moved_other titles of running replicas moved"
retried=$(tail -n +"$((log_lines + 1))" "$work/access.log" | grep -c 'upstream_status="502, 200"' || true)
echo "   200 of 200 answered 200; $moved_off titles moved (all of $stopped's), 0 of the others;" \
  "$retried retried on the next replica"
echo "   $(count_by_replica "$work/stopped")"
start_replica "$stopped"
wait_for "http://127.0.0.1:$stopped/"
map_titles "$work/back"
diff -q <(cut -d' ' -f1,2 "$work/before") <(cut -d' ' -f1,2 "$work/back") >/dev/null \
  || fail "the titles did not come back to $stopped"
echo "   started again: every title is back on its first replica"

echo
shedding=${ports[0]}
echo "4. replica $shedding sheds load (503 + Retry-After)"
log_lines=$(wc -l <"$work/access.log")
touch "$work/shed-$shedding"
map_titles "$work/shed"
failed=$(awk '$3 != 200' "$work/shed" | wc -l)
[ "$failed" = 0 ] || fail "$failed requests failed while $shedding shed"
served_elsewhere=$(join "$work/before" "$work/shed" | awk -v s="$shedding" '$2 == s && $4 != s' | wc -l)
retried=$(tail -n +"$((log_lines + 1))" "$work/access.log" | grep -c 'upstream_status="503, 200"' || true)
echo "   200 of 200 answered 200: $served_elsewhere of its titles served by the next replica" \
  "($retried retries)"
for port in "${ports[@]}"; do
  touch "$work/shed-$port"
done
read -r status _ _ retry_after _ < <(fetch "/vod/catalogue/title-1.mp4/master.m3u8")
if [ "$status" != 503 ] || [ "$retry_after" != 1 ]; then
  fail "every replica shedding: $status, Retry-After $retry_after"
fi
read -r status _ _ retry_after _ < <(fetch "/vod/catalogue/title-2.mp4/master.m3u8")
if [ "$status" != 503 ] || [ "$retry_after" != 1 ]; then
  fail "every replica shedding, again: $status, Retry-After $retry_after"
fi
rm -f "$work"/shed-*
read -r status _ < <(fetch "/vod/catalogue/title-3.mp4/master.m3u8")
[ "$status" = 200 ] || fail "the fleet recovered but the front answers $status"
echo "   every replica shedding: the client gets 503 with Retry-After: 1 (twice); the next" \
  "request, once they stop, gets 200"

echo
echo "5. paths without a title go round robin"
for _ in $(seq 1 30); do
  fetch /readyz | cut -d' ' -f2
done >"$work/readyz"
spread=$(sort -u "$work/readyz" | wc -l)
[ "$spread" -ge 2 ] || fail "30 /readyz requests reached $spread replica"
echo "   30 /readyz requests reached $spread replicas: $(sort "$work/readyz" | uniq -c | tr -s ' ' | tr '\n' ' ')"

echo
echo "front: all checks passed"
