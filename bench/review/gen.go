package main

import (
	"fmt"
	"go/format"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// The generated repository: one module, standard library only, packages in
// layers, each importing one or two packages of lower layers.
const modulePath = "example.com/shop"

var layers = [][]string{
	{"textutil", "mathx", "clock", "ids"},
	{"cache", "config", "metrics", "queue"},
	{"store", "auth", "events", "search"},
	{"billing", "catalog", "orders", "users"},
	{"api", "jobs", "report", "notify"},
}

const (
	srcFilesPerPkg  = 8
	testFilesPerPkg = 2
)

var nouns = []string{"Item", "Entry", "Record", "Account", "Batch", "Slot", "Ticket", "Rule", "Order", "Line", "Token", "Event", "Job", "Report", "Note", "Quota"}

type pkg struct {
	name string
	deps []string
	// types[i] is the type defined by source file i.
	types []string
}

// repo is the generated tree: path → contents, at base and at head.
type repo struct {
	base map[string]string
	head map[string]string
	pkgs []*pkg
	// planted are the problems planted in the change.
	planted []plant
}

// plant is a problem planted in the change, and the specialist that
// should find it.
type plant struct {
	what, specialist, path string
}

func pkgDir(name string) string { return "internal/" + name }

// generate builds the base tree and the change, deterministically from seed.
func generate(seed uint64) *repo { return generateWith(seed, false) }

// generateWith generates the repository; with polyglot the change edits
// four Go packages (and one test file) instead of sixteen (and four) and
// also Python, TypeScript, shell and a Dockerfile (polyglot.go).
func generateWith(seed uint64, polyglot bool) *repo {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	r := &repo{base: map[string]string{}, head: map[string]string{}}
	for li, layer := range layers {
		for _, name := range layer {
			p := &pkg{name: name}
			if li > 0 {
				below := slices.Concat(layers[:li]...)
				n := 1 + rng.IntN(2)
				for _, i := range rng.Perm(len(below))[:n] {
					p.deps = append(p.deps, below[i])
				}
				slices.Sort(p.deps)
			}
			perm := rng.Perm(len(nouns))
			for i := range srcFilesPerPkg {
				p.types = append(p.types, nouns[perm[i]])
			}
			r.pkgs = append(r.pkgs, p)
		}
	}
	r.base["go.mod"] = "module " + modulePath + "\n\ngo 1.24\n"
	r.base["README.md"] = "# shop\n\nA generated repository for quorum's review benchmark.\n"
	for _, p := range r.pkgs {
		for i, typ := range p.types {
			r.base[srcPath(p, i)] = goSource(p, i, srcFile(rng, p, i, typ))
		}
		for t := range testFilesPerPkg {
			r.base[testPath(p, t)] = goSource(p, -1, testFile(rng, p, t))
		}
	}
	if polyglot {
		addOthers(r.base)
	}
	for k, v := range r.base {
		r.head[k] = v
	}
	if polyglot {
		r.change(rng, []string{"store", "users", "search", "jobs"}, []string{"mathx"})
		r.changeOthers()
	} else {
		r.change(rng, allSrcPkgs, allTestPkgs)
	}
	return r
}

func srcPath(p *pkg, i int) string {
	return fmt.Sprintf("%s/%s.go", pkgDir(p.name), strings.ToLower(p.types[i]))
}

func testPath(p *pkg, t int) string {
	return fmt.Sprintf("%s/%s_test.go", pkgDir(p.name), strings.ToLower(p.types[t]))
}

var stdImports = []string{"bufio", "bytes", "context", "database/sql", "encoding/json", "errors", "fmt", "io", "regexp", "sort", "strconv", "strings", "sync", "testing", "time", "unicode"}

// goSource adds the package clause and the imports the body uses, and
// formats the file. file is the source file's index (its doc comment goes
// on file 0), -1 for a test file.
func goSource(p *pkg, file int, body string) string {
	var b strings.Builder
	if file == 0 {
		fmt.Fprintf(&b, "// Package %s is part of the shop service.\n", p.name)
	}
	fmt.Fprintf(&b, "package %s\n\nimport (\n", p.name)
	for _, imp := range stdImports {
		base := imp[strings.LastIndex(imp, "/")+1:]
		if regexp.MustCompile(`\b` + base + `\.`).MatchString(body) {
			fmt.Fprintf(&b, "\t%q\n", imp)
		}
	}
	first := true
	for _, d := range p.deps {
		if regexp.MustCompile(`\b` + d + `\.`).MatchString(body) {
			if first {
				b.WriteString("\n")
				first = false
			}
			fmt.Fprintf(&b, "\t%q\n", modulePath+"/"+pkgDir(d))
		}
	}
	b.WriteString(")\n\n")
	b.WriteString(body)
	out, err := format.Source([]byte(b.String()))
	if err != nil {
		panic(fmt.Sprintf("generated %s is not Go: %v\n%s", p.name, err, b.String()))
	}
	return string(out)
}

// keyCall is an expression normalising the string expression s, through a
// dependency when the package has one.
func keyCall(p *pkg, s string) string {
	if len(p.deps) == 0 {
		return "strings.ToLower(strings.TrimSpace(" + s + "))"
	}
	return p.deps[0] + ".Key(" + s + ")"
}

func srcFile(rng *rand.Rand, p *pkg, i int, T string) string {
	var b strings.Builder
	if i == 0 {
		fmt.Fprintf(&b, `// Key normalises a name for use as a map key.
func Key(s string) string {
	s = strings.TrimSpace(s)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		case r == ' ' || r == '-' || r == '_':
			b.WriteByte('-')
		}
	}
	return b.String()
}

`)
	}
	fmt.Fprintf(&b, `// %[1]s is a %[2]s %[3]s.
type %[1]s struct {
	ID      int
	Name    string
	Tags    []string
	Weight  float64
	Created time.Time
}

var err%[1]sEmpty = errors.New("%[2]s: empty %[3]s name")

// New%[1]s returns a %[3]s with a normalised name.
func New%[1]s(id int, name string, tags ...string) (*%[1]s, error) {
	if strings.TrimSpace(name) == "" {
		return nil, err%[1]sEmpty
	}
	return &%[1]s{ID: id, Name: %[4]s, Tags: tags, Created: time.Unix(int64(id)*3600, 0).UTC()}, nil
}

// String describes the %[3]s.
func (x *%[1]s) String() string {
	return fmt.Sprintf("%[3]s(%%d, %%q, %%d tags)", x.ID, x.Name, len(x.Tags))
}

// HasTag reports whether the %[3]s carries tag.
func (x *%[1]s) HasTag(tag string) bool {
	for _, t := range x.Tags {
		if t == tag {
			return true
		}
	}
	return false
}

// Parse%[1]s parses "id,name[,tag...]".
func Parse%[1]s(s string) (*%[1]s, error) {
	parts := strings.Split(s, ",")
	if len(parts) < 2 {
		return nil, fmt.Errorf("%[2]s: parse %[3]s %%q: want id,name", s)
	}
	id, err := strconv.Atoi(strings.TrimSpace(parts[0]))
	if err != nil {
		return nil, fmt.Errorf("%[2]s: parse %[3]s id: %%w", err)
	}
	return New%[1]s(id, parts[1], parts[2:]...)
}

// Sort%[1]ss sorts by name, then by id.
func Sort%[1]ss(xs []*%[1]s) {
	sort.Slice(xs, func(i, j int) bool {
		if xs[i].Name != xs[j].Name {
			return xs[i].Name < xs[j].Name
		}
		return xs[i].ID < xs[j].ID
	})
}
`, T, p.name, strings.ToLower(T), keyCall(p, "name"))
	extras := rng.Perm(len(extraTemplates))[:3+rng.IntN(3)]
	slices.Sort(extras)
	for _, e := range extras {
		b.WriteString("\n")
		b.WriteString(extraTemplates[e](p, T))
	}
	return b.String()
}

// extraTemplates are further declarations of a source file about type T.
var extraTemplates = []func(p *pkg, T string) string{
	func(p *pkg, T string) string {
		return fmt.Sprintf(`// Total%[1]sWeight sums the weights of xs, skipping negative ones.
func Total%[1]sWeight(xs []*%[1]s) float64 {
	var sum float64
	for _, x := range xs {
		if x.Weight < 0 {
			continue
		}
		sum += x.Weight
	}
	return sum
}
`, T)
	},
	func(p *pkg, T string) string {
		return fmt.Sprintf(`// Group%[1]ssByTag groups xs by each of their tags.
func Group%[1]ssByTag(xs []*%[1]s) map[string][]*%[1]s {
	out := make(map[string][]*%[1]s)
	for _, x := range xs {
		for _, t := range x.Tags {
			out[t] = append(out[t], x)
		}
	}
	return out
}
`, T)
	},
	func(p *pkg, T string) string {
		return fmt.Sprintf(`// %[1]sIndex is a concurrency-safe index of %[2]ss by name.
type %[1]sIndex struct {
	mu     sync.RWMutex
	byName map[string]*%[1]s
}

// Put stores x, replacing a %[2]s of the same name.
func (ix *%[1]sIndex) Put(x *%[1]s) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.byName == nil {
		ix.byName = make(map[string]*%[1]s)
	}
	ix.byName[x.Name] = x
}

// Get returns the %[2]s named name.
func (ix *%[1]sIndex) Get(name string) (*%[1]s, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	x, ok := ix.byName[%[3]s]
	return x, ok
}

// Len returns how many %[2]ss the index holds.
func (ix *%[1]sIndex) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.byName)
}
`, T, strings.ToLower(T), keyCall(p, "name"))
	},
	func(p *pkg, T string) string {
		return fmt.Sprintf(`// Watch%[1]ss calls fn for each %[2]s received until ctx is done or in
// is closed.
func Watch%[1]ss(ctx context.Context, in <-chan *%[1]s, fn func(*%[1]s) error) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case x, ok := <-in:
			if !ok {
				return nil
			}
			if err := fn(x); err != nil {
				return fmt.Errorf("watch %[2]s %%d: %%w", x.ID, err)
			}
		}
	}
}
`, T, strings.ToLower(T))
	},
	func(p *pkg, T string) string {
		return fmt.Sprintf(`// Format%[1]ss writes one line per %[2]s.
func Format%[1]ss(xs []*%[1]s) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strconv.Itoa(x.ID))
		b.WriteByte('\t')
		b.WriteString(x.Name)
		if len(x.Tags) > 0 {
			b.WriteString("\t[" + strings.Join(x.Tags, " ") + "]")
		}
	}
	return b.String()
}
`, T, strings.ToLower(T))
	},
	func(p *pkg, T string) string {
		return fmt.Sprintf(`// Read%[1]ss reads one %[2]s per non-empty line of r.
func Read%[1]ss(r io.Reader) ([]*%[1]s, error) {
	var out []*%[1]s
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		x, err := Parse%[1]s(string(line))
		if err != nil {
			return nil, fmt.Errorf("line %%d: %%w", n, err)
		}
		out = append(out, x)
	}
	return out, sc.Err()
}
`, T, strings.ToLower(T))
	},
	func(p *pkg, T string) string {
		return fmt.Sprintf(`// Marshal%[1]s encodes x as JSON with a schema version.
func Marshal%[1]s(x *%[1]s) ([]byte, error) {
	return json.Marshal(struct {
		Version int    `+"`json:\"v\"`"+`
		ID      int    `+"`json:\"id\"`"+`
		Name    string `+"`json:\"name\"`"+`
	}{1, x.ID, x.Name})
}

// Unmarshal%[1]s decodes what Marshal%[1]s encodes.
func Unmarshal%[1]s(b []byte) (*%[1]s, error) {
	var v struct {
		Version int    `+"`json:\"v\"`"+`
		ID      int    `+"`json:\"id\"`"+`
		Name    string `+"`json:\"name\"`"+`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	if v.Version != 1 {
		return nil, fmt.Errorf("%[2]s: version %%d", v.Version)
	}
	return New%[1]s(v.ID, v.Name)
}
`, T, p.name)
	},
	func(p *pkg, T string) string {
		return fmt.Sprintf(`// Expired%[1]ss returns the %[2]ss created before now minus age.
func Expired%[1]ss(xs []*%[1]s, now time.Time, age time.Duration) []*%[1]s {
	cutoff := now.Add(-age)
	var out []*%[1]s
	for _, x := range xs {
		if x.Created.Before(cutoff) {
			out = append(out, x)
		}
	}
	return out
}
`, T, strings.ToLower(T))
	},
}

func testFile(rng *rand.Rand, p *pkg, t int) string {
	T := p.types[t]
	return fmt.Sprintf(`func TestParse%[1]s(t *testing.T) {
	for _, tc := range []struct {
		in      string
		wantErr bool
	}{
		{"1,alpha", false},
		{"2, Beta ,x,y", false},
		{"x,alpha", true},
		{"3", true},
		{"4, ", true},
	} {
		_, err := Parse%[1]s(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("Parse%[1]s(%%q): err = %%v, want error %%v", tc.in, err, tc.wantErr)
		}
	}
}

func TestSort%[1]ss(t *testing.T) {
	var xs []*%[1]s
	for i := range %[2]d {
		x, err := New%[1]s(i, strconv.Itoa(%[2]d-i))
		if err != nil {
			t.Fatal(err)
		}
		xs = append(xs, x)
	}
	Sort%[1]ss(xs)
	for i := 1; i < len(xs); i++ {
		if xs[i-1].Name > xs[i].Name {
			t.Fatalf("not sorted at %%d: %%v", i, xs)
		}
	}
}

func Test%[1]sHasTag(t *testing.T) {
	x, err := New%[1]s(7, "seven", "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	if !x.HasTag("a") || x.HasTag("c") {
		t.Errorf("HasTag: %%v", x)
	}
}
`, T, 5+rng.IntN(20))
}

// allSrcPkgs are the 16 packages the Go change edits a source file of,
// allTestPkgs the 4 it adds tests to (the first with a skip).
var (
	allSrcPkgs  = []string{"textutil", "clock", "cache", "config", "metrics", "queue", "store", "auth", "events", "search", "billing", "orders", "users", "api", "jobs", "report"}
	allTestPkgs = []string{"mathx", "ids", "catalog", "notify"}
)

// The change: new functions and edited lines in a source file of each of
// srcPkgs, new tests in a test file of each of testPkgs, with planted
// problems for each specialist.
func (r *repo) change(rng *rand.Rand, srcPkgs, testPkgs []string) {
	byName := map[string]*pkg{}
	for _, p := range r.pkgs {
		byName[p.name] = p
	}
	planted := map[string]struct {
		gen              func(p *pkg, T string) string
		what, specialist string
	}{
		"store":  {plantLostCancel, "lost cancel", "logic"},
		"users":  {plantSQLFormat, "fmt.Sprintf into db.Query", "security"},
		"search": {plantRegexpInLoop, "regexp.MustCompile in a loop", "performance"},
		"jobs":   {plantDeferInLoop, "defer in a loop", "performance"},
		"report": {plantConcatInLoop, "string += in a loop", "performance"},
	}
	for _, name := range srcPkgs {
		p := byName[name]
		i := rng.IntN(srcFilesPerPkg)
		T := p.types[i]
		path := srcPath(p, i)
		body := stripHeader(r.base[path])
		// Edits: the parse error message and the creation time.
		body = strings.Replace(body, ": want id,name\"", ": want id,name[,tag...]\"", 1)
		body = strings.Replace(body, "time.Unix(int64(id)*3600, 0).UTC()", "time.Unix(int64(id)*60, 0).UTC()", 1)
		body = strings.Replace(body, "return nil, err"+T+"Empty", "return nil, fmt.Errorf(\"%w (id %d)\", err"+T+"Empty, id)", 1)
		body += "\n" + newFunc(p, T)
		if pl, ok := planted[name]; ok {
			body += "\n" + pl.gen(p, T)
			r.planted = append(r.planted, plant{pl.what, pl.specialist, path})
		}
		r.head[path] = goSource(p, i, body)
	}
	// A test file in each of four packages gets new tests; one adds a skip.
	for k, name := range testPkgs {
		p := byName[name]
		t := rng.IntN(testFilesPerPkg)
		path := testPath(p, t)
		body := stripHeader(r.base[path]) + "\n" + newTest(p, p.types[t], k == 0)
		r.head[path] = goSource(p, -1, body)
		if k == 0 {
			r.planted = append(r.planted, plant{"added t.Skip", "tests", path})
		}
	}
}

// stripHeader drops the package clause and imports of a generated file.
func stripHeader(src string) string {
	_, body, ok := strings.Cut(src, "\n)\n\n")
	if !ok {
		panic("no import block")
	}
	return body
}

func newFunc(p *pkg, T string) string {
	return fmt.Sprintf(`// Heaviest%[1]ss returns the n heaviest %[2]ss, heaviest first; xs is
// not modified.
func Heaviest%[1]ss(xs []*%[1]s, n int) []*%[1]s {
	out := append([]*%[1]s(nil), xs...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Weight != out[j].Weight {
			return out[i].Weight > out[j].Weight
		}
		return %[3]s < %[4]s
	})
	if n < len(out) {
		out = out[:n]
	}
	return out
}
`, T, strings.ToLower(T), keyCall(p, "out[i].Name"), keyCall(p, "out[j].Name"))
}

func plantLostCancel(p *pkg, T string) string {
	return fmt.Sprintf(`// Fetch%[1]s looks a %[2]s up with a deadline.
func Fetch%[1]s(ctx context.Context, load func(context.Context, string) (*%[1]s, error), name string) (*%[1]s, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	if name == "" {
		return nil, err%[1]sEmpty
	}
	x, err := load(ctx, name)
	cancel()
	return x, err
}
`, T, strings.ToLower(T))
}

func plantSQLFormat(p *pkg, T string) string {
	return fmt.Sprintf(`// Find%[1]ss returns the %[2]ss whose name starts with prefix.
func Find%[1]ss(ctx context.Context, db *sql.DB, prefix string) ([]*%[1]s, error) {
	q := fmt.Sprintf("SELECT id, name FROM %[2]ss WHERE name LIKE '%%s%%%%'", prefix)
	rows, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*%[1]s
	for rows.Next() {
		var x %[1]s
		if err := rows.Scan(&x.ID, &x.Name); err != nil {
			return nil, err
		}
		out = append(out, &x)
	}
	return out, rows.Err()
}
`, T, strings.ToLower(T))
}

func plantRegexpInLoop(p *pkg, T string) string {
	return fmt.Sprintf(`// Match%[1]ss returns the %[2]ss whose name matches any of the patterns.
func Match%[1]ss(xs []*%[1]s, patterns []string) []*%[1]s {
	var out []*%[1]s
	for _, x := range xs {
		for _, pat := range patterns {
			re := regexp.MustCompile(`+"`^[a-z0-9-]+$`"+`)
			if re.MatchString(x.Name) && strings.Contains(x.Name, pat) {
				out = append(out, x)
				break
			}
		}
	}
	return out
}
`, T, strings.ToLower(T))
}

func plantDeferInLoop(p *pkg, T string) string {
	return fmt.Sprintf(`// Apply%[1]ss calls fn on each %[2]s under the lock.
func Apply%[1]ss(mu *sync.Mutex, xs []*%[1]s, fn func(*%[1]s)) {
	for _, x := range xs {
		mu.Lock()
		defer mu.Unlock()
		fn(x)
	}
}
`, T, strings.ToLower(T))
}

func plantConcatInLoop(p *pkg, T string) string {
	return fmt.Sprintf(`// Describe%[1]ss lists the %[2]ss' names, one per line.
func Describe%[1]ss(xs []*%[1]s) string {
	s := ""
	for _, x := range xs {
		s += x.Name + "\n"
	}
	return s
}
`, T, strings.ToLower(T))
}

func newTest(p *pkg, T string, skip bool) string {
	skipLine := ""
	if skip {
		skipLine = "\tt.Skip(\"flaky on CI, see #123\")\n"
	}
	return fmt.Sprintf(`func Test%[1]sString(t *testing.T) {
%[2]s	x, err := New%[1]s(3, "Three Items", "x")
	if err != nil {
		t.Fatal(err)
	}
	got := x.String()
	for _, want := range []string{"3", "1 tags"} {
		if !strings.Contains(got, want) {
			t.Errorf("String() = %%q, want it to contain %%q", got, want)
		}
	}
}

func TestNew%[1]sEmpty(t *testing.T) {
	for _, name := range []string{"", " ", "\t"} {
		if _, err := New%[1]s(1, name); err == nil {
			t.Errorf("New%[1]s(1, %%q): no error", name)
		}
	}
}
`, T, skipLine)
}

// write stores files under dir.
func write(dir string, files map[string]string) error {
	for p, src := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(src), 0o644); err != nil {
			return err
		}
	}
	return nil
}
