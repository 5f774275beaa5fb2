#!/usr/bin/env bash
# Prints the path of a valkey-server with compare-and-set (SET ... IFEQ, Valkey 8.1 and later), for the
# tests and benchmarks of the Redis store's script-free completion: valkey-server from the PATH when it is
# 8.1 or later, else one built once from Debian's source of Valkey 8.1.1 (checksum pinned, its bundled
# dependencies, no TLS) into the cache directory, EXACTLY_CACHE or ~/.cache/exactly. Needs curl, tar with
# xz, make and a C compiler; exits 1 with the reason when it cannot provide one.
#   EXACTLY_VALKEY_SERVER="$(scripts/valkey-server.sh)"
set -euo pipefail

version=8.1.1
tarball="valkey_${version}+dfsg1.orig.tar.xz"
url="http://deb.debian.org/debian/pool/main/v/valkey/${tarball}"
sha256=d9bbd82eecb82f359e649a0007ad3dc1b47cc15afa626348ca86b73c4ae2c7ee

fail() { echo "valkey-server: $*" >&2; exit 1; }

# 8.1 or later, from "Server v=8.1.1 sha=..." ("valkey-server --version")
recent() {
  local v
  v=$("$1" --version 2>/dev/null | sed -n 's/.* v=\([0-9][0-9]*\)\.\([0-9][0-9]*\)\..*/\1 \2/p')
  [ -n "$v" ] || return 1
  set -- $v
  [ "$1" -gt 8 ] || { [ "$1" -eq 8 ] && [ "$2" -ge 1 ]; }
}

if command -v valkey-server >/dev/null 2>&1 && recent "$(command -v valkey-server)"; then
  command -v valkey-server
  exit 0
fi

cache="${EXACTLY_CACHE:-${HOME:-/tmp}/.cache/exactly}/valkey-${version}"
binary="$cache/valkey-server"
if [ -x "$binary" ] && recent "$binary"; then
  echo "$binary"
  exit 0
fi

for tool in curl tar xz make cc; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool is needed to build Valkey ${version} (or put valkey-server 8.1+ on the PATH)"
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "building Valkey ${version} from ${url} (once; kept in $cache)" >&2
curl -fsSL --retry 3 -m 300 -o "$work/$tarball" "$url" || fail "could not download $url"
echo "$sha256  $work/$tarball" | sha256sum -c --quiet - >&2 || fail "$tarball does not have the expected SHA-256"
tar -xJf "$work/$tarball" -C "$work"
make -C "$work/valkey-${version}" -j"$(nproc)" BUILD_TLS=no USE_SYSTEMD=no valkey-server >"$work/build.log" 2>&1 \
  || { tail -30 "$work/build.log" >&2; fail "the build of Valkey ${version} failed"; }
mkdir -p "$cache"
install -m 0755 "$work/valkey-${version}/src/valkey-server" "$binary.tmp"
mv "$binary.tmp" "$binary"
recent "$binary" || fail "$binary does not report version 8.1 or later"
echo "$binary"
