package main

import (
	"fmt"
	"strings"
)

// The other languages of the --polyglot repository: a Python tool, a
// TypeScript front end, a deploy script and a Dockerfile, each with plain
// code at base; the change adds functions to each, with one planted
// problem per analyzer.

var (
	pyFields = []string{"price", "quantity", "weight", "discount", "tax", "shipping", "refund", "credit", "points", "fee", "margin", "stock", "returns", "bonus", "deposit", "rent", "tip", "duty", "levy", "toll"}
	tsFields = []string{"total", "count", "width", "height", "offset", "limit", "score", "rank", "size", "delay", "retries", "depth"}
	shDirs   = []string{"assets", "config", "logs", "uploads", "reports", "cache", "media", "exports"}
)

func pyFunc(field string) string {
	return fmt.Sprintf(`def total_%[1]s(rows):
    """Sum the %[1]s column of rows, skipping the rows without one."""
    out = 0
    for row in rows:
        if row.get("%[1]s") is None:
            continue
        out += int(row["%[1]s"])
    return out

`, field)
}

func tsFunc(field string) string {
	name := strings.ToUpper(field[:1]) + field[1:]
	return fmt.Sprintf(`export function sum%[2]s(items: Item[]): number {
  let sum = 0;
  for (const it of items) {
    if (it.%[1]s === undefined) {
      continue;
    }
    sum += it.%[1]s;
  }
  return sum;
}

`, field, name)
}

func shFunc(dir string) string {
	return fmt.Sprintf(`backup_%[1]s() {
  local src="$1"
  local dest="$2"
  mkdir -p "$dest/%[1]s"
  cp -r "$src/%[1]s/." "$dest/%[1]s/"
}

`, dir)
}

// addOthers adds the base's files of the other languages.
func addOthers(base map[string]string) {
	var py, ts, sh strings.Builder
	py.WriteString("\"\"\"Reports over exported order rows.\"\"\"\n\nimport sqlite3\n\n\n")
	for _, f := range pyFields[:6] {
		py.WriteString(pyFunc(f) + "\n")
	}
	py.WriteString("def orders(db: sqlite3.Connection, customer):\n    return db.execute(\"SELECT * FROM orders WHERE customer = ?\", (customer,)).fetchall()\n")
	base["tools/report.py"] = py.String()

	ts.WriteString("export interface Item {\n")
	for _, f := range tsFields {
		fmt.Fprintf(&ts, "  %s?: number;\n", f)
	}
	ts.WriteString("}\n\n")
	for _, f := range tsFields[:4] {
		ts.WriteString(tsFunc(f))
	}
	base["web/src/cart.ts"] = ts.String()

	sh.WriteString("#!/bin/sh\nset -eu\n\n")
	for _, d := range shDirs[:3] {
		sh.WriteString(shFunc(d))
	}
	sh.WriteString("main() {\n  backup_assets \"$1\" \"$2\"\n}\n\nmain \"$@\"\n")
	base["scripts/backup.sh"] = sh.String()

	base["Dockerfile"] = "FROM debian:12-slim\nRUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/*\nCOPY quorum /usr/local/bin/quorum\nUSER 65532\nENTRYPOINT [\"/usr/local/bin/quorum\"]\n"
}

// changeOthers adds functions to each file of the other languages, and a
// planted problem for each analyzer.
func (r *repo) changeOthers() {
	py := r.head["tools/report.py"]
	for _, f := range pyFields[6:] {
		py += "\n" + pyFunc(f)
	}
	py += `

def orders_named(db: sqlite3.Connection, name):
    return db.execute("SELECT * FROM orders WHERE name = '%s'" % name).fetchall()


def collect(row, into=[]):
    into.append(row)
    return into
`
	r.head["tools/report.py"] = py
	r.planted = append(r.planted, plant{"SQL built with % (ruff S608)", "security", "tools/report.py"}, plant{"mutable default argument (ruff B006)", "logic", "tools/report.py"})

	ts := r.head["web/src/cart.ts"]
	for _, f := range tsFields[4:] {
		ts += tsFunc(f)
	}
	ts += `export function average(items: Item[]): number {
  const avg = sumTotal(items) / items.length;
  if (avg === NaN) {
    return 0;
  }
  return avg;
}
`
	r.head["web/src/cart.ts"] = ts
	r.planted = append(r.planted, plant{"comparison with NaN (oxlint use-isnan)", "logic", "web/src/cart.ts"})

	sh := r.head["scripts/backup.sh"]
	var more strings.Builder
	for _, d := range shDirs[3:] {
		more.WriteString(shFunc(d))
	}
	more.WriteString(`prune() {
  cd "$1"
  rm -rf $1/tmp
}

`)
	sh = strings.Replace(sh, "main() {\n", more.String()+"main() {\n", 1)
	r.head["scripts/backup.sh"] = sh
	r.planted = append(r.planted, plant{"cd that can fail (shellcheck SC2164)", "logic", "scripts/backup.sh"})

	r.head["Dockerfile"] = strings.Replace(r.head["Dockerfile"], "COPY quorum", "RUN curl -fsSL https://example.com/install-tools.sh | sh\nCOPY quorum", 1)
	r.planted = append(r.planted, plant{"download piped to sh (hadolint DL4006)", "security", "Dockerfile"})
}
