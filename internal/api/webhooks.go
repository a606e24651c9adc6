package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/webhook"
)

// maxBodyBytes bounds a JSON request body.
const maxBodyBytes = 64 << 10

// decodeBody reads a JSON request body into v: application/json only (415),
// at most maxBodyBytes (413), no unknown fields and the right types (400,
// naming the field). An empty body is accepted when optional, leaving v as
// it was.
func decodeBody(w http.ResponseWriter, r *http.Request, v any, optional bool) *Error {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return errorf(codeTooLarge, "The request body is larger than %d bytes.", maxBodyBytes)
	case err != nil:
		return invalid("body", "could not be read")
	}
	if len(bytes.TrimSpace(raw)) == 0 && optional {
		return nil
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if cs, ok := params["charset"]; err != nil || mt != "application/json" || ok && !strings.EqualFold(cs, "utf-8") {
		return errorf(codeUnsupportedMedia, "The request body must be application/json in UTF-8 (Content-Type %q).", r.Header.Get("Content-Type"))
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return invalid("body", "required: a JSON object")
	}
	if !utf8.Valid(raw) || loneSurrogate(raw) {
		// encoding/json would quietly store U+FFFD instead.
		return invalid("body", "is not valid UTF-8")
	}
	if name, ok := duplicateKey(raw); ok {
		return invalid(name, "given more than once")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if err == nil && dec.More() {
		return invalid("body", "must be one JSON object, with nothing after it")
	}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return invalid(typeErr.Field, fmt.Sprintf("must be %s, not %s", jsonKind(typeErr.Type.Kind().String()), typeErr.Value))
	case errors.As(err, &typeErr):
		return invalid("body", "must be a JSON object")
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return invalid("body", "is not valid JSON")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		return invalid(name, "unknown field")
	default:
		return invalid("body", "is not valid JSON")
	}
}

// duplicateKey finds a member name given twice in one JSON object of raw,
// which encoding/json would resolve silently (the last wins). It reports
// nothing for JSON that does not parse; the decoder says what is wrong.
func duplicateKey(raw []byte) (string, bool) {
	type frame struct {
		keys    map[string]bool // nil for an array
		wantKey bool
	}
	var stack []*frame
	// valueDone is called after each complete value: in an object, a name
	// comes next.
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].keys != nil {
			stack[n-1].wantKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &frame{keys: map[string]bool{}, wantKey: true})
			case '[':
				stack = append(stack, &frame{})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			if top != nil && top.wantKey {
				if top.keys[t] {
					return t, true
				}
				top.keys[t], top.wantKey = true, false
				continue
			}
			valueDone()
		default:
			valueDone()
		}
		if len(stack) == 0 {
			return "", false
		}
	}
}

// loneSurrogate reports a \uD800–\uDFFF escape in raw that is not half of
// a surrogate pair: encoding/json decodes it to U+FFFD.
func loneSurrogate(raw []byte) bool {
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 16)
		return rune(n), err == nil
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		r, ok := hex4(i)
		if !ok {
			i++ // another escape: skip the escaped character
			continue
		}
		switch {
		case r >= 0xD800 && r < 0xDC00:
			if lo, ok := hex4(i + 6); !ok || lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 11
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		default:
			i += 5
		}
	}
	return false
}

// jsonKind names a Go kind as the JSON type a client would send.
func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "int", "int64":
		return "an integer"
	case "bool":
		return "true or false"
	case "struct", "map":
		return "an object"
	}
	return kind
}

func invalid(name, reason string) *Error {
	return &Error{Code: codeInvalid, Detail: "The request has invalid parameters; see invalid_params.", Params: []InvalidParam{{Name: name, Reason: reason}}}
}

// webhookError turns the webhook store's errors into API errors.
func webhookError(err error, notFound string) error {
	var ve *webhook.ValidationError
	var le *webhook.LimitError
	switch {
	case errors.Is(err, webhook.ErrNotFound):
		return errorf(codeNotFound, "%s", notFound)
	case errors.As(err, &le):
		return errorf(codeConflict, "The account has %d webhook endpoints, the most it may have; delete one to register another.", le.Max)
	case errors.As(err, &ve):
		e := &Error{Code: codeInvalid, Detail: "The request has invalid parameters; see invalid_params."}
		for _, f := range ve.Fields {
			e.Params = append(e.Params, InvalidParam{Name: f.Field, Reason: f.Reason})
		}
		return e
	}
	return err
}

// writeStatus writes a JSON body with the given status.
func writeStatus(w http.ResponseWriter, status int, v any) { writeRaw(w, status, encodeJSON(v)) }

// pageParams are a listing's limit and cursor, and the deliveries
// listing's status.
type pageParams struct {
	Limit  int
	Cursor string
	Status string
}

// parsePageParams validates limit, cursor and, when withStatus, status.
func parsePageParams(rawQuery string, withStatus bool) (pageParams, *Error) {
	qr := newQueryReader(rawQuery)
	p := pageParams{}
	p.Limit, p.Cursor = qr.page()
	if withStatus {
		if v, ok := qr.single("status"); ok {
			if !slices.Contains(webhook.Statuses, v) {
				qr.reject("status", "must be one of "+strings.Join(webhook.Statuses, ", "))
			}
			p.Status = v
		}
	}
	if e := qr.err(); e != nil {
		return pageParams{}, e
	}
	return p, nil
}

var errCursorParam = &Error{Code: codeInvalid, Detail: "The cursor is invalid; see invalid_params.",
	Params: []InvalidParam{{Name: "cursor", Reason: "not a next_cursor returned for this listing"}}}

// endpointWithSecret is an endpoint as created or rotated: the only
// responses that show its secret.
type endpointWithSecret struct {
	webhook.Endpoint
	Secret string `json:"secret"`
}

type rotatedEndpoint struct {
	webhook.Endpoint
	Secret                  string     `json:"secret"`
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at"`
}

type endpointList struct {
	Webhooks   []webhook.Endpoint `json:"webhooks"`
	NextCursor *string            `json:"next_cursor"`
}

type deliveryList struct {
	Deliveries []webhook.Delivery `json:"deliveries"`
	NextCursor *string            `json:"next_cursor"`
}

// deliveryDetail is a delivery with every attempt of it.
type deliveryDetail struct {
	webhook.Delivery
	AttemptLog []webhook.Attempt `json:"attempt_log"`
}

// endpointID reads and checks the {id} of a /v1/webhooks/{id} path.
func endpointID(r *http.Request) (string, *Error) {
	eid := r.PathValue("id")
	if !id.Valid(id.Endpoint, eid) {
		return "", errorf(codeNotFound, "No webhook endpoint %s.", eid)
	}
	return eid, nil
}

func (s *Server) createWebhook() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pr, _ := PrincipalFrom(r.Context())
		var in struct {
			URL         string   `json:"url"`
			Events      []string `json:"events"`
			Description string   `json:"description"`
			Secret      *string  `json:"secret"`
		}
		if e := decodeBody(w, r, &in, false); e != nil {
			s.writeError(w, r, e)
			return
		}
		ep, secret, err := s.webhookPolicy().Create(r.Context(), s.db, pr.AccountID,
			webhook.NewEndpoint{URL: in.URL, Events: in.Events, Description: in.Description, Secret: in.Secret}, s.now())
		if err != nil {
			s.writeError(w, r, webhookError(err, ""))
			return
		}
		w.Header().Set("Location", "/v1/webhooks/"+ep.ID)
		w.Header().Set("Cache-Control", "no-store")
		writeStatus(w, http.StatusCreated, endpointWithSecret{Endpoint: ep, Secret: secret})
	})
}

// webhookPolicy is what the operator allows of registrations.
func (s *Server) webhookPolicy() webhook.Policy {
	return webhook.Policy{AllowPrivate: s.cfg.WebhookAllowPrivate, MaxEndpoints: s.cfg.WebhookMaxEndpoints}
}

func (s *Server) listWebhooks() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pr, _ := PrincipalFrom(r.Context())
		p, perr := parsePageParams(r.URL.RawQuery, false)
		if perr != nil {
			s.writeError(w, r, perr)
			return
		}
		scope := "webhooks\x00" + pr.AccountID
		var after *webhook.EndpointCursor
		if p.Cursor != "" {
			at, rid, err := s.cursors.openKeyset(p.Cursor, id.Endpoint, scope)
			if err != nil {
				s.writeError(w, r, errCursorParam)
				return
			}
			after = &webhook.EndpointCursor{CreatedAt: at, ID: rid}
		}
		page, next, err := webhook.List(r.Context(), s.db.Reader(), pr.AccountID, after, p.Limit)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out := endpointList{Webhooks: page}
		if next != nil {
			c := s.cursors.sealKeyset(next.CreatedAt, next.ID, scope)
			out.NextCursor = &c
		}
		writeJSON(w, out)
	})
}

func (s *Server) getWebhook() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pr, _ := PrincipalFrom(r.Context())
		eid, e := endpointID(r)
		if e != nil {
			s.writeError(w, r, e)
			return
		}
		ep, err := webhook.Get(r.Context(), s.db.Reader(), pr.AccountID, eid)
		if err != nil {
			s.writeError(w, r, webhookError(err, "No webhook endpoint "+eid+"."))
			return
		}
		writeJSON(w, ep)
	})
}

func (s *Server) updateWebhook() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pr, _ := PrincipalFrom(r.Context())
		eid, e := endpointID(r)
		if e != nil {
			s.writeError(w, r, e)
			return
		}
		var in struct {
			URL         *string   `json:"url"`
			Events      *[]string `json:"events"`
			Description *string   `json:"description"`
			Disabled    *bool     `json:"disabled"`
		}
		if e := decodeBody(w, r, &in, false); e != nil {
			s.writeError(w, r, e)
			return
		}
		ep, err := s.webhookPolicy().Update(r.Context(), s.db.Writer(), pr.AccountID, eid,
			webhook.Patch{URL: in.URL, Events: in.Events, Description: in.Description, Disabled: in.Disabled}, s.now())
		if err != nil {
			s.writeError(w, r, webhookError(err, "No webhook endpoint "+eid+"."))
			return
		}
		writeJSON(w, ep)
	})
}

func (s *Server) deleteWebhook() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pr, _ := PrincipalFrom(r.Context())
		eid, e := endpointID(r)
		if e != nil {
			s.writeError(w, r, e)
			return
		}
		err := s.db.InTx(r.Context(), func(tx store.Tx) error { return webhook.Delete(r.Context(), tx, pr.AccountID, eid, s.now()) })
		if err != nil {
			s.writeError(w, r, webhookError(err, "No webhook endpoint "+eid+"."))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

func (s *Server) rotateWebhookSecret() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pr, _ := PrincipalFrom(r.Context())
		eid, e := endpointID(r)
		if e != nil {
			s.writeError(w, r, e)
			return
		}
		var in struct {
			Secret         *string `json:"secret"`
			OverlapSeconds *int64  `json:"overlap_seconds"`
		}
		if e := decodeBody(w, r, &in, true); e != nil {
			s.writeError(w, r, e)
			return
		}
		overlap := webhook.DefaultOverlap
		if in.OverlapSeconds != nil {
			if *in.OverlapSeconds < 0 || *in.OverlapSeconds > int64(webhook.MaxOverlap/time.Second) {
				s.writeError(w, r, invalid("overlap_seconds", fmt.Sprintf("must be from 0 to %d", int64(webhook.MaxOverlap/time.Second))))
				return
			}
			overlap = time.Duration(*in.OverlapSeconds) * time.Second
		}
		ep, secret, err := webhook.RotateSecret(r.Context(), s.db.Writer(), pr.AccountID, eid, in.Secret, overlap, s.now())
		if err != nil {
			s.writeError(w, r, webhookError(err, "No webhook endpoint "+eid+"."))
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		writeStatus(w, http.StatusOK, rotatedEndpoint{Endpoint: ep, Secret: secret, PreviousSecretExpiresAt: ep.PreviousExpiresAt})
	})
}

func (s *Server) pingWebhook() http.Handler {
	return s.queueDelivery(endpointID, webhook.Ping, "No webhook endpoint ")
}

// queueDelivery is a handler that queues a delivery — a ping of the
// endpoint, or a redelivery — named by the request's id (read by id), and
// answers 202 with the delivery and its Location. A missing resource is a
// 404 whose detail is notFound followed by the id.
func (s *Server) queueDelivery(id func(*http.Request) (string, *Error),
	queue func(ctx context.Context, db *store.DB, accountID, id string, now time.Time) (webhook.Delivery, error), notFound string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pr, _ := PrincipalFrom(r.Context())
		rid, e := id(r)
		if e != nil {
			s.writeError(w, r, e)
			return
		}
		d, err := queue(r.Context(), s.db, pr.AccountID, rid, s.now())
		if err != nil {
			s.writeError(w, r, webhookError(err, notFound+rid+"."))
			return
		}
		w.Header().Set("Location", "/v1/deliveries/"+d.ID)
		writeStatus(w, http.StatusAccepted, d)
	})
}

func (s *Server) listDeliveries() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pr, _ := PrincipalFrom(r.Context())
		eid, e := endpointID(r)
		if e != nil {
			s.writeError(w, r, e)
			return
		}
		p, perr := parsePageParams(r.URL.RawQuery, true)
		if perr != nil {
			s.writeError(w, r, perr)
			return
		}
		scope := strings.Join([]string{"deliveries", pr.AccountID, eid, p.Status}, "\x00")
		var after *webhook.DeliveryCursor
		if p.Cursor != "" {
			at, rid, err := s.cursors.openKeyset(p.Cursor, id.Delivery, scope)
			if err != nil {
				s.writeError(w, r, errCursorParam)
				return
			}
			after = &webhook.DeliveryCursor{CreatedAt: at, ID: rid}
		}
		page, next, err := webhook.ListDeliveries(r.Context(), s.db.Reader(), pr.AccountID, eid, p.Status, after, p.Limit)
		if err != nil {
			s.writeError(w, r, webhookError(err, "No webhook endpoint "+eid+"."))
			return
		}
		out := deliveryList{Deliveries: page}
		if out.Deliveries == nil {
			out.Deliveries = []webhook.Delivery{}
		}
		if next != nil {
			c := s.cursors.sealKeyset(next.CreatedAt, next.ID, scope)
			out.NextCursor = &c
		}
		writeJSON(w, out)
	})
}

// deliveryID reads and checks the {id} of a /v1/deliveries/{id} path.
func deliveryID(r *http.Request) (string, *Error) {
	did := r.PathValue("id")
	if !id.Valid(id.Delivery, did) {
		return "", errorf(codeNotFound, "No delivery %s.", did)
	}
	return did, nil
}

func (s *Server) getDelivery() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pr, _ := PrincipalFrom(r.Context())
		did, e := deliveryID(r)
		if e != nil {
			s.writeError(w, r, e)
			return
		}
		d, attempts, err := webhook.GetDelivery(r.Context(), s.db.Reader(), pr.AccountID, did)
		if err != nil {
			s.writeError(w, r, webhookError(err, "No delivery "+did+"."))
			return
		}
		if attempts == nil {
			attempts = []webhook.Attempt{}
		}
		writeJSON(w, deliveryDetail{Delivery: d, AttemptLog: attempts})
	})
}

func (s *Server) redeliver() http.Handler {
	return s.queueDelivery(deliveryID, webhook.Redeliver, "No delivery ")
}
