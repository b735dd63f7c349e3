package client_test

import (
	"testing"

	"github.com/berthhq/berth/client"
)

// TestAttachmentContentType: a file's declared type by its extension (in any case),
// else by its content.
func TestAttachmentContentType(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	for _, tc := range []struct {
		name string
		head []byte
		want string
	}{
		{"shot.png", nil, "image/png"},
		{"SHOT.PNG", nil, "image/png"},
		{"a.jpeg", nil, "image/jpeg"},
		{"a.JPG", nil, "image/jpeg"},
		{"invoice.pdf", nil, "application/pdf"},
		{"dmesg.log", []byte("x"), "text/plain; charset=utf-8"},
		{"noext", png, "image/png"},
		{"noext", []byte("plain words"), "text/plain; charset=utf-8"},
		{"page.html", []byte("<html><body>x"), "text/html; charset=utf-8"},
		{"", nil, "text/plain; charset=utf-8"},
	} {
		if got := client.AttachmentContentType(tc.name, tc.head); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.name, got, tc.want)
		}
	}
}
