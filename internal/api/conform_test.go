package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	apidoc "github.com/quorum-review/quorum/api"
)

// spec is api/openapi.yaml loaded and validated by kin-openapi, with a
// router to find the operation a request addresses.
type spec struct {
	doc    *openapi3.T
	router routers.Router
}

var loadSpec = sync.OnceValues(func() (*spec, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(apidoc.OpenAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("load api/openapi.yaml: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("api/openapi.yaml is not a valid OpenAPI document: %w", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route api/openapi.yaml: %w", err)
	}
	return &spec{doc: doc, router: router}, nil
})

// unrouted is the coverage key of responses to paths and methods the
// document does not describe.
const unrouted = "unrouted"

// componentRoute is an operation that answers only status with the named
// response of components.responses: what the document says of requests it
// cannot describe (an unknown path, a method a path lacks).
func (s *spec) componentRoute(status int, name string) (*routers.Route, error) {
	ref := s.doc.Components.Responses[name]
	if ref == nil {
		return nil, fmt.Errorf("components.responses has no %s", name)
	}
	return &routers.Route{Spec: s.doc, Operation: &openapi3.Operation{
		Responses: openapi3.NewResponses(openapi3.WithStatus(status, ref)),
	}}, nil
}

// conform validates a response to req against the document, returning the
// coverage key "METHOD /path STATUS" of what it validated. route overrides
// the router's choice when not nil.
func conform(req *http.Request, r response, route *routers.Route) (string, error) {
	s, err := loadSpec()
	if err != nil {
		return "", err
	}
	var params map[string]string
	key := unrouted
	if route == nil {
		route, params, err = s.router.FindRoute(req)
		switch {
		case err == nil:
			key = route.Method + " " + route.Path
		case errors.Is(err, routers.ErrPathNotFound):
			route, err = s.componentRoute(http.StatusNotFound, "NotFound")
		case errors.Is(err, routers.ErrMethodNotAllowed):
			route, err = s.componentRoute(http.StatusMethodNotAllowed, "MethodNotAllowed")
		}
		if err != nil {
			return "", err
		}
	}
	key += " " + strconv.Itoa(r.status)
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 r.status,
		Header:                 r.header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	in.SetBodyBytes(r.body)
	return key, openapi3filter.ValidateResponse(context.Background(), in)
}

// coverage records which operation and status pairs had a response
// validated.
type coverage struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (c *coverage) add(key string) {
	if c == nil || key == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	c.seen[key] = true
}

// missing lists the documented responses (and the unrouted 404 and 405)
// that have no validated response, except those in excused; an excuse for
// a response the document does not have is reported too, so excuses cannot
// go stale.
func (c *coverage) missing(s *spec, excused map[string]string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	want := []string{unrouted + " 404", unrouted + " 405"}
	for path, item := range s.doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Responses == nil || op.Responses.Len() == 0 {
				want = append(want, method+" "+path+" (no responses documented)")
			}
			for status := range op.Responses.Map() {
				want = append(want, method+" "+path+" "+status)
			}
		}
	}
	var out []string
	documented := map[string]bool{}
	for _, k := range want {
		documented[k] = true
		if !c.seen[k] && excused[k] == "" {
			out = append(out, k)
		}
	}
	for k := range excused {
		if !documented[k] {
			out = append(out, k+" (excused but not documented)")
		}
	}
	sort.Strings(out)
	return out
}
