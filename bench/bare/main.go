// Command bare is the benchmarks' baseline: a bare net/http server that answers
// GET /v1/servers/{id} with one fixed JSON body held in memory, whatever the id.
// The body is a real Berth response, fetched once at start (-berth URL -token T) or
// read from a file (-body FILE), so that both servers send the same bytes.
//
// It does no authentication, rate limiting, database read or JSON encoding: what
// remains is the cost of net/http itself, the floor under any Go HTTP API.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18081", "address to listen on")
	bodyFile := flag.String("body", "", "file holding the response body")
	berth := flag.String("berth", "", "URL of one real GET /v1/servers/{id} to fetch the body from (instead of -body)")
	token := flag.String("token", "", "bearer token for -berth")
	flag.Parse()
	body, ctype, err := load(*bodyFile, *berth, *token)
	if err != nil {
		log.Fatalf("bare: %v", err)
	}
	length := strconv.Itoa(len(body))

	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/servers/{id}", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Content-Type"] = []string{ctype}
		h["Content-Length"] = []string{length}
		h["Cache-Control"] = []string{"no-store"}
		_, _ = w.Write(body)
	})
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sh, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sh)
	}()
	fmt.Fprintf(os.Stderr, "bare: serving %d bytes on http://%s/v1/servers/{id}\n", len(body), *addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("bare: %v", err)
	}
}

func load(file, url, token string) ([]byte, string, error) {
	const defaultType = "application/json; charset=utf-8"
	switch {
	case file != "" && url != "":
		return nil, "", errors.New("-body and -berth exclude each other")
	case file != "":
		b, err := os.ReadFile(file)
		return b, defaultType, err
	case url != "":
		req, err := http.NewRequest("GET", url, nil)
		if err != nil {
			return nil, "", err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		c := &http.Client{Timeout: 10 * time.Second}
		resp, err := c.Do(req)
		if err != nil {
			return nil, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, "", err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, "", fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
		}
		ct := resp.Header.Get("Content-Type")
		if ct == "" {
			ct = defaultType
		}
		return b, ct, nil
	}
	return nil, "", errors.New("give -body FILE or -berth URL")
}
