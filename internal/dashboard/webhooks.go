package dashboard

import "net/http"

// webhookRoutes adds the pages of webhook endpoints and deliveries.
func (s *Server) webhookRoutes(mux *http.ServeMux) {}
