package powerdns

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxBody bounds what is read of an answer: a zone of 5,000 RRsets of 100 records
// is far below it.
const maxBody = 64 << 20

// do sends method path (under the server's base) with body as JSON, and decodes a 2xx
// answer into out (when not nil). A non-2xx answer is an *APIError with PowerDNS's
// "error" text; no answer at all is a retryable *netError.
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("powerdns: %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("powerdns: %s %s: %w", method, path, err)
	}
	req.Header.Set("X-API-Key", c.key)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return &netError{err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return &netError{fmt.Errorf("%s %s: reading the answer: %w", method, path, err)}
	}
	if resp.StatusCode/100 != 2 {
		return &APIError{Method: method, Path: path, Status: resp.StatusCode, Message: errorText(data)}
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("powerdns: %s %s: the answer is not what the API documents: %w", method, path, err)
	}
	return nil
}

// errorText is PowerDNS's {"error": "..."} text, else the body itself, clipped.
func errorText(data []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && e.Error != "" {
		return e.Error
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 512 {
		s = s[:512] + "…"
	}
	return s
}
