package dashboard

import "net/http"

// reviewRoutes adds the pages of reviews and findings.
func (s *Server) reviewRoutes(mux *http.ServeMux) {}
