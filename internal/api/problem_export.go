package api

import "net/http"

// WriteProblem writes an RFC 9457 problem+json response for the given
// status, as the API writes its own, for handlers mounted beside the API
// (the GitHub webhook intake). docsURL prefixes the problem type; title, when
// not empty, replaces the status's usual title.
func WriteProblem(w http.ResponseWriter, r *http.Request, docsURL string, status int, title, detail string) {
	e := &Error{Code: codeInternal, Title: title, Detail: detail}
	for _, t := range problemTypes {
		if t.status == status {
			e.Code = t.code
		}
	}
	(&Server{cfg: Config{DocsURL: docsURL}}).writeProblem(w, r, e)
}
