package api

import (
	_ "embed"

	"sigs.k8s.io/yaml"
)

// OpenAPIYAML is the OpenAPI 3.0.3 document of the /v1 API, as written by hand. It is
// the contract: the server's tests validate their responses against it.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte

// OpenAPIJSON returns the OpenAPI document converted to JSON, as served by
// GET /v1/openapi.json.
func OpenAPIJSON() ([]byte, error) {
	return yaml.YAMLToJSON(OpenAPIYAML)
}
