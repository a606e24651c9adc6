// Writes selected examples of @octokit/webhooks-examples to testdata, one
// payload per file named <event>.<action>.json, byte for byte as the package
// has them (re-indented), plus NOTICE with the package's licence.
//
//   node extract.mjs <package dir> <out dir> <version>
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [pkgDir, outDir, version] = process.argv.slice(2);
const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
const all = JSON.parse(readFileSync(join(pkgDir, "api.github.com", "index.json"), "utf8"));
const byName = Object.fromEntries(all.map((e) => [e.name, e.examples]));

// [event, action, predicate]: the first example of the event with that
// action (and, where given, matching the predicate) is taken.
const wanted = [
  ["installation", "created"],
  ["installation", "deleted"],
  ["installation", "suspend"],
  ["installation", "unsuspend"],
  ["installation_repositories", "added"],
  ["installation_repositories", "removed"],
  ["pull_request", "opened", (e) => e.installation],
  ["pull_request", "synchronize", (e) => e.installation],
  ["pull_request", "reopened", (e) => e.installation],
  ["pull_request", "ready_for_review", (e) => e.installation],
  ["pull_request", "closed", (e) => e.installation],
  ["pull_request", "converted_to_draft", (e) => e.installation],
  ["pull_request", "labeled", (e) => e.installation],
  ["issue_comment", "created", (e) => e.installation],
  ["ping", undefined],
];

for (const [event, action, pred] of wanted) {
  const ex = (byName[event] || []).find((e) => e.action === action && (!pred || pred(e)));
  if (!ex) throw new Error(`no example of ${event} ${action}`);
  const file = action ? `${event}.${action}.json` : `${event}.json`;
  writeFileSync(join(outDir, file), JSON.stringify(ex, null, 2) + "\n");
  console.log(file);
}

writeFileSync(
  join(outDir, "NOTICE"),
  `The *.json files in this directory are webhook payload examples taken
unchanged (re-indented) from the npm package ${pkg.name}@${version}
(${pkg.repository}, https://github.com/octokit/webhooks), extracted by
scripts/webhook-examples/extract.sh. The package's licence is ${pkg.license}:

MIT License

Copyright (c) Octokit contributors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
`,
);
