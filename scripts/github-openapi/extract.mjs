// Extracts the part of GitHub's official REST description (npm
// @octokit/openapi, generated/api.github.com.json) that quorum uses, with
// every component it references, into
// internal/github/githubtest/testdata/api.github.com.json, which the GitHub
// double validates requests and responses against.
//
// Usage: node scripts/github-openapi/extract.mjs [version]
// It installs the package into a temporary directory; nothing is added to
// the repository but the extract and, beside it, the package's MIT licence
// (LICENSE.octokit-openapi).
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const version = process.argv[2] || "23.0.2";
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const out = join(root, "internal/github/githubtest/testdata/api.github.com.json");

// The operations quorum sends (method, path), and those the double serves
// to the intake.
const used = {
  "/app/installations/{installation_id}/access_tokens": ["post"],
  "/app/installations/{installation_id}": ["get"],
  "/app": ["get"],
  "/installation/repositories": ["get"],
  "/repos/{owner}/{repo}/pulls/{pull_number}": ["get"],
  "/repos/{owner}/{repo}/pulls/{pull_number}/files": ["get"],
  "/repos/{owner}/{repo}/compare/{basehead}": ["get"],
  "/repos/{owner}/{repo}/pulls/{pull_number}/reviews": ["get", "post"],
  "/repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}": ["delete"],
  "/repos/{owner}/{repo}/pulls/{pull_number}/comments": ["get", "post"],
  "/repos/{owner}/{repo}/issues/{issue_number}/comments": ["get", "post"],
  "/repos/{owner}/{repo}/collaborators/{username}/permission": ["get"],
  "/repos/{owner}/{repo}/check-runs": ["post"],
  "/repos/{owner}/{repo}/check-runs/{check_run_id}": ["patch"],
};

const dir = mkdtempSync(join(tmpdir(), "octokit-openapi-"));
try {
  execFileSync("npm", ["install", "--silent", "--no-audit", "--no-fund", "--prefix", dir, `@octokit/openapi@${version}`], { stdio: "inherit" });
  const spec = JSON.parse(readFileSync(join(dir, "node_modules/@octokit/openapi/generated/api.github.com.json"), "utf8"));

  const paths = {};
  for (const [path, methods] of Object.entries(used)) {
    const item = spec.paths[path];
    if (!item) throw new Error(`${path} is not in the description`);
    paths[path] = {};
    if (item.parameters) paths[path].parameters = item.parameters;
    for (const m of methods) {
      if (!item[m]) throw new Error(`${m.toUpperCase()} ${path} is not in the description`);
      paths[path][m] = item[m];
    }
  }

  // Keep every component reachable from the kept paths.
  const components = {};
  const seen = new Set();
  const walk = (node) => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== "object") return;
    for (const [k, v] of Object.entries(node)) {
      if (k === "$ref" && typeof v === "string" && v.startsWith("#/components/")) {
        if (seen.has(v)) continue;
        seen.add(v);
        const [, , kind, name] = v.split("/");
        const target = spec.components[kind][name];
        (components[kind] ??= {})[name] = target;
        walk(target);
      } else {
        walk(v);
      }
    }
  };
  walk(paths);

  const subset = {
    openapi: spec.openapi,
    info: { ...spec.info, description: `Subset of @octokit/openapi@${version} generated/api.github.com.json (MIT), extracted by scripts/github-openapi/extract.mjs.` },
    servers: spec.servers,
    paths,
    components,
  };
  writeFileSync(out, JSON.stringify(subset, null, 1) + "\n");
  copyFileSync(join(dir, "node_modules/@octokit/openapi/LICENSE"), join(dirname(out), "LICENSE.octokit-openapi"));
  console.log(`wrote ${out}: ${Object.keys(paths).length} paths, ${seen.size} components`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
