#!/bin/sh
# Fetches the released source of one package into DIR/NAME-VERSION, once per
# machine (make heldout-check calls it only when that directory is missing).
#   eval/heldout/fetch.sh KIND NAME VERSION DIR
# KIND is the registry, each used through its ordinary client:
#   pypi    the sdist, with pip download
#   npm     the published tarball, with npm pack
#   crates  the published Rust crate, with cargo vendor in a throwaway project
#   apt     a Debian golang-*-dev package (apt-get download, pinned by its
#           Debian version): the Go sources it ships under /usr/share/gocode/src
set -eu
kind=$1 name=$2 ver=$3 dir=$4
dest=$dir/$name-$ver
mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.fetch-$name-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
case $kind in
pypi)
  python3 -m pip download -q --no-deps --no-binary :all: -d "$tmp" "$name==$ver"
  tar xzf "$tmp"/*.tar.gz -C "$tmp"
  # The sdist's directory keeps the project's own capitalisation (Django-5.2).
  mv "$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -iname "$name-$ver" | head -1)" "$dest"
  ;;
npm)
  command -v npm >/dev/null || {
    apt-get update -q >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends npm
  }
  (cd "$tmp" && npm pack --silent "$name@$ver" >/dev/null)
  tar xzf "$tmp"/*.tgz -C "$tmp"
  mv "$tmp/package" "$dest"
  ;;
crates)
  mkdir -p "$tmp/fetch/src"
  : >"$tmp/fetch/src/lib.rs"
  printf '[package]\nname = "heldout-fetch"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\n%s = { version = "=%s", default-features = false }\n' \
    "$name" "$ver" >"$tmp/fetch/Cargo.toml"
  (cd "$tmp/fetch" && cargo vendor --quiet --versioned-dirs "$tmp/vendor" >/dev/null)
  rm -f "$tmp/vendor/$name-$ver/.cargo-checksum.json"
  mv "$tmp/vendor/$name-$ver" "$dest"
  ;;
apt)
  apt-cache madison "$name" | grep -Eq "[|][[:space:]]*$ver[[:space:]]*[|]" || apt-get update -q >/dev/null 2>&1 || true
  apt-cache madison "$name" | grep -Eq "[|][[:space:]]*$ver[[:space:]]*[|]" || {
    echo "fetch.sh: apt offers no $name=$ver (apt-cache madison $name)" >&2
    exit 2
  }
  chmod 777 "$tmp" # apt drops to its _apt user to write the download
  (cd "$tmp" && apt-get download -q "$name=$ver" >/dev/null)
  dpkg-deb -x "$tmp"/*.deb "$tmp/root"
  src=$(find "$tmp/root/usr/share/gocode/src" -name go.mod -printf '%h\n' | head -1)
  test -n "$src" || {
    echo "fetch.sh: $name ships no Go module under /usr/share/gocode/src" >&2
    exit 2
  }
  mv "$src" "$dest"
  ;;
*)
  echo "fetch.sh: unknown registry '$kind' (pypi, npm, crates or apt)" >&2
  exit 2
  ;;
esac
echo "fetched $kind $name $ver into $dest"
