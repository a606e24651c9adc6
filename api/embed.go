// Package api holds the OpenAPI document that is the HTTP API's source of
// truth; the server embeds it and serves it as /v1/openapi.json.
package api

import _ "embed"

// OpenAPIYAML is api/openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte
