package webhook_test

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/webhook"
)

type endpointFixture struct {
	db          *store.DB
	clock       *storetest.Clock
	acme, other account.Account
}

func setupEndpoints(t *testing.T, b storetest.Backend) endpointFixture {
	t.Helper()
	db := b.Open(t)
	ctx := context.Background()
	acme, err := account.Ensure(ctx, db.Writer(), account.PlatformGitHub, "acme", "Organization")
	if err != nil {
		t.Fatal(err)
	}
	other, err := account.Ensure(ctx, db.Writer(), account.PlatformGitHub, "globex", "Organization")
	if err != nil {
		t.Fatal(err)
	}
	// Nanoseconds on purpose: stored times are microseconds.
	return endpointFixture{db: db, clock: storetest.NewClock(time.Date(2026, 11, 23, 2, 0, 0, 123456789, time.UTC)), acme: acme, other: other}
}

func (f endpointFixture) create(t *testing.T, accountID, url string, events ...string) (webhook.Endpoint, string) {
	t.Helper()
	e, secret, err := webhook.Create(t.Context(), f.db.Writer(), accountID, url, events, "", "", f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return e, secret
}

// fields lists the fields a validation error names.
func fields(t *testing.T, err error) string {
	t.Helper()
	var ve *webhook.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v, want a *webhook.ValidationError", err)
	}
	var out []string
	for _, f := range ve.Fields {
		out = append(out, f.Field)
	}
	return strings.Join(out, ",")
}

func TestCreateGetRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setupEndpoints(t, b)
		ctx := t.Context()
		e, secret, err := webhook.Create(ctx, f.db.Writer(), f.acme.ID, "https://hooks.example.com/q", []string{event.ReviewCompleted, event.ReviewCompleted, event.ReviewFailed}, "CI bot", "", f.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		key, ok := strings.CutPrefix(secret, webhook.SecretPrefix)
		if !ok {
			t.Fatalf("generated secret %q lacks the whsec_ prefix", secret)
		}
		if raw, err := base64.StdEncoding.DecodeString(key); err != nil || len(raw) != 32 {
			t.Errorf("generated secret %q is not base64 of 32 bytes (%d bytes, %v)", secret, len(raw), err)
		}
		if !slices.Equal(e.Events, []string{event.ReviewCompleted, event.ReviewFailed}) {
			t.Errorf("events %v, want the two given without the duplicate", e.Events)
		}
		got, err := webhook.Get(ctx, f.db.Reader(), f.acme.ID, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.URL != e.URL || got.Description != "CI bot" || !slices.Equal(got.Events, e.Events) || !got.CreatedAt.Equal(e.CreatedAt) ||
			!got.CreatedAt.Equal(f.clock.Now().Truncate(time.Microsecond)) || got.Secret != secret || got.Disabled {
			t.Errorf("Get %+v, want what Create returned %+v", got, e)
		}

		// No events given: every event, now and as the catalog grows.
		all, _ := f.create(t, f.acme.ID, "http://hooks.example.com:8080/all")
		got, err = webhook.Get(ctx, f.db.Reader(), f.acme.ID, all.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Events, event.Names) || !slices.Equal(all.Events, event.Names) {
			t.Errorf("events %v (create %v), want every event %v", got.Events, all.Events, event.Names)
		}

		// A supplied secret is kept as given.
		own, ownSecret, err := webhook.Create(ctx, f.db.Writer(), f.acme.ID, "https://hooks.example.com/own", nil, "", "It's a Secret to Everybody", f.clock.Now())
		if err != nil || ownSecret != "It's a Secret to Everybody" || own.Secret != ownSecret {
			t.Errorf("supplied secret: %q, %v", ownSecret, err)
		}
	})
}

func TestCreateValidates(t *testing.T) {
	t.Parallel()
	f := setupEndpoints(t, storetest.Backend{Name: "sqlite", Open: storetest.SQLite})
	long := "https://hooks.example.com/" + strings.Repeat("a", webhook.MaxURLLength)
	for _, c := range []struct {
		name, url   string
		events      []string
		description string
		secret      string
		want        string
	}{
		{name: "empty url", url: "", want: "url"},
		{name: "ftp", url: "ftp://hooks.example.com/x", want: "url"},
		{name: "javascript", url: "javascript:alert(1)", want: "url"},
		{name: "no scheme", url: "hooks.example.com/x", want: "url"},
		{name: "no host", url: "https:///x", want: "url"},
		{name: "userinfo", url: "https://user:pass@hooks.example.com/x", want: "url"},
		{name: "user only", url: "https://user@hooks.example.com/x", want: "url"},
		{name: "too long", url: long, want: "url"},
		{name: "unknown event", url: "https://hooks.example.com/x", events: []string{event.ReviewCompleted, "review.exploded"}, want: "events"},
		{name: "long description", url: "https://hooks.example.com/x", description: strings.Repeat("d", webhook.MaxDescriptionLength+1), want: "description"},
		{name: "short secret", url: "https://hooks.example.com/x", secret: "short", want: "secret"},
		{name: "bad whsec", url: "https://hooks.example.com/x", secret: "whsec_not*base64*at*all", want: "secret"},
		{name: "all at once", url: "gopher://x", events: []string{"nope"}, secret: "x", want: "url,events,secret"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := webhook.Create(t.Context(), f.db.Writer(), f.acme.ID, c.url, c.events, c.description, c.secret, f.clock.Now())
			if got := fields(t, err); got != c.want {
				t.Errorf("fields %q, want %q (%v)", got, c.want, err)
			}
		})
	}
	if all, err := webhook.ListAll(t.Context(), f.db.Reader(), ""); err != nil || len(all) != 0 {
		t.Errorf("after only invalid creates: %d endpoints, %v; want none", len(all), err)
	}
}

func TestListNewestFirstByPage(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setupEndpoints(t, b)
		ctx := t.Context()
		var want []string
		for range 5 {
			e, _ := f.create(t, f.acme.ID, "https://hooks.example.com/x")
			want = append([]string{e.ID}, want...)
		}
		// Two in the same microsecond: the id breaks the tie.
		e, _ := f.create(t, f.acme.ID, "https://hooks.example.com/y")
		want = append([]string{e.ID}, want...)
		f.clock.Advance(time.Second)
		e, _ = f.create(t, f.acme.ID, "https://hooks.example.com/z")
		want = append([]string{e.ID}, want...)
		f.create(t, f.other.ID, "https://globex.example.com/x")

		var got []string
		var after *webhook.EndpointCursor
		for pages := 0; ; pages++ {
			page, next, err := webhook.List(ctx, f.db.Reader(), f.acme.ID, after, 3)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range page {
				got = append(got, e.ID)
			}
			if next == nil {
				if pages != 2 {
					t.Errorf("%d pages, want 3", pages+1)
				}
				break
			}
			after = next
		}
		slices.Sort(want)
		slices.Reverse(want)
		if !slices.Equal(got, want) {
			t.Errorf("listed %v, want newest first %v", got, want)
		}
	})
}

func TestUpdatePatches(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setupEndpoints(t, b)
		ctx := t.Context()
		e, secret := f.create(t, f.acme.ID, "https://hooks.example.com/x", event.ReviewCompleted)
		f.clock.Advance(time.Minute)
		desc := "renamed"
		got, err := webhook.Update(ctx, f.db.Writer(), f.acme.ID, e.ID, webhook.Patch{Description: &desc}, f.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if got.URL != e.URL || !slices.Equal(got.Events, e.Events) || got.Description != desc || !got.UpdatedAt.After(e.UpdatedAt) {
			t.Errorf("after patching the description: %+v", got)
		}
		url, none := "https://other.example.com/y", []string{}
		if _, err := webhook.Update(ctx, f.db.Writer(), f.acme.ID, e.ID, webhook.Patch{URL: &url, Events: &none}, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
		got, err = webhook.Get(ctx, f.db.Reader(), f.acme.ID, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.URL != url || !slices.Equal(got.Events, event.Names) || got.Description != desc || got.Secret != secret {
			t.Errorf("after patching url and events: %+v", got)
		}

		bad, unknown := "ftp://x", []string{"nope"}
		if fs := fields(t, func() error {
			_, err := webhook.Update(ctx, f.db.Writer(), f.acme.ID, e.ID, webhook.Patch{URL: &bad, Events: &unknown}, f.clock.Now())
			return err
		}()); fs != "url,events" {
			t.Errorf("invalid patch names %q, want url,events", fs)
		}
		if _, err := webhook.Update(ctx, f.db.Writer(), f.other.ID, e.ID, webhook.Patch{Description: &desc}, f.clock.Now()); !errors.Is(err, webhook.ErrNotFound) {
			t.Errorf("another account's update: %v, want ErrNotFound", err)
		}
	})
}

func TestDeleteAndTenancy(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setupEndpoints(t, b)
		ctx := t.Context()
		e, _ := f.create(t, f.acme.ID, "https://hooks.example.com/x")
		w, r := f.db.Writer(), f.db.Reader()
		if _, err := webhook.Get(ctx, r, f.other.ID, e.ID); !errors.Is(err, webhook.ErrNotFound) {
			t.Errorf("another account's Get: %v, want ErrNotFound", err)
		}
		if err := webhook.Delete(ctx, w, f.other.ID, e.ID, f.clock.Now()); !errors.Is(err, webhook.ErrNotFound) {
			t.Errorf("another account's Delete: %v, want ErrNotFound", err)
		}
		if _, _, err := webhook.RotateSecret(ctx, w, f.other.ID, e.ID, nil, webhook.DefaultOverlap, f.clock.Now()); !errors.Is(err, webhook.ErrNotFound) {
			t.Errorf("another account's RotateSecret: %v, want ErrNotFound", err)
		}
		if page, _, _ := webhook.List(ctx, r, f.other.ID, nil, 10); len(page) != 0 {
			t.Errorf("another account lists %d endpoints, want none", len(page))
		}
		if err := webhook.Delete(ctx, w, f.acme.ID, e.ID, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if _, err := webhook.Get(ctx, r, f.acme.ID, e.ID); !errors.Is(err, webhook.ErrNotFound) {
			t.Errorf("Get after Delete: %v, want ErrNotFound", err)
		}
		if err := webhook.Delete(ctx, w, f.acme.ID, e.ID, f.clock.Now()); !errors.Is(err, webhook.ErrNotFound) {
			t.Errorf("second Delete: %v, want ErrNotFound", err)
		}
		if page, _, _ := webhook.List(ctx, r, f.acme.ID, nil, 10); len(page) != 0 {
			t.Errorf("a deleted endpoint is listed: %v", page)
		}
		// The row stays for its deliveries' history.
		var deletedAt *int64
		if err := r.QueryRow(ctx, `SELECT deleted_at FROM webhook_endpoints WHERE id = $1`, e.ID).Scan(&deletedAt); err != nil || deletedAt == nil {
			t.Errorf("deleted_at %v, %v: want the row kept with deleted_at set", deletedAt, err)
		}
		other, _ := f.create(t, f.other.ID, "https://globex.example.com/x")
		gone, err := webhook.DeleteAny(ctx, w, other.ID, f.clock.Now())
		if err != nil || gone.AccountID != f.other.ID {
			t.Errorf("DeleteAny: %+v, %v", gone, err)
		}
	})
}

func TestRotateSecretKeepsThePreviousForTheOverlap(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setupEndpoints(t, b)
		ctx := t.Context()
		e, first := f.create(t, f.acme.ID, "https://hooks.example.com/x")
		f.clock.Advance(time.Hour)
		rotated, second, err := webhook.RotateSecret(ctx, f.db.Writer(), f.acme.ID, e.ID, nil, webhook.DefaultOverlap, f.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if second == first || !strings.HasPrefix(second, webhook.SecretPrefix) || rotated.Secret != second {
			t.Errorf("new secret %q (first %q)", second, first)
		}
		got, err := webhook.Get(ctx, f.db.Reader(), f.acme.ID, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantExpiry := f.clock.Now().Add(24 * time.Hour).Truncate(time.Microsecond)
		if got.Secret != second || got.PreviousSecret != first || got.PreviousExpiresAt == nil || !got.PreviousExpiresAt.Equal(wantExpiry) {
			t.Errorf("after rotation: secret %q previous %q until %v; want %q, %q until %v", got.Secret, got.PreviousSecret, got.PreviousExpiresAt, second, first, wantExpiry)
		}

		// Rotating again replaces the previous secret with the one just retired.
		_, third, err := webhook.RotateSecret(ctx, f.db.Writer(), f.acme.ID, e.ID, ptr("my-own-secret-of-20-chars"), time.Hour, f.clock.Now())
		if err != nil || third != "my-own-secret-of-20-chars" {
			t.Fatalf("rotate to a supplied secret: %q, %v", third, err)
		}
		got, _ = webhook.Get(ctx, f.db.Reader(), f.acme.ID, e.ID)
		if got.PreviousSecret != second || !got.PreviousExpiresAt.Equal(f.clock.Now().Add(time.Hour).Truncate(time.Microsecond)) {
			t.Errorf("second rotation: previous %q until %v", got.PreviousSecret, got.PreviousExpiresAt)
		}

		// No overlap: the old secret stops at once.
		if _, _, err := webhook.RotateSecret(ctx, f.db.Writer(), f.acme.ID, e.ID, nil, 0, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
		got, _ = webhook.Get(ctx, f.db.Reader(), f.acme.ID, e.ID)
		if got.PreviousSecret != "" || got.PreviousExpiresAt != nil {
			t.Errorf("rotation without overlap kept %q until %v", got.PreviousSecret, got.PreviousExpiresAt)
		}
		_, _, err = webhook.RotateSecret(ctx, f.db.Writer(), f.acme.ID, e.ID, nil, webhook.MaxOverlap+time.Second, f.clock.Now())
		if fields(t, err) != "overlap" {
			t.Errorf("too long an overlap: %v", err)
		}
	})
}

func TestUpdatePausesAndResumes(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setupEndpoints(t, b)
		ctx := t.Context()
		e, _ := f.create(t, f.acme.ID, "https://hooks.example.com/x")
		yes, no := true, false
		got, err := webhook.Update(ctx, f.db.Writer(), f.acme.ID, e.ID, webhook.Patch{Disabled: &yes}, f.clock.Now())
		if err != nil || !got.Disabled || got.DisabledReason != webhook.ReasonDisabledByCustomer {
			t.Fatalf("pause: %+v, %v", got, err)
		}
		got, _ = webhook.Get(ctx, f.db.Reader(), f.acme.ID, e.ID)
		if !got.Disabled || got.DisabledReason != webhook.ReasonDisabledByCustomer {
			t.Errorf("stored after pause: %+v", got)
		}

		// The delivery worker disables an endpoint that answered 410 Gone;
		// another change keeps that, resuming clears it.
		if _, err := f.db.Writer().Exec(ctx, `UPDATE webhook_endpoints SET disabled_at = $1, disabled_reason = 'answered 410 Gone' WHERE id = $2`,
			store.Micros(f.clock.Now()), e.ID); err != nil {
			t.Fatal(err)
		}
		desc := "still gone"
		if _, err := webhook.Update(ctx, f.db.Writer(), f.acme.ID, e.ID, webhook.Patch{Description: &desc, Disabled: &yes}, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
		got, _ = webhook.Get(ctx, f.db.Reader(), f.acme.ID, e.ID)
		if !got.Disabled || got.DisabledReason != "answered 410 Gone" {
			t.Errorf("a patch that does not resume changed the 410: %+v", got)
		}
		if _, err := webhook.Update(ctx, f.db.Writer(), f.acme.ID, e.ID, webhook.Patch{Disabled: &no}, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
		got, _ = webhook.Get(ctx, f.db.Reader(), f.acme.ID, e.ID)
		var disabledAt *int64
		if err := f.db.Reader().QueryRow(ctx, `SELECT disabled_at FROM webhook_endpoints WHERE id = $1`, e.ID).Scan(&disabledAt); err != nil {
			t.Fatal(err)
		}
		if got.Disabled || got.DisabledReason != "" || disabledAt != nil {
			t.Errorf("after resuming: %+v, disabled_at %v", got, disabledAt)
		}
	})
}

func ptr[T any](v T) *T { return &v }

// Registration refuses a literal non-public address, however IPv4 is
// wrapped in it, but does not resolve host names: localhost, which
// resolves only to loopback, and a name that does not resolve are both
// accepted (the connect-time check decides).
func TestRegistrationDoesNotResolve(t *testing.T) {
	t.Parallel()
	f := setupEndpoints(t, storetest.Backend{Name: "sqlite", Open: storetest.SQLite})
	var p webhook.Policy
	for host, ok := range map[string]bool{
		"localhost": true, "hooks.quorum.invalid": true, "93.184.215.14": true, "[2606:4700:4700::1111]": true,
		"127.0.0.1": false, "[fe80::1]": false, "[::ffff:127.0.0.1]": false, "[::ffff:a00:1]": false,
		"[64:ff9b::a9fe:a9fe]": false, "[2002:7f00:1::]": false, "[2001:0:4136:e378:8000:63bf:80ff:fffe]": false,
	} {
		_, _, err := p.Create(t.Context(), f.db, f.acme.ID, webhook.NewEndpoint{URL: "https://" + host + "/hook"}, f.clock.Now())
		switch {
		case ok && err != nil:
			t.Errorf("%s: %v, want accepted", host, err)
		case !ok && err == nil:
			t.Errorf("%s: accepted, want refused", host)
		case !ok && fields(t, err) != "url":
			t.Errorf("%s: %v, want url refused", host, err)
		}
	}
	p.AllowPrivate = true
	if _, _, err := p.Create(t.Context(), f.db, f.acme.ID, webhook.NewEndpoint{URL: "https://127.0.0.1/hook"}, f.clock.Now()); err != nil {
		t.Errorf("with AllowPrivate: %v", err)
	}
}
