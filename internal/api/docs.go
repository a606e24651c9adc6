package api

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"sync"
	"time"

	"github.com/quorum-review/quorum/api"
	"go.yaml.in/yaml/v3"
)

// OpenAPIJSON returns the API's OpenAPI document (api/openapi.yaml) as
// JSON: a copy of the one converted once per process (every API server,
// and every test that makes one, asked; converting the 83 kB of YAML
// takes 10 ms of CPU, 94 ms under the race detector).
func OpenAPIJSON() ([]byte, error) {
	b, err := openAPIJSON()
	return bytes.Clone(b), err
}

var openAPIJSON = sync.OnceValues(func() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(api.OpenAPIYAML, &doc); err != nil {
		return nil, fmt.Errorf("parse openapi.yaml: %w", err)
	}
	out, err := json.Marshal(stringKeys(doc))
	if err != nil {
		return nil, fmt.Errorf("encode openapi.json: %w", err)
	}
	return out, nil
})

// stringKeys turns YAML's map[any]any (status codes are integer keys) into
// JSON-encodable maps.
func stringKeys(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = stringKeys(e)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = stringKeys(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = stringKeys(e)
		}
		return t
	}
	return v
}

func (s *Server) serveOpenAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Write(s.openapi)
	})
}

type healthStatus struct {
	Status  string `json:"status"`
	Version string `json:"version,omitempty"`
}

func (s *Server) healthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, healthStatus{Status: "ok", Version: s.cfg.Version})
	})
}

// readyz answers 200 when the database answers and its schema is the one
// this binary knows.
func (s *Server) readyz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.db.Ping(ctx); err != nil {
			s.log.Warn("not ready: database unreachable", "error", err.Error())
			s.writeError(w, r, errorf(codeUnavailable, "The database is unreachable."))
			return
		}
		if err := s.db.CheckSchema(ctx); err != nil {
			s.log.Warn("not ready: schema", "error", err.Error())
			s.writeError(w, r, errorf(codeUnavailable, "The database schema is not the one this server knows: %v.", err))
			return
		}
		writeJSON(w, healthStatus{Status: "ok"})
	})
}

var errorsPage = template.Must(template.New("errors").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>quorum API errors</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem}code{background:#f3f3f3;padding:0 .2em}h2{margin-top:2rem}</style>
</head><body>
<h1>quorum API errors</h1>
<p>Every error of the quorum API is an RFC 9457 problem document (<code>application/problem+json</code>)
with <code>type</code>, <code>title</code>, <code>status</code>, <code>detail</code> and <code>request_id</code>;
a 400 also lists <code>invalid_params</code> as <code>{name, reason}</code>. The <code>type</code> is a link to one of the sections below.
The whole API is described by its <a href="/v1/openapi.json">OpenAPI document</a>.</p>
{{range .}}<h2 id="{{.Code}}">{{.Status}} — {{.Title}}</h2>
<p><code>type: …/api/errors#{{.Code}}</code></p>
<p>{{.Explain}}</p>
{{end}}</body></html>
`))

func (s *Server) errorsPage() http.Handler {
	type entry struct {
		Code, Title, Explain string
		Status               int
	}
	var entries []entry
	for _, t := range problemTypes {
		entries = append(entries, entry{t.code, t.title, t.explain, t.status})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := errorsPage.Execute(w, entries); err != nil {
			s.log.Error("render errors page", "error", err.Error())
		}
	})
}
