package dashboard

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed assets/*
var assetFS embed.FS

// asset is one embedded file, served under a name that carries a hash of
// its content: a new build's file has a new name, so browsers may cache
// every name for good.
type asset struct {
	body        []byte
	contentType string
}

var (
	assets     = map[string]asset{}  // hashed name → file
	assetNames = map[string]string{} // plain name → hashed name
)

func init() {
	entries, err := fs.ReadDir(assetFS, "assets")
	if err != nil {
		panic(err) // embedded at build time: cannot fail
	}
	for _, e := range entries {
		body, err := assetFS.ReadFile("assets/" + e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(body)
		ext := path.Ext(e.Name())
		hashed := strings.TrimSuffix(e.Name(), ext) + "." + hex.EncodeToString(sum[:6]) + ext
		assets[hashed] = asset{body: body, contentType: mime.TypeByExtension(ext)}
		assetNames[e.Name()] = hashed
	}
}

// assetPath is the URL of an embedded file by its plain name; templates
// call it as {{asset "dashboard.css"}}.
func assetPath(name string) string {
	hashed, ok := assetNames[name]
	if !ok {
		panic("dashboard: no asset " + name) // a template names a file that is not embedded
	}
	return Prefix + "assets/" + hashed
}

func serveAsset() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := assets[r.PathValue("name")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", a.contentType)
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		_, _ = w.Write(a.body)
	})
}
