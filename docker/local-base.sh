#!/bin/sh
# Makes the two base images docker/Dockerfile starts from, without a
# container registry: debian:bookworm-slim from Debian's own archive
# (debootstrap), and node:20-bookworm-slim as that plus this machine's Node 20
# and npm, laid out as the official image lays them out. For machines that
# reach Debian's archive and npm but no container registry; with one, pull
# the official images instead. Needs root, debootstrap and podman (or buildah).
#   sudo docker/local-base.sh            # then: podman build --format docker -f docker/Dockerfile -t execmux .
set -eu
suite=bookworm
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"

node_binary=$(command -v node)
case "$("$node_binary" --version)" in v20.*) ;; *) echo "local-base.sh: needs Node 20 on PATH, found $("$node_binary" --version)" >&2; exit 1 ;; esac
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
# Node's headers, for node-gyp: where the official image has them, since node-gyp would
# otherwise download them from nodejs.org.
headers=$(dirname "$(dirname "$node_binary")")/include/node
[ -r "$headers/node.h" ] || { echo "local-base.sh: no Node headers at $headers (Debian: they come with the nodejs package)" >&2; exit 1; }

debootstrap --variant=minbase "$suite" "$root" "$mirror"
# What debian:*-slim leaves out: documentation, manuals, locales, apt's caches.
cat > "$root/etc/dpkg/dpkg.cfg.d/docker-slim" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
CFG
# And, as there, apt keeps no downloaded package once it is installed.
cat > "$root/etc/apt/apt.conf.d/docker-clean" <<'CFG'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CFG
find "$root/usr/share/doc" -mindepth 2 ! -name copyright -delete 2>/dev/null || true
rm -rf "$root/usr/share/man"/* "$root/usr/share/info"/* "$root/var/lib/apt/lists"/* "$root/var/cache/apt"/*.bin "$root/var/cache/apt/archives"/*.deb
find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
tar -C "$root" -c . | podman import --change 'CMD ["bash"]' - localhost/debian:bookworm-slim

install -m 0755 "$node_binary" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/lib/node_modules"
cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
mkdir -p "$root/usr/local/include"
cp -a "$headers" "$root/usr/local/include/node"
chroot "$root" groupadd --gid 1000 node
chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
# This machine's trusted certificates too, so npm inside a build trusts what it trusts here
# (a TLS-inspecting proxy's CA, say); Node reads them through NODE_EXTRA_CA_CERTS.
set -- --change 'CMD ["node"]' --change 'ENV npm_config_nodedir=/usr/local'
if [ -r /etc/ssl/certs/ca-certificates.crt ]; then
  mkdir -p "$root/etc/ssl/certs"
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
  set -- "$@" --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt'
fi
tar -C "$root" -c . | podman import "$@" - localhost/node:20-bookworm-slim
podman images --filter reference=localhost/debian --filter reference=localhost/node
