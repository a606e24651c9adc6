package api

import "net/http"

// WriteProblem writes an RFC 9457 problem+json response for the given
// status, as the API writes its own, for handlers mounted beside the API
// (the GitHub webhook intake). docsURL prefixes the problem type; title, when
// not empty, replaces the status's usual title.
func WriteProblem(w http.ResponseWriter, r *http.Request, docsURL string, status int, title, detail string) {
	e := &Error{Code: ProblemTypeFor(status).Code, Title: title, Detail: detail}
	(&Server{cfg: Config{DocsURL: docsURL}}).writeProblem(w, r, e)
}

// ProblemType is one of the API's problem types: its code (the anchor on
// the error reference page), title, explanation and status.
type ProblemType struct {
	Code, Title, Explain string
	Status               int
}

// ProblemTypeFor is the API's problem type for an HTTP status, for pages
// that show the API's errors to people (the dashboard); an unknown status
// is the internal error.
func ProblemTypeFor(status int) ProblemType {
	var found ProblemType
	for _, t := range problemTypes {
		if t.status == status {
			found = ProblemType{Code: t.code, Title: t.title, Explain: t.explain, Status: t.status}
		}
	}
	if found.Code == "" {
		return ProblemTypeFor(http.StatusInternalServerError)
	}
	return found
}
