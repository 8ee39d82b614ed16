#!/bin/sh
# Fetches the released source of one package into DIR/NAME-VERSION, once per
# machine (make heldout-check calls it only when that directory is missing).
#   eval/heldout/fetch.sh KIND NAME VERSION DIR
# KIND is the registry, each used through its ordinary client:
#   pypi    the sdist, with pip download
#   npm     the published tarball, with npm pack
#   crates  the published Rust crate, with cargo vendor in a throwaway project
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
  mv "$tmp/$name-$ver" "$dest"
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
*)
  echo "fetch.sh: unknown registry '$kind' (pypi, npm or crates)" >&2
  exit 2
  ;;
esac
echo "fetched $kind $name $ver into $dest"
