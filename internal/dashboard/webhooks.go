package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/token"
	"github.com/quorum-review/quorum/internal/webhook"
)

// Page sizes of the webhook lists, keyset-paginated like the API's.
const (
	endpointsPerPage  = 25
	deliveriesPerPage = 25
)

// webhookRoutes adds the pages of webhook endpoints and deliveries. Reads
// need webhooks:read and every state change webhooks:write, as in the API;
// the new-endpoint form needs webhooks:write too, since it leads nowhere
// without it.
func (s *Server) webhookRoutes(mux *routeMux) {
	read, write := token.ScopeWebhooksRead, token.ScopeWebhooksWrite
	mux.Handle("GET "+Prefix+"webhooks", s.page(read, s.listEndpoints))
	mux.Handle("GET "+Prefix+"webhooks/new", s.page(write, s.newEndpoint))
	mux.Handle("POST "+Prefix+"webhooks", s.page(write, s.createEndpoint))
	mux.Handle("GET "+Prefix+"webhooks/{id}", s.page(read, s.showEndpoint))
	mux.Handle("POST "+Prefix+"webhooks/{id}", s.page(write, s.updateEndpoint))
	mux.Handle("POST "+Prefix+"webhooks/{id}/rotate-secret", s.page(write, s.rotateSecret))
	mux.Handle("GET "+Prefix+"webhooks/{id}/secret", s.page(write, s.secretPage))
	mux.Handle("POST "+Prefix+"webhooks/{id}/disable", s.page(write, s.pauseEndpoint(true)))
	mux.Handle("POST "+Prefix+"webhooks/{id}/enable", s.page(write, s.pauseEndpoint(false)))
	mux.Handle("POST "+Prefix+"webhooks/{id}/delete", s.page(write, s.deleteEndpoint))
	mux.Handle("POST "+Prefix+"webhooks/{id}/ping", s.page(write, s.pingEndpoint))
	mux.Handle("GET "+Prefix+"webhooks/{id}/deliveries", s.page(read, s.listDeliveries))
	mux.Handle("GET "+Prefix+"deliveries/{id}", s.page(read, s.showDelivery))
	mux.Handle("POST "+Prefix+"deliveries/{id}/redeliver", s.page(write, s.redeliver))
}

// webhookPolicy is the API's policy for registrations: the operator's
// address rule and endpoint limit.
func (s *Server) webhookPolicy() webhook.Policy {
	p := s.cfg.WebhookPolicy
	p.MaxEndpoints = s.cfg.WebhookMaxEndpoints
	return p
}

// endpointNotFound is the page for an endpoint that does not exist, was
// deleted, or is another account's: the three are not told apart.
func endpointNotFound(eid string) error {
	return notFound("There is no webhook endpoint %s.", eid)
}

// endpointID reads the {id} of a /webhooks/{id} path; a malformed one is
// not found, as in the API.
func endpointID(r *http.Request) (string, error) {
	eid := r.PathValue("id")
	if !id.Valid(id.Endpoint, eid) {
		return "", endpointNotFound(eid)
	}
	return eid, nil
}

// deliveryID reads the {id} of a /deliveries/{id} path.
func deliveryID(r *http.Request) (string, error) {
	did := r.PathValue("id")
	if !id.Valid(id.Delivery, did) {
		return "", notFound("There is no delivery %s.", did)
	}
	return did, nil
}

// webhookError turns the webhook package's errors into pages, as the API's
// webhookError turns them into problems.
func webhookError(err error, missing error) error {
	var le *webhook.LimitError
	switch {
	case errors.Is(err, webhook.ErrNotFound):
		return missing
	case errors.As(err, &le):
		return &pageError{Status: http.StatusConflict, Detail: limitText(le)}
	}
	return err
}

func limitText(le *webhook.LimitError) string {
	return fmt.Sprintf("The account has %d webhook endpoints, the most it may have; delete one to register another.", le.Max)
}

// position is where a newest-first page starts: after the row made at
// CreatedAt (Unix microseconds) with ID. Next links carry it as
// "?before=<micros>.<id>".
type position struct {
	CreatedAt int64
	ID        string
}

func (p position) String() string { return strconv.FormatInt(p.CreatedAt, 10) + "." + p.ID }

// readBefore reads the before parameter, a position whose id has prefix;
// nil when it is absent. Anything else is a 400: it is only ever made by
// the dashboard's own Next links.
func readBefore(q url.Values, prefix string) (*position, error) {
	raw, err := singleParam(q, "before")
	if err != nil || q["before"] == nil {
		return nil, err
	}
	at, rid, _ := strings.Cut(raw, ".")
	n, err := strconv.ParseInt(at, 10, 64)
	if err != nil || n < 0 || !id.Valid(prefix, rid) {
		return nil, badRequest("The page position %q is not valid: follow the dashboard's own Next link.", raw)
	}
	return &position{CreatedAt: n, ID: rid}, nil
}

// noticeOf reads the notice parameter a redirect after a change carries,
// one of notices; an unknown one is a 400.
func noticeOf(r *http.Request, notices map[string]string) (string, error) {
	q, err := pageQuery(r)
	if err != nil {
		return "", err
	}
	key, err := singleParam(q, "notice")
	if err != nil || key == "" {
		return "", err
	}
	text, ok := notices[key]
	if !ok {
		return "", badRequest("There is no notice %q.", key)
	}
	return text, nil
}

// --- the list of endpoints

type endpointRow struct {
	webhook.Endpoint
	EveryEvent bool
}

type endpointsView struct {
	Rows   []endpointRow
	Next   string
	Notice string
}

var listNotices = map[string]string{
	"deleted": "The endpoint was deleted. Its deliveries are no longer listed, and none is attempted again.",
}

func everyEvent(events []string) bool {
	for _, name := range event.Names {
		if !slices.Contains(events, name) {
			return false
		}
	}
	return true
}

func (s *Server) listEndpoints(w http.ResponseWriter, r *http.Request, sess *session) error {
	q, err := pageQuery(r)
	if err != nil {
		return err
	}
	before, err := readBefore(q, id.Endpoint)
	if err != nil {
		return err
	}
	var v endpointsView
	if v.Notice, err = noticeOf(r, listNotices); err != nil {
		return err
	}
	var after *webhook.EndpointCursor
	if before != nil {
		after = &webhook.EndpointCursor{CreatedAt: before.CreatedAt, ID: before.ID}
	}
	page, next, err := webhook.List(r.Context(), s.db.Reader(), sess.principal.AccountID, after, endpointsPerPage)
	if err != nil {
		return err
	}
	for _, e := range page {
		v.Rows = append(v.Rows, endpointRow{Endpoint: e, EveryEvent: everyEvent(e.Events)})
	}
	if next != nil {
		v.Next = Prefix + "webhooks?before=" + url.QueryEscape(position{next.CreatedAt, next.ID}.String())
	}
	s.render(w, r, http.StatusOK, "webhooks", sess, "Webhook endpoints", v)
	return nil
}

// --- one endpoint: the new form, the page, and the changes made from it

// endpointForm is the fields of an endpoint as a form shows them, with
// the reason each was refused.
type endpointForm struct {
	URL         string
	Description string
	Events      []eventChoice
	// Errors holds each refused field's reason, by field name ("url",
	// "events", "description").
	Errors map[string]string
	// Problem is what refused the whole form (the endpoint limit).
	Problem string
}

type eventChoice struct {
	Name    string
	Checked bool
}

func newEndpointForm(rawURL, description string, events []string) endpointForm {
	f := endpointForm{URL: rawURL, Description: description}
	for _, name := range event.Names {
		f.Events = append(f.Events, eventChoice{Name: name, Checked: slices.Contains(events, name)})
	}
	return f
}

// readEndpointForm reads a posted endpoint form. The URL is trimmed as a
// browser trims an <input type=url>; the rest is passed on as sent, for
// the webhook package to judge as it judges the API's.
func readEndpointForm(r *http.Request) (rawURL, description string, events []string) {
	f := r.PostForm
	return strings.TrimSpace(f.Get("url")), f.Get("description"), f["events"]
}

// refused fills the form's Errors from a validation error.
func (f *endpointForm) refused(ve *webhook.ValidationError) {
	f.Errors = map[string]string{}
	for _, fe := range ve.Fields {
		if prev := f.Errors[fe.Field]; prev != "" {
			f.Errors[fe.Field] = prev + "; " + fe.Reason
			continue
		}
		f.Errors[fe.Field] = fe.Reason
	}
}

// overlapChoice is one choice of how long the previous secret keeps
// signing after a rotation.
type overlapChoice struct {
	Seconds  int64
	Label    string
	Selected bool
}

var overlapChoices = []struct {
	d     time.Duration
	label string
}{
	{0, "none: the previous secret stops at once"},
	{time.Hour, "1 hour"},
	{webhook.DefaultOverlap, "24 hours (the default)"},
	{3 * 24 * time.Hour, "3 days"},
	{webhook.MaxOverlap, "7 days (the most allowed)"},
}

func overlapOptions(selected time.Duration) []overlapChoice {
	out := make([]overlapChoice, len(overlapChoices))
	for i, c := range overlapChoices {
		out[i] = overlapChoice{Seconds: int64(c.d / time.Second), Label: c.label, Selected: c.d == selected}
	}
	return out
}

// endpointView is the endpoint page, or with New the form that registers
// one: webhook.html serves both, so the form's fields are written once.
type endpointView struct {
	New        bool
	Endpoint   webhook.Endpoint
	EveryEvent bool
	// Rotating is whether the previous secret still signs (until
	// Endpoint.PreviousExpiresAt).
	Rotating     bool
	Form         endpointForm
	Overlaps     []overlapChoice
	OverlapError string
	Notice       string
}

var endpointNotices = map[string]string{
	"updated":  "The endpoint was saved.",
	"disabled": "The endpoint is disabled: nothing is delivered to it (but pings) until it is enabled again.",
	"enabled":  "The endpoint is enabled: deliveries to it resume.",
}

func (s *Server) newEndpoint(w http.ResponseWriter, r *http.Request, sess *session) error {
	s.render(w, r, http.StatusOK, "webhook", sess, "New webhook endpoint", endpointView{New: true, Form: newEndpointForm("", "", nil)})
	return nil
}

// createEndpoint registers an endpoint and sends the browser to its secret,
// shown this once.
// A refused form comes back with each field's reason and status 400, the
// status of the API's invalid-request problem; the endpoint limit is 409,
// as in the API.
func (s *Server) createEndpoint(w http.ResponseWriter, r *http.Request, sess *session) error {
	rawURL, description, events := readEndpointForm(r)
	ep, _, err := s.webhookPolicy().Create(r.Context(), s.db, sess.principal.AccountID,
		webhook.NewEndpoint{URL: rawURL, Events: events, Description: description}, s.now())
	var ve *webhook.ValidationError
	var le *webhook.LimitError
	switch {
	case errors.As(err, &ve), errors.As(err, &le):
		v := endpointView{New: true, Form: newEndpointForm(rawURL, description, events)}
		status := http.StatusBadRequest
		if ve != nil {
			v.Form.refused(ve)
		} else {
			v.Form.Problem, status = limitText(le), http.StatusConflict
		}
		s.render(w, r, status, "webhook", sess, "New webhook endpoint", v)
		return nil
	case err != nil:
		return err
	}
	return s.showSecretOnce(w, r, sess, ep.ID, secretCreated)
}

// Why a session is shown an endpoint's secret.
const (
	secretCreated = "created"
	secretRotated = "rotated"
)

// showSecretOnce lets the session see the endpoint's secret once and sends
// the browser to the page that shows it (post/redirect/get): reloading
// that page neither shows the secret again nor sends the form again.
func (s *Server) showSecretOnce(w http.ResponseWriter, r *http.Request, sess *session, endpointID, kind string) error {
	if err := s.sessions.offerSecret(r.Context(), sess.hash, endpointID, kind); err != nil {
		return err
	}
	http.Redirect(w, r, Prefix+"webhooks/"+endpointID+"/secret", http.StatusSeeOther)
	return nil
}

// secretPage shows the endpoint's secret to the session that just made
// it, once; afterwards it says where the secret went.
func (s *Server) secretPage(w http.ResponseWriter, r *http.Request, sess *session) error {
	ep, err := s.loadEndpoint(r, sess)
	if err != nil {
		return err
	}
	kind, ok, err := s.sessions.takeSecret(r.Context(), sess.hash, ep.ID)
	if err != nil {
		return err
	}
	if !ok {
		return notFound("The secret of %s was shown once, when it was made, and is not shown again. If it is lost, rotate it on the endpoint's page.", ep.ID)
	}
	title := "Endpoint registered"
	if kind == secretRotated {
		title = "Secret rotated"
	}
	s.render(w, r, http.StatusOK, "webhook-secret", sess, title, secretView{Created: kind == secretCreated, Endpoint: ep, Secret: ep.Secret})
	return nil
}

// secretView is the one page that shows an endpoint's secret: right after
// it was made, by registering or rotating.
type secretView struct {
	Created  bool
	Endpoint webhook.Endpoint
	Secret   string
}

// endpointPage is the endpoint page of ep; form and the overlap's error
// are those of a refused change, or the endpoint as it is.
func (s *Server) endpointPage(w http.ResponseWriter, r *http.Request, sess *session, status int, ep webhook.Endpoint, v endpointView) {
	v.Endpoint, v.EveryEvent = ep, everyEvent(ep.Events)
	v.Rotating = ep.PreviousExpiresAt != nil && s.now().Before(*ep.PreviousExpiresAt)
	if v.Form.Events == nil {
		v.Form = newEndpointForm(ep.URL, ep.Description, ep.Events)
	}
	if v.Overlaps == nil {
		v.Overlaps = overlapOptions(webhook.DefaultOverlap)
	}
	s.render(w, r, status, "webhook", sess, "Webhook endpoint", v)
}

// loadEndpoint is the path's endpoint of the session's account.
func (s *Server) loadEndpoint(r *http.Request, sess *session) (webhook.Endpoint, error) {
	eid, err := endpointID(r)
	if err != nil {
		return webhook.Endpoint{}, err
	}
	ep, err := webhook.Get(r.Context(), s.db.Reader(), sess.principal.AccountID, eid)
	if err != nil {
		return webhook.Endpoint{}, webhookError(err, endpointNotFound(eid))
	}
	return ep, nil
}

func (s *Server) showEndpoint(w http.ResponseWriter, r *http.Request, sess *session) error {
	notice, err := noticeOf(r, endpointNotices)
	if err != nil {
		return err
	}
	ep, err := s.loadEndpoint(r, sess)
	if err != nil {
		return err
	}
	s.endpointPage(w, r, sess, http.StatusOK, ep, endpointView{Notice: notice})
	return nil
}

// updateEndpoint saves the edit form: URL, events and description, under
// the API's policy. A form sends every field; an unchanged URL is left out
// of the change, as an API client leaves out what it does not change, so
// that the policy judges only a new address (an operator may have
// registered one the policy would refuse).
func (s *Server) updateEndpoint(w http.ResponseWriter, r *http.Request, sess *session) error {
	ep, err := s.loadEndpoint(r, sess)
	if err != nil {
		return err
	}
	rawURL, description, events := readEndpointForm(r)
	if events == nil {
		events = []string{} // none ticked: every event
	}
	patch := webhook.Patch{Events: &events, Description: &description}
	if rawURL != ep.URL {
		patch.URL = &rawURL
	}
	_, err = s.webhookPolicy().Update(r.Context(), s.db.Writer(), sess.principal.AccountID, ep.ID, patch, s.now())
	if ve := (*webhook.ValidationError)(nil); errors.As(err, &ve) {
		form := newEndpointForm(rawURL, description, events)
		form.refused(ve)
		s.endpointPage(w, r, sess, http.StatusBadRequest, ep, endpointView{Form: form})
		return nil
	}
	if err != nil {
		return webhookError(err, endpointNotFound(ep.ID))
	}
	http.Redirect(w, r, Prefix+"webhooks/"+ep.ID+"?notice=updated", http.StatusSeeOther)
	return nil
}

// pauseEndpoint disables (pause true) or enables the endpoint, as the
// API's PATCH of disabled does.
func (s *Server) pauseEndpoint(pause bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, sess *session) error {
		eid, err := endpointID(r)
		if err != nil {
			return err
		}
		if _, err := s.webhookPolicy().Update(r.Context(), s.db.Writer(), sess.principal.AccountID, eid,
			webhook.Patch{Disabled: &pause}, s.now()); err != nil {
			return webhookError(err, endpointNotFound(eid))
		}
		notice := "enabled"
		if pause {
			notice = "disabled"
		}
		http.Redirect(w, r, Prefix+"webhooks/"+eid+"?notice="+notice, http.StatusSeeOther)
		return nil
	}
}

func (s *Server) deleteEndpoint(w http.ResponseWriter, r *http.Request, sess *session) error {
	eid, err := endpointID(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	err = s.db.InTx(ctx, func(tx store.Tx) error { return webhook.Delete(ctx, tx, sess.principal.AccountID, eid, s.now()) })
	if err != nil {
		return webhookError(err, endpointNotFound(eid))
	}
	http.Redirect(w, r, Prefix+"webhooks?notice=deleted", http.StatusSeeOther)
	return nil
}

// rotateSecret gives the endpoint a new secret and shows it, this once;
// the previous one keeps signing for the overlap chosen, within the API's
// bounds (0 to webhook.MaxOverlap; webhook.DefaultOverlap when none is
// given).
func (s *Server) rotateSecret(w http.ResponseWriter, r *http.Request, sess *session) error {
	eid, err := endpointID(r)
	if err != nil {
		return err
	}
	overlap := webhook.DefaultOverlap
	if raw := r.PostForm.Get("overlap"); raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 0 || n > int64(webhook.MaxOverlap/time.Second) {
			ep, err := s.loadEndpoint(r, sess)
			if err != nil {
				return err
			}
			s.endpointPage(w, r, sess, http.StatusBadRequest, ep, endpointView{
				OverlapError: fmt.Sprintf("must be a number of seconds from 0 to %d", int64(webhook.MaxOverlap/time.Second)),
			})
			return nil
		}
		overlap = time.Duration(n) * time.Second
	}
	ep, _, err := webhook.RotateSecret(r.Context(), s.db.Writer(), sess.principal.AccountID, eid, nil, overlap, s.now())
	if err != nil {
		return webhookError(err, endpointNotFound(eid))
	}
	return s.showSecretOnce(w, r, sess, ep.ID, secretRotated)
}

// pingEndpoint queues a ping and shows it among the endpoint's deliveries.
func (s *Server) pingEndpoint(w http.ResponseWriter, r *http.Request, sess *session) error {
	eid, err := endpointID(r)
	if err != nil {
		return err
	}
	d, err := webhook.Ping(r.Context(), s.db, sess.principal.AccountID, eid, s.now())
	if err != nil {
		return webhookError(err, endpointNotFound(eid))
	}
	http.Redirect(w, r, Prefix+"webhooks/"+eid+"/deliveries?pinged="+d.ID, http.StatusSeeOther)
	return nil
}

// --- deliveries

type deliveriesView struct {
	Endpoint webhook.Endpoint
	Rows     []webhook.Delivery
	// Status is the filter ("" for all); Statuses are its choices.
	Status   string
	Statuses []string
	Next     string
	// Pinged is the ping just queued, shown in a notice.
	Pinged string
}

func (s *Server) listDeliveries(w http.ResponseWriter, r *http.Request, sess *session) error {
	q, err := pageQuery(r)
	if err != nil {
		return err
	}
	v := deliveriesView{Statuses: webhook.Statuses}
	if v.Status, err = singleParam(q, "status"); err != nil {
		return err
	}
	if v.Status != "" && !slices.Contains(webhook.Statuses, v.Status) {
		return badRequest("There is no delivery status %q: choose one of %s, or all.", v.Status, strings.Join(webhook.Statuses, ", "))
	}
	before, err := readBefore(q, id.Delivery)
	if err != nil {
		return err
	}
	if v.Pinged, err = singleParam(q, "pinged"); err != nil {
		return err
	}
	if v.Pinged != "" && !id.Valid(id.Delivery, v.Pinged) {
		return badRequest("%q is not a delivery id.", v.Pinged)
	}
	if v.Endpoint, err = s.loadEndpoint(r, sess); err != nil {
		return err
	}
	var after *webhook.DeliveryCursor
	if before != nil {
		after = &webhook.DeliveryCursor{CreatedAt: before.CreatedAt, ID: before.ID}
	}
	rows, next, err := webhook.ListDeliveries(r.Context(), s.db.Reader(), sess.principal.AccountID, v.Endpoint.ID, v.Status, after, deliveriesPerPage)
	if err != nil {
		return webhookError(err, endpointNotFound(v.Endpoint.ID))
	}
	v.Rows = rows
	if next != nil {
		nq := url.Values{"before": {position{next.CreatedAt, next.ID}.String()}}
		if v.Status != "" {
			nq.Set("status", v.Status)
		}
		v.Next = Prefix + "webhooks/" + v.Endpoint.ID + "/deliveries?" + nq.Encode()
	}
	s.render(w, r, http.StatusOK, "deliveries", sess, "Deliveries", v)
	return nil
}

type deliveryView struct {
	webhook.Delivery
	AttemptLog []webhook.Attempt
	Notice     string
}

var deliveryNotices = map[string]string{
	"redelivered": "The delivery is queued to be sent again; its attempts appear below as they are made.",
}

func (s *Server) showDelivery(w http.ResponseWriter, r *http.Request, sess *session) error {
	notice, err := noticeOf(r, deliveryNotices)
	if err != nil {
		return err
	}
	did, err := deliveryID(r)
	if err != nil {
		return err
	}
	d, attempts, err := webhook.GetDelivery(r.Context(), s.db.Reader(), sess.principal.AccountID, did)
	if err != nil {
		return webhookError(err, notFound("There is no delivery %s.", did))
	}
	s.render(w, r, http.StatusOK, "delivery", sess, "Delivery "+did, deliveryView{Delivery: d, AttemptLog: attempts, Notice: notice})
	return nil
}

// redeliver queues the delivery to be sent again, as the API's redeliver.
func (s *Server) redeliver(w http.ResponseWriter, r *http.Request, sess *session) error {
	did, err := deliveryID(r)
	if err != nil {
		return err
	}
	if _, err := webhook.Redeliver(r.Context(), s.db, sess.principal.AccountID, did, s.now()); err != nil {
		return webhookError(err, notFound("There is no delivery %s.", did))
	}
	http.Redirect(w, r, Prefix+"deliveries/"+did+"?notice=redelivered", http.StatusSeeOther)
	return nil
}
