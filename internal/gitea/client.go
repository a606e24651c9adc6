package gitea

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Client calls Gitea's REST API (/api/v1) as the bot account. The token
// goes only into the Authorization header of its requests: never into a
// URL, an error or a log line.
type Client struct {
	baseURL string
	token   string
	http    *http.Client
	agent   string
}

// maxAnswer bounds an API answer read into memory (a pull request's
// description, a page of comments).
const maxAnswer = 16 << 20

// NewClient returns the client of the Gitea at baseURL (http(s)://host[/path],
// the address quorum reaches it at) with the bot account's token. hc makes
// the requests (http.DefaultClient when nil); version goes into the
// User-Agent (quorum/<version>).
func NewClient(baseURL, token string, hc *http.Client, version string) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("gitea: the Gitea URL %q must be http(s)://host[/path], without credentials", baseURL)
	}
	if token == "" {
		return nil, errors.New("gitea: no token: give the bot account's access token in QUORUM_GITEA_TOKEN")
	}
	if strings.ContainsAny(token, "\r\n \t") {
		return nil, errors.New("gitea: the token holds a space or a line break; check QUORUM_GITEA_TOKEN")
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{baseURL: strings.TrimRight(baseURL, "/"), token: token, http: hc,
		agent: strings.TrimSuffix("quorum/"+version, "/")}, nil
}

// BaseURL is the Gitea's address, without a trailing slash.
func (c *Client) BaseURL() string { return c.baseURL }

// APIError is an answer of Gitea's API that is not 2xx.
type APIError struct {
	Method string
	Path   string // below /api/v1, without the query
	Status int
	// Message is Gitea's "message", or the start of the body.
	Message string
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("gitea: %s %s: %d: %s", e.Method, e.Path, e.Status, msg)
}

// StatusOf returns the HTTP status of an *APIError in err's chain, or 0.
func StatusOf(err error) int {
	if e, ok := errors.AsType[*APIError](err); ok {
		return e.Status
	}
	return 0
}

// Path joins path segments below /api/v1, escaping each:
// Path("repos", owner, repo, "pulls", "3") is "/repos/owner/repo/pulls/3".
func Path(segments ...string) string {
	var b strings.Builder
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// Do calls method on path (below /api/v1, built with Path, optionally
// followed by ?query), sending in as JSON when not nil and decoding a 2xx
// answer into out when not nil (into a *[]byte, the answer as it is). It
// returns the response's headers (for paging) and an *APIError for any
// other status.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) (http.Header, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("gitea: %s %s: encode: %w", method, trimQuery(path), err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+"/api/v1"+path, body)
	if err != nil {
		return nil, fmt.Errorf("gitea: %s %s: %w", method, trimQuery(path), err)
	}
	req.Header.Set("Authorization", "token "+c.token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.agent)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("gitea: %s %s: %w", method, trimQuery(path), ctx.Err())
		}
		// net/http's error names the URL, which holds no secret.
		return nil, fmt.Errorf("gitea: cannot reach Gitea at %s (check the Gitea URL and that Gitea is up): %w", c.baseURL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return resp.Header, fmt.Errorf("gitea: %s %s: read the answer: %w", method, trimQuery(path), err)
	}
	if len(b) > maxAnswer {
		return resp.Header, fmt.Errorf("gitea: %s %s: the answer is over %d bytes", method, trimQuery(path), maxAnswer)
	}
	if resp.StatusCode/100 != 2 {
		e := &APIError{Method: method, Path: trimQuery(path), Status: resp.StatusCode}
		var m struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(b, &m) == nil && m.Message != "" {
			e.Message = m.Message
		} else {
			e.Message = strings.TrimSpace(string(b[:min(len(b), 200)]))
		}
		e.Message = strings.ReplaceAll(e.Message, c.token, "[token]")
		return resp.Header, e
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = b // an answer that is not JSON (a pull request's .diff)
		return resp.Header, nil
	}
	if out != nil && resp.StatusCode != http.StatusNoContent {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.Header, fmt.Errorf("gitea: %s %s: decode the answer: %w", method, trimQuery(path), err)
		}
	}
	return resp.Header, nil
}

func trimQuery(path string) string {
	p, _, _ := strings.Cut(path, "?")
	return p
}

// User is a Gitea user or organization as the API gives it.
type User struct {
	ID    int64  `json:"id"`
	Login string `json:"login"`
}

// Self returns the account the token belongs to (the bot).
func (c *Client) Self(ctx context.Context) (User, error) {
	var u User
	_, err := c.Do(ctx, http.MethodGet, "/user", nil, &u)
	return u, err
}
