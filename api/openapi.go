package api

import (
	"bytes"
	_ "embed"
	"sync"

	"sigs.k8s.io/yaml"
)

// OpenAPIYAML is the OpenAPI 3.0.3 document of the /v1 API, as written by hand. It is
// the contract: the server's tests validate their responses against it.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte

// OpenAPIJSON returns the OpenAPI document converted to JSON, as served by
// GET /v1/openapi.json: a copy of its one conversion (tests start thousands of
// servers; each converted 300 KiB of YAML anew).
func OpenAPIJSON() ([]byte, error) {
	doc, err := openAPIJSON()
	return bytes.Clone(doc), err
}

var openAPIJSON = sync.OnceValues(func() ([]byte, error) { return yaml.YAMLToJSON(OpenAPIYAML) })
