#!/bin/sh
# Extracts the GitHub webhook payloads that quorum's intake tests drive the
# real handler with, from the npm package @octokit/webhooks-examples (MIT),
# into internal/github/intake/testdata/, with the package's licence notice.
#
#   scripts/webhook-examples/extract.sh
#
# Needs node and npm. The package is installed into a temporary directory,
# never into the repository.
set -eu

version=7.6.1
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/internal/github/intake/testdata
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$tmp" && npm install --silent --no-save --no-audit --no-fund --ignore-scripts "@octokit/webhooks-examples@$version" >/dev/null)
mkdir -p "$out"
node "$root/scripts/webhook-examples/extract.mjs" \
	"$tmp/node_modules/@octokit/webhooks-examples" "$out" "$version"
