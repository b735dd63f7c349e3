package httpapi

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Browser clients (issue 14). A script on a web page may call the API only from an
// origin the operator allows (Config.CORSOrigins; none by default). Such a request
// gets Access-Control-Allow-Origin on every answer, errors included, so that the
// script can read a 401 or a 429 too, and may read the headers clients act on. A
// preflight (OPTIONS with Access-Control-Request-Method) from an allowed origin is
// answered with what may be sent; from any other origin it is answered as any OPTIONS
// is, without CORS headers, and the browser refuses the request. The API uses no
// cookies, so credentials are never allowed: the token travels in Authorization.

// corsExposed are the headers of an answer a script may read beside the safelisted
// ones: the rate limit, when to retry, the request id, and whether a POST was a
// replay.
var corsExposed = strings.Join([]string{
	"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
	"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset",
	"Retry-After", "X-Request-Id", "Idempotent-Replayed",
}, ", ")

// corsAllowHeaders are the request headers a script may send beside the safelisted
// ones: its token, a JSON body's type, an idempotency key, the language of errors
// before the token is known, and its own request id.
const corsAllowHeaders = "Authorization, Content-Type, Accept, Accept-Language, Idempotency-Key, X-Request-Id"

// CORSMaxAge is how long, in seconds, a browser may keep a preflight's answer.
const CORSMaxAge = "3600"

// ParseCORSOrigin checks an origin an operator allows (`https://app.example.com`,
// `http://localhost:3000`) and returns it as browsers send it in Origin: lower-case
// scheme and host, the default port left out. A path other than "/", a query, a
// fragment, user info, "*" or "null" is an error.
func ParseCORSOrigin(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return "", errors.New("not an origin such as https://app.example.com")
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		return "", errors.New("an origin is http:// or https:// followed by a host, such as https://app.example.com")
	case u.Host == "" || u.Hostname() == "":
		return "", errors.New("an origin names a host, such as https://app.example.com")
	case u.User != nil:
		return "", errors.New("an origin has no user info")
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#"):
		return "", errors.New("an origin is scheme, host and port only: no path, query or fragment")
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]" // an IPv6 literal
	}
	return scheme + "://" + host, nil
}

// ParsePublicURL checks the address clients reach the service at through a proxy
// (`https://api.example.com`, or with a path prefix `https://example.com/berth`): an
// absolute http or https URL with a host, without user info, query or fragment, and
// without the `/v1` the API adds itself. A trailing slash is dropped.
func ParsePublicURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return nil, errors.New("not an absolute URL such as https://api.example.com")
	}
	u.Scheme = strings.ToLower(u.Scheme)
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("not an absolute http:// or https:// URL such as https://api.example.com")
	case u.Host == "" || u.Hostname() == "" || u.Opaque != "":
		return nil, errors.New("names no host; want an absolute URL such as https://api.example.com")
	case u.User != nil:
		return nil, errors.New("must not carry user info")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, errors.New("must not have a query or a fragment")
	}
	u.Path, u.RawPath = strings.TrimRight(u.Path, "/"), ""
	if u.Path == "/v1" || strings.HasSuffix(u.Path, "/v1") {
		return nil, errors.New("is the address /v1 is under, without /v1 (https://api.example.com, not https://api.example.com/v1)")
	}
	u.Host = strings.ToLower(u.Host)
	return u, nil
}

// allowedOrigin returns the request's Origin when it is one of the allowed origins.
func (s *Server) allowedOrigin(r *http.Request) (string, bool) {
	raw := r.Header.Get("Origin")
	if raw == "" || len(s.corsOrigins) == 0 {
		return "", false
	}
	origin, err := ParseCORSOrigin(raw)
	if err != nil || !s.corsOrigins[origin] {
		return "", false
	}
	return raw, true
}

// setCORS adds the CORS headers of an answer to r: Vary: Origin whenever origins are
// configured (the answer depends on it), and for an allowed origin the origin itself
// and the headers a script may read.
func (s *Server) setCORS(h http.Header, r *http.Request) {
	if len(s.corsOrigins) == 0 {
		return
	}
	h.Add("Vary", "Origin")
	if origin, ok := s.allowedOrigin(r); ok {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Expose-Headers", corsExposed)
	}
}

// options answers OPTIONS on a path of the API, whose methods are allow: 204 with
// Allow, without a token and outside the rate limits. A CORS preflight from an
// allowed origin also gets the methods and headers it may send and how long to keep
// that (ServeHTTP has set the origin).
func (s *Server) options(allow []string) http.Handler {
	methods := strings.Join(allow, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Allow", methods)
		if _, ok := s.allowedOrigin(r); ok && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", methods)
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Max-Age", CORSMaxAge)
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
