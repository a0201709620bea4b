#!/usr/bin/env bash
# tools/snapshot_outputs.sh -- a byte snapshot of everything vodpack serves for the fixtures,
# so two builds can be compared request for request (a refactor must give the same bytes).
#
#   tools/snapshot_outputs.sh modes                        # the modes, one a line
#   tools/snapshot_outputs.sh flags MODE                   # `vodpack serve` flags of MODE
#   tools/snapshot_outputs.sh crawl MODE BASE_URL FIXTURES OUT
#   tools/snapshot_outputs.sh run MODE VODPACK_BIN FIXTURES OUT
#
# `crawl` asks a running vodpack (started with `flags MODE` and `--root FIXTURES`) for every
# title in FIXTURES: each media file (.mp4 .m4v .m4a .mov) and each title document (.json),
# recursively. From master.m3u8, master-ts.m3u8 and manifest.mpd it follows every URI the
# manifests name: media, I-frame and subtitle playlists, init and media segments (CMAF and
# MPEG-TS), WebVTT, keys (GET hls.key) and ClearKey licences (POST clearkey.json with the
# KID the manifest signals); DASH SegmentTemplates are expanded ($Number$, $Time$,
# $RepresentationID$, $Bandwidth$) over the SegmentTimeline or the duration. It does the
# same for views (SNAP_VIEWS, default a clip and a track selection), and adds, per title, a
# HEAD and a `Range: bytes=100-999` GET of the first init and first segments, and once a
# 404, a 400, stale version folders, a conditional GET, /healthz and /readyz. /metrics is
# left out (it counts the requests).
#
# OUT gets one line per request, `status sha256 length request`, sorted by request (bytes), where
# request is the path and query, prefixed by `HEAD ` or `POST ` and followed by
# ` range=FROM-TO` when not a plain GET (HEAD: length is the Content-Length header). OUT.headers
# gets `request<TAB>name: value` for every response header but Date and x-trace-id.
# Compare two builds with `diff old.txt new.txt && diff old.txt.headers new.txt.headers`.
#
# Version folders hash each file's mtime and inode, and encrypted outputs' IVs hash the
# version: compare runs made on the SAME fixtures folder (copy it once, point both at it).
# Keys and URL tokens use fixed secrets and a fixed expiry (below), so every mode is
# deterministic. Encryption modes set --public-url, so the MPD's licence URL is not the
# port's. The nginx-vod mode crawls /hls/, /hlsts/ and /dash/ (nginx-vod-module names,
# clipFrom/clipTo, tracks, a .urlset) instead of /vod/.
#
# Modes (`flags MODE` prints the exact flags): plain (the defaults: 6 s segments); every
# other mode cuts 1 s segments, as the conformance tests do, so each fixture has several:
# plain-1s; hls-aes128, hls-sample-aes, dash-cenc, dash-cbcs (one output encrypted, the
# other clear); aes128-cenc, sample-aes-cbcs (both encrypted: the clear folder closes);
# signed-entry, signed-all (signed URLs; signed-all with aes128-cenc encryption, so keys
# and licences carry the token; adds requests without a token, with a bad and a foreign
# one); nginx-vod (--nginx-vod-locations hls=/hls/,hlsts=/hlsts/,dash=/dash/; the .urlset
# is the ladder fixture's).
#
# `run` does it all: starts VODPACK_BIN on 127.0.0.1 with a free port and MODE's flags
# (its log goes to OUT.log), waits for /healthz, crawls, and stops the server by its PID.
#
#   for m in $(tools/snapshot_outputs.sh modes); do
#     tools/snapshot_outputs.sh run "$m" old/vodpack media-copy "old-$m.txt"
#     tools/snapshot_outputs.sh run "$m" new/vodpack media-copy "new-$m.txt"
#     diff "old-$m.txt" "new-$m.txt" && diff "old-$m.txt.headers" "new-$m.txt.headers"
#   done
#
# Variables: SNAP_MAX_SEGMENTS (0 = every segment of each playlist or representation),
# SNAP_VIEWS (space-separated view folders; "" for none), SNAP_KEY_SECRET,
# SNAP_URL_SECRET, SNAP_TOKEN_EXPIRY (Unix seconds), SNAP_PUBLIC_URL.
# Needs bash, curl, python3 (standard library only).
set -euo pipefail

SNAP_KEY_SECRET=${SNAP_KEY_SECRET:-snapshot content key secret 0001}
SNAP_URL_SECRET=${SNAP_URL_SECRET:-snapshot url signing secret 0001}
SNAP_TOKEN_EXPIRY=${SNAP_TOKEN_EXPIRY:-4102444800}
SNAP_PUBLIC_URL=${SNAP_PUBLIC_URL:-http://vodpack.test}
SNAP_MAX_SEGMENTS=${SNAP_MAX_SEGMENTS:-0}
SNAP_VIEWS=${SNAP_VIEWS-clip/1000-3000/ tracks/v1-a1/}
export SNAP_KEY_SECRET SNAP_URL_SECRET SNAP_TOKEN_EXPIRY SNAP_PUBLIC_URL SNAP_MAX_SEGMENTS SNAP_VIEWS

MODES=(plain plain-1s hls-aes128 hls-sample-aes dash-cenc dash-cbcs aes128-cenc sample-aes-cbcs signed-entry
  signed-all nginx-vod)

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
  exit 2
}

# flags MODE: the `vodpack serve` arguments of MODE, one a line (secrets as flags: these
# are test secrets, and flags keep a run self-contained).
flags() {
  local enc=
  case $1 in
    plain) return 0 ;;
    plain-1s) ;;
    hls-aes128) enc=hls=aes-128 ;;
    hls-sample-aes) enc=hls=sample-aes ;;
    dash-cenc) enc=dash=cenc ;;
    dash-cbcs) enc=dash=cbcs ;;
    aes128-cenc) enc=hls=aes-128,dash=cenc ;;
    sample-aes-cbcs) enc=hls=sample-aes,dash=cbcs ;;
    signed-entry) printf '%s\n' --signed-urls entry --url-secret "$SNAP_URL_SECRET" ;;
    signed-all)
      printf '%s\n' --signed-urls all --url-secret "$SNAP_URL_SECRET"
      enc=hls=aes-128,dash=cenc
      ;;
    nginx-vod) printf '%s\n' --nginx-vod-locations hls=/hls/,hlsts=/hlsts/,dash=/dash/ ;;
    *)
      echo "snapshot_outputs.sh: unknown mode $1 (modes: ${MODES[*]})" >&2
      exit 2
      ;;
  esac
  # Every mode but plain cuts 1 s segments, so each 3 s fixture has several per rendition.
  printf '%s\n' --segment-duration-ms 1000
  if [ -n "$enc" ]; then
    printf '%s\n' --encryption "$enc" --key-secret "$SNAP_KEY_SECRET" --public-url "$SNAP_PUBLIC_URL"
  fi
}

crawl() {
  local mode=$1 base=${2%/} fixtures=$3 out=$4
  flags "$mode" >/dev/null
  [ -d "$fixtures" ] || { echo "snapshot_outputs.sh: no folder $fixtures" >&2; exit 2; }
  curl -sf -o /dev/null "$base/healthz" || { echo "snapshot_outputs.sh: $base does not answer /healthz" >&2; exit 1; }
  python3 - "$mode" "$base" "$fixtures" "$out" <<'PY'
import base64, hashlib, hmac, http.client, json, os, re, sys
import urllib.parse
import xml.etree.ElementTree as ET

MODE, BASE, FIXTURES, OUT = sys.argv[1:5]
MAX_SEGMENTS = int(os.environ["SNAP_MAX_SEGMENTS"])
VIEWS = os.environ["SNAP_VIEWS"].split()
PUBLIC_URL = os.environ["SNAP_PUBLIC_URL"].rstrip("/")
URL_SECRET = os.environ["SNAP_URL_SECRET"].encode()
EXPIRY = os.environ["SNAP_TOKEN_EXPIRY"]
SIGNED = MODE.startswith("signed-")
NGINX = MODE == "nginx-vod"
MEDIA_EXT = (".mp4", ".m4v", ".m4a", ".mov", ".json")
SKIP_HEADERS = {"date", "x-trace-id"}

parsed_base = urllib.parse.urlsplit(BASE)
conn = None
lines, header_lines, seen = [], [], set()


def connection():
    global conn
    if conn is None:
        conn = http.client.HTTPConnection(parsed_base.hostname, parsed_base.port or 80, timeout=60)
    return conn


def request(method, target, headers=None, body=None):
    """One request on the kept-alive connection (reopened once if the server closed it)."""
    global conn
    for attempt in (0, 1):
        try:
            c = connection()
            c.request(method, target, body=body, headers=headers or {})
            r = c.getresponse()
            data = r.read()
            if r.getheader("connection", "").lower() == "close":
                c.close()
                conn = None
            return r.status, r.getheaders(), data
        except (http.client.HTTPException, OSError):
            if conn is not None:
                conn.close()
            conn = None
            if attempt:
                return "ERR", [], b""
    return "ERR", [], b""


def record(method, target, headers=None, body=None, label=None):
    """Make a request once, write its line and headers, return (status, body)."""
    label = label or (target if method == "GET" else f"{method} {target}")
    if label in seen:
        return None, b""
    seen.add(label)
    status, rheaders, data = request(method, target, headers, body)
    length = len(data)
    if method == "HEAD":
        length = next((v for k, v in rheaders if k.lower() == "content-length"), "-")
    lines.append(f"{status} {hashlib.sha256(data).hexdigest()} {length} {label}")
    for k, v in rheaders:
        if k.lower() not in SKIP_HEADERS:
            header_lines.append(f"{label}\t{k.lower()}: {v.replace(BASE, 'BASE')}")
    return status, data


def target_of(url):
    """Path and query of an absolute URL on this server (or the public URL)."""
    if url.startswith(PUBLIC_URL + "/"):
        url = BASE + url[len(PUBLIC_URL):]
    p = urllib.parse.urlsplit(url)
    if (p.scheme, p.netloc) != (parsed_base.scheme, parsed_base.netloc):
        return None
    return p.path + ("?" + p.query if p.query else "")


def url_of(target):
    return BASE + target


def sign(prefix):
    mac = hmac.new(URL_SECRET, digestmod=hashlib.sha256)
    for part in (b"vodpack url token v1", EXPIRY.encode(), b"n", prefix.encode(), b""):
        mac.update(part + b"\0")
    b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
    return f"{EXPIRY}.n.{b64(prefix.encode())}.{b64(mac.digest())}"


def b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


# Per title: the first init and segments met, for HEAD and Range.
samples = {}


def note_sample(kind, target):
    samples.setdefault(kind, target)


def licence(url, kid_hex):
    target = target_of(url)
    if target is None or not kid_hex:
        return
    kid = bytes.fromhex(kid_hex.replace("-", "").replace("0x", "").replace("0X", ""))
    body = json.dumps({"kids": [b64url(kid)], "type": "temporary"}).encode()
    record("POST", target, {"Content-Type": "application/json"}, body,
           label=f"POST {target} kid={kid_hex.lower()}")


ATTR = re.compile(r'([A-Z0-9-]+)=("[^"]*"|[^,]*)')


def attributes(line):
    return {k: v.strip('"') for k, v in ATTR.findall(line.split(":", 1)[1] if ":" in line else "")}


def fetch_resource(url, kind):
    """GET one resource a manifest names; follow it when it is a playlist or an MPD."""
    target = target_of(url)
    if target is None:
        return
    path = urllib.parse.urlsplit(target).path
    if path.endswith("/clearkey.json"):
        return
    status, data = record("GET", target)
    if status is None:
        return
    name = path.rsplit("/", 1)[-1]
    if status == 200 and name.endswith(".m3u8"):
        hls(url, data)
    elif status == 200 and name.endswith(".mpd"):
        dash(url, data)
    elif status == 200:
        if name.startswith("init"):
            note_sample("init", target)
        elif name.endswith(".ts"):
            note_sample("ts", target)
        elif name.endswith(".vtt"):
            note_sample("vtt", target)
        elif name.startswith(("seg", "fragment")):
            note_sample("seg", target)
        elif name.startswith("ifr"):
            note_sample("ifr", target)


def key_tag(url, line):
    a = attributes(line)
    uri = a.get("URI")
    if not uri or uri.startswith("data:"):
        return
    key_url = urllib.parse.urljoin(url, uri)
    if urllib.parse.urlsplit(key_url).path.endswith("/clearkey.json"):
        licence(key_url, a.get("KEYID", ""))
    else:
        fetch_resource(key_url, "key")


def hls(url, data):
    text = data.decode("utf-8", "replace")
    segments = 0
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith(("#EXT-X-KEY:", "#EXT-X-SESSION-KEY:")):
            key_tag(url, line)
        elif line.startswith("#"):
            uri = attributes(line).get("URI") if 'URI="' in line else None
            if uri:
                fetch_resource(urllib.parse.urljoin(url, uri), "tag")
        else:
            ref = urllib.parse.urljoin(url, line)
            is_playlist = urllib.parse.urlsplit(ref).path.endswith(".m3u8")
            if not is_playlist:
                segments += 1
                if MAX_SEGMENTS and segments > MAX_SEGMENTS:
                    continue
            fetch_resource(ref, "uri")


NS_RE = re.compile(r"^\{[^}]*\}")


def local(tag):
    return NS_RE.sub("", tag)


def children(el, name):
    return [c for c in el if local(c.tag) == name]


def iso_seconds(text):
    m = re.fullmatch(r"P(?:(\d+)D)?T?(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?", text or "")
    if not m:
        return None
    d, h, mi, s = (float(x) if x else 0.0 for x in m.groups())
    return d * 86400 + h * 3600 + mi * 60 + s


def expand(template, rep_id, bandwidth, number=None, time=None):
    def sub(m):
        name, fmt = m.group(1), m.group(2)
        value = {"RepresentationID": rep_id, "Bandwidth": bandwidth, "Number": number, "Time": time}.get(name)
        if name == "":
            return "$"
        if value is None:
            return m.group(0)
        return (fmt % int(value)) if fmt else str(value)
    return re.sub(r"\$(RepresentationID|Bandwidth|Number|Time|)(%0\d+d)?\$", sub, template)


def dash(url, data):
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return
    total = iso_seconds(root.get("mediaPresentationDuration"))
    for period in children(root, "Period"):
        period_base = base_url(url, period)
        period_dur = iso_seconds(period.get("duration")) or total
        for aset in children(period, "AdaptationSet"):
            aset_base = base_url(period_base, aset)
            kid = None
            for cp in children(aset, "ContentProtection"):
                for k, v in cp.attrib.items():
                    if local(k) == "default_KID":
                        kid = v
            for cp in children(aset, "ContentProtection"):
                for el in cp.iter():
                    if local(el.tag) == "Laurl" and el.text:
                        licence(urllib.parse.urljoin(aset_base, el.text.strip()), kid)
            aset_tmpl = children(aset, "SegmentTemplate")
            for rep in children(aset, "Representation"):
                rep_base = base_url(aset_base, rep)
                for cp in children(rep, "ContentProtection"):
                    for el in cp.iter():
                        if local(el.tag) == "Laurl" and el.text:
                            licence(urllib.parse.urljoin(rep_base, el.text.strip()), kid)
                tmpl = (children(rep, "SegmentTemplate") or aset_tmpl or [None])[0]
                if tmpl is None:
                    if rep_base != aset_base or children(rep, "BaseURL"):
                        fetch_resource(rep_base, "base")
                    continue
                template(rep_base, tmpl, rep.get("id", ""), rep.get("bandwidth", ""), period_dur)


def base_url(parent, el):
    bases = children(el, "BaseURL")
    return urllib.parse.urljoin(parent, bases[0].text.strip()) if bases and bases[0].text else parent


def template(base, tmpl, rep_id, bandwidth, period_dur):
    init = tmpl.get("initialization")
    if init:
        fetch_resource(urllib.parse.urljoin(base, expand(init, rep_id, bandwidth)), "init")
    media = tmpl.get("media")
    if not media:
        return
    number = int(tmpl.get("startNumber", "1"))
    timescale = int(tmpl.get("timescale", "1"))
    refs = []
    timeline = children(tmpl, "SegmentTimeline")
    if timeline:
        t = 0
        for s in children(timeline[0], "S"):
            t = int(s.get("t", t))
            d, r = int(s.get("d")), int(s.get("r", "0"))
            for _ in range(r + 1):
                refs.append((number, t))
                number += 1
                t += d
    elif tmpl.get("duration") and period_dur:
        d = int(tmpl.get("duration"))
        count = int(-(-(period_dur * timescale) // d))
        refs = [(number + i, i * d) for i in range(count)]
    if MAX_SEGMENTS:
        refs = refs[:MAX_SEGMENTS]
    for n, t in refs:
        fetch_resource(urllib.parse.urljoin(base, expand(media, rep_id, bandwidth, n, t)), "seg")


def with_token(target, prefix):
    return f"{target}?token={sign(prefix)}" if SIGNED else target


def entry(prefix, names, token_prefix):
    for name in names:
        fetch_resource(url_of(with_token(prefix + name, token_prefix)), "entry")


def probes():
    """HEAD and a byte range of the first init and segments of the title just crawled."""
    for kind in ("init", "seg", "ts", "ifr", "vtt"):
        target = samples.get(kind)
        if not target:
            continue
        record("HEAD", target)
        record("GET", target, {"Range": "bytes=100-999"}, label=f"{target} range=100-999")


def fixtures():
    keys = []
    for folder, dirs, files in os.walk(FIXTURES):
        dirs.sort()
        for f in sorted(files):
            if f.lower().endswith(MEDIA_EXT):
                keys.append(os.path.relpath(os.path.join(folder, f), FIXTURES).replace(os.sep, "/"))
    return sorted(keys)


ENTRIES = ["master.m3u8", "master-ts.m3u8", "manifest.mpd"]
# nginx-vod-module names answered under its locations (docs/migrating-from-nginx-vod.md).
NGINX_NAMES = {
    "/hls/": ["index.m3u8", "index-v1.m3u8", "index-a1.m3u8", "init-v1.mp4", "seg-1-v1.m4s",
              "seg-2-a1.m4s", "index-v1-a1.m3u8", "init-v1-a1.mp4", "seg-1-v1-a1.m4s",
              "iframes-v1.m3u8", "master-v1-a1.m3u8", "clipFrom/1000/clipTo/3000/master.m3u8",
              "tracks/v1-a1/master.m3u8", "shift/100/master.m3u8"],
    "/hlsts/": ["index-v1-a1.m3u8", "seg-1-v1-a1.ts", "seg-2-a1.ts", "iframes-v1.m3u8",
                "clipFrom/1000/master.m3u8"],
    "/dash/": ["init-v1-x3.mp4", "fragment-1-v1-x3.m4s", "fragment-2-a1-x3.m4s",
               "fragment-1-v1-a1-x3.m4s", "manifest-v1.mpd", "clipTo/2000/manifest.mpd"],
}
NGINX_ENTRY = {"/hls/": ["master.m3u8"], "/hlsts/": ["master.m3u8"], "/dash/": ["manifest.mpd"]}


# The first title's samples (the main fixture's when there is one), for the extras.
first_samples = {}


def crawl_title(key, first):
    global samples
    enc = urllib.parse.quote(key, safe="/")
    if NGINX:
        for loc in ("/hls/", "/hlsts/", "/dash/"):
            samples = {}
            prefix = f"{loc}{enc}/"
            entry(prefix, NGINX_ENTRY[loc], prefix)
            if not key.endswith(".json"):
                entry(prefix, NGINX_NAMES[loc], prefix)
            probes()
            if first and loc == "/hls/":
                first_samples.update(samples)
        return
    prefix = f"/vod/{enc}/"
    samples = {}
    entry(prefix, ENTRIES, prefix)
    probes()
    if first:
        first_samples.update(samples)
    for view in VIEWS:
        entry(prefix + view, ENTRIES, prefix)


def main_key(keys):
    return "h264-aac-3s.mp4" if "h264-aac-3s.mp4" in keys else keys[0]


def extras(keys):
    first = main_key(keys)
    enc = urllib.parse.quote(first, safe="/")
    loc = "/hls/" if NGINX else "/vod/"
    prefix = f"{loc}{enc}/"
    tok = lambda t: with_token(t, prefix)
    record("GET", "/healthz")
    record("GET", "/readyz")
    record("GET", "/nope")
    record("GET", tok(f"{loc}does-not-exist.mp4/master.m3u8"))
    record("GET", tok(prefix + "nothing.m3u8"))
    record("GET", tok(f"{loc}%2e%2e/secret.mp4/master.m3u8"))
    record("GET", tok(prefix + "clip/5000-1000/master.m3u8"))
    record("GET", tok(prefix + "clip/60000-/master.m3u8"))
    record("GET", tok(prefix + "tracks/x9/master.m3u8"))
    record("GET", tok(prefix + "v0000000000000000/index-t1.m3u8"))
    record("GET", tok(prefix + "v0000000000000000/seg-t1-1.m4s"))
    record("GET", tok(prefix + "seg-t1-1.m4s"))
    record("GET", tok(prefix + "seg-t1-999.m4s"))
    record("POST", tok(prefix + "clearkey.json"), {"Content-Type": "application/json"}, b"{}")
    record("GET", tok(prefix + "hls.key"))
    # A conditional GET with the ETag of the first segment met, and a range past the end.
    status, data = record("GET", tok(prefix + "master.m3u8"), label=f"{tok(prefix + 'master.m3u8')} again")
    target = first_samples.get("seg")
    if target:
        _, h, _ = request("HEAD", target)
        etag = next((v for k, v in h if k.lower() == "etag"), None)
        if etag:
            record("GET", target, {"If-None-Match": etag}, label=f"{target} if-none-match")
        record("GET", target, {"Range": "bytes=99999999-"}, label=f"{target} range=99999999-")
    if SIGNED:
        record("GET", prefix + "master.m3u8", label=f"{prefix}master.m3u8 no-token")
        for kind in ("init", "seg"):
            if first_samples.get(kind):
                bare = first_samples[kind].split("?")[0]
                record("GET", bare, label=f"{bare} no-token")
        bad = sign(prefix)[:-2] + "AA"
        record("GET", f"{prefix}master.m3u8?token={bad}", label=f"{prefix}master.m3u8 bad-token")
        other = sign(f"{loc}other.mp4/")
        record("GET", f"{prefix}master.m3u8?token={other}", label=f"{prefix}master.m3u8 foreign-token")


keys = fixtures()
if not keys:
    sys.exit(f"snapshot_outputs.sh: no media file or title document in {FIXTURES}")
for key in keys:
    crawl_title(key, key == main_key(keys))
if NGINX:
    for loc in ("/hls/", "/dash/"):
        samples = {}
        entry(f"{loc}ladder/,ladder-180p,ladder-270p,.mp4.urlset/", NGINX_ENTRY[loc], "")
extras(keys)

with open(OUT, "w", encoding="utf-8") as f:
    # Sorted by request, so a changed answer shows as one changed line in a diff.
    f.writelines(line + "\n" for line in sorted(lines, key=lambda l: l.split(" ", 3)[3].encode()))
with open(OUT + ".headers", "w", encoding="utf-8") as f:
    f.writelines(line + "\n" for line in sorted(header_lines, key=lambda l: l.encode()))
statuses = {}
for line in lines:
    statuses[line.split(" ", 1)[0]] = statuses.get(line.split(" ", 1)[0], 0) + 1
summary = ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items()))
print(f"{MODE}: {len(keys)} titles, {len(lines)} requests ({summary}) -> {OUT}", file=sys.stderr)
PY
}

# free_port: a port nothing listens on now (asked of the kernel).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

run() {
  local mode=$1 bin=$2 fixtures=$3 out=$4 port pid args=()
  [ -x "$bin" ] || { echo "snapshot_outputs.sh: $bin is not an executable" >&2; exit 2; }
  mapfile -t args < <(flags "$mode")
  port=$(free_port)
  "$bin" serve --root "$fixtures" --listen "127.0.0.1:$port" "${args[@]}" >"$out.log" 2>&1 &
  pid=$!
  # shellcheck disable=SC2064 # the pid is meant to be fixed now
  trap "kill $pid 2>/dev/null || true" EXIT
  for _ in $(seq 200); do
    curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break
    kill -0 "$pid" 2>/dev/null || { echo "snapshot_outputs.sh: vodpack exited; see $out.log" >&2; exit 1; }
    sleep 0.05
  done
  crawl "$mode" "http://127.0.0.1:$port" "$fixtures" "$out"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  trap - EXIT
}

case ${1:-} in
  modes) printf '%s\n' "${MODES[@]}" ;;
  flags) [ $# -eq 2 ] || usage; flags "$2" ;;
  crawl) [ $# -eq 5 ] || usage; crawl "$2" "$3" "$4" "$5" ;;
  run) [ $# -eq 5 ] || usage; run "$2" "$3" "$4" "$5" ;;
  *) usage ;;
esac
