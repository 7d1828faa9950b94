#!/usr/bin/env bash
# package.json's "version" script: after `npm version <x.y.z>` has set the root's version,
# the platform packages take it (`napi version`), the root's optionalDependencies on them
# and the lockfile follow, and the files are staged for npm's version commit.
set -euo pipefail
cd "$(dirname "$0")/.."
npx napi version
node -e '
  const fs = require("fs")
  const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"))
  for (const name of Object.keys(pkg.optionalDependencies)) pkg.optionalDependencies[name] = pkg.version
  fs.writeFileSync("package.json", JSON.stringify(pkg, null, 2) + "\n")'
npm install --package-lock-only --ignore-scripts --no-audit --no-fund --loglevel=error
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git add package.json package-lock.json npm/*/package.json
fi
